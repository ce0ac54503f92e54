-- lock-renew.lua: extend a batch of holds, each only if its owner still has it.
--
-- KEYS[i]    hold key of the i-th hold   <prefix>{name}:hold
-- ARGV[1]    lease in milliseconds
-- ARGV[i+1]  owner id of the i-th hold
--
-- Returns the 1-based positions of the holds that are gone (missing or owned by someone else); they are not touched.
local leaseMillis = tonumber(ARGV[1])
local gone = {}
for i, holdKey in ipairs(KEYS) do
  if redis.call('GET', holdKey) == ARGV[i + 1] then
    redis.call('PEXPIRE', holdKey, leaseMillis)
  else
    gone[#gone + 1] = i
  end
end
return gone
