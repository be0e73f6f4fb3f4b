-- bench/harness/wrk.lua: the load of every HTTP row, for Debian's wrk.
--
-- BENCH_AUTHORIZATION: the Authorization header to send, if any.
-- BENCH_RATE: requests a second to pace at (one wrk thread); none: as fast as
--   the connections go. Each request is given a send time on a fixed
--   schedule, 1/rate apart, claimed by whichever connection is free: an open
--   schedule, not a pause after each answer, so a slow answer does not slow
--   the rate down as long as a connection is free. LuaJIT's ffi reads the
--   monotonic clock; wrk waits whole milliseconds.
-- done() prints one line: BENCH_JSON {...}, latencies in microseconds.

local authorization = os.getenv("BENCH_AUTHORIZATION")
if authorization and authorization ~= "" then
  wrk.headers["Authorization"] = authorization
end

local rate = tonumber(os.getenv("BENCH_RATE") or "")

if rate and rate > 0 then
  local ffi = require("ffi")
  ffi.cdef [[
    typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
    int clock_gettime(int clock, bench_timespec *ts);
  ]]
  local CLOCK_MONOTONIC = 1
  local ts = ffi.new("bench_timespec")
  local function now_ms()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
  end
  local interval_ms = 1000 / rate
  local next_send

  function delay()
    local now = now_ms()
    if not next_send then next_send = now end
    local at = next_send
    next_send = next_send + interval_ms
    if at <= now then return 0 end
    return at - now
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"status_errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency.max))
end
