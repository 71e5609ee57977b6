-- Give back the cap one admission counted, once.
-- KEYS[1] claim   KEYS[2] the count key of the claim's quota day
-- ARGV[1] account   ARGV[2] quota day
-- Returns 1 refunded now, 2 refunded before, 0 no such claim,
-- or {"MISMATCH", what the claim holds}.
local claim = redis.call('GET', KEYS[1])
if not claim then
  return 0
end
local want = ARGV[1] .. '\t' .. ARGV[2]
if claim == ARGV[1] .. '\tR\t' .. ARGV[2] then
  return 2
end
if claim ~= want then
  return {'MISMATCH', claim}
end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used > 0 then
  redis.call('DECR', KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[1] .. '\tR\t' .. ARGV[2], 'KEEPTTL')
return 1
