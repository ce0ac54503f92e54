-- lock-force-release.lua: an operator removes the current hold whoever owns it. The fence counter stays, so the next
-- holder still gets a greater token.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the token of the current hold
-- KEYS[3]  waiter times   <prefix>{name}:waiters  zset of queued owners
-- ARGV[1]  channel to publish the release on
-- ARGV[2]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
--
-- Returns {} when nobody held the lock; else the removed hold as {owner, remainingLeaseMillis, fencingToken, waiters}.
local holdKey, fenceKey, waitersKey = KEYS[1], KEYS[2], KEYS[3]
local channel, publish = ARGV[1], ARGV[2]

local holder = redis.call('GET', holdKey)
if not holder then
  return {}
end
local token = tonumber(redis.call('GET', fenceKey)) or 0
local info = {holder, redis.call('PTTL', holdKey), token, redis.call('ZCARD', waitersKey)}
redis.call('DEL', holdKey)
if publish ~= '' then
  redis.call(publish, channel, 'f')
end
return info
