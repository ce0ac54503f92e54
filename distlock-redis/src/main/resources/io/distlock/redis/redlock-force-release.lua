-- redlock-force-release.lua: the operator's release on one RedLock node: ends the hold of the given owner, or of
-- whoever holds it when no owner is given, and tells waiting clients.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- ARGV[1]  owner id, or '' for any owner
-- ARGV[2]  channel to publish on
-- ARGV[3]  message: the lock name and the released token
--
-- Returns 1 when a hold was deleted, 0 otherwise.
local holdKey = KEYS[1]
local owner, channel, message = ARGV[1], ARGV[2], ARGV[3]

local current = redis.call('GET', holdKey)
if not current or (owner ~= '' and current ~= owner) then
  return 0
end
redis.call('DEL', holdKey)
redis.call('PUBLISH', channel, message)
return 1
