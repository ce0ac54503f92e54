-- lock-pass-on.lua: a client was woken for a lock it no longer waits for (its waiter gave up or got the lock some other
-- way), or its waiter gave up while registered among the waiting clients. It removes that registration (if any), and
-- gives a claim on the lock that was given to it to the next waiting client (or frees the lock), or, if the lock is
-- free, wakes another waiting client: a wake-up is never swallowed.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  queue          <prefix>{name}:queue    fair-queue owner ids, head first
-- KEYS[3]  waiter times   <prefix>{name}:waiters  fair-queue owner id -> deadline
-- KEYS[4]  wait order     <prefix>{name}:wq       waiting-client entry -> time it started waiting (µs)
-- KEYS[5]  wait deadlines <prefix>{name}:wd       waiting-client entry -> time it comes back by itself (ms)
-- KEYS[6]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued
-- ARGV[1]  the entry '<clientId>:w<n>' of the wait that ended, or '' (a wake-up that came when nothing waited)
-- ARGV[2]  client id passing the wake-up on (never woken by this script)
-- ARGV[3]  wake channel prefix: a client is woken on ARGV[3] .. <client id>
-- ARGV[4]  publish command: PUBLISH or SPUBLISH
-- ARGV[5]  wake-up message: the name's tag <prefix>{name}
-- ARGV[6]  claim time in milliseconds (see lock-release.lua)
-- ARGV[7]  every entry '<ARGV[2]>:w<n>' with n <= ARGV[7] is a wait that ended (the client no longer waits for this
--          name): a lock given to one of them is passed on
--
-- Returns 1 when another client was woken; 0 when the lock is held (its release wakes the next) or nobody waits.
-- #include wake-one.lua
local holdKey, orderKey, deadlineKey = KEYS[1], KEYS[4], KEYS[5]
local entry, passer, wakePrefix, publish, payload = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local claimMillis, endedUpTo = tonumber(ARGV[6]), tonumber(ARGV[7])

if entry ~= '' then
  redis.call('ZREM', orderKey, entry)
  redis.call('ZREM', deadlineKey, entry)
end
local hold = redis.call('GET', holdKey)
if hold then
  local client, n, given = grantOf(hold)
  if client and (given == entry or (client == passer and n <= endedUpTo)) then
    -- the lock was given to a wait of ours that ended: give it to the next waiting client
    if grantNext(holdKey, KEYS[6], KEYS[2], KEYS[3], orderKey, deadlineKey, wakePrefix, payload, publish, passer,
                 endedUpTo, claimMillis) then
      return 1
    end
  end
  return 0
end
if wakeOne(KEYS[2], KEYS[3], orderKey, deadlineKey, wakePrefix, payload, publish, passer, endedUpTo) then
  return 1
end
return 0
