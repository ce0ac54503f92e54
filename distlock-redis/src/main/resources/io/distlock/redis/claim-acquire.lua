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
-- ARGV[11]    the acquire's request id: a grant made for it (by a hand-off while this attempt was on its way) is
--             answered again, its lease restarted, rather than granted twice (grants hold '<permits>r<request>:<token>')
--
-- Returns {1, token} when granted; {0, retryWithinMillis} when busy (the first hold's remaining lease, at most a third
-- of the waiter timeout when anybody is queued); {-1, kind} when the name is in use as another kind; {-2, size} when
-- the semaphore has another size. A shared claim of an owner that holds the name exclusively is granted at once (a
-- downgrade never waits for itself). Grants and queue moves never publish: granting the head of the queue lets nobody
-- behind it pass; an eviction wakes the clients that can pass now.
--
-- Written out in full rather than with claim-common.lua's functions: a script's functions are created anew on every
-- call (and collected after it), which cost a claim script about a fifth of its Redis time. It does what load,
-- sweep, drop, waiters, fits, take, cover, push, settle and wake of claim-common.lua do (keys and rules there); keep
-- them in step. Two functions stay (push, wake), each used on two paths.
local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local fenceKey, sizeKey, latchKey, lockKey = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local kind, size, mode, permits, owner = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]
local lease, queued, waiterTimeout = tonumber(ARGV[6]), ARGV[7] == '1', tonumber(ARGV[8])
local publish, channel, request = ARGV[9], ARGV[10], ARGV[11]

-- the meta hash: kind (false when missing), size, permits of the live shared holds, exclusive member, key expiries
local m = redis.call('HMGET', meta, 'k', 'n', 'u', 'x', 'e', 'q')
local mk, used, x, ke, kq = m[1], tonumber(m[3]) or 0, m[4], tonumber(m[5]) or 0, tonumber(m[6]) or 0
local n = tonumber(m[2]) or 0 -- the size meta knows (wake walks the queue with it)
local known = mk == kind and n == size
if not known then
  -- the slow path: a name not in use (meta missing), or meta and the call disagree on kind or size
  if mk and mk ~= kind then
    return {-1, mk}
  end
  if not mk then
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
  if not mk then
    -- no hold or waiter left in the other keys is live (see claim-common.lua)
    redis.call('DEL', meta, holds, grants, queue, deadlines)
    n, used, x, ke, kq = size, 0, false, 0, 0
  end
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- the sweep: ends the holds whose lease has run out; first = the earliest expiry of the live holds
local first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) <= now then
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', holds, '-inf', now)) do
    local g = redis.call('HGET', grants, gone)
    if g then
      if string.sub(gone, 1, 1) == 'x' then
        redis.call('HDEL', meta, 'x')
        x = false
      else
        used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(g, '^(%d+)')))
      end
      redis.call('HDEL', grants, gone)
    end
    redis.call('ZREM', holds, gone)
  end
  first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
end
first = first[2] and tonumber(first[2])

