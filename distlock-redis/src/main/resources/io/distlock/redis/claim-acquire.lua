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

local state = load()
local known = state.k == kind and state.n == size
if not known then
  -- the slow path: a name not in use (meta missing), or meta and the call disagree on kind or size
  if state.k and state.k ~= kind then
    return {-1, state.k}
  end
  if not state.k then
    if redis.call('EXISTS', latchKey) == 1 then
      return {-1, 'latch'}
    end
    if redis.call('EXISTS', lockKey) == 1 then
      return {-1, 'lock'}
    end
  end
  if kind == 'sem' then
    local stored = redis.call('GET', sizeKey)
    if not stored then
      redis.call('SET', sizeKey, size)
    elseif tonumber(stored) ~= size then
      return {-2, tonumber(stored)}
    end
  end
  if not state.k then
    clear() -- no hold or waiter left in the other keys is live (see claim-common.lua)
    state = {k = false, n = size, used = 0, x = false, e = 0, q = 0}
  end
end

local now = nowMillis()
local first = sweep(state, now)
local entries, evicted = waiters(now)
local member = mode .. owner
local entry = permits .. member
local place = 0 -- the entry's position in the queue, 0 when not queued
for i, e in ipairs(entries) do
  if e == entry then
    place = i
    break
  end
end
local granted = true
if not (mode == 's' and state.x == 'x' .. owner) then
  local sim = {x = state.x, used = state.used}
  local before = #entries
  if place > 0 then
    before = place - 1
  end
  for i = 1, before do
    local p, m = parseEntry(entries[i])
    if not fits(sim, size, m, p) then
      granted = false
      break
    end
    take(sim, m, p)
  end
  granted = granted and fits(sim, size, mode, permits)
end

if granted then
  local created = {}
  if not busy(state) then
    created = {holds, grants} -- both are missing while nothing is held
  end
  local token = redis.call('INCR', fenceKey)
  if redis.call('ZADD', holds, now + lease, member) == 0 and mode == 's' then
    -- a hold of this owner and mode that the client lost track of ends with the new grant
    local old = redis.call('HGET', grants, member)
    if old then
      state.used = redis.call('HINCRBY', meta, 'u', -permitsOf(old))
    end
  end
  redis.call('HSET', grants, member, permits .. ':' .. string.format('%d', token))
  if known then
    if mode == 'x' then
      redis.call('HSET', meta, 'x', member)
    else
      redis.call('HINCRBY', meta, 'u', permits)
    end
  else
    if not state.k then
      created[#created + 1] = meta
    end
    if mode == 'x' then
      redis.call('HSET', meta, 'k', kind, 'n', size, 'x', member)
    else
      redis.call('HSET', meta, 'k', kind, 'n', size, 'u', state.used + permits)
    end
  end
  take(state, mode, permits)
  if place > 0 then
    redis.call('ZREM', queue, entry)
    redis.call('ZREM', deadlines, entry)
    table.remove(entries, place)
  end
  cover(state, now, now + lease, created, false)
  if evicted then
    wake(state, entries, publish, channel)
  end
  return {1, token}
end

local refresh = math.max(1, math.floor(waiterTimeout / 3))
local retry = refresh
if first then
  retry = first - now
end
if queued then
  local created = {}
  if #entries == 0 then
    created = {queue, deadlines} -- both are missing while nobody waits
  end
  if not state.k then
    created[#created + 1] = meta
  end
  if place == 0 then
    redis.call('ZADD', queue, redis.call('HINCRBY', meta, 's', 1), entry)
    entries[#entries + 1] = entry
  end
  redis.call('ZADD', deadlines, now + waiterTimeout, entry)
  if not known then
    redis.call('HSET', meta, 'k', kind, 'n', size)
  end
  cover(state, now, now + waiterTimeout, created, true)
end
if #entries > 0 then
  retry = math.min(retry, refresh)
end
if evicted and not settle(state, entries) then
  wake(state, entries, publish, channel)
end
return {0, math.max(1, retry)}
