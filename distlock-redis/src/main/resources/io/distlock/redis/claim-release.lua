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

local now = nowMillis()
local released = 0
local grant = redis.call('HGET', grants, member)
if grant and tokenOf(grant) == token then
  local expiry = redis.call('ZSCORE', holds, member)
  if expiry and tonumber(expiry) > now then
    drop(member)
    released = 1
  end
end
local evicted = sweep(now)
local size = tonumber(redis.call('HGET', meta, 'n') or '0')
keep(now)
if released == 1 or evicted then
  wake(size, publish, channel)
end
return released
