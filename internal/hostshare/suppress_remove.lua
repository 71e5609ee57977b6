-- Takes numbers off the shared suppression list (see shared.go).
-- KEYS as suppress_add.lua; ARGV[1] an epoch to use if there is none, then
-- the phones. A removal is a change like any other: the number stays in
-- the log with a new version, so every host learns it is gone. It is
-- recorded also for a number the list does not hold: a host may have it
-- from before (a Redis that lost its data, a list added without --limits),
-- and removing it everywhere is what was asked.
-- Returns how many of the numbers were listed.
redis.call('SET', KEYS[4], ARGV[1], 'NX')
local removed = 0
for i = 2, #ARGV do
  removed = removed + redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[i])
end
return removed
