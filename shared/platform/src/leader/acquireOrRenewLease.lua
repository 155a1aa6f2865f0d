-- Takes a free lease or renews one this identity holds (RedisLeaseLock.tryAcquireOrRenew). The lease is a
-- hash {holder, token} whose TTL is the lease duration: Redis itself expires a dead leader. Each new holder
-- gets the next fencing token.
-- KEYS: [1] the lease hash, [2] the fencing counter.
-- ARGV: [1] the identity asking, [2] the lease duration (ms).
-- Answers {1 when held by the identity now, else 0; the holder; the holder's token}.
local lease, fence = KEYS[1], KEYS[2]
local identity, durationMs = ARGV[1], ARGV[2]

local holder = redis.call('HGET', lease, 'holder')
if holder == identity then
  redis.call('PEXPIRE', lease, durationMs)
  return {1, holder, tonumber(redis.call('HGET', lease, 'token'))}
end
if holder then
  return {0, holder, tonumber(redis.call('HGET', lease, 'token'))}
end
local token = redis.call('INCR', fence)
redis.call('HSET', lease, 'holder', identity, 'token', token)
redis.call('PEXPIRE', lease, durationMs)
return {1, identity, token}
