package script

import "testing"

func TestSmoke(t *testing.T) {
	for _, b := range []string{
		"return 1", "return 1.9", "return 'x'", "return {1,2,{3}}", "return tostring(1/3)", "return 1/3 .. ''",
		"error('boom')", "error({err='CUSTOM boom'})", "return redis.call('wrongtype')", "x = 1", "return y",
		"\n\nlocal a = nil; return a + 1", "return redis.pcall('wrongtype')", "return {pcall(function() redis.call('nosuch') end)}",
		"return redis.call('ping')", "return redis.call('nil')", "return type(redis.call('nil'))", "error('x', 0)", "error(nil)",
		"return string.foo", "string.foo = 1", "rawset(_G, 'x', 1)", "setmetatable(_G, nil)", "return bit.tohex(255)",
		"return redis.error_reply('boom')", "return redis.sha1hex('')", "error({})", "return math.random(100)",
		"return _VERSION", "return os", "local function f() return f() + 1 end return f()", "return 2^53 .. ''",
		"return redis.call('echo', 0.1)", "return cjson", "return redis.REDIS_VERSION_NUM", "redis.setresp(4)",
		"local t = {} t[1] = t return t",
	} {
		t.Logf("%q -> %q", b, eval(t, b))
	}
}
