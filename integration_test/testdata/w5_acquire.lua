-- W5: a token bucket with a log of issued permits, in the style of
-- Redisson's RRateLimiter (written here from the workload's description).
-- KEYS: the limiter's hash (rate, interval in ms, type), its value key and
-- its permits sorted set. ARGV: permits wanted, now in ms, a binary id.
-- Returns nil when the permits were granted, else the ms to wait.
local rate = redis.call('HGET', KEYS[1], 'rate')
local interval = redis.call('HGET', KEYS[1], 'interval')
local kind = redis.call('HGET', KEYS[1], 'type')
assert(rate ~= false and interval ~= false and kind ~= false, 'RateLimiter is not initialized')
rate = tonumber(rate)
interval = tonumber(interval)
local wanted = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
assert(wanted <= rate, 'Requested permits amount could not exceed defined rate')

local function issue()
	local member = struct.pack('Bc0I', string.len(ARGV[3]), ARGV[3], wanted)
	redis.call('ZADD', KEYS[3], now, member)
	redis.call('DECRBY', KEYS[2], wanted)
end

local wait = nil
local value = redis.call('GET', KEYS[2])
if value == false then
	redis.call('SET', KEYS[2], rate)
	issue()
else
	value = tonumber(value)
	local expired = redis.call('ZRANGEBYSCORE', KEYS[3], 0, now - interval)
	local released = 0
	for _, member in ipairs(expired) do
		local _, count = struct.unpack('Bc0I', member)
		released = released + count
	end
	if released > 0 then
		redis.call('ZREMRANGEBYSCORE', KEYS[3], 0, now - interval)
		if value + released > rate then
			value = rate - redis.call('ZCARD', KEYS[3])
		else
			value = value + released
		end
		redis.call('SET', KEYS[2], value)
	end
	if value < wanted then
		local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
		wait = interval - (now - tonumber(oldest[2]))
	else
		issue()
	end
end

local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
	redis.call('PEXPIRE', KEYS[2], ttl)
	redis.call('PEXPIRE', KEYS[3], ttl)
end
return wait
