-- W6: per-minute counts in a ring of list slots. KEYS: the list, the key of
-- the last slot used. ARGV: the last slot, the current slot, the ring size.
-- Returns the current slot's count as a string.
local last = tonumber(ARGV[1])
local current = tonumber(ARGV[2])
local size = tonumber(ARGV[3])
local count
if last == current then
	count = tonumber(redis.call('LINDEX', KEYS[1], current)) + 1
else
	count = 1
	local slot = (last + 1) % size
	while slot ~= current do
		redis.call('LSET', KEYS[1], slot, '0')
		slot = (slot + 1) % size
	end
end
redis.call('LSET', KEYS[1], current, tostring(count))
redis.call('SET', KEYS[2], current)
return tostring(count)
