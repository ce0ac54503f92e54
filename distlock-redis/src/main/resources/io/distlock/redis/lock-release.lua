-- lock-release.lua: end the owner's hold; give the lock to the next waiting client, or free it (see wake-one.lua).
-- The releasing client's own registrations are dropped, not served: its threads took the lock over locally (hand-off
-- or succession) or are woken by the release inside the client and register again if they still wait, so a release
-- never gives the lock back to its own client as a claim that client would only have to pass on.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  queue          <prefix>{name}:queue    fair-queue owner ids, head first       (KEYS[2..5] optional: without
-- KEYS[3]  waiter times   <prefix>{name}:waiters  fair-queue owner id -> deadline         them the hold is deleted and
-- KEYS[4]  wait order     <prefix>{name}:wq       waiting-client entry -> time it started waiting (µs)   nobody told)
-- KEYS[5]  wait deadlines <prefix>{name}:wd       waiting-client entry -> time it comes back by (ms)
-- KEYS[6]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued (a grant to a waiting client)
-- ARGV[1]  owner id
-- ARGV[2]  wake channel prefix: a client is woken on ARGV[2] .. <client id>
-- ARGV[3]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
-- ARGV[4]  wake-up message: the name's tag <prefix>{name}
-- ARGV[5]  claim time in milliseconds: how long the next waiting client has to take a lock given to it
--
-- Returns 1 when the owner held the lock and now does not; 0 when it did not hold it (nothing is changed).
local holdKey = KEYS[1]
if redis.call('GET', holdKey) ~= ARGV[1] then
  return 0
end
-- an uncontended release (nobody waiting, no fair queue) runs GET, EXISTS, DEL only, and returns before the shared
-- functions below are even defined
if not (KEYS[5] and redis.call('EXISTS', KEYS[4], KEYS[2]) > 0) then
  redis.call('DEL', holdKey)
  return 1
end
-- #include wake-one.lua
local owner, wakePrefix, publish, payload = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
grantNext(holdKey, KEYS[6], KEYS[2], KEYS[3], KEYS[4], KEYS[5], wakePrefix, payload, publish, clientOf(owner),
          math.huge, tonumber(ARGV[5]))
return 1
