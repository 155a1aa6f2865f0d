-- Shared by join.lua and withdraw.lua (prepended to each when it is loaded, see book.ts): where one acceptance
-- of a request stands. A request's membership is '<acceptance> <batchId>' (that acceptance joined the batch) or
-- '<acceptance> !' (that acceptance was withdrawn); acceptances are ISO 8601 times, ordered as text.
--
-- standingOf(membership key, acceptance) returns
--   'free'                 no membership, or an earlier acceptance's: this one may join or be withdrawn;
--   'joined', batchId      this acceptance joined that batch (a membership without an acceptance, written before
--                          acceptances were kept, counts as this one's);
--   'withdrawn'            this acceptance was withdrawn;
--   'superseded'           a later acceptance holds the request.
-- KEYS: none of its own (the membership key is the caller's KEYS[2] in join.lua, KEYS[1] in withdraw.lua).
-- ARGV: none of its own (the acceptance is the caller's ARGV[10] in join.lua, ARGV[1] in withdraw.lua).
local function standingOf(membership, acceptance)
  local member = redis.call('GET', membership)
  if not member then return 'free' end
  local memberAcceptance, memberBatch = string.match(member, '^(%S+) (%S+)$')
  if not memberAcceptance then return 'joined', member end
  if memberAcceptance > acceptance then return 'superseded' end
  if memberAcceptance < acceptance then return 'free' end
  if memberBatch == '!' then return 'withdrawn' end
  return 'joined', memberBatch
end
