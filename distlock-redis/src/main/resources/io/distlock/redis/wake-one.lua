-- wake-one.lua: included (not a script of its own) by every script that may leave a lock free. Instead of publishing
-- to every client (a herd in which each client runs an attempt and all but one fail), it tells ONE waiting client,
-- on that client's own channel.
--
-- Which client: the client of the fair queue's head if the head is live (its deadline has not passed), else the
-- oldest live entry of the waiting clients: <prefix>{name}:wq (zset entry -> server time in µs it started waiting,
-- the order) and <prefix>{name}:wd (zset entry -> server time in ms by which it comes back by itself). An entry is
-- '<clientId>:w<n>s<spare>', n numbering the client's waits for the name, so that a client that leaves one wait never
-- removes the entry of its next, and <spare> the spare tokens its claims ask for (see lock-acquire.lua). A client registers from its busy attempts (lock-acquire.lua, only while it waits)
-- and leaves when it acquires or stops waiting (lock-pass-on.lua). An entry whose deadline has passed is stale (the
-- client died, or was woken and did not come back) and is dropped when it reaches the front.
--
-- A release (grantNext) gives the lock straight to the oldest waiting entry, with a fencing token: the hold becomes
-- '<entry>#<token>' (no owner id has that form) for a short claim time, the counter moves on by 1 + the entry's <spare>
-- (like a plain grant, so the tokens after it are reserved for the client's local successions; an entry without one
-- reserves none), and the entry's client is woken with the message '<payload><entry>#<token>'. That client may take the hold as it is, under that id and with that token, with
-- no round trip (WaitRegistry.onGrant, which checks that the grant is newer than everything it saw of the name and
-- renews it before the claim time ends); or its next waiting attempt (of that wait or a later one) takes it over with
-- its own owner id and lease and a fresh token (lock-acquire.lua). So the lock is never free in between, no barging
-- attempt can take it, and the waiting clients are served in order. A claim not taken in time expires like any hold; a
-- client that stops waiting gives its claim to the next entry (lock-pass-on.lua). A lost or misdirected message costs
-- a waiter at most its own retry time (Busy.retryWithin: the remaining lease of the hold it saw, or of the claim).

local function nowMillis()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- the client id of an owner id '<clientId>:t<n>' / '<clientId>:h<n>', an entry '<clientId>:w<n>' or a grant
-- '<clientId>:w<n>#<token>'
local function clientOf(owner)
  return string.match(owner, '^[^:]+')
end

-- the client id, the wait number and the entry of a hold that a release gave to a waiting client, '<entry>#<token>';
-- nil for any other hold
local function grantOf(hold)
  local entry = string.match(hold, '^([^#]+)#%d+$')
  if not entry then
    return nil
  end
  local client, n = string.match(entry, '^([^:]+):w(%d+)')
  return client, tonumber(n), entry
end

-- the spare tokens a waiting-client entry '<clientId>:w<n>s<spare>' asks for; 0 for an entry without them
local function spareOf(entry)
  return tonumber(string.match(entry, ':w%d+s(%d+)$')) or 0
end

-- The next waiter other than the client skip: 'head', client for a live fair-queue head; 'entry', client, entry for the
-- oldest live waiting-client entry; false when there is none. Entries of skip are passed over, not removed (it may be
-- waiting again by now), except those numbered up to skipEnded: waits of skip that ended.
local function nextWaiter(queueKey, waitersKey, orderKey, deadlineKey, skip, skipEnded)
  local now = nil
  if queueKey then
    local head = redis.call('LINDEX', queueKey, 0)
    if head then
      now = nowMillis()
      local client = clientOf(head)
      local deadline = tonumber(redis.call('ZSCORE', waitersKey, head))
      if client and client ~= skip and deadline and deadline >= now then
        return 'head', client, nil, now
      end
    end
  end
  local index = 0
  for _ = 1, 64 do
    local first = redis.call('ZRANGE', orderKey, index, index)[1]
    if not first then
      return false
    end
    local client = clientOf(first)
    local n = tonumber(string.match(first, ':w(%d+)'))
    if client == skip and not (skipEnded and n and n <= skipEnded) then
      index = index + 1
    elseif client ~= skip then
      now = now or nowMillis()
      local deadline = tonumber(redis.call('ZSCORE', deadlineKey, first))
      if client and deadline and deadline >= now then
        return 'entry', client, first, now
      end
      redis.call('ZREM', orderKey, first)
      redis.call('ZREM', deadlineKey, first)
    else
      redis.call('ZREM', orderKey, first) -- an ended wait of skip
      redis.call('ZREM', deadlineKey, first)
    end
  end
  return false
end

-- The lock is free now (its hold is gone): publishes payload on wakePrefix .. <client> for one waiting client other
-- than skip. A woken entry keeps its place for 500 ms, in which its attempt (busy: a new deadline) must arrive.
local function wakeOne(queueKey, waitersKey, orderKey, deadlineKey, wakePrefix, payload, publish, skip, skipEnded)
  if publish == '' then
    return false
  end
  local kind, client, entry, now = nextWaiter(queueKey, waitersKey, orderKey, deadlineKey, skip, skipEnded)
  if not kind then
    return false
  end
  if kind == 'entry' then
    redis.call('ZADD', deadlineKey, 'XX', now + 500, entry)
  end
  redis.call(publish, wakePrefix .. client, payload)
  return client
end

-- Ends the current hold: gives the lock to the oldest waiting entry for claimMillis with a fresh token (see above), or,
-- with a live fair queue head or nobody waiting, deletes the hold and wakes the head's client. Returns the client told,
-- or false.
local function grantNext(holdKey, fenceKey, queueKey, waitersKey, orderKey, deadlineKey, wakePrefix, payload, publish,
                         skip, skipEnded, claimMillis)
  if publish == '' then
    redis.call('DEL', holdKey)
    return false
  end
  local kind, client, entry = nextWaiter(queueKey, waitersKey, orderKey, deadlineKey, skip, skipEnded)
  local message = payload
  if kind == 'entry' then
    local spare = spareOf(entry)
    local grant = entry .. '#' .. (redis.call('INCRBY', fenceKey, spare + 1) - spare)
    redis.call('SET', holdKey, grant, 'PX', claimMillis)
    -- the entry leaves the waiting clients: its client takes the grant, or, still waiting, registers anew
    redis.call('ZREM', orderKey, entry)
    redis.call('ZREM', deadlineKey, entry)
    message = payload .. grant
  else
    redis.call('DEL', holdKey)
  end
  if kind then
    redis.call(publish, wakePrefix .. client, message)
    return client
  end
  return false
end
