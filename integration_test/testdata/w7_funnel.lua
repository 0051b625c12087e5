-- W7: a leaky bucket kept in a hash. KEYS[1] the funnel; ARGV: capacity,
-- leak rate per second, now in ms, quota wanted, TTL in seconds. Returns
-- {allowed 0/1, quota left}.
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local wanted = tonumber(ARGV[4])
local state = redis.call('HGETALL', KEYS[1])
local left, since = capacity, now
if #state > 0 then
	local fields = {}
	for i = 1, #state, 2 do
		fields[state[i]] = state[i + 1]
	end
	left = tonumber(fields.left_quota)
	since = tonumber(fields.leaking_ts)
end
local leaked = math.floor((now - since) * rate / 1000)
if leaked > 0 then
	left = math.min(capacity, left + leaked)
	since = now
end
local allowed = 0
if left >= wanted then
	left = left - wanted
	allowed = 1
end
redis.call('HSET', KEYS[1], 'capacity', capacity, 'rate', rate, 'left_quota', left, 'leaking_ts', since)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[5]))
return {allowed, left}
