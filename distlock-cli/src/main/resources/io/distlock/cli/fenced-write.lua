-- The demo counter's fenced write.
-- KEYS[1]: the counter hash (fields value, fence)
-- ARGV[1]: the new value; ARGV[2]: the writer's fencing token
-- Returns 1 if written, 0 if the token is lower than the highest one the counter accepted.
local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[2]) < fence then
    return 0
end
redis.call('HSET', KEYS[1], 'value', ARGV[1], 'fence', ARGV[2])
return 1
