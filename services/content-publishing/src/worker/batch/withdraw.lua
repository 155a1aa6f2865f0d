-- Withdraws an acceptance of a request from batching (its job failed for good), unless it joined a batch: the
-- one decision between the request failing in the document stage and its row being published with its batch.
-- After it, that acceptance never joins (see join.lua).
--
-- KEYS[1] the request's membership
-- ARGV[1] the acceptance (ISO 8601)
-- ARGV[2] how long the membership is kept (s)
-- Returns {outcome, batchId}: 'withdrawn' (now or before), 'joined' with the batch it joined, or 'superseded'
-- when a later acceptance of the request holds the membership (this one is stale).
local membership = KEYS[1]
local acceptance = ARGV[1]
local membershipTtl = ARGV[2]

local standing, joinedBatch = standingOf(membership, acceptance)
if standing == 'joined' then return {'joined', joinedBatch} end
if standing == 'superseded' then return {'superseded', ''} end
if standing == 'withdrawn' then return {'withdrawn', ''} end
redis.call('SET', membership, acceptance .. ' !', 'EX', membershipTtl)
return {'withdrawn', ''}
