-- claim-acquire.lua: grant a read-write lock's or a semaphore's claim when it fits beside the live holds and beside
-- the waiters queued before it (granted first, in queue order); otherwise, when asked, queue it or refresh its place.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- KEYS[6]     fence counter  <prefix>{name}:fence  integer, the last token issued (shared with locks); never expires
-- KEYS[7]     size           <prefix>{name}:size   a semaphore's size, stored by its first user; never expires
-- KEYS[8]     latch          <prefix>{name}:latch  read only: a name in use as a latch refuses claims
-- KEYS[9]     lock hold      <prefix>{name}:hold   read only: a name held as a lock refuses claims
-- ARGV[1]     kind: 'rw' or 'sem'
-- ARGV[2]     size: the semaphore's permits in all (2147483647 for a read-write lock)
-- ARGV[3]     mode: 'x' exclusive or 's' shared
-- ARGV[4]     permits the hold takes
-- ARGV[5]     owner id
-- ARGV[6]     lease in milliseconds
-- ARGV[7]     '1': join the queue (or refresh the place) when busy; '0': a busy attempt leaves nothing behind
-- ARGV[8]     waiter timeout in milliseconds: a queued owner that does not come back within it is evicted
-- ARGV[9]     PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[10]    the name's wake channel <prefix>{name}:cw
--
-- Returns {1, token} when granted; {0, retryWithinMillis} when busy (the first hold's remaining lease, at most a third
-- of the waiter timeout when anybody is queued); {-1, kind} when the name is in use as another kind; {-2, size} when
-- the semaphore has another size. A shared claim of an owner that holds the name exclusively is granted at once (a
-- downgrade never waits for itself). Grants and queue moves never publish: granting the head of the queue lets nobody
-- behind it pass; an eviction wakes the clients that can pass now.
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local fenceKey, sizeKey, latchKey, lockKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local kind, size, mode, permits, owner = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local lease, queued, waiterTimeout = tonumber(ARGV[6]), ARGV[7] == '1', tonumber(ARGV[8])
local publish, channel = ARGV[9], ARGV[10]

-- #include claim-common.lua

local other = otherKind(kind, latchKey, lockKey)
if other then
  return {-1, other}
end
if kind == 'sem' then
  local stored = redis.call('GET', sizeKey)
  if not stored then
    redis.call('SET', sizeKey, size)
  elseif tonumber(stored) ~= size then
    return {-2, tonumber(stored)}
  end
end

local now = nowMillis()
local evicted = sweep(now)
local member = mode .. owner
local entry = permits .. member
local granted = true
if not (mode == 's' and redis.call('HGET', meta, 'x') == 'x' .. owner) then
  local state = held()
  for _, e in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
    if e == entry then
      break
    end
    local p, m = parseEntry(e)
    if not fits(state, size, m, p) then
      granted = false
      break
    end
    take(state, m, p)
  end
  granted = granted and fits(state, size, mode, permits)
end

if granted then
  drop(member) -- a hold of this owner and mode that the client lost track of ends with the new grant
  local token = redis.call('INCR', fenceKey)
  redis.call('ZADD', holds, now + lease, member)
  redis.call('HSET', grants, member, permits .. ':' .. string.format('%d', token))
  if mode == 'x' then
    redis.call('HSET', meta, 'x', member)
  else
    redis.call('HINCRBY', meta, 'u', permits)
  end
  redis.call('HSET', meta, 'k', kind, 'n', size)
  if redis.call('ZREM', queue, entry) == 1 then
    redis.call('ZREM', deadlines, entry)
  end
  keep(now)
  if evicted then
    wake(size, publish, channel)
  end
  return {1, token}
end

local first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
local refresh = math.max(1, math.floor(waiterTimeout / 3))
local retry = refresh
if first[2] then
  retry = tonumber(first[2]) - now
end
if queued then
  if not redis.call('ZSCORE', queue, entry) then
    redis.call('ZADD', queue, redis.call('HINCRBY', meta, 's', 1), entry)
  end
  redis.call('ZADD', deadlines, now + waiterTimeout, entry)
  redis.call('HSET', meta, 'k', kind, 'n', size)
end
if queued or redis.call('EXISTS', queue) == 1 then
  retry = math.min(retry, refresh)
end
if queued or evicted then
  keep(now)
end
if evicted then
  wake(size, publish, channel)
end
return {0, math.max(1, retry)}
