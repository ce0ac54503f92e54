-- lock-handoff.lua: give the hold straight from one owner to another, with a fresh fencing token. The lock is never
-- free in between, so nothing is published.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, never expires
-- ARGV[1]  owner id giving the hold
-- ARGV[2]  owner id taking it
-- ARGV[3]  lease of the new hold in milliseconds
-- ARGV[4]  spare tokens: how many tokens after the new one to reserve for local successions of the new hold (the
--          counter moves on by 1 + spare tokens, as in lock-acquire.lua)
--
-- Returns the new fencing token, or 0 when the giving owner did not hold the lock (nothing is changed).
local holdKey, fenceKey = KEYS[1], KEYS[2]
local from, to, leaseMillis, spare = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])

if redis.call('GET', holdKey) ~= from then
  return 0
end
redis.call('SET', holdKey, to, 'PX', leaseMillis)
return redis.call('INCRBY', fenceKey, spare + 1) - spare
