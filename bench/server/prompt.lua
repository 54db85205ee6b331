-- POST /v1/memory/prompt for the user with the seeded long-term memories, varying the
-- query. Env: NAMESPACE.
local ns = os.getenv("NAMESPACE") or "bench"
local queries = {
  "what should I cook tonight", "any plans for the weekend", "where do I live now",
  "which languages do I speak", "what do I like to read", "how is my sister doing",
  "recommend a concert", "what do I do for work", "gift ideas for my partner",
  "what sports do I play", "where should we travel in spring", "what am I allergic to",
}
local n = 0

request = function()
  n = n + 1
  local q = queries[(n % #queries) + 1]
  local body = string.format(
    '{"query":"%s","long_term_search":{"text":"%s","namespace":{"eq":"%s"},"user_id":{"eq":"prompt-user"},"limit":10}}',
    q, q, ns)
  return wrk.format("POST", "/v1/memory/prompt", { ["Content-Type"] = "application/json" }, body)
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT prompt %.1f %.3f %.3f %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
