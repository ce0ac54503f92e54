-- claim-force-release.lua: the operator ends every hold of a read-write lock or semaphore, or every hold of one owner
-- (whatever its mode), and the clients whose waiters can pass now are woken. Queue entries stay.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- ARGV[1]     PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[2]     the name's wake channel <prefix>{name}:cw
-- ARGV[3]     owner id (optional): only this owner's holds
--
-- Returns the name as it was before (describe's answer, see claim-common.lua), or {} when no hold was ended.
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local publish, channel, owner = ARGV[1], ARGV[2], ARGV[3]

-- #include claim-common.lua

local state = load()
if not state.k then
  clear() -- no hold or waiter left in the other keys is live (see claim-common.lua)
  return {}
end
local now = nowMillis()
sweep(state, now)
local entries, evicted = waiters(now)
local before = describe(now)
local ended = false
if owner then
  for _, member in ipairs({'x' .. owner, 's' .. owner}) do
    if redis.call('ZSCORE', holds, member) then
      drop(state, member, redis.call('HGET', grants, member))
      ended = true
    end
  end
else
  for _, member in ipairs(redis.call('ZRANGE', holds, 0, -1)) do
    drop(state, member, redis.call('HGET', grants, member))
    ended = true
  end
end
if not settle(state, entries) and (ended or evicted) then
  wake(state, entries, publish, channel)
end
if not ended then
  return {}
end
return before
