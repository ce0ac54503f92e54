local meta, holds, grants, queue, deadlines = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local member, token, publish, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local m = redis.call('HMGET', meta, 'k', 'n', 'u', 'x')
if not m[1] then
  redis.call('DEL', meta, holds, grants, queue, deadlines)
  return 0
end
local size, used, x = tonumber(m[2]) or 0, tonumber(m[3]) or 0, m[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) <= now then
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', holds, '-inf', now)) do
    local g = redis.call('HGET', grants, gone)
    if g then
      if string.sub(gone, 1, 1) == 'x' then
        redis.call('HDEL', meta, 'x')
        x = false
      else
        used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(g, '^(%d+)')))
      end
      redis.call('HDEL', grants, gone)
    end
    redis.call('ZREM', holds, gone)
  end
end
local released = 0
local grant = redis.call('HGET', grants, member)
if grant and string.match(grant, ':(%d+)$') == token then
  if string.sub(member, 1, 1) == 'x' then
    redis.call('HDEL', meta, 'x')
    x = false
  else
    used = redis.call('HINCRBY', meta, 'u', -tonumber(string.match(grant, '^(%d+)')))
  end
  redis.call('HDEL', grants, member)
  redis.call('ZREM', holds, member)
  released = 1
end
local entries = redis.call('ZRANGE', queue, 0, -1)
local evicted = false
if #entries > 0 then
  local dead = redis.call('ZRANGEBYSCORE', deadlines, '-inf', now)
  if #dead > 0 then
    evicted = true
    local gone = {}
    for _, e in ipairs(dead) do
      redis.call('ZREM', queue, e)
      redis.call('ZREM', deadlines, e)
      gone[e] = true
    end
    local live = {}
    for _, e in ipairs(entries) do
      if not gone[e] then live[#live + 1] = e end
    end
    entries = live
  end
end
if not x and used == 0 and #entries == 0 then
  redis.call('DEL', meta, holds, grants, queue, deadlines)
  return released
end
if (released == 1 or evicted) and publish ~= '' and #entries > 0 then
  local owners = {}
  for _, e in ipairs(entries) do
    local p, mode, owner = string.match(e, '^(%d+)([xs])(.*)$')
    p = tonumber(p)
    if mode == 'x' then
      if x or used > 0 then break end
      x = true
    else
      if x or used + p > size then break end
      used = used + p
    end
    owners[#owners + 1] = owner
  end
  if #owners > 0 then
    redis.call(publish, channel, channel .. ':' .. table.concat(owners, ':'))
  end
end
return released
