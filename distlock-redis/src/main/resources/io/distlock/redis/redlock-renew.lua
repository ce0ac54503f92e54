-- redlock-renew.lua: extends the owner's hold on one RedLock node, owner-checked.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- ARGV[1]  owner id
-- ARGV[2]  key lifetime in milliseconds
--
-- Returns 1 when extended, 0 when the node has no hold for the name, -1 when another owner holds it here. Never
-- creates a hold: a node that misses one is joined by redlock-join.lua, once a majority confirmed the hold.
local holdKey = KEYS[1]
local owner, lifetime = ARGV[1], tonumber(ARGV[2])

local current = redis.call('GET', holdKey)
if current == owner then
  redis.call('PEXPIRE', holdKey, lifetime)
  return 1
end
if current then
  return -1
end
return 0
