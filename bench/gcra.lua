-- GCRA rate limiter, the CL.THROTTLE algorithm as a Redis script, for
-- servers without the redis-cell module. The state is a string key holding
-- the theoretical arrival time (TAT) in microseconds: Lua 5.1 numbers are
-- doubles, exact only to 2^53, so the nanoseconds redis-cell keeps would
-- lose their low digits here.
--
-- KEYS[1] = limiter key; ARGV = max_burst, count, period (seconds), [quantity]
-- Reply, as CL.THROTTLE: {limited, limit, remaining, retry_after, reset_after}
-- (seconds rounded up rather than redis-cell's exact rounding).
local burst = tonumber(ARGV[1])
local count = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local quantity = tonumber(ARGV[4] or '1')

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local interval = period * 1000000 / count      -- emission interval T, us
local tolerance = interval * (burst + 1)       -- tau
local increment = interval * quantity

local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then
  tat = tonumber(stored)
end

local new_tat = math.max(now, tat) + increment
local diff = now - (new_tat - tolerance)

local limited, retry_after, ttl
if diff < 0 then
  limited = 1
  retry_after = -1
  if increment <= tolerance then
    retry_after = math.ceil(-diff / 1000000)
  end
  ttl = tat - now
else
  limited = 0
  retry_after = -1
  ttl = new_tat - now
  redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.max(1, math.floor(ttl / 1000)))
end

local remaining = 0
local next = tolerance - ttl
if next > -interval then
  remaining = math.floor(next / interval)
end
return {limited, burst + 1, remaining, retry_after, math.ceil(ttl / 1000000)}
