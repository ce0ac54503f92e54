-- redlock-inspect.lua: what one RedLock node keeps for a name, for the operator's view.
--
-- KEYS[1]  hold key        <prefix>{name}:hold    string, the owner id
-- KEYS[2]  fence counter   <prefix>{name}:fence   integer, never expires
--
-- Returns {owner or '', pttl of the hold, fence counter or 0}.
local holdKey, fenceKey = KEYS[1], KEYS[2]
return {redis.call('GET', holdKey) or '', redis.call('PTTL', holdKey), tonumber(redis.call('GET', fenceKey) or '0')}
