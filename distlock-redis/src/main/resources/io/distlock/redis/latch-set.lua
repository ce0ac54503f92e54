-- latch-set.lua: set a count-down latch's count if the latch is absent or at zero.
--
-- KEYS[1]  latch      <prefix>{name}:latch  hash: '#' = the count, and one field per count-down id it has counted;
--                                           expires ARGV[2] after its last change, and goes at zero
-- KEYS[2]  meta       <prefix>{name}:claim  read only: a name in use as a read-write lock or semaphore is refused
-- KEYS[3]  lock hold  <prefix>{name}:hold   read only: a name held as a lock is refused
-- ARGV[1]  the count (positive)
-- ARGV[2]  expiry in milliseconds
--
-- Returns {1, 1} when set, {1, 0} when the latch is counting already, {-1, kind} when the name is another kind.
local latchKey, meta, lockKey = KEYS[1], KEYS[2], KEYS[3]
local count, expiry = ARGV[1], ARGV[2]

local kind = redis.call('HGET', meta, 'k')
if kind then
  return {-1, kind}
end
if redis.call('EXISTS', lockKey) == 1 then
  return {-1, 'lock'}
end
local current = tonumber(redis.call('HGET', latchKey, '#') or '0')
if current > 0 then
  return {1, 0}
end
redis.call('DEL', latchKey)
redis.call('HSET', latchKey, '#', count)
redis.call('PEXPIRE', latchKey, expiry)
return {1, 1}
