-- lock-abandon.lua: an owner gave up waiting. Remove its queue entry and a hold it may have been granted without
-- seeing the answer, so nothing is left that nobody owns; if the lock is then free, wake one waiting client.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  queue          <prefix>{name}:queue    list of queued owner ids
-- KEYS[3]  waiter times   <prefix>{name}:waiters  zset owner id -> deadline
-- KEYS[4]  wait order     <prefix>{name}:wq       waiting client id -> time it started waiting (optional: without
-- KEYS[5]  wait deadlines <prefix>{name}:wd       waiting client id -> time it comes back by   KEYS[4..5] nobody is woken)
-- ARGV[1]  owner id
-- ARGV[2]  wake channel prefix: a client is woken on ARGV[2] .. <client id>
-- ARGV[3]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
-- ARGV[4]  wake-up message: the name's tag <prefix>{name}
--
-- Returns 1 when something of the owner's was removed, 0 when there was nothing (a no-op).
-- #include wake-one.lua
local holdKey, queueKey, waitersKey = KEYS[1], KEYS[2], KEYS[3]
local owner, wakePrefix, publish, payload = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local changed = 0
if redis.call('ZREM', waitersKey, owner) == 1 then
  redis.call('LREM', queueKey, 1, owner)
  changed = 1
end
if redis.call('GET', holdKey) == owner then
  redis.call('DEL', holdKey)
  changed = 1
end
if changed == 1 and KEYS[5] and redis.call('EXISTS', holdKey) == 0 then
  wakeOne(queueKey, waitersKey, KEYS[4], KEYS[5], wakePrefix, payload, publish, nil)
end
return changed
