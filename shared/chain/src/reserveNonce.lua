-- Hands out the next nonce of a signing account from the chain's view (NonceManager.reserve):
-- - below the chain's next index (others' transactions landed, or a restart): jump to the chain's;
-- - ahead of it while the chain's index does not move for the gap timeout: a reserved nonce was never
--   submitted (a crash between reserve and submit), so hand the chain's index out again to fill the gap.
-- KEYS: [1] the account's nonce counter, [2] its gap watch (a hash {chain, since}).
-- ARGV: [1] the chain's next index, [2] now (ms), [3] the gap timeout (ms).
-- Answers the reserved nonce.
local counter, gapWatch = KEYS[1], KEYS[2]
local chainNext, now, gapTimeoutMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

local stored = tonumber(redis.call('GET', counter))
if stored == nil or stored <= chainNext then
  stored = chainNext
  redis.call('DEL', gapWatch)
else
  local watch = redis.call('HMGET', gapWatch, 'chain', 'since')
  if tonumber(watch[1]) ~= chainNext then
    redis.call('HSET', gapWatch, 'chain', chainNext, 'since', now)
  elseif now - tonumber(watch[2]) > gapTimeoutMs then
    stored = chainNext
    redis.call('DEL', gapWatch)
  end
end
redis.call('SET', counter, stored + 1)
return stored
