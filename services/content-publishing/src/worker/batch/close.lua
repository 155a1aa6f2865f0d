-- Closes a batch: no row joins it afterwards (its schema's pointer no longer names it).
--
-- KEYS[1] the batch
-- KEYS[2] the schema's pointer to its open batch
-- ARGV[1] the batch id
-- Returns 0 when the batch is gone (written and cleared before), 1 otherwise (closed now or before).
local batch = KEYS[1]
local openPointer = KEYS[2]
local batchId = ARGV[1]

local state = redis.call('HGET', batch, 'state')
if not state then return 0 end
if state == 'open' then
  redis.call('HSET', batch, 'state', 'closed')
  if redis.call('GET', openPointer) == batchId then redis.call('DEL', openPointer) end
end
return 1
