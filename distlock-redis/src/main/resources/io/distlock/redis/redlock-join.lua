-- redlock-join.lua: sets a renewed hold on one RedLock node that misses it (it missed the grant, was cut off then, or
-- restarted empty), so that the hold keeps a majority when one of the nodes that granted it is cut off later. Sent
-- only for a hold that a majority of nodes confirmed in the same renewal.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- KEYS[2]  fence counter   <prefix>{name}:fence   integer, never expires
-- ARGV[1]  owner id
-- ARGV[2]  key lifetime in milliseconds
-- ARGV[3]  the hold's fencing token
--
-- Returns 1 when the node now holds the owner's hold (set here, or already there), 0 when another owner holds it.
-- A node that joins raises its fence counter to the token, as one that granted it has (redlock-fence.lua), so that a
-- later grant it votes for counts above the token.
local holdKey, fenceKey = KEYS[1], KEYS[2]
local owner, lifetime, token = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

if redis.call('SET', holdKey, owner, 'NX', 'PX', lifetime) then
  if tonumber(redis.call('GET', fenceKey) or '0') < token then
    redis.call('SET', fenceKey, token)
  end
  return 1
end
if redis.call('GET', holdKey) == owner then
  return 1
end
return 0
