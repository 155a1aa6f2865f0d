-- Adds a request's announcement row to the open batch of its schema, opening a batch when there is none, and
-- closes the batch when the row fills it. The request's membership (membership.lua) records the acceptance that
-- joined: an acceptance joins at most once and never after it was withdrawn (withdraw.lua); a later acceptance
-- (the request failed and was posted again) joins anew, an earlier one is superseded.
--
-- KEYS[1]  the schema's pointer to its open batch
-- KEYS[2]  the request's membership
-- ARGV[1]  key prefix of batches (a batch is <prefix><batchId>, its rows and documents hashes beside it)
-- ARGV[2]  id of a new batch, if one opens
-- ARGV[3]  schema id
-- ARGV[4]  referenceId
-- ARGV[5]  the row (JSON)
-- ARGV[6]  rows that fill a batch
-- ARGV[7]  now (ms)
-- ARGV[8]  how long the membership is kept (s)
-- ARGV[9]  the row's ActivityStreams document ('' when it has none)
-- ARGV[10] the acceptance (when the api accepted the request, ISO 8601: ordered as text)
-- ARGV[11] the trace context of the request's span (JSON; '' with tracing off): the batch's span links to it
-- Returns {batchId, rows, openedAt, closed}: rows is the batch's count with this row; -1 when this acceptance
-- had joined before (a retried job: openedAt 0), -2 when it may not join (withdrawn or superseded: batchId '').
local openPointer = KEYS[1]
local membership = KEYS[2]
local batchPrefix = ARGV[1]
local newBatchId = ARGV[2]
local schemaId = ARGV[3]
local referenceId = ARGV[4]
local row = ARGV[5]
local maxRows = tonumber(ARGV[6])
local now = ARGV[7]
local membershipTtl = ARGV[8]
local document = ARGV[9]
local acceptance = ARGV[10]
local traceContext = ARGV[11]

local standing, joinedBatch = standingOf(membership, acceptance)
if standing == 'joined' then return {joinedBatch, -1, 0, 0} end
if standing ~= 'free' then return {'', -2, 0, 0} end

local batchId = redis.call('GET', openPointer)
if not batchId then
  batchId = newBatchId
  redis.call('SET', openPointer, batchId)
  redis.call('HSET', batchPrefix .. batchId, 'schemaId', schemaId, 'openedAt', now, 'state', 'open')
end
local batch = batchPrefix .. batchId
local rows = batch .. ':rows'
redis.call('HSET', rows, referenceId, row)
if document ~= '' then redis.call('HSET', batch .. ':documents', referenceId, document) end
if traceContext ~= '' then redis.call('HSET', batch .. ':traces', referenceId, traceContext) end
redis.call('SET', membership, acceptance .. ' ' .. batchId, 'EX', membershipTtl)

local count = redis.call('HLEN', rows)
local openedAt = tonumber(redis.call('HGET', batch, 'openedAt'))
if count >= maxRows then
  redis.call('HSET', batch, 'state', 'closed')
  redis.call('DEL', openPointer)
  return {batchId, count, openedAt, 1}
end
return {batchId, count, openedAt, 0}
