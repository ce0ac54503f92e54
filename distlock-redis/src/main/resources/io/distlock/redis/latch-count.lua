-- latch-count.lua: a latch's current count.
--
-- KEYS[1]  latch      <prefix>{name}:latch  hash, '#' = the count
-- KEYS[2]  meta       <prefix>{name}:claim  read only: a name in use as a read-write lock or semaphore is refused
-- KEYS[3]  lock hold  <prefix>{name}:hold   read only: a name held as a lock is refused
--
-- Returns {1, count} (0 when absent); {-1, kind} when the name is in use as another kind.
local latchKey, meta, lockKey = KEYS[1], KEYS[2], KEYS[3]

local count = redis.call('HGET', latchKey, '#')
if count then
  return {1, tonumber(count)}
end
local kind = redis.call('HGET', meta, 'k')
if kind then
  return {-1, kind}
end
if redis.call('EXISTS', lockKey) == 1 then
  return {-1, 'lock'}
end
return {1, 0}
