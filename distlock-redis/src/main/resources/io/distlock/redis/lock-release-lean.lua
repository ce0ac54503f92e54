-- lock-release-lean.lua: end the owner's hold when no client waits for the lock: the uncontended release, with only the
-- keys it reads (a request of 7 arguments instead of lock-release.lua's 14). When a client waits, in the fair queue or
-- among the waiting clients, it changes nothing and answers 2: the caller then releases with lock-release.lua, which
-- gives the lock on.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- KEYS[2]  queue          <prefix>{name}:queue    fair-queue owner ids
-- KEYS[3]  wait order     <prefix>{name}:wq       waiting-client entries
-- ARGV[1]  owner id
--
-- Returns 1 when the owner held the lock and now does not; 0 when it did not hold it (nothing is changed); 2 when it
-- holds it and a client waits (nothing is changed).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if redis.call('EXISTS', KEYS[2], KEYS[3]) > 0 then
  return 2
end
redis.call('DEL', KEYS[1])
return 1
