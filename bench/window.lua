redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[1])
local c = redis.call('ZCARD', KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return c
