-- claim-handoff.lua: end one read-write lock or semaphore hold, owner-checked, and ask for a waiting claim of the same
-- client in the same step (the engine's hand-off to a local waiter): what claim-release.lua does, then what
-- claim-acquire.lua does for a queued claim of a name in use.
--
-- KEYS[1..5]  meta, holds, grants, queue, deadlines of the name (see claim-common.lua)
-- KEYS[6]     fence counter  <prefix>{name}:fence  integer, the last token issued (shared with locks); never expires
-- ARGV[1]     the ending hold's member: mode ('x' or 's') .. owner id
-- ARGV[2]     the ending hold's fencing token
-- ARGV[3]     the claim's mode: 'x' exclusive or 's' shared
-- ARGV[4]     permits the claim takes
-- ARGV[5]     the claim's owner id
-- ARGV[6]     the claim's lease in milliseconds
-- ARGV[7]     waiter timeout in milliseconds: a queued owner that does not come back within it is evicted
-- ARGV[8]     PUBLISH, SPUBLISH, or '' when nothing is published
-- ARGV[9]     the name's wake channel <prefix>{name}:cw
-- ARGV[10]    the claim's request id: a grant already made for it (by the claim's own attempt) is answered again,
--             its lease restarted, rather than granted twice (see claim-acquire.lua)
--
-- Returns {1, token} when the claim was granted (it fits beside the live holds and the waiters queued before it);
-- {0} when the hold ended and the claim waits in the queue (in its place, or at the end if it had none); {-1} when
-- the hold was gone (that grant, live): nothing of anyone's is changed. One message at most, naming the waiters that
-- can pass once the claim has its share, as a release's.
--
-- Written out in full, as claim-acquire.lua and claim-release.lua are (keys and rules in claim-common.lua); keep them
-- in step.
local meta, holds, grants, queue, deadlines, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local from, fromToken = ARGV[1], ARGV[2]
local mode, permits, owner, lease = ARGV[3], tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
local waiterTimeout, publish, channel, request = tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[10]

local m = redis.call('HMGET', meta, 'k', 'n', 'u', 'x', 'e', 'q')
if not m[1] then
  return {-1} -- no hold of the name is live; claim-release.lua's next call clears what is left
end
local size, used, x = tonumber(m[2]) or 0, tonumber(m[3]) or 0, m[4]
local ke, kq = tonumber(m[5]) or 0, tonumber(m[6]) or 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- the sweep: a hold whose lease has run out is gone here, the ending one's included
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
end
local grant = redis.call('HGET', grants, from)
if not grant or string.match(grant, ':(%d+)$') ~= fromToken then
  return {-1}
end
if string.sub(from, 1, 1) == 'x' then
  redis.call('HDEL', meta, 'x')
  x = false
else
  used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(grant, '^(%d+)')))
end
redis.call('HDEL', grants, from)
redis.call('ZREM', holds, from)

-- the queue after evicting the waiters past their deadline (dead clients)
local entries = redis.call('ZRANGE', queue, 0, -1)
if #entries > 0 then
  local dead = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  if #dead > 0 then
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
local place = 0 -- the claim's position in the queue, 0 when not queued
for i, e in ipairs(entries) do
  if e == entry then
    place = i
    break
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

local answer
local mine = redis.call('HGET', grants, member)
if mine and string.match(mine, 'r(%d+):') == request then
  -- the claim's own attempt got its grant first: the same grant again
  local till = now + lease
  redis.call('ZADD', holds, till, member)
  if till > ke then
    push('e', {meta, holds, grants}, till)
  end
  answer = {1, tonumber(string.match(mine, ':(%d+)$'))}
elseif granted then
  local fresh = not x and used == 0 -- holds and grants went with their last member
  local token = redis.call('INCR', fenceKey)
  if redis.call('ZADD', holds, now + lease, member) == 0 and mode == 's' then
    -- a hold of this owner and mode that the client lost track of ends with the new grant
    local old = redis.call('HGET', grants, member)
    if old then
      used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(old, '^(%d+)')))
    end
  end
  redis.call('HSET', grants, member, permits .. 'r' .. request .. ':' .. string.format('%d', token))
  if mode == 'x' then
    redis.call('HSET', meta, 'x', member)
    x = member
  else
    redis.call('HINCRBY', meta, 'u', permits)
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
  elseif fresh then
    local at = string.format('%d', ke)
    redis.call('PEXPIREAT', holds, at)
    redis.call('PEXPIREAT', grants, at)
  end
  answer = {1, token}
else
  local fresh = #entries == 0 -- queue and deadlines went with their last entry
  if place == 0 then
    redis.call('ZADD', queue, redis.call('HINCRBY', meta, 's', 1), entry)
    entries[#entries + 1] = entry
  end
  redis.call('ZADD', deadlines, now + waiterTimeout, entry)
  -- cover: every key lives at least as long as the waiter's deadline; keys just created get their expiry
  local till = now + waiterTimeout
  if till > ke then
    push('e', {meta, holds, grants}, till)
  end
  if till > kq then
    push('q', {queue, deadlines}, till)
  elseif fresh then
    local at = string.format('%d', kq)
    redis.call('PEXPIREAT', queue, at)
    redis.call('PEXPIREAT', deadlines, at)
  end
  answer = {0}
end

-- wake: one message naming the waiters that would be granted now, walking the queue from its head
if publish ~= '' and #entries > 0 then
  local owners = {}
  for _, e in ipairs(entries) do
    local p, em, eo = string.match(e, '^(%d+)([xs])(.*)$')
    p = tonumber(p)
    if em == 'x' then
      if x or used > 0 then
        break
      end
      x = true
    else
      if x or used + p > size then
        break
      end
      used = used + p
    end
    owners[#owners + 1] = eo
  end
  if #owners > 0 then
    redis.call(publish, channel, channel .. ':' .. table.concat(owners, ':'))
  end
end
return answer
