-- lock-inspect.lua: read the current hold of one lock name.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the token of the current hold
-- KEYS[3]  waiter times   <prefix>{name}:waiters  zset of queued owners
--
-- Returns {} when nobody holds the lock; else {owner, remainingLeaseMillis, fencingToken, queuedWaiters}.
local holdKey, fenceKey, waitersKey = KEYS[1], KEYS[2], KEYS[3]

local holder = redis.call('GET', holdKey)
if not holder then
  return {}
end
local token = tonumber(redis.call('GET', fenceKey)) or 0
return {holder, redis.call('PTTL', holdKey), token, redis.call('ZCARD', waitersKey)}
