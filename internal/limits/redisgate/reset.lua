-- Start a quota day for accounts: idempotent per calendar day unless forced,
-- and never back to an earlier calendar day.
-- A forced reset is also what starts the shared state, or starts it again
-- after it was lost: it writes a new generation.
-- KEYS[1] generation, then one quota-day key per account
-- ARGV[1] today   ARGV[2] force (1/0)   ARGV[3] a new generation
-- Returns {"LOST"} | {"OK", generation, old1, new1, old2, new2, ...}
-- (an old day is "" when the account had none).
local gen = redis.call('GET', KEYS[1])
local force = ARGV[2] == '1'
if not gen then
  if not force then
    return {'LOST'}
  end
  gen = ARGV[3]
  redis.call('SET', KEYS[1], gen)
end
local out = {'OK', gen}
for i = 2, #KEYS do
  local cur = redis.call('GET', KEYS[i])
  local nextDay
  if not cur then
    nextDay = ARGV[1] .. '#1'
  else
    local sep = string.find(cur, '#', 1, true)
    local cal, epoch = string.sub(cur, 1, sep - 1), tonumber(string.sub(cur, sep + 1))
    -- Quota days only move forward (ISO dates order as strings); forced,
    -- a new quota day starts on the later of the two calendar days.
    if ARGV[1] > cal then
      nextDay = ARGV[1] .. '#' .. string.format('%d', epoch + 1)
    elseif force then
      nextDay = cal .. '#' .. string.format('%d', epoch + 1)
    else
      nextDay = cur
    end
  end
  redis.call('SET', KEYS[i], nextDay)
  out[#out + 1] = cur or ''
  out[#out + 1] = nextDay
end
return out
