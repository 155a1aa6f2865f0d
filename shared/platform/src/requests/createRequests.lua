-- Records new requests (RequestStatusStore.createMany): each one's record, first history step and event, and,
-- with an outbox, its entry in the outbox stream, all in one script.
-- KEYS: the outbox stream (only when there is one), then for each request its record hash and its history list.
-- ARGV: [1] ttl (seconds), [2] now (ISO 8601), [3] '1' when there is an outbox, [4] how many states a record
--   may restart from, then those states (JSON-encoded); then for each request: its event channel, its number of
--   fields, its field/JSON-value pairs (state among them), its number of outbox fields and their name/value
--   pairs.
-- Answers, for each request, its outcome (created, restarted or existing) and its state now (JSON-encoded).
local ttl = ARGV[1]
local at = cjson.encode(ARGV[2])
local hasOutbox = ARGV[3] == '1'
local restartableCount = tonumber(ARGV[4])
local firstRestartable, lastRestartable = 5, 4 + restartableCount
local outbox = KEYS[1]
local historyLimit = 50

local answers = {}
local cursor = lastRestartable + 1
for k = hasOutbox and 2 or 1, #KEYS, 2 do
  local record, history = KEYS[k], KEYS[k + 1]
  local channel, fieldCount = ARGV[cursor], tonumber(ARGV[cursor + 1])
  local firstField, lastField = cursor + 2, cursor + 1 + 2 * fieldCount
  local entryCount = tonumber(ARGV[lastField + 1])
  local firstEntry, lastEntry = lastField + 2, lastField + 1 + 2 * entryCount
  cursor = lastEntry + 1

  local state
  for i = firstField, lastField, 2 do
    if ARGV[i] == 'state' then state = ARGV[i + 1] end
  end
  local current = redis.call('HGET', record, 'state')
  local outcome = current and 'existing' or 'created'
  if current then
    for i = firstRestartable, lastRestartable do
      if current == ARGV[i] then outcome = 'restarted' end
    end
  end

  if outcome == 'existing' then
    table.insert(answers, outcome)
    table.insert(answers, current)
  else
    local version = 1
    local createdAt = at
    if current then
      local previous = redis.call('HMGET', record, 'version', 'createdAt')
      version = tonumber(previous[1] or '0') + 1
      createdAt = previous[2] or at
      redis.call('DEL', record)
    end
    local parts = {}
    for i = firstField, lastField, 2 do table.insert(parts, '"' .. ARGV[i] .. '":' .. ARGV[i + 1]) end
    redis.call('HSET', record, 'version', version, 'createdAt', createdAt, 'updatedAt', at, unpack(ARGV, firstField, lastField))
    local length = redis.call('RPUSH', history, '{"state":' .. state .. ',"at":' .. at .. '}')
    if length > historyLimit then redis.call('LTRIM', history, -historyLimit, -1) end
    redis.call('EXPIRE', record, ttl)
    redis.call('EXPIRE', history, ttl)
    table.insert(parts, '"version":' .. version)
    table.insert(parts, '"createdAt":' .. createdAt)
    table.insert(parts, '"updatedAt":' .. at)
    redis.call('PUBLISH', channel, '{' .. table.concat(parts, ',') .. '}')
    table.insert(answers, outcome)
    table.insert(answers, state)
  end

  -- A new record, or one still in the state it starts with (its entry may have been lost), gets its entry.
  if hasOutbox and entryCount > 0 and (outcome ~= 'existing' or current == state) then
    redis.call('XADD', outbox, '*', 'outcome', outcome, unpack(ARGV, firstEntry, lastEntry))
  end
end
return answers
