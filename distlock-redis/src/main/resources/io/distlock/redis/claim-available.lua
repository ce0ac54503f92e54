-- claim-available.lua: how many of a read-write lock's or semaphore's permits no live hold has. Changes nothing.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- KEYS[6]     size       <prefix>{name}:size   a semaphore's stored size
-- KEYS[7]     latch      <prefix>{name}:latch  a name in use as a latch is refused
-- KEYS[8]     lock hold  <prefix>{name}:hold   a name held as a lock is refused
-- ARGV[1]     kind: 'rw' or 'sem'
-- ARGV[2]     size asked for
--
-- Returns {1, available} (0 while anybody holds the name exclusively); {-1, kind} when the name is in use as another
-- kind; {-2, size} when the semaphore has another size. Holds past their lease count as gone.
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local sizeKey, latchKey, lockKey = KEYS[6], KEYS[7], KEYS[8]
local kind, size = ARGV[1], tonumber(ARGV[2])

-- #include claim-common.lua

local other = otherKind(kind, latchKey, lockKey)
if other then
  return {-1, other}
end
if kind == 'sem' then
  local stored = redis.call('GET', sizeKey)
  if stored and tonumber(stored) ~= size then
    return {-2, tonumber(stored)}
  end
end
local used = 0
for _, member in ipairs(redis.call('ZRANGEBYSCORE', holds, '(' .. nowMillis(), '+inf')) do
  if string.sub(member, 1, 1) == 'x' then
    return {1, 0}
  end
  local grant = redis.call('HGET', grants, member)
  if grant then
    used = used + tonumber(string.match(grant, '^(%d+)'))
  end
end
return {1, size - used}
