-- Gives a lease up (RedisLeaseLock.release), only when this identity holds it.
-- KEYS: [1] the lease hash.
-- ARGV: [1] the identity giving it up.
-- Answers 1 when released, 0 when someone else (or nobody) held it.
local lease = KEYS[1]
local identity = ARGV[1]

if redis.call('HGET', lease, 'holder') == identity then return redis.call('DEL', lease) end
return 0
