-- lock-acquire.lua: take the exclusive hold of one lock name if nobody has it (a plain attempt). Fair-queue attempts
-- use lock-acquire-queued.lua.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id; expires with the lease
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued; never expires
-- KEYS[3]  wait order     <prefix>{name}:wq       waiting-client entry -> time it started waiting (µs)   (KEYS[3..4] and
-- KEYS[4]  wait deadlines <prefix>{name}:wd       waiting-client entry -> time it comes back by (ms)      ARGV[4] only
-- ARGV[1]  owner id                                                                                    while the
-- ARGV[2]  lease in milliseconds                                                                       client waits)
-- ARGV[3]  spare tokens: how many tokens after the grant's own to reserve for the client's local successions of this
--          hold (threads of the client that take the hold over without a round trip while the hold stays under this
--          owner; see Attempt.Acquired): the counter moves on by 1 + spare tokens
-- ARGV[4]  entry '<clientId>:w<n>s<spare>' of the owner's client, which waits for the lock: a busy attempt registers it
--          among the waiting clients (so that a release gives the lock to that client with <spare> spare tokens, see
--          wake-one.lua), a grant removes it; a hold '<entry>#<token>' with an entry of this client (given to the
--          client by a release) is taken over
--
-- Without ARGV[4] (a plain attempt, the uncontended path) it answers one integer, which costs Redis less than a table:
-- the fencing token (> 0) when acquired, with ARGV[3] spare tokens; minus the hold's remaining lease in milliseconds
-- (< 0) when busy. RedisLockStore.expandPlainAnswer turns it into the table form below.
-- With ARGV[4]: {1, fencingToken, spareTokens} when acquired; {0, retryWithinMillis, fence} when busy: the hold's
-- remaining lease, at most 5000, and the fence counter (a grant the client hears of later with a greater token was made
-- after this answer). A hold of the same owner counts as busy, like anybody's: the client counts re-entry itself, and
-- an attempt that arrives after a hand-off already gave this owner the lock must not grant it a second time with
-- another token. Without ARGV[4] a failed attempt leaves nothing behind; with it, it leaves the client's registration,
-- which expires by itself at most 2 s after the returned time.
local holdKey, fenceKey, orderKey, deadlineKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMillis, spare, entry = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]

-- a plain attempt (no ARGV[4]): one integer, before the functions below are even defined
if not entry then
  if redis.call('SET', holdKey, owner, 'NX', 'PX', leaseMillis) then
    return redis.call('INCRBY', fenceKey, spare + 1) - spare
  end
  local ttl = redis.call('PTTL', holdKey)
  if ttl < 0 then
    ttl = 1000 -- a hold without TTL was not written by these scripts: do not spin on it
  end
  return -math.max(ttl, 1)
end

local function granted()
  return {1, redis.call('INCRBY', fenceKey, spare + 1) - spare, spare}
end

-- free, or given to this waiting client by a release: the hold is '<entry>#<token>' with an entry of this client (see
-- wake-one.lua), this wait's or an earlier one's, which any waiting owner of the client may take
local function givenToUs()
  local hold = redis.call('GET', holdKey)
  if not hold then
    return false
  end
  local given = string.match(hold, '^([^#]+)#%d+$')
  return given and string.match(given, '^([^:]+):w%d+') == string.match(entry, '^[^:]+'), given
end
if redis.call('SET', holdKey, owner, 'NX', 'PX', leaseMillis) then
  redis.call('ZREM', orderKey, entry)
  redis.call('ZREM', deadlineKey, entry)
  return granted()
end
local ours, given = givenToUs()
if ours then
  redis.call('SET', holdKey, owner, 'PX', leaseMillis)
  redis.call('ZREM', orderKey, entry, given)
  redis.call('ZREM', deadlineKey, entry, given)
  return granted()
end
local ttl = redis.call('PTTL', holdKey)
if ttl < 0 then
  ttl = 1000 -- a hold without TTL was not written by these scripts: do not spin on it
end
ttl = math.max(ttl, 1)
-- a waiting client comes back by itself at least every 5 s: a wake-up lost with a client that died while waiting
-- (or a lost message) then costs the other waiters at most that, not the rest of a long lease
ttl = math.min(ttl, 5000)
local time = redis.call('TIME')
local keep = ttl + 2000 -- the client comes back by itself within ttl; this much slack for its way back
redis.call('ZADD', orderKey, 'NX', tonumber(time[1]) * 1000000 + tonumber(time[2]), entry)
redis.call('ZADD', deadlineKey, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + keep, entry)
-- both keys expire when nobody refreshes them; either may have been emptied and made again without a TTL
if redis.call('PTTL', orderKey) < keep then
  redis.call('PEXPIRE', orderKey, keep)
end
if redis.call('PTTL', deadlineKey) < keep then
  redis.call('PEXPIRE', deadlineKey, keep)
end
return {0, ttl, tonumber(redis.call('GET', fenceKey)) or 0}
