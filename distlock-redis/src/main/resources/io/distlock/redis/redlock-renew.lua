-- redlock-renew.lua: extends the owner's hold on one RedLock node, owner-checked.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- ARGV[1]  owner id
-- ARGV[2]  key lifetime in milliseconds
--
-- Returns 1 when extended, 0 when the node has no hold of the owner (never creates one).
local holdKey = KEYS[1]
local owner, lifetime = ARGV[1], tonumber(ARGV[2])

if redis.call('GET', holdKey) == owner then
  redis.call('PEXPIRE', holdKey, lifetime)
  return 1
end
return 0
