-- Records a signed transaction before it is submitted (TransactionTracker.record), with the caller's own
-- writes, all or nothing, unless its outcome was already settled. A record written again after its outcome
-- (a write delayed by a Redis failover, or a job run twice at once) would otherwise come back and be settled
-- a second time, expired. Every write here is idempotent: writing it again changes nothing that stayed.
-- KEYS: [1] the pending records (hash), [2] the transaction's jobs (set), [3] its settled marker,
--   [4..] the caller's keys, one per write.
-- ARGV: [1] the transaction hash, [2] its record (JSON), [3] the number of jobs n, [4..3+n] the jobs, then
--   per caller write: the field ('' sets the key itself), the value, its TTL (s).
-- Answers 1 when recorded (or recorded already), 0 when its outcome is settled (nothing is written).
local pending, jobs, settled = KEYS[1], KEYS[2], KEYS[3]
local hash, record, jobCount = ARGV[1], ARGV[2], tonumber(ARGV[3])

if redis.call('EXISTS', settled) == 1 then
  return 0
end
redis.call('HSETNX', pending, hash, record)
for index = 1, jobCount do
  redis.call('SADD', jobs, ARGV[3 + index])
end
local first = 4 + jobCount
for index = 4, #KEYS do
  local key = KEYS[index]
  local at = first + (index - 4) * 3
  local field, value, ttl = ARGV[at], ARGV[at + 1], ARGV[at + 2]
  if field == '' then
    redis.call('SET', key, value, 'EX', ttl)
  else
    redis.call('HSET', key, field, value)
    redis.call('EXPIRE', key, ttl)
  end
end
return 1
