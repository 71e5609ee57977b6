-- The changes of the shared links after a version, oldest first, read in
-- one step so a page is consistent (see links.go). KEYS as links_push.lua;
-- ARGV[1] the version already seen, ARGV[2] the most changes to return.
-- Returns the epoch ('' before the first change), then triples of user
-- id, version and "PHONE<tab>SEEN_NS".
local out = {redis.call('GET', KEYS[4]) or ''}
local log = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #log, 2 do
  out[#out + 1] = log[i]
  out[#out + 1] = log[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[1], log[i]) or ''
end
return out
