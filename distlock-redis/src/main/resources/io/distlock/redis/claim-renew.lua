-- claim-renew.lua: extend a batch of read-write lock and semaphore holds to the lease from now, each only while its
-- owner still has that grant (owner and token checked) and its lease has not run out. Never recreates a hold.
--
-- KEYS[3i-2], KEYS[3i-1], KEYS[3i]  meta, holds, grants of the i-th hold's name (see claim-common.lua)
-- ARGV[1]                           lease in milliseconds
-- ARGV[2i], ARGV[2i+1]              the i-th hold's member (mode .. owner id) and fencing token
--
-- Returns the 1-based positions of the holds that are gone; they are not touched. Keeps meta, holds and grants alive
-- at least until the renewed expiry, and meta's e with them (see cover in claim-common.lua).
local lease = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = {}
for i = 1, #KEYS / 3 do
  local meta, holds, grants = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
  local member, token = ARGV[2 * i], ARGV[2 * i + 1]
  local grant = redis.call('HGET', grants, member)
  local expiry = grant and redis.call('ZSCORE', holds, member)
  if grant and string.match(grant, ':(%d+)$') == token and expiry and tonumber(expiry) > now then
    redis.call('ZADD', holds, now + lease, member)
    if redis.call('PTTL', holds) < lease then
      local at = string.format('%d', now + lease)
      if redis.call('PEXPIREAT', meta, at) == 1 then
        redis.call('HSET', meta, 'e', at)
      end
      redis.call('PEXPIREAT', holds, at)
      redis.call('PEXPIREAT', grants, at)
    end
  else
    gone[#gone + 1] = i
  end
end
return gone
