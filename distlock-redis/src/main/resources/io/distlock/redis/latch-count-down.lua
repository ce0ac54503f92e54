-- latch-count-down.lua: count a latch down by one, once per call id; at zero the latch goes and one message wakes
-- every waiter of every client.
--
-- KEYS[1]  latch      <prefix>{name}:latch  hash: '#' = the count, and one field per count-down id counted
-- KEYS[2]  meta       <prefix>{name}:claim  read only: a name in use as a read-write lock or semaphore is refused
-- KEYS[3]  lock hold  <prefix>{name}:hold   read only: a name held as a lock is refused
-- ARGV[1]  the call id ('<clientId>:c<n>'): a retried call with the same id is not counted again
-- ARGV[2]  expiry in milliseconds, from this change
-- ARGV[3]  PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[4]  the latch's zero channel <prefix>{name}:zero (the message is the channel's name)
--
-- Returns {1, count after the call} (0 when absent or at zero: nothing changes); {-1, kind} when the name is another
-- kind. The commands are the same whatever the number of waiters: one PUBLISH at zero.
local latchKey, meta, lockKey = KEYS[1], KEYS[2], KEYS[3]
local callId, expiry, publish, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local count = redis.call('HGET', latchKey, '#')
if not count then
  local kind = redis.call('HGET', meta, 'k')
  if kind then
    return {-1, kind}
  end
  if redis.call('EXISTS', lockKey) == 1 then
    return {-1, 'lock'}
  end
  return {1, 0}
end
count = tonumber(count)
if count <= 0 or redis.call('HSETNX', latchKey, callId, '1') == 0 then
  return {1, math.max(0, count)}
end
count = redis.call('HINCRBY', latchKey, '#', -1)
if count <= 0 then
  redis.call('DEL', latchKey)
  if publish ~= '' then
    redis.call(publish, channel, channel)
  end
  return {1, 0}
end
redis.call('PEXPIRE', latchKey, expiry)
return {1, count}
