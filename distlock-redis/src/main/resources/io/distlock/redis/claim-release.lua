-- claim-release.lua: end one read-write lock or semaphore hold, owner-checked, and wake the clients whose waiters can
-- pass now.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- ARGV[1]     member: mode ('x' or 's') .. owner id
-- ARGV[2]     the hold's fencing token
-- ARGV[3]     PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[4]     the name's wake channel <prefix>{name}:cw
--
-- Returns 1 when the owner had the hold (that grant, live) and now does not; 0 when it was gone: nothing of anyone
-- else's is changed. One message at most, whatever the number of waiters (see wake in claim-common.lua).
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, token, publish, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

-- #include claim-common.lua

local state = load()
if not state.k then
  clear() -- no hold or waiter left in the other keys is live (see claim-common.lua)
  return 0
end
local now = nowMillis()
sweep(state, now) -- a hold whose lease has run out is gone here, its owner's included
local released = 0
local grant = redis.call('HGET', grants, member)
if grant and tokenOf(grant) == token then
  drop(state, member, grant)
  released = 1
end
local entries, evicted = waiters(now)
if not settle(state, entries) and (released == 1 or evicted) then
  wake(state, entries, publish, channel)
end
return released
