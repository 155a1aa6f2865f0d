-- Notes in a batch that its file is stored (its CID and length): from then on the batch's rows are published,
-- never failed with it. Not when the batch is gone (another job wrote and cleared it; a note would leave a hash
-- behind that nothing deletes) or was abandoned (its job failed for good and its requests with it, abandon.lua):
-- then the file must not be handed on.
--
-- KEYS[1] the batch
-- ARGV[1] the file's CID
-- ARGV[2] the file's length in bytes
-- Returns 1 when noted, 0 when the batch is gone or abandoned.
local batch = KEYS[1]
local fileCid = ARGV[1]
local fileSize = ARGV[2]
local state = redis.call('HGET', batch, 'state')
if not state or state == 'abandoned' then return 0 end
redis.call('HSET', batch, 'fileCid', fileCid, 'fileSize', fileSize)
return 1
