-- Admit one message: one token from one account's bucket, one from the
-- global bucket when it is on, and one count against that account's cap in
-- its current quota day — all or nothing. The arithmetic is
-- internal/ratelimit's (lazy refill, Relimit on a changed limit, Pick's
-- choice), in microseconds of Redis's own clock.
--
-- KEYS[1] generation   KEYS[2] claim   KEYS[3] global bucket
-- then per account i (0-based), KEYS[4+3i .. 6+3i]: bucket, quota day, count
--   (the count key is the one of the quota day the caller believes current)
-- ARGV[1] now in µs, or "" for Redis TIME (tests pin the clock)
-- ARGV[2] global on (1/0)   ARGV[3] global rate   ARGV[4] global burst
-- ARGV[5] today (starts the quota day of an account seen for the first time)
-- ARGV[6] claim ttl in seconds   ARGV[7] number of accounts
-- then per account i, ARGV[8+6i .. 13+6i]: name, rate, burst, cap, demoted (1/0), believed day
--
-- Returns {"LOST"} | {"DUP", account, day} | {"STALE", day1, day2, ...}
--   | {"NO", reason, until µs or "", now µs}
--   | {"OK", index (1-based), day, count, tokens, now µs}
local EPS = 1e-9

local gen = redis.call('GET', KEYS[1])
if not gen then
  return {'LOST'}
end
local claim = redis.call('GET', KEYS[2])
if claim then
  local sep = string.find(claim, '\t', 1, true)
  local rest = string.sub(claim, sep + 1)
  if string.sub(rest, 1, 2) == 'R\t' then rest = string.sub(rest, 3) end
  return {'DUP', string.sub(claim, 1, sep - 1), rest}
end

local now
if ARGV[1] ~= '' then
  now = tonumber(ARGV[1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local n = tonumber(ARGV[7])

-- Every account's quota day must be the one the caller built its count key
-- for; a reset (or an account seen for the first time) moves it.
local days, stale = {}, false
for i = 0, n - 1 do
  local qkey = KEYS[5 + 3 * i]
  local day = redis.call('GET', qkey)
  if not day then
    day = ARGV[5] .. '#1'
    redis.call('SET', qkey, day)
  end
  days[i + 1] = day
  if day ~= ARGV[13 + 6 * i] then stale = true end
end
if stale then
  local out = {'STALE'}
  for i = 1, n do out[i + 1] = days[i] end
  return out
end

-- settle: the bucket at now under (rate, burst), keeping what it earned
-- under the limit it was last settled with (ratelimit Relimit); full when
-- never seen.
local function settle(key, rate, burst)
  local h = redis.call('HMGET', key, 'tokens', 'at', 'rate', 'burst')
  local tokens, at = tonumber(h[1]), tonumber(h[2])
  if tokens == nil or at == nil then
    return burst, now
  end
  local orate, oburst = tonumber(h[3]), tonumber(h[4])
  if now > at then
    -- Seconds as Go's Duration.Seconds computes them (whole seconds plus
    -- the nanoseconds over 1e9), so both sides round alike.
    local d = now - at
    local secs = math.floor(d / 1e6)
    tokens = tokens + (secs + (d - secs * 1e6) * 1000 / 1e9) * orate
    at = now
  end
  tokens = math.min(tokens, oburst)
  return math.min(tokens, burst), at
end

-- readyAt: ratelimit.Bucket.ReadyAt for one token, on a settled bucket;
-- nil for never.
local function readyAt(tokens, at, rate, burst)
  if 1 > burst + EPS or rate <= 0 then return nil end
  local missing = 1 - tokens
  if missing <= EPS then return now end
  -- As ratelimit does: the wait rounded up to the nanosecond, then up to
  -- the microsecond of this clock.
  return at + math.ceil(math.ceil(missing / rate * 1e9) / 1000)
end

-- Pick: healthy before demoted, then the fullest bucket relative to its
-- burst, then the first; otherwise the earliest ready instant.
local best, bestFill, bestDemoted, earliest = nil, -1, true, nil
local st = {}
for i = 0, n - 1 do
  local a = 8 + 6 * i
  local rate, burst, cap = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local demoted = ARGV[a + 4] == '1'
  local used = tonumber(redis.call('GET', KEYS[6 + 3 * i]) or '0')
  local tokens, at = settle(KEYS[4 + 3 * i], rate, burst)
  st[i + 1] = {tokens = tokens, at = at, rate = rate, burst = burst, used = used}
  if used < cap then
    local ready = readyAt(tokens, at, rate, burst)
    if ready ~= nil then
      if ready <= now then
        local fill = tokens / burst
        if best == nil or (bestDemoted and not demoted) or (bestDemoted == demoted and fill > bestFill) then
          best, bestFill, bestDemoted = i + 1, fill, demoted
        end
      elseif earliest == nil or ready < earliest then
        earliest = ready
      end
    end
  end
end
if best == nil then
  if earliest == nil then
    return {'NO', 'capped', '', string.format('%d', now)}
  end
  return {'NO', 'tokens', string.format('%d', earliest), string.format('%d', now)}
end

local gtokens, gat, grate, gburst
if ARGV[2] == '1' then
  grate, gburst = tonumber(ARGV[3]), tonumber(ARGV[4])
  gtokens, gat = settle(KEYS[3], grate, gburst)
  local ready = readyAt(gtokens, gat, grate, gburst)
  if ready == nil then
    return {'NO', 'global', '', string.format('%d', now)}
  end
  if ready > now then
    return {'NO', 'global', string.format('%d', ready), string.format('%d', now)}
  end
end

-- Admitted: write every bucket it spent from, count it, remember the claim.
local b = st[best]
b.tokens = b.tokens - 1
redis.call('HSET', KEYS[4 + 3 * (best - 1)], 'tokens', string.format('%.17g', b.tokens),
  'at', string.format('%d', b.at), 'rate', string.format('%.17g', b.rate), 'burst', tostring(b.burst))
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[3], 'tokens', string.format('%.17g', gtokens - 1),
    'at', string.format('%d', gat), 'rate', string.format('%.17g', grate), 'burst', tostring(gburst))
end
local count = redis.call('INCR', KEYS[6 + 3 * (best - 1)])
local day = days[best]
redis.call('SET', KEYS[2], ARGV[8 + 6 * (best - 1)] .. '\t' .. day, 'EX', tonumber(ARGV[6]))
return {'OK', best, day, count, string.format('%.17g', b.tokens), string.format('%d', now)}
