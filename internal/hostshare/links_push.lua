-- Puts phone <-> user id links on the shared list (see links.go:
-- Shared.PushLinks). KEYS: the links hash (user id -> "PHONE<tab>SEEN_NS"),
-- its log (user id -> version of its last change), its version counter,
-- the epoch; ARGV[1] an epoch to use if there is none, then triples of
-- user id, phone and when the host learned the pair (ns). A pair replaces
-- the id's only when learned later: a host's stale copy never undoes a
-- newer link, and pushing again changes nothing. Returns how many changed.
redis.call('SET', KEYS[4], ARGV[1], 'NX')
local changed = 0
for i = 2, #ARGV, 3 do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  local newer = true
  if old then
    local seen = tonumber(string.match(old, '\t(%d+)$'))
    newer = seen == nil or tonumber(ARGV[i + 2]) > seen
  end
  if newer and old ~= ARGV[i + 1] .. '\t' .. ARGV[i + 2] then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1] .. '\t' .. ARGV[i + 2])
    redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[i])
    changed = changed + 1
  end
end
return changed
