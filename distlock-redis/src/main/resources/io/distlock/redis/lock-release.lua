-- lock-release.lua: end the owner's hold and tell waiters.
--
-- KEYS[1]  hold key       <prefix>{name}:hold     string, the owner id
-- ARGV[1]  owner id
-- ARGV[2]  channel to publish the release on
-- ARGV[3]  publish command: PUBLISH or SPUBLISH, or '' to publish nothing (spin waiting)
--
-- Returns 1 when the owner held the lock and now does not; 0 when it did not hold it (nothing is changed).
local holdKey = KEYS[1]
local owner, channel, publish = ARGV[1], ARGV[2], ARGV[3]

if redis.call('GET', holdKey) ~= owner then
  return 0
end
redis.call('DEL', holdKey)
if publish ~= '' then
  redis.call(publish, channel, 'r')
end
return 1
