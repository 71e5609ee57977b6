-- Lists numbers on the shared suppression list (see shared.go).
-- KEYS[1] the list (hash phone -> "CREATED_NS<tab>REASON")
-- KEYS[2] the change log (sorted set phone -> version of its last change)
-- KEYS[3] the version counter
-- KEYS[4] the epoch (written once, by the first change of a new Redis)
-- ARGV[1] an epoch to use if there is none, ARGV[2] now in ns,
-- then pairs of phone, reason.
-- A number already listed keeps the time it was first listed; its reason
-- changes only when a non-empty one is given (as store.Suppress does).
-- Every number that changes gets a version of its own, so a reader paging
-- by version never splits one change.
redis.call('SET', KEYS[4], ARGV[1], 'NX')
local added = 0
for i = 3, #ARGV, 2 do
  local phone, reason = ARGV[i], ARGV[i + 1]
  local cur = redis.call('HGET', KEYS[1], phone)
  local val
  if not cur then
    val = ARGV[2] .. '\t' .. reason
    added = added + 1
  elseif reason ~= '' then
    local tab = string.find(cur, '\t', 1, true)
    if string.sub(cur, tab + 1) ~= reason then
      val = string.sub(cur, 1, tab) .. reason
    end
  end
  if val then
    redis.call('HSET', KEYS[1], phone, val)
    redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), phone)
  end
end
return added
