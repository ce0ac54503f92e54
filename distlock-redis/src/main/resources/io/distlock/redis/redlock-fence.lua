-- redlock-fence.lua: raises one RedLock node's fence counter to a token granted by a majority elsewhere, so that the
-- next grant's majority, which shares a node with this one's, counts above it.
--
-- KEYS[1]  fence counter   <prefix>{name}:fence   integer, never expires
-- ARGV[1]  the token
--
-- Returns the counter's value after the call.
local fenceKey, token = KEYS[1], tonumber(ARGV[1])

local fence = tonumber(redis.call('GET', fenceKey) or '0')
if fence < token then
  redis.call('SET', fenceKey, token)
  return token
end
return fence
