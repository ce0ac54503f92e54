-- lock-acquire.lua: take the exclusive hold of one lock name, either directly (a plain attempt that leaves nothing
-- behind when it fails) or through the name's fair queue (the owner keeps its place and is granted at the head).
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id; expires with the lease
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued; never expires
-- KEYS[3]  queue          <prefix>{name}:queue    list of queued owner ids, head first
-- KEYS[4]  waiter times   <prefix>{name}:waiters  zset owner id -> server time (ms) by which it must come back
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  '1' to join (or keep a place in) the queue, '0' for a plain attempt
-- ARGV[4]  waiter timeout in milliseconds: a queued owner that does not come back within it is evicted
-- ARGV[5]  channel to publish on when the queue's head changes
-- ARGV[6]  publish command: PUBLISH, SPUBLISH (sharded pub/sub), or '' to publish nothing (spin waiting)
--
-- Returns {1, fencingToken} when acquired; {0, retryWithinMillis} when busy.
local holdKey, fenceKey, queueKey, waitersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMillis, queued = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local waiterTimeout, channel, publish = tonumber(ARGV[4]), ARGV[5], ARGV[6]

-- A hold of the same owner counts as busy, like anybody's: the client counts re-entry itself, and an attempt that
-- arrives after a hand-off already gave this owner the lock must not grant it a second time with another token.
if not queued then
  if redis.call('SET', holdKey, owner, 'NX', 'PX', leaseMillis) then
    return {1, redis.call('INCR', fenceKey)}
  end
  local ttl = redis.call('PTTL', holdKey)
  if ttl < 0 then
    ttl = waiterTimeout -- a hold without TTL was not written by this script: do not spin on it
  end
  return {0, math.max(ttl, 1)}
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- evict owners that stopped coming back (a waiter that died)
local oldHead = redis.call('LINDEX', queueKey, 0)
local stale = redis.call('ZRANGEBYSCORE', waitersKey, '-inf', now)
for _, gone in ipairs(stale) do
  redis.call('LREM', queueKey, 1, gone)
  redis.call('ZREM', waitersKey, gone)
end

if not redis.call('ZSCORE', waitersKey, owner) then
  redis.call('RPUSH', queueKey, owner)
end
local head = redis.call('LINDEX', queueKey, 0)
local holder = redis.call('GET', holdKey)

if head == owner and not holder then
  redis.call('LPOP', queueKey)
  redis.call('ZREM', waitersKey, owner)
  redis.call('SET', holdKey, owner, 'PX', leaseMillis)
  return {1, redis.call('INCR', fenceKey)}
end

redis.call('ZADD', waitersKey, now + waiterTimeout, owner)
redis.call('PEXPIRE', waitersKey, waiterTimeout)
redis.call('PEXPIRE', queueKey, waiterTimeout)
if head ~= oldHead and oldHead then
  if publish ~= '' then
    redis.call(publish, channel, 'q')
  end
end

-- come back before the waiter timeout to keep the place, and no later than the holder's lease end
local retry = math.floor(waiterTimeout / 3)
if holder then
  local ttl = redis.call('PTTL', holdKey)
  if ttl >= 0 then
    retry = math.min(retry, ttl)
  end
elseif head then
  -- the lock is free but another owner is first: it must take it before its own deadline
  local headDeadline = tonumber(redis.call('ZSCORE', waitersKey, head))
  if headDeadline then
    retry = math.min(retry, headDeadline - now + 1)
  end
end
return {0, math.max(retry, 1)}
