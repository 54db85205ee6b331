-- PUT a 6-message session (three user/assistant exchanges) under a random one of the
-- seeded ids, replacing what it held. Env: SESSIONS, NAMESPACE.
local sessions = tonumber(os.getenv("SESSIONS") or "200")
local ns = os.getenv("NAMESPACE") or "bench"
local n = 0
-- RATE=r paces the run at about r requests a second in all (each of the CONNECTIONS
-- connections waits CONNECTIONS/r seconds before each request): the latency of a PUT
-- at a load the server keeps up with, rather than at saturation.
local rate = tonumber(os.getenv("RATE") or "0")
local connections = tonumber(os.getenv("CONNECTIONS") or "16")
if rate > 0 then
  delay = function()
    return 1000 * connections / rate
  end
end

local function body(id)
  n = n + 1
  local parts = {}
  for i = 1, 3 do
    parts[#parts + 1] = string.format(
      '{"role":"user","content":"Message %d of request %d: I am planning a trip to Lisbon in May with my sister"}', i, n)
    parts[#parts + 1] = string.format(
      '{"role":"assistant","content":"Reply %d: Lisbon in May is lovely, shall I look at flights for you both?"}', i)
  end
  return string.format('{"messages":[%s],"namespace":"%s","user_id":"u%d","session_id":"s%d"}',
    table.concat(parts, ","), ns, id, id)
end

request = function()
  local id = math.random(1, sessions)
  return wrk.format("PUT", "/v1/working-memory/s" .. id .. "?namespace=" .. ns .. "&user_id=u" .. id,
    { ["Content-Type"] = "application/json" }, body(id))
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT put %.1f %.3f %.3f %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
