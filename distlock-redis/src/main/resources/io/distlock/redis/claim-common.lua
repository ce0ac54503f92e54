-- claim-common.lua: the functions the claim-*.lua scripts share (read-write locks and semaphores). Included by those
-- scripts (LuaScript's '-- #include'), never run alone; claim-acquire.lua and claim-release.lua carry the same logic
-- written out (Lua creates a script's functions on every call), so a change here goes there too. The including
-- script declares these locals first:
--
--   meta       KEYS[1]  <prefix>{name}:claim   hash  k = kind ('rw' or 'sem'), n = size, u = permits of the live
--                                                    shared holds, x = member of the exclusive hold, s = the last
--                                                    queue number given, e and q = the expiries (server time,
--                                                    ms) of the hold keys and of the queue keys (see cover)
--   holds      KEYS[2]  <prefix>{name}:holds   zset  member -> expiry (server time, ms); member = mode ('x' exclusive
--                                                    or 's' shared) .. owner id
--   grants     KEYS[3]  <prefix>{name}:grants  hash  member -> '<permits>r<request>:<fencing token>', request = the
--                                                    id of the acquire it was granted to (claim-acquire.lua)
--   queue      KEYS[4]  <prefix>{name}:cq      zset  entry -> queue number; entry = permits .. member
--   deadlines  KEYS[5]  <prefix>{name}:cd      zset  entry -> server time (ms) by which its owner must come back
--
-- The keys of a name never expire before a live hold or waiter needs them: meta, holds and grants share one expiry
-- (meta's e), never earlier than any live hold's expiry or waiter's deadline; queue and deadlines share another (q),
-- never earlier than any waiter's deadline (cover; renewal moves e too). Expiries move only when a new hold expiry or
-- waiter deadline passes them, to half a lease (or waiter timeout) beyond it, and are never brought forward. All five
-- keys go when the name has neither holds nor waiters (settle): an abandoned name leaves nothing behind. The meta hash
-- is missing only when no hold or waiter of the name is live: a claim script that finds it missing treats whatever is
-- left in the other keys as ended.

-- The server's time in milliseconds.
local function nowMillis()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The fencing token stored with a hold ('<permits>r<request>:<token>').
local function tokenOf(grant)
  return string.match(grant, ':(%d+)$')
end

-- The permits stored with a hold.
local function permitsOf(grant)
  return tonumber(string.match(grant, '^(%d+)'))
end

-- The name's meta hash, read once per script: kind (false when the hash is missing), size, permits of the live shared
-- holds, the exclusive hold's member (false when none) and the keys' expiries (e, q; see cover). Scripts keep `used`
-- and `x` up to date as they change the holds; a name has live holds exactly when x or used > 0 (every hold has at
-- least one permit).
local function load()
  local m = redis.call('HMGET', meta, 'k', 'n', 'u', 'x', 'e', 'q')
  return {
    k = m[1], n = tonumber(m[2]) or 0, used = tonumber(m[3]) or 0, x = m[4], e = tonumber(m[5]) or 0,
    q = tonumber(m[6]) or 0
  }
end

-- Whether the name has a live hold.
local function busy(state)
  return state.x or state.used > 0
end

-- Ends one hold, wherever it is in its lease: takes its permits (or the exclusive mark) back. `grant` is the hold's
-- grants entry (false when it has none).
local function drop(state, member, grant)
  if grant then
    if string.sub(member, 1, 1) == 'x' then
      redis.call('HDEL', meta, 'x')
      state.x = false
    else
      state.used = redis.call('HINCRBY', meta, 'u', -permitsOf(grant))
    end
    redis.call('HDEL', grants, member)
  end
  redis.call('ZREM', holds, member)
end

-- Ends the holds whose lease has run out; returns the earliest expiry of the live holds (nil when there are none).
-- One ZRANGE when no lease has run out.
local function sweep(state, now)
  local first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
  if first[2] and tonumber(first[2]) <= now then
    for _, member in ipairs(redis.call('ZRANGEBYSCORE', holds, '-inf', now)) do
      drop(state, member, redis.call('HGET', grants, member))
    end
    first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
  end
  return first[2] and tonumber(first[2])
end

-- The queue in order, after evicting the waiters past their deadline (dead clients); and whether a waiter was
-- evicted, which may let the waiters behind it pass. The deadlines are read only when somebody is queued.
local function waiters(now)
  local entries = redis.call('ZRANGE', queue, 0, -1)
  if #entries == 0 then
    return entries, false
  end
  local dead = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  if #dead == 0 then
    return entries, false
  end
  local gone = {}
  for _, entry in ipairs(dead) do
    redis.call('ZREM', queue, entry)
    redis.call('ZREM', deadlines, entry)
    gone[entry] = true
  end
  local live = {}
  for _, entry in ipairs(entries) do
    if not gone[entry] then
      live[#live + 1] = entry
    end
  end
  return live, true
end

-- Whether a claim fits beside `state`: exclusive when nothing is held, shared while nothing is held exclusively and
-- the permits fit the size.
local function fits(state, size, mode, permits)
  if mode == 'x' then
    return not busy(state)
  end
  return not state.x and state.used + permits <= size
end

-- Adds a granted (or, in a simulation, a would-be granted) claim to `state`.
local function take(state, mode, permits)
  if mode == 'x' then
    state.x = true
  else
    state.used = state.used + permits
  end
end

-- A queue entry's permits, mode and owner.
local function parseEntry(entry)
  local permits, mode, owner = string.match(entry, '^(%d+)([xs])(.*)$')
  return tonumber(permits), mode, owner
end

-- Moves the expiry that `keys` share, kept in meta's `field`, to cover `till`: till plus half of (till - now), or
-- their present expiry if that is later (an expiry is never brought forward).
local function push(state, field, keys, now, till)
  local at = till + math.floor((till - now) / 2)
  local ttl = redis.call('PTTL', keys[1])
  if ttl > 0 and now + ttl > at then
    at = now + ttl
  end
  state[field] = at
  at = string.format('%d', at)
  redis.call('HSET', meta, field, at)
  for _, key in ipairs(keys) do
    redis.call('PEXPIREAT', key, at)
  end
end

-- Keeps the keys of the name alive until `till`, a hold expiry (waiter false) or waiter deadline (waiter true) the
-- script has just set. Meta, holds and grants share one expiry, meta's e, never earlier than any live hold's expiry or
-- waiter's deadline; queue and deadlines share meta's q, never earlier than any waiter's deadline. While till is
-- within them, only the keys the script has just created (`created`, which have no expiry yet) are given theirs; past
-- them, they move (push). So they are set about twice per lease or waiter timeout rather than by every script.
local function cover(state, now, till, created, waiter)
  local pushed = {}
  if till > state.e then
    push(state, 'e', {meta, holds, grants}, now, till)
    pushed[meta], pushed[holds], pushed[grants] = true, true, true
  end
  if waiter and till > state.q then
    push(state, 'q', {queue, deadlines}, now, till)
    pushed[queue], pushed[deadlines] = true, true
  end
  for _, key in ipairs(created) do
    if not pushed[key] then
      local at = state.e
      if key == queue or key == deadlines then
        at = state.q
      end
      redis.call('PEXPIREAT', key, string.format('%d', at))
    end
  end
end

-- Deletes every key of the name.
local function clear()
  redis.call('DEL', meta, holds, grants, queue, deadlines)
end

-- Deletes every key of the name when it has neither live holds nor waiters (`entries`, the queue after eviction);
-- returns whether it did.
local function settle(state, entries)
  if busy(state) or #entries > 0 then
    return false
  end
  clear()
  return true
end

-- Tells the waiters the name would grant now, walking the queue (`entries`) from its head as the grants would go,
-- with one message on the name's channel: '<channel>:<owner>:<owner>...', each owner '<client id>:<suffix>' (neither
-- part contains ':'), so a client wakes only the waiters named. Sends nothing when nobody waits, when the head cannot
-- pass, or when publish is '' (clients that poll).
local function wake(state, entries, publish, channel)
  if publish == '' or #entries == 0 then
    return
  end
  local sim = {x = state.x, used = state.used}
  local owners = {}
  for _, entry in ipairs(entries) do
    local permits, mode, owner = parseEntry(entry)
    if not fits(sim, state.n, mode, permits) then
      break
    end
    take(sim, mode, permits)
    owners[#owners + 1] = owner
  end
  if #owners > 0 then
    redis.call(publish, channel, channel .. ':' .. table.concat(owners, ':'))
  end
end

-- The kind the name is in use as when it is not `kind` ('rw', 'sem', 'latch' or 'lock'); false when it is free or
-- in use as `kind`.
local function otherKind(kind, latchKey, lockKey)
  local k = redis.call('HGET', meta, 'k')
  if k then
    if k ~= kind then
      return k
    end
    return false
  end
  if redis.call('EXISTS', latchKey) == 1 then
    return 'latch'
  end
  if redis.call('EXISTS', lockKey) == 1 then
    return 'lock'
  end
  return false
end

-- The name as an operator sees it: {} when it has neither live holds nor waiters; else {kind, size, waiters, then per
-- live hold: member, permits, remaining lease (ms), token}.
local function describe(now)
  local out = {}
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', holds, '(' .. now, '+inf')) do
    local grant = redis.call('HGET', grants, member)
    if grant then
      out[#out + 1] = member
      out[#out + 1] = tonumber(string.match(grant, '^(%d+)'))
      out[#out + 1] = tonumber(redis.call('ZSCORE', holds, member)) - now
      out[#out + 1] = tonumber(tokenOf(grant))
    end
  end
  local waiters = redis.call('ZCOUNT', deadlines, '(' .. now, '+inf')
  if #out == 0 and waiters == 0 then
    return {}
  end
  local header = {redis.call('HGET', meta, 'k') or '', tonumber(redis.call('HGET', meta, 'n') or '0'), waiters}
  for _, v in ipairs(out) do
    header[#header + 1] = v
  end
  return header
end
