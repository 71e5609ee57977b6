-- Hand a number's quota day over from the portfolio it leaves (these keys)
-- to the one it joins: return its current quota day and that day's count,
-- and fill the count up here so that a host still sending it from this
-- portfolio is refused for the rest of the day. The count before is kept
-- in the moved record, so a second host doing the same hand-over (or a
-- hand-over retried after a crash) returns the same count.
-- KEYS[1] generation   KEYS[2] the number's quota day   KEYS[3] its moved record
-- ARGV[1] the prefix of its count keys (…:used:ACCOUNT:)   ARGV[2] the filled count
-- ARGV[3] the moved record's ttl in seconds
-- Returns {"LOST"} | {"NONE"} (never counted here) | {"MOVED", day, count}
if not redis.call('GET', KEYS[1]) then
  return {'LOST'}
end
local day = redis.call('GET', KEYS[2])
if not day then
  return {'NONE'}
end
local rec = redis.call('GET', KEYS[3])
if rec then
  local tab = string.find(rec, '\t', 1, true)
  if tab and string.sub(rec, 1, tab - 1) == day then
    return {'MOVED', day, string.sub(rec, tab + 1)}
  end
end
local ukey = ARGV[1] .. day
local used = tonumber(redis.call('GET', ukey) or '0')
redis.call('SET', KEYS[3], day .. '\t' .. string.format('%d', used), 'EX', ARGV[3])
redis.call('SET', ukey, ARGV[2], 'KEEPTTL')
return {'MOVED', day, string.format('%d', used)}
