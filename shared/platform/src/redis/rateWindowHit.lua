-- Counts one request of a client in its rate-limit window (RedisRateWindow.hit). The first request of a
-- window creates the counter with the window as its expiry; the ones after count up. A counter found without
-- expiry (it cannot happen through this script, but a key restored without its TTL could pin a client
-- forever) gets one.
-- KEYS: [1] the client's counter.
-- ARGV: [1] the window (ms).
-- Answers the count and the milliseconds left in the window.
local counter = KEYS[1]
local windowMs = ARGV[1]

local count = redis.call('INCR', counter)
if count == 1 then redis.call('PEXPIRE', counter, windowMs) end
local left = redis.call('PTTL', counter)
if left < 0 then
  redis.call('PEXPIRE', counter, windowMs)
  left = tonumber(windowMs)
end
return {count, left}
