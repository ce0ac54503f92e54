-- claim-inspect.lua: read a read-write lock's or semaphore's live holds and waiters, or a latch's count.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- KEYS[6]     latch  <prefix>{name}:latch  hash, '#' = the count
--
-- Returns {} when the name is not in use as either; {'latch', count, remainingMillis} for a latch; else describe's
-- answer: {kind, size, waiters, then per live hold: member, permits, remaining lease (ms), token}. Changes nothing.
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local latchKey = KEYS[6]

-- #include claim-common.lua

local count = redis.call('HGET', latchKey, '#')
if count then
  return {'latch', tonumber(count), redis.call('PTTL', latchKey)}
end
return describe(nowMillis())
