-- W4 in Lua: GCRA with GET, SET PX and TIME, as several Go and Node rate
-- limiters ship it (written here from the algorithm, not taken from one).
-- KEYS[1] the state (the theoretical arrival time in us); ARGV: burst,
-- count per period, period in seconds, quantity. Returns
-- {limited, limit, remaining, retry_after, reset_after}, times in
-- whole seconds rounded up.
redis.replicate_commands()
local burst = tonumber(ARGV[1])
local interval = tonumber(ARGV[3]) * 1000000 / tonumber(ARGV[2])
local quantity = tonumber(ARGV[4])
local tau = interval * (burst + 1)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
	tat = now
end
local new_tat = tat + interval * quantity
local diff = now - (new_tat - tau)
local limited, ttl, retry = 0, 0, -1
if diff < 0 then
	limited = 1
	ttl = tat - now
	retry = math.ceil(-diff / 1000000)
else
	ttl = new_tat - now
	redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil(ttl / 1000))
end
local remaining = math.floor((tau - ttl) / interval)
if remaining < 0 then
	remaining = 0
end
return {limited, burst + 1, remaining, retry, math.ceil(ttl / 1000000)}
