-- redlock-acquire.lua: one RedLock node's vote for an exclusive hold.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- KEYS[2]  fence counter   <prefix>{name}:fence   integer, never expires
-- ARGV[1]  owner id
-- ARGV[2]  key lifetime in milliseconds (the lease plus the clock-drift margin)
--
-- Returns {1, fence} when this node grants (or already granted the owner: a retried attempt), with the node's fence
-- counter after its increment; {0, fence, pttl} when another owner holds the name here.
local holdKey, fenceKey = KEYS[1], KEYS[2]
local owner, lifetime = ARGV[1], tonumber(ARGV[2])

local current = redis.call('GET', holdKey)
if not current then
  redis.call('SET', holdKey, owner, 'PX', lifetime)
  return {1, redis.call('INCR', fenceKey)}
end
local fence = tonumber(redis.call('GET', fenceKey) or '0')
if current == owner then
  redis.call('PEXPIRE', holdKey, lifetime)
  return {1, fence}
end
return {0, fence, redis.call('PTTL', holdKey)}
