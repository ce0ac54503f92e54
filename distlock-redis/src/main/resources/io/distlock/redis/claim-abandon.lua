-- claim-abandon.lua: an owner gave up waiting (timeout, interrupt, close, a failed round trip): remove its queue entry
-- and a hold of the claim's mode that it was granted but never heard of, and wake the clients that can pass now.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- ARGV[1]     owner id
-- ARGV[2]     mode: 'x' or 's'
-- ARGV[3]     permits of the claim
-- ARGV[4]     PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[5]     the name's wake channel <prefix>{name}:cw
--
-- Returns 1 when something of the owner's was removed, else 0 (and nothing was changed but the sweep of holds and
-- waiters that had ended by themselves).
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, mode, permits, publish, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

-- #include claim-common.lua

local state = load()
if not state.k then
  clear() -- no hold or waiter left in the other keys is live (see claim-common.lua)
  return 0
end
local now = nowMillis()
local member = mode .. owner
local entry = permits .. member
local changed = false
if redis.call('ZREM', queue, entry) == 1 then
  redis.call('ZREM', deadlines, entry)
  changed = true
end
if redis.call('ZSCORE', holds, member) then
  drop(state, member, redis.call('HGET', grants, member))
  changed = true
end
sweep(state, now)
local entries, evicted = waiters(now)
if (changed or evicted) and not settle(state, entries) then
  wake(state, entries, publish, channel)
end
if changed then
  return 1
end
return 0
