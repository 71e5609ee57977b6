-- Lists numbers a host suppressed by itself on the shared suppression list
-- (see shared.go: Shared.Push).
-- KEYS as suppress_add.lua; ARGV[1] an epoch to use if there is none, then
-- quadruples of phone, first listed (ns, the host's clock), reason, and
-- '1' to list it only if the list has never known the number (no entry in
-- the log: neither listed nor removed) or '0' to list it in any case.
-- A number already listed is left as it is (its time and reason): pushing
-- again changes nothing, so a push repeated after a lost reply is harmless.
-- Returns how many numbers were listed.
redis.call('SET', KEYS[4], ARGV[1], 'NX')
local added = 0
for i = 2, #ARGV, 4 do
  local phone = ARGV[i]
  local skip = redis.call('HEXISTS', KEYS[1], phone) == 1
  if not skip and ARGV[i + 3] == '1' then
    skip = redis.call('ZSCORE', KEYS[2], phone) ~= false
  end
  if not skip then
    redis.call('HSET', KEYS[1], phone, ARGV[i + 1] .. '\t' .. ARGV[i + 2])
    redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), phone)
    added = added + 1
  end
end
return added
