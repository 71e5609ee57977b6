-- Give back, once, what one admission counted: the cap, and the recipient's
-- memory as it was before it (when no later admission replaced it), which
-- takes the recipient out of the reach window if the admission brought
-- them in.
-- KEYS[1] claim   KEYS[2] the count key of the claim's quota day
-- KEYS[3] the reach sorted set   KEYS[4] the recipient's memory
-- KEYS[5] the repeat guard the admission took (let go when it still holds it)
-- ARGV[1] account   ARGV[2] quota day   ARGV[3] claim id   ARGV[4] recipient ("" for none)
-- ARGV[5] the reach window, ms (the sorted set's expiry, should it have none)
-- ARGV[6] the repeat guard the admission took, "" for none
-- Returns 1 refunded now, 2 refunded before, 0 no such claim,
-- or {"MISMATCH", what the claim holds}.
local claim = redis.call('GET', KEYS[1])
if not claim then
  return 0
end
local want = ARGV[1] .. '\t' .. ARGV[2] .. '\t' .. ARGV[4]
if ARGV[6] ~= '' then
  want = want .. '\t' .. ARGV[6]
end
if claim == 'R\t' .. want then
  return 2
end
if claim ~= 'A\t' .. want then
  return {'MISMATCH', claim}
end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
if used > 0 then
  redis.call('DECR', KEYS[2])
end
redis.call('SET', KEYS[1], 'R\t' .. want, 'KEEPTTL')
if ARGV[6] ~= '' then
  -- The message was not accepted: the guard it took holds nobody.
  local held = redis.call('GET', KEYS[5])
  if held then
    local _, _, claim = string.find(held, '^[^\t]*\t([^\t]*)')
    if claim == ARGV[3] then
      redis.call('DEL', KEYS[5])
    end
  end
end
if ARGV[4] ~= '' then
  local m = redis.call('HMGET', KEYS[4], 'claim', 'pat', 'pacct', 'pclaim')
  if m[1] == ARGV[3] then
    if m[2] and m[2] ~= '' then
      redis.call('HSET', KEYS[4], 'at', m[2], 'acct', m[3] or '', 'claim', m[4] or '', 'pat', '', 'pacct', '', 'pclaim', '')
      redis.call('ZADD', KEYS[3], m[2], ARGV[4])
      if redis.call('PTTL', KEYS[3]) == -1 then
        redis.call('PEXPIRE', KEYS[3], ARGV[5]) -- a window that expired meanwhile, made again
      end
    else
      redis.call('DEL', KEYS[4])
      redis.call('ZREM', KEYS[3], ARGV[4])
    end
  end
end
return 1
