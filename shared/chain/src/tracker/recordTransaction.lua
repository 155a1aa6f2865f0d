-- Writes a transaction's record with the caller's own writes, all or nothing: records it before it is submitted
-- (TransactionTracker.record), or forgets one the node refused (TransactionTracker.forget).
-- Recording is refused when the outcome was already settled: a record written again after its outcome (a write
-- delayed by a Redis failover) would otherwise come back and be settled a second time, expired. Both are refused
-- when the writing job run no longer holds its claims (RunClaim): a later run of the same job acts instead, and a
-- stale run must neither record a second transaction nor forget the later run's. Every write here is idempotent.
-- KEYS: [1] the pending records (hash), [2] the transaction's jobs (set), [3] its settled marker, then one key per
--   claim, then the caller's keys, one per write.
-- ARGV: [1] 'record' or 'forget', [2] the transaction hash, [3] its record (JSON; '' to forget), [4] the number
--   of jobs n, [5..4+n] the jobs, then the number of claims c and per claim its field ('' for a string key) and
--   token, then per caller write: 'set' (the key), 'hset' (a field of the hash) or 'del', the field, the value,
--   the TTL (s).
-- Answers 1 when written (or written already), 0 when recording a settled transaction (nothing is written), -i
-- when the i-th claim is lost (nothing is written).
local pending, jobs, settled = KEYS[1], KEYS[2], KEYS[3]
local mode, hash, record, jobCount = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local claimCount = tonumber(ARGV[5 + jobCount])

local firstClaimArg = 6 + jobCount
for index = 1, claimCount do
  local claim = KEYS[3 + index]
  local field, token = ARGV[firstClaimArg + 2 * (index - 1)], ARGV[firstClaimArg + 2 * (index - 1) + 1]
  local held
  if field == '' then held = redis.call('GET', claim) else held = redis.call('HGET', claim, field) end
  if held ~= token then return -index end
end
if mode == 'record' then
  if redis.call('EXISTS', settled) == 1 then return 0 end
  redis.call('HSETNX', pending, hash, record)
  for index = 1, jobCount do
    redis.call('SADD', jobs, ARGV[4 + index])
  end
else
  redis.call('HDEL', pending, hash)
  redis.call('DEL', jobs)
end
local firstWriteArg = firstClaimArg + 2 * claimCount
for index = 4 + claimCount, #KEYS do
  local key = KEYS[index]
  local at = firstWriteArg + (index - 4 - claimCount) * 4
  local op, field, value, ttl = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  if op == 'set' then
    redis.call('SET', key, value, 'EX', ttl)
  elseif op == 'hset' then
    redis.call('HSET', key, field, value)
    redis.call('EXPIRE', key, ttl)
  else
    redis.call('DEL', key)
  end
end
return 1
