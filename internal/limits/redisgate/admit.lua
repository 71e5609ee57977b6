-- Admit one message, all or nothing: the gate's own checks (its state,
-- a rebuild, a repeated claim id, the quota days), then limits.Decide's
-- rules in Decide's order — 1 the repeat guard, 2 the pair gap, 3 the
-- portfolio's reach, 4 the sticky sender, 5 ratelimit.Pick among the
-- accounts left and then the global bucket, 6 one token from each — then
-- one count against the account's cap in its current quota day and the
-- recipient remembered. This script mirrors the Go decider (Redis needs
-- the rules in the script to decide atomically); the differential test
-- holds it to limits.Reference, which calls Decide. The arithmetic is
-- internal/ratelimit's (lazy refill, Relimit on a changed limit, Pick's
-- choice, Reach's rule), in microseconds of Redis's own clock.
--
-- KEYS[1] generation   KEYS[2] claim   KEYS[3] global bucket
-- KEYS[4] reach: sorted set, recipient → latest admission µs
-- KEYS[5] the recipient's memory: hash at, acct, claim (the latest
--   admission) and pat, pacct, pclaim (the one before, for a refund)
-- KEYS[6] the repeat guard of (message, recipient): "HOST<tab>CLAIM<tab>END µs"
--   of the host that holds it, until GuardWindow after its admission
-- KEYS[7] rebuilt: hash gen → the generation a rebuild started, h:HOST → 1
--   for each host that added its part (rebuild.lua)
-- then per account i (0-based), KEYS[8+3i .. 10+3i]: bucket, quota day, count
--   (the count key is the one of the quota day the caller believes current)
-- ARGV[1] now in µs, or "" for Redis TIME (tests pin the clock)
-- ARGV[2] global on (1/0)   ARGV[3] global rate   ARGV[4] global burst
-- ARGV[5] today (starts the quota day of an account seen for the first time)
-- ARGV[6] claim ttl in seconds   ARGV[7] number of accounts
-- ARGV[8] recipient, "" for none   ARGV[9] reach allowed, -1 for no limit
-- ARGV[10] pair gap µs   ARGV[11] sticky µs (0: off)
-- ARGV[12] how long the recipient's memory must last, ms
-- ARGV[13] the reach window µs   ARGV[14] the claim id
-- ARGV[15] the repeat guard, "" for none   ARGV[16] the asking host
-- ARGV[17] the guard window, ms
-- then per account i, ARGV[18+6i .. 23+6i]: name, rate, burst, cap, demoted (1/0), believed day
--
-- The claim's record is "A|R<tab>account<tab>day<tab>recipient", then
-- "<tab>guard" when the admission took a repeat guard (A: admitted, R:
-- refunded).
--
-- Returns {"LOST"} | {"REBUILD"} (the host has not added its part to a
--   rebuilt state) | {"DUP", account, day} | {"STALE", day1, day2, ...}
--   | {"NO", reason, until µs or "", now µs[, sticky account]}
--     (reason "elsewhere": another host holds the repeat guard until then)
--     (the sticky account when the refusal is the recipient's own number's:
--     other recipients may still go)
--   | {"OK", index (1-based), day, count, tokens, now µs, sticky account or "", broken (1/0)}
local EPS = 1e-9
local A0 = 18 -- ARGV of the first account
local K0 = 8  -- KEYS of the first account

-- us writes a µs instant or a count whole: Lua would write a number as
-- %.14g, losing the last digits of an instant.
local function us(x) return string.format('%d', x) end

local function fields(s)
  local out, i = {}, 1
  while true do
    local j = string.find(s, '\t', i, true)
    if not j then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end

local gen = redis.call('GET', KEYS[1])
if not gen then
  return {'LOST'}
end
if ARGV[16] ~= '' and redis.call('HGET', KEYS[7], 'gen') == gen
    and redis.call('HEXISTS', KEYS[7], 'h:' .. ARGV[16]) == 0 then
  return {'REBUILD'}
end
local claim = redis.call('GET', KEYS[2])
if claim then
  local f = fields(claim)
  return {'DUP', f[2], f[3]}
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
  local qkey = KEYS[K0 + 1 + 3 * i]
  local day = redis.call('GET', qkey)
  if not day then
    day = ARGV[5] .. '#1'
    redis.call('SET', qkey, day)
  end
  days[i + 1] = day
  if day ~= ARGV[A0 + 5 + 6 * i] then stale = true end
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

-- The recipient's rules, in limits.Decide's order. 1: the repeat guard,
-- which another host's claim holds.
local to = ARGV[8]
local guard, host = ARGV[15], ARGV[16]
if guard ~= '' then
  local held = redis.call('GET', KEYS[6])
  if held then
    local f = fields(held)
    local ends = tonumber(f[3])
    if f[1] ~= host and ends ~= nil and now < ends then
      return {'NO', 'elsewhere', us(ends), us(now)}
    end
  end
end
local last, memo = nil, {}
if to ~= '' then
  memo = redis.call('HMGET', KEYS[5], 'at', 'acct', 'claim')
  last = tonumber(memo[1])
