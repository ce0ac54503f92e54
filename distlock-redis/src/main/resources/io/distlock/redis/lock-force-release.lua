-- lock-force-release.lua: an operator removes the current hold, whoever owns it or only when one owner does. The fence
-- counter stays, so the next holder still gets a greater token. One waiting client is woken.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the token of the current hold
-- KEYS[3]  waiter times   <prefix>{name}:waiters  zset of queued owners
-- KEYS[4]  queue          <prefix>{name}:queue    fair-queue owner ids (KEYS[4..6] optional: without them nobody is
-- KEYS[5]  wait order     <prefix>{name}:wq       waiting client id -> time it started waiting     woken)
-- KEYS[6]  wait deadlines <prefix>{name}:wd       waiting client id -> time it comes back by
-- ARGV[1]  wake channel prefix: a client is woken on ARGV[1] .. <client id>
-- ARGV[2]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
-- ARGV[3]  wake-up message: the name's tag <prefix>{name}
-- ARGV[4]  owner id (optional): remove the hold only when this owner has it
--
-- Returns {} when nobody held the lock (or not ARGV[4]); else the removed hold as {owner, remainingLeaseMillis,
-- fencingToken, waiters}.
-- #include wake-one.lua
local holdKey, fenceKey, waitersKey = KEYS[1], KEYS[2], KEYS[3]
local wakePrefix, publish, payload = ARGV[1], ARGV[2], ARGV[3]

local holder = redis.call('GET', holdKey)
if not holder or (ARGV[4] and holder ~= ARGV[4]) then
  return {}
end
local token = tonumber(redis.call('GET', fenceKey)) or 0
local info = {holder, redis.call('PTTL', holdKey), token, redis.call('ZCARD', waitersKey)}
redis.call('DEL', holdKey)
if KEYS[6] then
  wakeOne(KEYS[4], waitersKey, KEYS[5], KEYS[6], wakePrefix, payload, publish, nil)
end
return info
