-- The wrk script of `npm run bench` (bench/load.ts). done() prints one line, `result …`, that the
-- bench parses, for every load (its latency percentiles as wrk has them by then: corrected for
-- coordinated omission).
--
-- For POST /api/contact (the URL's path), each request carries a valid inquiry that no other
-- request of the run repeats (a tag given per wrk process, and a count per thread), so none folds
-- into a duplicate; each thread writes the reference of every answer 200 to a file of its own,
-- which the bench reads to check that every accepted inquiry was mailed.
-- Arguments (after `--`), for /api/contact only: the folder for those files, the load's unique tag.

local contact = wrk.path == "/api/contact"
local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  accepted = 0
  non2xx = 0
  without_reference = 0
  if contact then
    tag = args[2] .. "-" .. id
    sent = 0
    references = assert(io.open(args[1] .. "/references-" .. id .. ".txt", "w"))
  end
end

if contact then
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local body = '{"firstName":"Ada","lastName":"Bench %s","email":"bench-%s@example.com",' ..
    '"company":"Analytical Engines Ltd","message":"Load test inquiry %s: we need a new website for our engine, launching in spring."}'
  local reference_pattern = "INQ%-" .. string.rep("[0-9A-Z]", 6)

  function request()
    sent = sent + 1
    local unique = tag .. "-" .. sent
    return wrk.format(nil, nil, nil, string.format(body, unique, unique, unique))
  end

  function response(status, headers, text)
    if status ~= 200 then
      non2xx = non2xx + 1
      return
    end
    local reference = string.match(text, reference_pattern)
    if reference == nil then
      without_reference = without_reference + 1
    else
      accepted = accepted + 1
      -- Buffered, and flushed when wrk exits.
      references:write(reference, "\n")
    end
  end
end

function done(summary, latency, requests)
  local counted = { accepted = 0, non2xx = 0, without_reference = 0 }
  for _, thread in ipairs(threads) do
    for name, value in pairs(counted) do
      counted[name] = value + thread:get(name)
    end
  end
  local errors = summary.errors
  io.write(string.format(
    "result requests=%d seconds=%.3f p50_ms=%.2f p99_ms=%.2f errors=%d status_errors=%d accepted=%d non2xx=%d without_reference=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    errors.connect + errors.read + errors.write + errors.timeout, errors.status,
    counted.accepted, counted.non2xx, counted.without_reference))
end
