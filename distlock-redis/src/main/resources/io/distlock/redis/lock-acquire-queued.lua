-- lock-acquire-queued.lua: take the exclusive hold of one lock name through its fair queue: the owner joins the queue
-- (or keeps its place in it) and is granted the lock only at the head of the queue with the lock free.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id; expires with the lease
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued; never expires
-- KEYS[3]  queue          <prefix>{name}:queue    list of queued owner ids, head first
-- KEYS[4]  waiter times   <prefix>{name}:waiters  zset owner id -> server time (ms) by which it must come back
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds
-- ARGV[3]  waiter timeout in milliseconds: a queued owner that does not come back within it is evicted
-- KEYS[5]  wait order     <prefix>{name}:wq       waiting client id -> time it started waiting (optional)
-- KEYS[6]  wait deadlines <prefix>{name}:wd       waiting client id -> time it comes back by   (optional)
-- ARGV[4]  wake channel prefix: when the queue's head changes, the new head's client is woken on ARGV[4] .. <client>
-- ARGV[5]  publish command: PUBLISH, SPUBLISH (sharded pub/sub), or '' to publish nothing (spin waiting)
-- ARGV[6]  wake-up message: the name's tag <prefix>{name} (optional: without it nobody is woken)
-- ARGV[7]  entry '<clientId>:w<n>s<spare>' of the owner's client while it waits: a grant removes it from the waiting
--          clients. A fair grant reserves no spare tokens: its grants follow the queue, not the client
--
-- Returns {1, fencingToken} when acquired; {0, retryWithinMillis} when busy. A hold of the same owner counts as busy.
local holdKey, fenceKey, queueKey, waitersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMillis = ARGV[1], tonumber(ARGV[2])
local waiterTimeout, wakePrefix, publish, payload = tonumber(ARGV[3]), ARGV[4], ARGV[5], ARGV[6]
local entry = ARGV[7]

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
  if entry and KEYS[6] then
    redis.call('ZREM', KEYS[5], entry)
    redis.call('ZREM', KEYS[6], entry)
  end
  return {1, redis.call('INCR', fenceKey)}
end

redis.call('ZADD', waitersKey, now + waiterTimeout, owner)
redis.call('PEXPIRE', waitersKey, waiterTimeout)
redis.call('PEXPIRE', queueKey, waiterTimeout)
if head ~= oldHead and oldHead and head and not holder and payload and publish ~= '' then
  -- a dead head was evicted and the lock is free: wake the new head's client, unless it is the caller's own
  local headClient = string.match(head, '^[^:]+')
  if headClient and headClient ~= string.match(owner, '^[^:]+') then
    redis.call(publish, wakePrefix .. headClient, payload)
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
