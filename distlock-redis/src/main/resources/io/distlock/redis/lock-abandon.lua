-- lock-abandon.lua: an owner gave up waiting. Remove its queue entry and a hold it may have been granted without
-- seeing the answer, so nothing is left that nobody owns.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  queue          <prefix>{name}:queue    list of queued owner ids
-- KEYS[3]  waiter times   <prefix>{name}:waiters  zset owner id -> deadline
-- ARGV[1]  owner id
-- ARGV[2]  channel to publish on when the lock or the queue's head changed
-- ARGV[3]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
--
-- Returns 1 when something of the owner's was removed, 0 when there was nothing (a no-op).
local holdKey, queueKey, waitersKey = KEYS[1], KEYS[2], KEYS[3]
local owner, channel, publish = ARGV[1], ARGV[2], ARGV[3]

local changed = 0
if redis.call('ZREM', waitersKey, owner) == 1 then
  redis.call('LREM', queueKey, 1, owner)
  changed = 1
end
if redis.call('GET', holdKey) == owner then
  redis.call('DEL', holdKey)
  changed = 1
end
if changed == 1 then
  if publish ~= '' then
    redis.call(publish, channel, 'a')
  end
end
return changed
