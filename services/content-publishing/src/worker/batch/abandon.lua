-- The batch's job failed its last attempt: the one decision between failing the batch's requests and publishing
-- its file. A batch whose file was noted as stored (written.lua) goes on to be published; any other is abandoned,
-- and written.lua will not note a file for it afterwards, so its requests may fail.
--
-- KEYS[1] the batch
-- ARGV    none
-- Returns 'gone' (written and cleared before), 'written' (its file is stored: hand it on) or 'abandoned' (now or
-- before: its requests fail).
local batch = KEYS[1]
local state = redis.call('HGET', batch, 'state')
if not state then return 'gone' end
if redis.call('HEXISTS', batch, 'fileCid') == 1 then return 'written' end
redis.call('HSET', batch, 'state', 'abandoned')
return 'abandoned'
