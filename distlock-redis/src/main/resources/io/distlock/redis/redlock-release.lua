-- redlock-release.lua: ends the owner's hold on one RedLock node, owner-checked, and tells waiting clients.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- ARGV[1]  owner id
-- ARGV[2]  channel to publish on, or '' for a silent release (a round that did not win a majority)
-- ARGV[3]  message: the lock name and the released token
--
-- Returns 1 when the owner's hold was deleted, 0 when the node had none of the owner's.
local holdKey = KEYS[1]
local owner, channel, message = ARGV[1], ARGV[2], ARGV[3]

if redis.call('GET', holdKey) ~= owner then
  return 0
end
redis.call('DEL', holdKey)
if channel ~= '' then
  redis.call('PUBLISH', channel, message)
end
return 1
