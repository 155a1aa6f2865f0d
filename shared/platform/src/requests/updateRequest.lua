-- Moves a request along (RequestStatusStore.update): merges fields into its record, adds a history step when
-- the state changes, and publishes the whole record. A request already in a final state is left alone, and so
-- is one whose job a later run has claimed, when the update is a run's (RunClaim: a stale run ends nothing).
-- KEYS: [1] the record hash, [2] its history list, [3..] the claims the updating run must hold.
-- ARGV: [1] ttl (seconds), [2] the event channel, [3] now (ISO 8601), [4] how many final states, then those
--   states (JSON-encoded), then per claim its field ('' for a string key) and token, then field/JSON-value pairs.
-- Answers 1 when updated, 0 when there is no record, -1 when the record is final, -2 when a claim is lost.
local record, history = KEYS[1], KEYS[2]
local ttl, channel = ARGV[1], ARGV[2]
local at = cjson.encode(ARGV[3])
local finalCount = tonumber(ARGV[4])
local firstFinal, lastFinal = 5, 4 + finalCount
local claimCount = #KEYS - 2
local firstField = lastFinal + 1 + 2 * claimCount
local historyLimit = 50

for i = 1, claimCount do
  local claim, field, token = KEYS[2 + i], ARGV[lastFinal + 2 * i - 1], ARGV[lastFinal + 2 * i]
  local held
  if field == '' then held = redis.call('GET', claim) else held = redis.call('HGET', claim, field) end
  if held ~= token then return -2 end
end
local known = redis.call('HMGET', record, 'state', 'version')
local current = known[1]
if not current then return 0 end
for i = firstFinal, lastFinal do
  if current == ARGV[i] then return -1 end
end
-- One HSET of every field, the version and updatedAt; a history step when the state changes (trimmed only once
-- the list outgrows its limit).
local version = tonumber(known[2] or '0') + 1
redis.call('HSET', record, 'version', version, 'updatedAt', at, unpack(ARGV, firstField, #ARGV))
for i = firstField, #ARGV, 2 do
  if ARGV[i] == 'state' and ARGV[i + 1] ~= current then
    local length = redis.call('RPUSH', history, '{"state":' .. ARGV[i + 1] .. ',"at":' .. at .. '}')
    if length > historyLimit then redis.call('LTRIM', history, -historyLimit, -1) end
  end
end
redis.call('EXPIRE', record, ttl)
redis.call('EXPIRE', history, ttl)
local fields = redis.call('HGETALL', record)
local parts = {}
for i = 1, #fields, 2 do table.insert(parts, '"' .. fields[i] .. '":' .. fields[i + 1]) end
redis.call('PUBLISH', channel, '{' .. table.concat(parts, ',') .. '}')
return 1
