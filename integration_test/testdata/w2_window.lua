-- W2: a sliding-window log in one script. KEYS[1] the window's sorted set;
-- ARGV: now in ms (score and member), the window's start in ms, the TTL in
-- seconds. Returns the count before this request's old entries are dropped,
-- as the workload's callers do.
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return count