end
-- 2: the pair gap.
local gap = tonumber(ARGV[10])
if gap > 0 and last ~= nil and last > now - gap then
  return {'NO', 'pair', us(last + gap), us(now)}
end
-- 3: the reach (one window: this portfolio's).
local window = tonumber(ARGV[13])
local cutoff = now - window
local allowed = tonumber(ARGV[9])
if allowed >= 0 and not (last ~= nil and last > cutoff and last <= now) then
  -- A recipient new to the window costs one of the allowed.
  local used = redis.call('ZCOUNT', KEYS[4], '(' .. us(cutoff), us(now))
  if used >= allowed then
    local o = redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. us(cutoff), us(now), 'WITHSCORES', 'LIMIT', 0, 1)
    local oldest = now -- nothing in the window: a limit the margin leaves nothing of
    if #o > 0 then oldest = tonumber(o[2]) end
    return {'NO', 'reach', us(oldest + window), us(now)}
  end
end
-- 4: the sticky sender.
local only, stuck = nil, ''
local sticky = tonumber(ARGV[11])
if sticky > 0 and last ~= nil and memo[2] and memo[2] ~= '' and last > now - sticky then
  stuck = memo[2]
  for i = 0, n - 1 do
    if ARGV[A0 + 6 * i] == stuck then only = i + 1 end
  end
end

-- 5: Pick, healthy before demoted, then the fullest bucket relative to its
-- burst, then the first; otherwise the earliest ready instant. A sticky
-- recipient's own number, when offered, is the only candidate.
local best, bestFill, bestDemoted, earliest = nil, -1, true, nil
local st = {}
for i = 0, n - 1 do
  local a = A0 + 6 * i
  local rate, burst, cap = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local demoted = ARGV[a + 4] == '1'
  local used = tonumber(redis.call('GET', KEYS[K0 + 2 + 3 * i]) or '0')
  local tokens, at = settle(KEYS[K0 + 3 * i], rate, burst)
  st[i + 1] = {tokens = tokens, at = at, rate = rate, burst = burst, used = used}
  if used < cap and (only == nil or only == i + 1) then
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
  local own = nil
  if only ~= nil then own = stuck end
  if earliest == nil then
    return {'NO', 'capped', '', us(now), own}
  end
  return {'NO', 'tokens', us(earliest), us(now), own}
end

local gtokens, gat, grate, gburst
if ARGV[2] == '1' then
  grate, gburst = tonumber(ARGV[3]), tonumber(ARGV[4])
  gtokens, gat = settle(KEYS[3], grate, gburst)
  local ready = readyAt(gtokens, gat, grate, gburst)
  if ready == nil then
    return {'NO', 'global', '', us(now)}
  end
  if ready > now then
    return {'NO', 'global', us(ready), us(now)}
  end
end

-- 6: admitted: write every bucket it spent from, count it, remember the claim
-- and the recipient.
local b = st[best]
local name = ARGV[A0 + 6 * (best - 1)]
b.tokens = b.tokens - 1
redis.call('HSET', KEYS[K0 + 3 * (best - 1)], 'tokens', string.format('%.17g', b.tokens),
  'at', us(b.at), 'rate', string.format('%.17g', b.rate), 'burst', tostring(b.burst))
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[3], 'tokens', string.format('%.17g', gtokens - 1),
    'at', us(gat), 'rate', string.format('%.17g', grate), 'burst', tostring(gburst))
end
local count = redis.call('INCR', KEYS[K0 + 2 + 3 * (best - 1)])
local day = days[best]
local rec = 'A\t' .. name .. '\t' .. day .. '\t' .. to
if guard ~= '' then
  rec = rec .. '\t' .. guard
  -- The end is in the value, on the clock of the decisions; the key's
  -- expiry only frees the memory.
  local win = tonumber(ARGV[17])
  redis.call('SET', KEYS[6], host .. '\t' .. ARGV[14] .. '\t' .. us(now + win * 1000), 'PX', win)
end
redis.call('SET', KEYS[2], rec, 'EX', tonumber(ARGV[6]))
if to ~= '' then
  redis.call('HSET', KEYS[5], 'at', us(now), 'acct', name, 'claim', ARGV[14],
    'pat', memo[1] or '', 'pacct', memo[2] or '', 'pclaim', memo[3] or '')
  -- Kept as long as the longest rule needs it, never shorter than before.
  local keep = tonumber(ARGV[12])
  local ttl = redis.call('PTTL', KEYS[5])
  if ttl > keep then keep = ttl end
  redis.call('PEXPIRE', KEYS[5], us(keep))
  redis.call('ZADD', KEYS[4], us(now), to)
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', us(cutoff))
  redis.call('PEXPIRE', KEYS[4], us(math.floor(window / 1000)))
end
local broken = '0'
if stuck ~= '' and only == nil then broken = '1' end
return {'OK', best, day, count, string.format('%.17g', b.tokens), us(now), stuck, broken}
