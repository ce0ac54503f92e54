-- claim-common.lua: the functions every claim-*.lua script shares (read-write locks and semaphores). Included by
-- those scripts (LuaScript's '-- #include'), never run alone. The including script declares these locals first:
--
--   meta       KEYS[1]  <prefix>{name}:claim   hash  k = kind ('rw' or 'sem'), n = size, u = permits of the live
--                                                    shared holds, x = member of the exclusive hold, s = the last
--                                                    queue number given
--   holds      KEYS[2]  <prefix>{name}:holds   zset  member -> expiry (server time, ms); member = mode ('x' exclusive
--                                                    or 's' shared) .. owner id
--   grants     KEYS[3]  <prefix>{name}:grants  hash  member -> '<permits>:<fencing token>'
--   queue      KEYS[4]  <prefix>{name}:cq      zset  entry -> queue number; entry = permits .. member
--   deadlines  KEYS[5]  <prefix>{name}:cd      zset  entry -> server time (ms) by which its owner must come back
--
-- All five keys of a name carry one TTL, the latest hold expiry or waiter deadline (keep), and go when the name has
-- neither holds nor waiters: an abandoned name leaves nothing behind.

-- The server's time in milliseconds.
local function nowMillis()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The fencing token stored with a hold ('<permits>:<token>').
local function tokenOf(grant)
  return string.match(grant, ':(%d+)$')
end

-- Ends one hold, wherever it is in its lease: takes its permits (or the exclusive mark) back.
local function drop(member)
  local grant = redis.call('HGET', grants, member)
  if grant then
    if string.sub(member, 1, 1) == 'x' then
      redis.call('HDEL', meta, 'x')
    else
      redis.call('HINCRBY', meta, 'u', -tonumber(string.match(grant, '^(%d+)')))
    end
    redis.call('HDEL', grants, member)
  end
  redis.call('ZREM', holds, member)
end

-- Ends the holds whose lease has run out and evicts the waiters past their deadline (dead clients); returns whether a
-- waiter was evicted, which may let the waiters behind it pass.
local function sweep(now)
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', holds, '-inf', now)) do
    drop(member)
  end
  local dead = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  if #dead == 0 then
    return false
  end
  for _, entry in ipairs(dead) do
    redis.call('ZREM', queue, entry)
    redis.call('ZREM', deadlines, entry)
  end
  return true
end

-- What a grant decision needs of the live holds (call sweep first).
local function held()
  return {
    x = redis.call('HEXISTS', meta, 'x') == 1,
    any = redis.call('ZCARD', holds) > 0,
    used = tonumber(redis.call('HGET', meta, 'u') or '0')
  }
end

-- Whether a claim fits beside `state`: exclusive when nothing is held, shared while nothing is held exclusively and
-- the permits fit the size.
local function fits(state, size, mode, permits)
  if mode == 'x' then
    return not state.any
  end
  return not state.x and state.used + permits <= size
end

-- Adds a granted (or, in a simulation, a would-be granted) claim to `state`.
local function take(state, mode, permits)
  state.any = true
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

-- Gives every key of the name the TTL of its latest hold or waiter, or deletes them all when it has neither.
local function keep(now)
  local lastHold = redis.call('ZRANGE', holds, -1, -1, 'WITHSCORES')
  local lastWait = redis.call('ZRANGE', deadlines, -1, -1, 'WITHSCORES')
  local till = 0
  if lastHold[2] then
    till = tonumber(lastHold[2])
  end
  if lastWait[2] and tonumber(lastWait[2]) > till then
    till = tonumber(lastWait[2])
  end
  if till <= now then
    redis.call('DEL', meta, holds, grants, queue, deadlines)
    return
  end
  local ttl = till - now
  redis.call('PEXPIRE', meta, ttl)
  redis.call('PEXPIRE', holds, ttl)
  redis.call('PEXPIRE', grants, ttl)
  if lastWait[2] then
    redis.call('PEXPIRE', queue, ttl)
    redis.call('PEXPIRE', deadlines, ttl)
  end
end

-- Tells the waiters the name would grant now, walking the queue from its head as the grants would go, with one
-- message on the name's channel: '<channel>:<owner>:<owner>...', each owner '<client id>:<suffix>' (neither part
-- contains ':'), so a client wakes only the waiters named. Sends nothing when nobody waits, when the head cannot
-- pass, or when publish is '' (clients that poll).
local function wake(size, publish, channel)
  if publish == '' then
    return
  end
  local entries = redis.call('ZRANGE', queue, 0, -1)
  if #entries == 0 then
    return
  end
  local state = held()
  local owners = {}
  for _, entry in ipairs(entries) do
    local permits, mode, owner = parseEntry(entry)
    if not fits(state, size, mode, permits) then
      break
    end
    take(state, mode, permits)
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
