-- GET a random one of the seeded working-memory sessions.
-- Env: SESSIONS (how many were seeded), NAMESPACE.
local sessions = tonumber(os.getenv("SESSIONS") or "200")
local ns = os.getenv("NAMESPACE") or "bench"

request = function()
  local id = math.random(1, sessions)
  return wrk.format("GET", "/v1/working-memory/s" .. id .. "?namespace=" .. ns .. "&user_id=u" .. id)
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT get %.1f %.3f %.3f %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
