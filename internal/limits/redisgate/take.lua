-- Take over a number's quota day from the portfolio it left (move.lua's
-- answer): its quota day here becomes the carried one unless it is already
-- on a later calendar day, and on the carried calendar day its count here
-- is at least the carried count. Repeating it changes nothing.
-- KEYS[1] generation   KEYS[2] the number's quota day here
-- ARGV[1] the prefix of its count keys here   ARGV[2] the carried day   ARGV[3] its count
-- ARGV[4] the count key's ttl in seconds, when it has none
-- Returns {"LOST"} | {"OK", the quota day here}
if not redis.call('GET', KEYS[1]) then
  return {'LOST'}
end
local function cal(d) return string.sub(d, 1, string.find(d, '#', 1, true) - 1) end
local cur = redis.call('GET', KEYS[2])
if not cur or cal(ARGV[2]) > cal(cur) then
  cur = ARGV[2]
  redis.call('SET', KEYS[2], cur)
end
if cal(cur) == cal(ARGV[2]) then
  local ukey = ARGV[1] .. cur
  local used = tonumber(redis.call('GET', ukey) or '0')
  if tonumber(ARGV[3]) > used then
    redis.call('SET', ukey, ARGV[3], 'KEEPTTL')
  end
  if redis.call('TTL', ukey) == -1 then
    redis.call('EXPIRE', ukey, ARGV[4])
  end
end
return {'OK', cur}
