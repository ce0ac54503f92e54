-- lock-acquire.lua: take the exclusive hold of one lock name if nobody has it (a plain attempt: it leaves nothing
-- behind when it fails). Fair-queue attempts use lock-acquire-queued.lua.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id; expires with the lease
-- KEYS[2]  fence counter  <prefix>{name}:fence    integer, the last fencing token issued; never expires
-- ARGV[1]  owner id
-- ARGV[2]  lease in milliseconds
--
-- Returns {1, fencingToken} when acquired; {0, remainingLeaseMillis} when busy. A hold of the same owner counts as
-- busy, like anybody's: the client counts re-entry itself, and an attempt that arrives after a hand-off already gave
-- this owner the lock must not grant it a second time with another token.
local holdKey, fenceKey = KEYS[1], KEYS[2]
local owner, leaseMillis = ARGV[1], ARGV[2]

if redis.call('SET', holdKey, owner, 'NX', 'PX', leaseMillis) then
  return {1, redis.call('INCR', fenceKey)}
end
local ttl = redis.call('PTTL', holdKey)
if ttl < 0 then
  ttl = 1000 -- a hold without TTL was not written by these scripts: do not spin on it
end
return {0, math.max(ttl, 1)}
