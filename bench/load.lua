-- The wrk script of `npm run bench` (bench/load.ts): done() prints the `result …` line the bench parses.
-- On /api/contact each request is an inquiry no other repeats (none folds: a tag per process, a count per
-- thread); each thread writes every 200's reference to a file, for the delivery check. Args: folder, tag.

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