-- the queue in order, after evicting the waiters past their deadline (dead clients)
local entries = redis.call('ZRANGE', queue, 0, -1)
local evicted = false
if #entries > 0 then
  local dead = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  if #dead > 0 then
    evicted = true
    local gone = {}
    for _, e in ipairs(dead) do
      redis.call('ZREM', queue, e)
      redis.call('ZREM', deadlines, e)
      gone[e] = true
    end
    local live = {}
    for _, e in ipairs(entries) do
      if not gone[e] then
        live[#live + 1] = e
      end
    end
    entries = live
  end
end

local member = mode .. owner
local entry = permits .. member
local place = 0 -- the entry's position in the queue, 0 when not queued
for i, e in ipairs(entries) do
  if e == entry then
    place = i
    break
  end
end

-- Tells the waiters the name would grant now, as claim-common.lua's wake.
local function wake()
  if publish == '' or #entries == 0 then
    return
  end
  local sx, su = x, used
  local owners = {}
  for _, e in ipairs(entries) do
    local p, em, eo = string.match(e, '^(%d+)([xs])(.*)$')
    p = tonumber(p)
    if em == 'x' then
      if sx or su > 0 then
        break
      end
      sx = true
    else
      if sx or su + p > n then
        break
      end
      su = su + p
    end
    owners[#owners + 1] = eo
  end
  if #owners > 0 then
    redis.call(publish, channel, channel .. ':' .. table.concat(owners, ':'))
  end
end

-- Moves the expiry that `keys` share, kept in meta's `field`, as claim-common.lua's push; returns it.
local function push(field, keys, till)
  local at = till + math.floor((till - now) / 2)
  local ttl = redis.call('PTTL', keys[1])
  if ttl > 0 and now + ttl > at then
    at = now + ttl
  end
  local text = string.format('%d', at)
  redis.call('HSET', meta, field, text)
  for _, key in ipairs(keys) do
    redis.call('PEXPIREAT', key, text)
  end
  return at
end

-- this acquire's own grant, made by a hand-off while this attempt was on its way: the same grant again (hand-offs go
-- only to acquires that may wait, whose attempts all queue)
local mine = queued and redis.call('HGET', grants, member)
if mine and string.match(mine, 'r(%d+):') == request then
  local till = now + lease
  redis.call('ZADD', holds, till, member)
  if till > ke then
    push('e', {meta, holds, grants}, till)
  end
  if evicted then
    wake()
  end
  return {1, tonumber(string.match(mine, ':(%d+)$'))}
end

-- granted: fits beside the live holds and the waiters queued before it (a downgrade never waits for itself)
local granted = true
if not (mode == 's' and x == 'x' .. owner) then
  local sx, su = x, used
  local before = #entries
  if place > 0 then
    before = place - 1
  end
  for i = 1, before do
    local p, em = string.match(entries[i], '^(%d+)([xs])')
    p = tonumber(p)
    if em == 'x' then
      if sx or su > 0 then
        granted = false
        break
      end
      sx = true
    else
      if sx or su + p > size then
        granted = false
        break
      end
      su = su + p
    end
  end
  if granted then
    if mode == 'x' then
      granted = not sx and su == 0
    else
      granted = not sx and su + permits <= size
    end
  end
end

if granted then
  local fresh = not x and used == 0 -- holds and grants are missing while nothing is held
  local token = redis.call('INCR', fenceKey)
  if redis.call('ZADD', holds, now + lease, member) == 0 and mode == 's' then
    -- a hold of this owner and mode that the client lost track of ends with the new grant
    local old = redis.call('HGET', grants, member)
    if old then
      used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(old, '^(%d+)')))
    end
  end
  redis.call('HSET', grants, member, permits .. 'r' .. request .. ':' .. string.format('%d', token))
  if known then
    if mode == 'x' then
      redis.call('HSET', meta, 'x', member)
    else
      redis.call('HINCRBY', meta, 'u', permits)
    end
  elseif mode == 'x' then
    redis.call('HSET', meta, 'k', kind, 'n', size, 'x', member)
  else
    redis.call('HSET', meta, 'k', kind, 'n', size, 'u', used + permits)
  end
  if mode == 'x' then
    x = member
  else
    used = used + permits
  end
  if place > 0 then
    redis.call('ZREM', queue, entry)
    redis.call('ZREM', deadlines, entry)
    table.remove(entries, place)
  end
  -- cover: meta, holds and grants live at least as long as the new hold; keys just created get their expiry
  local till = now + lease
  if till > ke then
    push('e', {meta, holds, grants}, till)
  else
    local at = string.format('%d', ke)
    if fresh then
      redis.call('PEXPIREAT', holds, at)
      redis.call('PEXPIREAT', grants, at)
    end
    if not mk then
      redis.call('PEXPIREAT', meta, at)
    end
  end
  if evicted then
    wake()
  end
  return {1, token}
end

local refresh = math.max(1, math.floor(waiterTimeout / 3))
local retry = refresh
if first then
  retry = first - now
end
if queued then
  local fresh = #entries == 0 -- queue and deadlines are missing while nobody waits
  if place == 0 then
    redis.call('ZADD', queue, redis.call('HINCRBY', meta, 's', 1), entry)
    entries[#entries + 1] = entry
  end
  redis.call('ZADD', deadlines, now + waiterTimeout, entry)
  if not known then
    redis.call('HSET', meta, 'k', kind, 'n', size)
  end
  -- cover: every key lives at least as long as the waiter's deadline; keys just created get their expiry
  local till = now + waiterTimeout
  local pushedE = till > ke
  if pushedE then
    ke = push('e', {meta, holds, grants}, till)
  end
  if till > kq then
    push('q', {queue, deadlines}, till)
  elseif fresh then
    local at = string.format('%d', kq)
    redis.call('PEXPIREAT', queue, at)
    redis.call('PEXPIREAT', deadlines, at)
  end
  if not mk and not pushedE then
    redis.call('PEXPIREAT', meta, string.format('%d', ke))
  end
end
if #entries > 0 then
  retry = math.min(retry, refresh)
end
if evicted then
  if not x and used == 0 and #entries == 0 then
    -- neither holds nor waiters left: the name's keys go
    redis.call('DEL', meta, holds, grants, queue, deadlines)
  else
    wake()
  end
end
return {0, math.max(1, retry)}
