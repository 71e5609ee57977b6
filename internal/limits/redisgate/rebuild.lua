-- Add one host's part of a quota day the state lost (limits.Gate.Rebuild):
-- its count of each account's current calendar day, the recipients it
-- messaged in the moving window, the repeat guards its messages hold. The
-- first one after a loss starts the state again, as a rebuilt generation;
-- each host adds its part once per generation.
-- KEYS[1] generation   KEYS[2] rebuilt: hash gen → the generation a rebuild
--   started, h:HOST → 1 for each host that added its part to it, d:ACCOUNT →
--   the quota day the rebuild added the account's counts to, any → 1 once a
--   part added anything (a rebuild of nothing is a fresh start)
-- KEYS[3] reach sorted set
-- ARGV[1] now µs, or "" for Redis TIME   ARGV[2] the host's now µs
-- ARGV[3] host   ARGV[4] today   ARGV[5] a new generation   ARGV[6] the portfolio's key prefix
-- ARGV[7] accounts n   ARGV[8] window n   ARGV[9] guards n
-- ARGV[10] the reach window µs   ARGV[11] the guard window µs
-- then per account: name, calendar day of its count, count
-- then per window entry: recipient, at µs (the host's clock), account
-- then per guard: recipient, guard, at µs (the host's clock)
-- The keys of accounts and recipients are the portfolio's (its hash tag),
-- made here from the prefix.
-- Returns {"LIVE"} | {"ALREADY", on the rebuilt day (1/0) per account} | {"OK", started (1/0), added1, day1, added2, day2, ...}
local function us(x) return string.format('%d', x) end

local gen = redis.call('GET', KEYS[1])
local started = '0'
if not gen then
  gen = ARGV[5]
  redis.call('SET', KEYS[1], gen)
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'gen', gen)
  started = '1'
elseif redis.call('HGET', KEYS[2], 'gen') ~= gen then
  return {'LIVE'}
end
local host = ARGV[3]
local na = tonumber(ARGV[7])
if redis.call('HSETNX', KEYS[2], 'h:' .. host, '1') == 0 then
  -- Which accounts are still on the day the rebuild made (a repeated
  -- recovery must not start another).
  local out = {'ALREADY'}
  local i = 12
  for _ = 1, na do
    local name = ARGV[i]
    i = i + 3
    local day = redis.call('GET', ARGV[6] .. 'day:' .. name)
    local made = redis.call('HGET', KEYS[2], 'd:' .. name)
    if day and day == made and redis.call('HEXISTS', KEYS[2], 'any') == 1 then out[#out + 1] = '1' else out[#out + 1] = '0' end
  end
  return out
end

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local shift = now - tonumber(ARGV[2])
local prefix = ARGV[6]
local nw, ng = tonumber(ARGV[8]), tonumber(ARGV[9])
local window, gwin = tonumber(ARGV[10]), tonumber(ARGV[11])

local out = {'OK', started}
local i = 12
for _ = 1, na do
  local name, cal, used = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  i = i + 3
  local dkey = prefix .. 'day:' .. name
  local day = redis.call('GET', dkey)
  if not day then
    day = ARGV[4] .. '#1'
    redis.call('SET', dkey, day)
  end
  redis.call('HSETNX', KEYS[2], 'd:' .. name, day)
  local added = 0
  if string.sub(day, 1, string.find(day, '#', 1, true) - 1) == cal and used > 0 then
    redis.call('INCRBY', prefix .. 'used:' .. name .. ':' .. day, used)
    added = used
    redis.call('HSET', KEYS[2], 'any', '1')
  end
  out[#out + 1] = added
  out[#out + 1] = day
end
for _ = 1, nw do
  local to, at, acct = ARGV[i], tonumber(ARGV[i + 1]) + shift, ARGV[i + 2]
  i = i + 3
  if at > now - window and at <= now then
    local rkey = prefix .. 'rcpt:' .. to
    local last = tonumber(redis.call('HGET', rkey, 'at'))
    if last == nil or at > last then
      redis.call('HSET', rkey, 'at', us(at), 'acct', acct, 'claim', '', 'pat', '', 'pacct', '', 'pclaim', '')
      redis.call('PEXPIRE', rkey, us(math.max(1, math.ceil((at + window - now) / 1000))))
      redis.call('ZADD', KEYS[3], us(at), to)
      redis.call('HSET', KEYS[2], 'any', '1')
    end
  end
end
for _ = 1, ng do
  local to, guard, at = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]) + shift
  i = i + 3
  local ends = at + gwin
  if now < ends then
    local gkey = prefix .. 'guard:' .. to .. ':' .. guard
    local held = redis.call('GET', gkey)
    local hends = nil
    if held then
      local _, _, e = string.find(held, '^[^\t]*\t[^\t]*\t(%d+)')
      hends = tonumber(e)
    end
    if hends == nil or now >= hends then
      redis.call('SET', gkey, host .. '\t\t' .. us(ends), 'PX', us(math.max(1, math.ceil((ends - now) / 1000))))
      redis.call('HSET', KEYS[2], 'any', '1')
    end
  end
end
if redis.call('PTTL', KEYS[3]) == -1 then
  redis.call('PEXPIRE', KEYS[3], us(math.floor(window / 1000)))
end
return out
