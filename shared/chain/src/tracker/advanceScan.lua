-- Moves the tracker's scan position one block on (TransactionTracker.scanOnce), only from where this round of
-- the scan believes it stands: a position that moved under the scanner (a Redis failover lost the latest
-- writes, so the new primary holds an older one) is left alone and the round ends, so that the next round
-- scans again from the stored position and no block's outcomes are skipped.
-- KEYS: [1] the scan position (the last block scanned).
-- ARGV: [1] the block just scanned, [2] the position the round expects ('' when none was stored yet).
-- Answers 1 when moved, 0 when the stored position was not the expected one.
local position = KEYS[1]
local scanned, expected = ARGV[1], ARGV[2]

local stored = redis.call('GET', position)
if (stored == false and expected == '') or stored == expected then
  redis.call('SET', position, scanned)
  return 1
end
return 0
