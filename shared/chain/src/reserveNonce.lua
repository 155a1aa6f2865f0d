-- The nonces of a signing account, from the chain's view (NonceManager.reserve and NonceManager.standingGap).
-- The counter is the next nonce to hand out; the gap watch remembers since when the chain's next index stood still
-- behind it. While it stands still behind handed-out nonces for the gap timeout, a reserved nonce was never
-- submitted (a crash between reserve and submit), and the transactions signed after it wait for it.
-- - mode 'reserve': hands out the counter; below the chain's next index (others' transactions landed, or a restart)
--   it jumps to the chain's; behind a gap past its timeout it hands the chain's index out again, to fill it.
-- - mode 'gap': hands out nothing but the gap past its timeout, once (to one caller), leaving the counter alone: the
--   caller fills it, so that what waits behind it goes on without another reservation. Answers -1 without one.
-- KEYS: [1] the account's nonce counter, [2] its gap watch (a hash {chain, since}).
-- ARGV: [1] the chain's next index, [2] now (ms), [3] the gap timeout (ms), [4] the mode.
local counter, gapWatch = KEYS[1], KEYS[2]
local chainNext, now, gapTimeoutMs, mode = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

local stored = tonumber(redis.call('GET', counter))
local gap = false
if stored == nil or stored <= chainNext then
  stored = chainNext
  redis.call('DEL', gapWatch)
else
  local watch = redis.call('HMGET', gapWatch, 'chain', 'since')
  if tonumber(watch[1]) ~= chainNext then
    redis.call('HSET', gapWatch, 'chain', chainNext, 'since', now)
  elseif now - tonumber(watch[2]) > gapTimeoutMs then
    gap = true
    redis.call('DEL', gapWatch)
  end
end
if mode == 'gap' then
  if gap then return chainNext end
  return -1
end
if gap then stored = chainNext end
redis.call('SET', counter, stored + 1)
return stored
