-- wrk script for bench/soak.sh: keeps one response body in every
-- SOAK_SAMPLE_EVERY (one line each) in SOAK_DIR/sample-<thread>.json, for
-- the duplicate check.
local every = tonumber(os.getenv("SOAK_SAMPLE_EVERY")) or 500
local answered = 0
local file

function init(args)
  local name = tostring({}):gsub("^table: ", "")
  file = assert(io.open(os.getenv("SOAK_DIR") .. "/sample-" .. name .. ".json", "w"))
end

function response(status, headers, body)
  answered = answered + 1
  if answered % every == 0 then
    file:write(body, "\n")
    file:flush()
  end
end
