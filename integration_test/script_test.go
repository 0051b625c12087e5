package integration_test

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scripting: EVAL and friends compared byte for byte with redis-server
// (spec section 4). Most scripts declare their keys in KEYS; those of
// TestScriptUndeclaredKeys do not, as Redis allows.

// evalEach sends EVAL body 0 for every body and compares the replies.
func evalEach(c *pair, bodies ...string) {
	c.t.Helper()
	for _, b := range bodies {
		c.Do("EVAL", b, "0")
	}
}

func TestScriptLuaToReply(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return 1", "return 1.9", "return -1.9", "return -0.5", "return 3.99999999",
			"return 1e20", "return 1/0", "return 0/0", "return 2^63", "return 9007199254740993",
			"return 'x'", "return ''", "return true", "return false", "return nil",
			"return function() end", "return {1,nil,3}", "return {1,false,3}", "return {a=1}",
			"return {err=1}", "return {ok=1}", "return {err='bad thing'}", "return {err='-X y'}",
			"return {ok='fine'}", "return {ok='a\\r\\nb'}", "return {double=3.14}", "return {double=1/0}",
			"return {double=-1/0}", "return {1,{2,{3,'x'}},{}}", "return {map={a=1}}",
			"return {set={a=true}}", "return {big_number='123'}",
			"return {verbatim_string={format='txt', string='hi'}}",
			"return {1, {err='inner'}, 3}",
			"redis.setresp(3) return true", "redis.setresp(3) return false",
			"redis.setresp(3) return {map={a=1}}", "redis.setresp(3) return {double=1.5}",
			"redis.setresp(3) return nil",
		)
	})
}

func TestScriptReplyToLua(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return redis.call('ping')",
			"return type(redis.call('ping'))",
			"return redis.call('ping').ok",
			"return redis.call('echo', 'x')",
			"return redis.call('ping', 'hello')",
			"return redis.call('select', 0)",
			"return redis.pcall('select', 99)",
			"return {redis.pcall('select', 'x')}",
			"return redis.call('time')[1] ~= nil",
			"redis.setresp(3) return redis.call('ping')",
			"redis.setresp(3) return redis.call('echo', 'y')",
			// A script's own redis shadows the global one.
			"local redis = {call = function() return 'mine' end} return redis.call()",
			"local function f(redis) return redis.pcall() end return f({pcall = function() return 1 end})",
			"for _, redis in ipairs({{call = function() return 2 end}}) do return redis.call() end",
			"local c = redis.call return {c('ping'), rawequal(c, redis.call), redis.pcall('nosuch')}",
		)
	})
}

func TestScriptNumberArguments(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return redis.call('echo', 1/3)", "return redis.call('echo', 0.1)",
			"return redis.call('echo', 1e14)", "return redis.call('echo', 2^53)",
			"return redis.call('echo', 1e20)", "return redis.call('echo', -0.0)",
			"return redis.call('echo', 3.0)", "return redis.call('echo', 1/0)",
			"return redis.call('echo', -1/0)",
			"return redis.call('echo', true)", "return redis.call('echo', {})",
			"return redis.call('echo', nil)", "return redis.pcall('echo', true)",
		)
	})
}

func TestScriptLuaNumberText(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return tostring(1/3)", "return 1/3 .. ''", "return 2^53 .. 'x'", "return tostring(0/0)",
			"return tostring(1/0)", "return tostring(-1/0)", "return tostring(1e15)", "return tostring(1e14)",
			"return tostring(123456789012345678)", "return 1700000000000 .. ''", "return 0.1 .. ''",
			"return tostring(-0.0)", "return string.len(1/3)", "return string.format('%s|%d|%5.2f', 1/3, 7, 2.5)",
			"return table.concat({1/3, 2, 'x'}, ',')", "return string.rep(0.5, 2)",
			"return redis.sha1hex(1/3)", "return (1/3) .. (2/3)",
			"local t = setmetatable({}, {__concat = function(a, b) return 'cat' end}) return t .. 1",
		)
	})
}

func TestScriptErrors(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"error('boom')", "error({err='CUSTOM boom'})", "error('x', 0)", "error(nil)",
			"\n\nerror('line three')", "local function f()\n error('in f')\nend\nf()",
			"error('a'..string.char(13,10)..'b')", "error(42)",
			"return redis.call('nosuch')", "return redis.call()", "return redis.call('ping', 'a', 'b')",
			"return redis.call('eval', 'return 1', 0)", "return redis.call('multi')",
			"return redis.call('script', 'load', 'return 1')",
			"return redis.call('select', 99)", "return redis.call('select', 'x')",
			"return redis.pcall('nosuch')", "return redis.pcall()",
			// Call statements, whose results are dropped.
			"redis.call('nosuch')", "redis.pcall('nosuch') return 'after'", "redis.call('ping', 'a', 'b')",
			"redis.pcall() return 2", "redis.call('select', 99)", "redis.call('echo', {})",
			"return {pcall(function() redis.call('nosuch') end)}",
			"return {pcall(function() error('x') end)}", "return {pcall(error, {err='T x'})}",
			"return {pcall(nil)}",
			"return redis.error_reply('My Error')", "return redis.error_reply('boom')",
			"return redis.error_reply('')", "return redis.error_reply('-WRONG x')",
			"return redis.error_reply(1)", "return redis.error_reply('X a\\r\\nb')",
			"return redis.status_reply('a\\r\\nb')", "return redis.status_reply(1)",
			"return redis.sha1hex()", "redis.log(99,'x')", "redis.log('x','x')", "redis.log(1)",
			"redis.setresp(4)", "redis.setresp()", "redis.set_repl(99)",
			"return redis.acl_check_cmd('nosuch')",
			"return 1 + {}", "return ({}) .. 'x'", "return 'x' .. nil",
			// Runtime errors name the variable, as Lua 5.1 does.
			"local a = nil; return a + 1", "local a; return 1 + a", "local t = {} return t.x.y",
			"local t = {} return t.x + 1", "local t = {} t.f()", "local t = {} t:m()", "local t = nil; t.x = 1",
			"local s = 'x' return s + 1", "return #nil", "local n; return #n", "for i = nil, 2 do end",
			"for i = 1, 'x' do end", "local x = {} local function f() return x.y.z end return f()",
			"local up; local function f() return up + 1 end return f()", "return KEYS[1] + 1", "return ARGV.x.y",
			"local a, b = 1, nil return a + b", "return {pcall(function() local a; return a + 1 end)}",
			"return {xpcall(function() local a; return a + 1 end, function(e) return e end)}",
			"return {xpcall(nil, function(e) return e end)}", "return redis.nosuch()",
			"return string.rep('x', {})", "return setmetatable(1, {})", "return math.floor('a')",
			"return string.rep()", "return string.sub()", "return struct.pack()", "return bit.tohex()",
			"return table.concat({1, {}}, ',')",
		)
	})
}

func TestScriptHelpers(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return redis.sha1hex('')", "return redis.sha1hex({})", "return redis.sha1hex('abc')",
			"return redis.log(redis.LOG_WARNING, 'from a script', 1, 2.5)",
			"return redis.set_repl(redis.REPL_ALL)", "return redis.replicate_commands()",
			"return redis.breakpoint()", "return redis.debug('x')", "return redis.acl_check_cmd('ping')",
			"return redis.REDIS_VERSION", "return redis.REDIS_VERSION_NUM",
			"return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}",
			"return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}",
		)
	})
}

func TestScriptSandbox(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"x = 1", "return y", "function f() end", "_G.x = 1", "string.foo = 1", "redis.foo = 1",
			"cjson.encode = nil", "rawset(_G, 'x', 1)", "setmetatable(_G, nil)", "return string.foo",
			"local x = 1 return x", "local function g() return 2 end return g()",
			"KEYS[1] = 'changed' return KEYS[1]", "return _VERSION",
			"return type(os)", "return type(io)", "return type(debug)", "return type(package)",
			"return type(require)", "return dofile", "return loadfile", "return print",
			"return getfenv", "return setfenv", "return newproxy",
			"return loadstring('return 1')()", "return type(load)",
			"return coroutine.wrap(function() coroutine.yield(5) end)()",
			"return string.gfind ~= nil", "return getmetatable('').__index == string",
			"return table.getn({1,2})", "return math.mod(7,3)", "return string.rep('ab', 3)",
			"return select('#', 1, 2)", "return {xpcall(function() error('x') end, function(e) return 'h:'..e end)}",
			"return unpack({1,2})", "return tonumber('0x10')", "return ('x'):upper()",
			"return assert(false, 'nope')", "return assert(1 == 1)", "return next({})",
			"return gcinfo() > 0", "return collectgarbage('count') > 0",
			"return #KEYS .. #ARGV",
			"local k = {} for n in pairs(_G) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for n in pairs(redis) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for n in pairs(string) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for n in pairs(table) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for n in pairs(math) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for n in pairs(cjson) do k[#k+1] = n end table.sort(k) return k",
			"local k = {} for _, l in ipairs({cmsgpack, bit, struct, coroutine}) do for n in pairs(l) do k[#k+1] = n end end table.sort(k) return k",
			"return cjson.new().encode({1})",
			// Scripts that assign no global run without the proxy: none
			// of these may change what the next script sees.
			"local ok = pcall(loadstring('tonumber = nil')) return {ok == false, type(tonumber)}",
			"local ok = pcall(loadstring('KEYS = 1')) return {ok == false, type(KEYS)}",
			"local f = loadstring('return _G') return f() == _G", "return tonumber('12')",
			"local function g() y = 2 end return 1", "local function g() y = 2 end g() return 1",
			"return coroutine.wrap(function() return tonumber('5') + #KEYS end)()",
			"return _G.tonumber('7')", "return rawget(_G, 'tonumber') ~= nil", "return nosuch",
			"local t = KEYS t[1] = 'x' return KEYS[1]", "return KEYS[1]",
			"return {pcall(function() return undefinedname end)}", "return type(string.format)",
		)
	})
}

// TestScriptRandom: math.random is Redis's own generator, seeded by
// math.randomseed and not reseeded per script.
func TestScriptRandom(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"math.randomseed(7) return {math.random(100), math.random(), math.random(3, 9)}",
			"math.randomseed(42) return math.random(1000)",
			"return math.random(1000)",
			"return math.random(0)", "return math.random(5, 1)",
		)
	})
}

func TestScriptLibraries(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			// cjson
			"return cjson.encode({string.char(127), string.char(1), '/', '\\195\\169', 1e15, 123456789012345, 0.1, -0.0, {}, {1,nil,3}})",
			"return cjson.encode({[1]=1,[20]=3})", "return cjson.encode({a={b=true}})",
			"return cjson.encode({[5]=5})", "return cjson.encode(1/0)", "return cjson.encode({[true]=1})",
			"return cjson.encode(cjson.null)", "return cjson.encode('a\"b\\\\c\\n')",
			"return cjson.decode('[1,2')", "return cjson.decode('{\"a\" 1}')", "return cjson.decode('x')",
			"return cjson.decode('\"ab')", "return cjson.decode('[1] x')", "return cjson.decode('')",
			"return type(cjson.decode('null'))", "return cjson.decode('\"\\\\q\"')",
			"return cjson.encode(cjson.decode('{\"a\":[1,2.5,\"x\\\\u00e9\",null,true]}'))",
			"return cjson.decode('1e400')", "return cjson.decode('-')", "return cjson.decode(' [ 1 , {} ] ')[2]",
			"return cjson.decode('{\"k\":\"v\"}').k", "return cjson.decode('\"\\\\ud83d\\\\ude00\"')",
			"return cjson._VERSION",
			// cmsgpack
			"return cmsgpack.pack({1,2,'a'}, 1.5, -1, 300, -200, {a=1}, true, nil)",
			"return {cmsgpack.unpack(cmsgpack.pack({1,2,{x=3}}, 'abc', 2.5, 70000))}",
			"return {cmsgpack.unpack_one(cmsgpack.pack(1,2))}",
			"return cmsgpack.pack(0.1, 1e20, -2147483649, 4294967296, string.rep('x', 40))",
			"return cmsgpack.unpack(string.char(0xcd))",
			// struct
			"return {struct.unpack('Bc0I', struct.pack('Bc0I', 3, 'abc', 7))}",
			"return struct.pack('>I2', 258)", "return struct.pack('<i4', -2)",
			"return {struct.unpack('>I2', struct.pack('>I2', 258))}", "return struct.size('>I2i4')",
			"return struct.pack('>i9', 1)", "return struct.pack('!4 b i', 1, 2)",
			"return struct.unpack('>I2', 'a', 0)", "return struct.size('!8 b d')",
			"return struct.pack('c0', 'xyz')", "return struct.unpack('c0', 'xyz')",
			"return {struct.unpack('s', 'ab\\0c')}", "return struct.pack('z')", "return struct.size('s')",
			"return struct.pack('i33', 1)", "return struct.pack('!3', 1)", "return struct.unpack('>i4', 'ab')",
			"return {struct.unpack('<d', struct.pack('<d', 1.5))}", "return struct.pack('>f', 0.5)",
			"return struct.pack('hHlLT', -1, 65535, -2, 3, 4)",
			// bit
			"return {bit.lshift(1,31), bit.rshift(-1,28), bit.arshift(-16,2), bit.tohex(-1,4), bit.tobit(2^32+5), bit.bswap(0x12345678), bit.rol(1,33), bit.tohex(255), bit.tohex(255,-4)}",
			"return {bit.band(0xff, 0x0f, 3), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.bnot(0), bit.tobit(1.5), bit.tobit(2.5), bit.ror(1, 1)}",
		)
	})
}

func TestScriptEvalErrors(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("EVAL", "return 1", "1.5")
		c.Error("EVAL", "return 1", "abc")
		c.Error("EVAL", "return 1", "2", "a")
		c.Error("EVAL", "return 1", "-1")
		c.Error("EVAL", "return 1")
		c.Error("EVALSHA", "abc", "0")
		c.Error("EVALSHA", "0123456789012345678901234567890123456789", "0")
		c.Error("EVALSHA", "0123456789012345678901234567890123456789", "x")
		c.Error("EVALSHA", "abc", "x")
		c.Error("EVAL", "x =", "0")
		c.Error("EVAL", "return 'unfinished", "0")
		c.Do("EVAL", "", "0")
		c.Do("EVAL", "return KEYS[1]..ARGV[1]", "1", "k", "a")
		c.Do("EVAL", "return {KEYS, ARGV}", "2", "a", "b", "c", "d")
	})
}

func TestScriptShebang(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("EVAL", "#!python\nreturn 1", "0")
		c.Error("EVAL", "#!lua flags=bogus\nreturn 1", "0")
		c.Error("EVAL", "#!lua name=foo\nreturn 1", "0")
		c.Error("EVAL", "#!lua", "0")
		c.Do("EVAL", "#!lua flags=no-writes,allow-oom\nreturn 1", "0")
		c.Do("EVAL", "#!lua flags=allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", "0")
		c.Do("EVAL", "#!lua flags=\nreturn 2", "0")
		c.Do("EVAL", "#!lua\nerror('x')", "0")
		c.Error("EVAL_RO", "#!lua\nreturn 1", "0")
		c.Do("EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0")
		c.Do("EVAL_RO", "return 1", "0")
		c.Error("SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1")
	})
}

func TestScriptCommand(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SCRIPT", "FLUSH")
		c.Do("SCRIPT", "LOAD", "return 1")
		c.Do("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0")
		c.Do("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0")
		c.Do("EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0")
		c.Do("SCRIPT", "EXISTS", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "abc")
		c.Do("EVAL", "return 2", "0")
		c.Do("SCRIPT", "EXISTS", "7f923f79fe76194c868d7e1d0820de36700eb649")
		c.Error("SCRIPT", "FLUSH", "foo")
		c.Do("SCRIPT", "FLUSH", "sync")
		c.Do("SCRIPT", "FLUSH", "ASYNC")
		c.Error("SCRIPT", "FLUSH", "async", "x")
		c.Do("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
		c.Error("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0")
		c.Error("SCRIPT", "foo")
		c.Error("SCRIPT")
		c.Error("SCRIPT", "LOAD")
		c.Error("SCRIPT", "EXISTS")
		c.Error("SCRIPT", "KILL")
		c.Error("SCRIPT", "KILL", "x")
		c.Error("SCRIPT", "LOAD", "x =")
		c.Do("SCRIPT", "HELP")
		c.Error("SCRIPT", "HELP", "x")
		c.Do("SCRIPT", "DEBUG", "no")
	})
}

// TestScriptInTransaction: EVAL is queued in MULTI and runs inside EXEC; the
// transaction commands are refused inside a script.
func TestScriptInTransaction(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MULTI")
		c.Do("EVAL", "return redis.call('ping')", "0")
		c.Do("EVAL", "error('x')", "0")
		c.Do("EXEC")
		c.Do("EVAL", "return redis.pcall('multi')", "0")
		c.Do("EVAL", "return redis.pcall('exec')", "0")
		c.Do("EVAL", "return redis.pcall('watch', KEYS[1])", "1", "k")
	})
}

// TestScriptUndeclaredKeys: scripts that touch keys they did not declare,
// run whole-database commands or SELECT another database work as on Redis
// (cellserver's default --lua-allow-undeclared-keys yes). Each body is run
// fresh (a new script) and then again (cellserver remembers it needs every
// shard), with keys on many shards.
func TestScriptUndeclaredKeys(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for i := range 20 {
			c.Do("SET", "u"+strconv.Itoa(i), strconv.Itoa(i))
		}
		for run, body := range []string{
			// read then write of undeclared keys
			"local v = redis.call('get', 'u3') redis.call('set', 'u4', v .. 'x') return redis.call('get', 'u4')",
			// a declared write, then undeclared writes and reads
			"redis.call('set', KEYS[1], 'd') redis.call('incr', 'u5') redis.call('set', 'u6', 'w') return {redis.call('get', 'u5'), redis.call('get', 'u6'), redis.call('get', KEYS[1])}",
			// KEYS, sorted (Redis 7.0 does not sort it for scripts)
			"local k = redis.call('keys', 'u1*') table.sort(k) return k",
			"redis.call('set', KEYS[1], 'd2') local k = redis.call('keys', '*') table.sort(k) return k",
			// SCAN to the end, sorted
			"local cur, all = '0', {} repeat local r = redis.call('scan', cur, 'match', 'u*', 'count', 7) cur = r[1] for _, k in ipairs(r[2]) do all[#all+1] = k end until cur == '0' table.sort(all) return all",
			"return {redis.call('dbsize'), redis.call('exists', 'u1', 'u2', 'nosuch')}",
			// SELECT another database and touch keys there
			"redis.call('select', 4) redis.call('set', 'other', 'x') local n = redis.call('dbsize') redis.call('select', 0) return {n, redis.call('get', 'u1')}",
			"redis.call('set', KEYS[1], 'v') redis.call('select', 5) redis.call('rpush', 'l', KEYS[1]) return redis.call('lrange', 'l', 0, -1)",
			"redis.call('select', 4) local k = redis.call('keys', '*') redis.call('flushdb') return {k, redis.call('dbsize')}",
			// whole-database writes
			"redis.call('set', KEYS[1], 'z') redis.call('select', 6) redis.call('set', 'g', 1) redis.call('flushdb') return redis.call('dbsize')",
			"return redis.call('randomkey') ~= false",
			// errors after reaching past KEYS stay Redis's
			"redis.call('set', KEYS[1], 'e') return redis.call('incr', 'u1x') + redis.call('hget', 'u2', 'f')",
			"local v = redis.call('get', 'u7') return redis.pcall('lpush', 'u8', v)",
			// math.random drawn before the run is dropped: the rerun draws
			// the same numbers, and redis.log lines show once
			"local r = math.random(1000000) redis.log(redis.LOG_WARNING, 'undeclared ' .. r) return {r, redis.call('get', 'u9'), math.random(1000000)}",
		} {
			body += " -- " + strconv.Itoa(c.proto) + "/" + strconv.Itoa(run)
			c.Do("EVAL", body, "1", "decl")
			c.Do("EVAL", body, "1", "decl")
			c.Do("GET", "decl")
		}
		c.Do("SELECT", "5")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("SELECT", "0")
		c.Do("DBSIZE")
		c.Do("EVAL", "redis.call('flushall') return redis.call('dbsize')", "0")
	})
}

// TestScriptReachPastDeclared: scripts that stay within their declared
// keys for a few calls (so cellserver runs them on those keys' shards
// alone) and then, depending on ARGV, reach past them: before writing
// (cellserver drops that run and runs it again holding every shard) and
// after writing (it takes the other shards as it goes), with undeclared
// keys, KEYS, SCAN, SELECT and FLUSHDB. The replies and the keys after
// are Redis's.
func TestScriptReachPastDeclared(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for i := range 20 {
			c.Do("SET", "r"+strconv.Itoa(i), strconv.Itoa(i))
		}
		for run, body := range []string{
			// reach before any write: a read, then a write
			"if ARGV[1] == 'reach' then local v = redis.call('get', 'r3') redis.call('set', 'r4', v .. 'x') end return redis.call('incr', KEYS[1])",
			// a write, then undeclared reads and writes
			"local n = redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then redis.call('incr', 'r5') redis.call('append', 'r6', 'w') return {n, redis.call('get', 'r5'), redis.call('get', 'r6')} end return n",
			// a write, then KEYS and SCAN
			"redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then local k = redis.call('keys', 'r1*') table.sort(k) local s = redis.call('scan', 0, 'count', 1000) table.sort(s[2]) return {k, s[2]} end return 0",
			// a write, then SELECT and a write in another database
			"redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then redis.call('select', 7) redis.call('rpush', 'rl', KEYS[1]) local n = redis.call('dbsize') redis.call('select', 0) return n end return 0",
			// a write, then FLUSHDB of another database
			"redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then redis.call('select', 7) redis.call('flushdb') redis.call('select', 0) return redis.call('dbsize') end return 0",
			// an error after reaching past, caught and not
			"redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then return redis.pcall('lpush', 'r7', 'x') end return 0",
			"redis.call('incr', KEYS[1]) if ARGV[1] == 'reach' then return redis.call('hget', 'r8', 'f') end return 0",
		} {
			body += " -- " + strconv.Itoa(c.proto) + "/" + strconv.Itoa(run)
			for range 3 {
				c.Do("EVAL", body, "1", "decl", "stay")
			}
			c.Do("EVAL", body, "1", "decl", "reach")
			c.Do("EVAL", body, "1", "decl", "reach")
			c.Do("EVAL", body, "1", "decl", "stay")
			c.Do("MGET", "decl", "r3", "r4", "r5", "r6")
		}
		c.Do("SELECT", "7")
		c.Do("DBSIZE")
		c.Do("SELECT", "0")
		c.Do("DBSIZE")
	})
}

// TestScriptSelect: SELECT inside a script does not change the caller's
// database (7.0).
func TestScriptSelect(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SELECT", "3")
		c.Do("EVAL", "return redis.call('select', 5)", "0")
		c.Do("EVAL", "return redis.pcall('select', 'x')", "0")
		c.Do("SELECT", "0")
	})
}

// TestScriptBusy: past busy-reply-threshold a looping script answers -BUSY
// to commands that need its keys, SCRIPT KILL stops it, and its caller gets
// the kill error. On cellserver, commands on other shards keep running;
// redis-server answers everything BUSY, so that part is cellserver alone.
func TestScriptBusy(t *testing.T) {
	s := startServers(t, serverOptions{args: []string{"--busy-reply-threshold", "200"}})
	runner := newPairOn(t, s)
	other := newPairOn(t, s)
	// cellserver runs a script it has not yet seen stay within its
	// declared keys holding every shard, as Redis runs every script: run
	// both scripts once so that they are known.
	body := "if ARGV[1] == 'loop' then while true do end end return 1"
	runner.Do("EVAL", body, "1", "busykey", "once")
	runner.Do("EVAL", "return 1", "1", "elsewhere")
	loop := []string{"EVAL", body, "1", "busykey", "loop"}
	for _, conn := range []*respConn{runner.redis, runner.cell} {
		if err := conn.Send(loop...); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)

	// Not differential: other shards and key-less commands still answer.
	if !selfTest() {
		cell, err := dialRESP(s.cell.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer cell.Close()
		// The script loops until SCRIPT KILL, below: an answer at all
		// (within the connection's reply timeout) shows it did not wait.
		if r, err := cell.Do("ECHO", "alive"); err != nil || string(r) != "$5\r\nalive\r\n" {
			t.Errorf("ECHO beside a busy script: %q %v", r, err)
		}
		ran := 0
		for i := range 4 {
			r, err := cell.Do("EVAL", "return 1", "1", "elsewhere"+strconv.Itoa(i))
			if err == nil && string(r) == ":1\r\n" {
				ran++
			}
		}
		if ran == 0 {
			t.Errorf("no script on another shard ran beside the busy one")
		}
	}

	// Same key: answered BUSY once the threshold passes, on both servers.
	other.Error("EVAL", "return 1", "1", "busykey")
	other.Error("DBSIZE")
	// In MULTI, a BUSY command poisons the transaction.
	other.Do("MULTI")
	other.Error("EVAL", "return 1", "1", "busykey")
	other.Error("EXEC")

	other.Do("SCRIPT", "KILL")
	rr, err := runner.redis.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	cr, err := runner.cell.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rr, cr) || !strings.HasPrefix(string(rr), "-ERR Script killed by user with SCRIPT KILL...") {
		t.Errorf("killed script's reply:\n  redis-server: %q\n  cellserver:   %q", rr, cr)
	}
	other.Error("SCRIPT", "KILL")
	other.Do("EVAL", "return 1", "1", "busykey")
}

// TestScriptKillLoopWithPcall: a script cannot catch SCRIPT KILL with pcall.
func TestScriptKillLoopWithPcall(t *testing.T) {
	s := startServers(t, serverOptions{args: []string{"--busy-reply-threshold", "100"}})
	runner := newPairOn(t, s)
	other := newPairOn(t, s)
	for _, conn := range []*respConn{runner.redis, runner.cell} {
		if err := conn.Send("EVAL", "while true do pcall(function() while true do end end) end", "0"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond)
	other.Do("SCRIPT", "KILL")
	rr, err1 := runner.redis.ReadReply()
	cr, err2 := runner.cell.ReadReply()
	if err1 != nil || err2 != nil || !bytes.Equal(rr, cr) {
		t.Errorf("killed script's reply:\n  redis-server: %q %v\n  cellserver:   %q %v", rr, err1, cr, err2)
	}
}

// scriptNeeds skips t when cellserver does not have every named command
// yet (they arrive from other branches).
func scriptNeeds(t *testing.T, c *pair, names ...string) {
	t.Helper()
	for _, n := range names {
		r, err := c.cell.Do("EVAL", "return redis.pcall('"+n+"')", "0")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(r), "Unknown Redis command") {
			t.Skipf("cellserver has no %s yet", strings.ToUpper(n))
		}
	}
}

// TestScriptWrites: write commands from scripts, their replies in Lua, and
// errors that keep their code.
func TestScriptWrites(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "set", "get", "incr", "expire", "del", "ttl", "lpush", "hset")
		c.Do("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "s", "v")
		c.Do("EVAL", "return redis.call('set', KEYS[1], 'x', 'xx', 'get')", "1", "s")
		c.Do("EVAL", "return redis.call('set', KEYS[1], 1, 'nx')", "1", "s")
		c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "s")
		c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "missing")
		c.Do("EVAL", "return {redis.call('get', KEYS[1])}", "1", "missing")
		c.Do("EVAL", "redis.setresp(3) return {redis.call('get', KEYS[1]) == nil}", "1", "missing")
		c.Do("EVAL", "return redis.call('set', KEYS[1], 1/3)", "1", "f")
		c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "f")
		c.Do("EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
		c.Do("EVAL", "return redis.call('incr', KEYS[1])", "1", "s")
		c.Do("EVAL", "return redis.pcall('incr', KEYS[1])", "1", "s")
		c.Do("EVAL", "redis.call('lpush', KEYS[1], 'a') return redis.call('incr', KEYS[1])", "1", "l")
		c.Do("EVAL", "return redis.pcall('lpush', KEYS[1], 'x')", "1", "s")
		c.Do("EVAL", "return redis.call('get')", "0")
		c.Do("EVAL", "return redis.call('expire', KEYS[1], 100)", "1", "n")
		c.Do("EVAL", "return redis.call('ttl', KEYS[1])", "1", "n")
		c.Do("EVAL", "return redis.call('del', KEYS[1], KEYS[2])", "2", "n", "s")
		c.Do("EVAL", "return redis.call('hset', KEYS[1], 'f', 1.5, 'g', 2)", "1", "h")
		c.Do("EVAL", "return redis.call('hgetall', KEYS[1])", "1", "h")
		// (Under setresp(3) a map reaches Lua as a table, whose iteration
		// order differs between the two Lua implementations.)
		c.Do("EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1]).map.f", "1", "h")
		c.Do("EVAL_RO", "return redis.call('set', KEYS[1], 1)", "1", "ro")
		c.Do("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "s")
		c.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 1)", "1", "ro")
		c.Do("GET", "ro")
		// Time is frozen inside a script: a key cannot expire half-way.
		c.Do("EVAL", "redis.call('set', KEYS[1], 1, 'px', 1) local t = redis.call('time') while true do local u = redis.call('time') if (u[1] - t[1]) * 1000000 + u[2] - t[2] > 5000 then break end end return redis.call('get', KEYS[1])", "1", "frozen")
	})
}

// W2: the sliding window in one script, loaded once and run by sha.
func TestScriptW2SlidingWindow(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "zadd", "zcard", "zremrangebyscore", "expire", "ttl", "zrange")
		body := `redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[1])
local c = redis.call('ZCARD', KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return c`
		c.Do("SCRIPT", "LOAD", body)
		sha := fmt.Sprintf("%x", sha1.Sum([]byte(body)))
		now := int64(1700000000000)
		for i := range int64(12) {
			ts := now + i*150
			c.Do("EVALSHA", sha, "1", "limit:u:a", strconv.FormatInt(ts, 10), strconv.FormatInt(ts-1000, 10), "2")
		}
		c.Do("ZRANGE", "limit:u:a", "0", "-1", "WITHSCORES")
		c.Do("TTL", "limit:u:a")
		c.Do("SCRIPT", "FLUSH")
		c.Error("EVALSHA", sha, "1", "limit:u:a", "1", "0", "2")
		c.Do("EVAL", "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1]) return 1 end return 0", "1", "limit:u:b", "5", "0", "3")
		c.Do("EVAL", "redis.call('PEXPIRE', KEYS[1], 1500) return redis.call('PTTL', KEYS[1]) > 0", "1", "limit:u:b")
	})
}

// W3 and W4 as scripts: a fixed-window counter, and GCRA with GET/SET PX
// returning tostring() of floats (go-redis/redis_rate's shape).
func TestScriptW3W4(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "incr", "expire", "get", "set", "ttl")
		for range 3 {
			c.Do("EVAL", "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end return n", "1", "rl:1:0", "60")
		}
		c.Do("TTL", "rl:1:0")
		gcra := `redis.replicate_commands()
local burst, rate, period, cost, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst
local tat = redis.call("GET", KEYS[1])
if not tat then tat = now else tat = tonumber(tat) end
tat = math.max(tat, now)
local new_tat = tat + increment
local allow_at = new_tat - burst_offset
local diff = now - allow_at
local remaining = diff / emission_interval
if remaining < 0 then
  return {0, 0, tostring(-diff), tostring(tat - now)}
end
local reset_after = new_tat - now
if reset_after > 0 then redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(reset_after)) end
return {cost, remaining, tostring(-1), tostring(reset_after)}`
		for i := range 6 {
			now := 1700000000.123 + float64(i)*0.07
			c.Do("EVAL", gcra, "1", "gcra:u", "3", "7", "1", "1", strconv.FormatFloat(now, 'f', 3, 64))
		}
		c.Do("GET", "gcra:u")
		c.Do("TTL", "gcra:u")
	})
}

// W5: Redisson RRateLimiter's tryAcquire shape: a hash of settings, a
// string value and a sorted set of binary permits built with struct.
func TestScriptW5Redisson(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "hsetnx", "hget", "get", "set", "decrby", "zadd", "zrangebyscore", "zremrangebyscore", "zcard", "zrange", "pttl", "pexpire")
		c.Do("HSETNX", "L", "rate", "3")
		c.Do("HSETNX", "L", "interval", "1000")
		c.Do("HSETNX", "L", "type", "0")
		c.Do("EXPIRE", "L", "100")
		acquire := `local rate = redis.call('hget', KEYS[1], 'rate')
local interval = redis.call('hget', KEYS[1], 'interval')
local type = redis.call('hget', KEYS[1], 'type')
assert(rate ~= false and interval ~= false and type ~= false, 'RateLimiter is not initialized')
local valueName, permitsName = KEYS[2], KEYS[3]
assert(tonumber(rate) >= tonumber(ARGV[1]), 'Requested permits amount could not exceed defined rate')
local currentValue = redis.call('get', valueName)
local res
if currentValue ~= false then
  local expiredValues = redis.call('zrangebyscore', permitsName, 0, tonumber(ARGV[2]) - interval)
  local released = 0
  for i, v in ipairs(expiredValues) do
    local random, permits = struct.unpack('Bc0I', v)
    released = released + permits
  end
  if released > 0 then
    redis.call('zremrangebyscore', permitsName, 0, tonumber(ARGV[2]) - interval)
    if tonumber(currentValue) + released > tonumber(rate) then
      currentValue = tonumber(rate) - redis.call('zcard', permitsName)
    else
      currentValue = tonumber(currentValue) + released
    end
    redis.call('set', valueName, currentValue)
  end
  if tonumber(currentValue) < tonumber(ARGV[1]) then
    local firstValue = redis.call('zrange', permitsName, 0, 0, 'withscores')
    res = 3 + interval - (tonumber(ARGV[2]) - tonumber(firstValue[2]))
  else
    redis.call('zadd', permitsName, ARGV[2], struct.pack('Bc0I', string.len(ARGV[3]), ARGV[3], ARGV[1]))
    redis.call('decrby', valueName, ARGV[1])
    res = nil
  end
else
  redis.call('set', valueName, rate)
  redis.call('zadd', permitsName, ARGV[2], struct.pack('Bc0I', string.len(ARGV[3]), ARGV[3], ARGV[1]))
  redis.call('decrby', valueName, ARGV[1])
  res = nil
end
local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then
  redis.call('pexpire', valueName, ttl)
  redis.call('pexpire', permitsName, ttl)
end
return res`
		now := int64(1700000000000)
		for i, step := range []int64{0, 10, 20, 30, 40, 1005, 1015, 1500, 2100} {
			id := string([]byte{0, 1, 2, 0xff, byte(i), '\r', '\n', 7})
			c.Do("EVAL", acquire, "3", "L", "{L}:value", "{L}:permits", "1", strconv.FormatInt(now+step, 10), id)
		}
		c.Do("EVAL", acquire, "3", "L", "{L}:value", "{L}:permits", "5", strconv.FormatInt(now, 10), "x")
		c.Do("EVAL", acquire, "3", "nolimiter", "{nolimiter}:value", "{nolimiter}:permits", "1", "1", "x")
		c.Do("GET", "{L}:value")
		c.Do("ZRANGE", "{L}:permits", "0", "-1", "WITHSCORES")
	})
}

// W6: the time-slice ring in a list.
func TestScriptW6Ring(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "rpush", "llen", "lindex", "lset", "get", "set")
		args := []string{"RPUSH", "SLIDE_WINDOW"}
		for range 121 {
			args = append(args, "0")
		}
		c.Do(args...)
		c.Do("LLEN", "SLIDE_WINDOW")
		c.Do("GET", "SLIDE_INDEX")
		ring := `local last, cur, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if last == cur then
  local v = tonumber(redis.call('lindex', KEYS[1], cur)) + 1
  redis.call('lset', KEYS[1], cur, v)
  redis.call('set', KEYS[2], cur)
  return tostring(v)
end
local i = (last + 1) % size
while i ~= cur do redis.call('lset', KEYS[1], i, 0) i = (i + 1) % size end
redis.call('lset', KEYS[1], cur, 1)
redis.call('set', KEYS[2], cur)
return tostring(1)`
		for _, step := range [][2]int{{0, 0}, {0, 0}, {0, 3}, {3, 3}, {3, 120}, {120, 2}, {2, 2}} {
			c.Do("EVAL", ring, "2", "SLIDE_WINDOW", "SLIDE_INDEX", strconv.Itoa(step[0]), strconv.Itoa(step[1]), "121")
		}
		for _, i := range []string{"0", "1", "2", "3", "120"} {
			c.Do("LINDEX", "SLIDE_WINDOW", i)
		}
		c.Do("GET", "SLIDE_INDEX")
	})
}

// W7: the leaky bucket state in a hash, updated atomically by a script.
func TestScriptW7Funnel(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "hgetall", "hset", "expire", "ttl")
		funnel := `local f = redis.call('hgetall', KEYS[1])
local t = {}
for i = 1, #f, 2 do t[f[i]] = f[i+1] end
local capacity, rate, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local left = tonumber(t.left_quota or capacity)
local ts = tonumber(t.leaking_ts or now)
left = math.min(capacity, left + (now - ts) * rate)
local ok = 0
if left >= 1 then left = left - 1 ok = 1 end
redis.call('hset', KEYS[1], 'capacity', capacity, 'rate', rate, 'left_quota', left, 'leaking_ts', now)
redis.call('expire', KEYS[1], 60)
return {ok, tostring(left)}`
		for i := range 6 {
			now := 1700000000 + float64(i)*0.3
			c.Do("EVAL", funnel, "1", "funnel:u", "3", "0.7", strconv.FormatFloat(now, 'f', 1, 64))
		}
		c.Do("HGETALL", "funnel:u")
		c.Do("TTL", "funnel:u")
	})
}

// TestScriptStringLibrary: string.format is C's printf, tonumber is strtod.
func TestScriptStringLibrary(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return string.format('%d|%x %X %o|%x', 3.7, 255, 255, 8, -1)",
			"return string.format('%g %e %.0f %.10g %g', 1/3, 12345.678, 2.5, 1/3, 1e20)",
			"return string.format('%5.1f|%-5d|%05d|%i|%u', 3.14159, 42, 42, 5, 3)",
			"return string.format('%c%c|%q', 72, 105, 'a\\nb\\0c\"\\\\')",
			"return string.format('%10s|%-10s|%.3s|%5.2s|', 'hi', 'hi', 'abcdef', 'abc')",
			"return string.format('%d %d %d', 2^53, -0.5, '12')",
			"return {string.format('%.0f', 2.5), string.format('%.0f', 3.5), string.format('%.0f', -0.4), string.format('%.0f', 1700000000123456.7), string.format('%d', -3.9), string.format('%d', 2^53), string.format('%.0f', 1e300), string.format('%d', '12'), string.format('%.0f', '7.5'), string.format('%d', 1e18)}",
			"return string.format('%f|%5f|%-6e|%G', 1/0, -1/0, 1/0, 0/0)",
			"return string.format('%#x %#o %+d % d', 255, 8, 5, 5)",
			"return string.format('%s %5.1s|', 1e15, 1/3)",
			"return string.format('%s', true)", "return string.format('%s', {})", "return string.format('%d')",
			"return string.format('%y', 1)", "return string.format('%123d', 1)",
			"return {tonumber('1e2'), tonumber(' 0x1A '), tonumber('1e'), tonumber('10', 16), tonumber('5.'), tonumber('z', 36)}",
			"return tonumber('inf')", "return tostring(tonumber('nan'))", "return math.huge",
			"return {'1e2' + 1, '0x10' + 0, ' 5 ' * 2}",
			"return {string.find('hello world', 'o w')}", "return {string.match('key:123', '(%a+):(%d+)')}",
			"return {string.gsub('hello world', 'o', '0')}", "return string.sub('hello', -3)",
			"return {string.byte('abc', 1, -1)}", "local t = {3,1,2} table.sort(t, function(a,b) return a > b end) return t",
			"return {math.fmod(-7, 3), -7 % 3, 7 % -3, math.floor(-3.5), math.ceil(-3.5)}",
			"return {0.1 + 0.2 .. '', 10 / 3 .. '', 2^0.5 .. '', math.pi .. '', 1e15 + 0.5 .. ''}",
		)
	})
}

// TestScriptInfoAndConfig: INFO's script fields follow the cache, and
// busy-reply-threshold (alias lua-time-limit) is live through CONFIG SET.
func TestScriptInfoAndConfig(t *testing.T) {
	c := newPair(t)
	fields := maskInfo("used_memory_lua", "used_memory_vm_eval", "used_memory_scripts_eval", "number_of_cached_scripts", "used_memory_lua_human")
	c.Do("SCRIPT", "FLUSH")
	c.DoMasked(fields, "INFO", "memory")
	c.Do("SCRIPT", "LOAD", "return 1")
	// Loaded rather than run: Redis steps its Lua GC on every 50th EVAL of
	// the process's life, so after an EVAL used_memory_lua depends on how
	// many scripts earlier tests ran.
	c.Do("SCRIPT", "LOAD", "return 2")
	c.DoMasked(fields, "INFO", "memory")
	c.Do("SCRIPT", "FLUSH")
	c.DoMasked(fields, "INFO", "memory")

	c.Do("CONFIG", "GET", "busy-reply-threshold")
	c.Do("CONFIG", "SET", "lua-time-limit", "150")
	c.Do("CONFIG", "GET", "busy-reply-threshold")
	defer c.Do("CONFIG", "SET", "busy-reply-threshold", "5000")
	other := c.OtherClient()
	for _, conn := range []*respConn{c.redis, c.cell} {
		if err := conn.Send("EVAL", "while true do end", "1", "cfgbusy"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond) // let both scripts start
	other.Error("EVAL", "return 1", "1", "cfgbusy")
	other.Do("SCRIPT", "KILL")
	rr, err1 := c.redis.ReadReply()
	cr, err2 := c.cell.ReadReply()
	if err1 != nil || err2 != nil || !bytes.Equal(rr, cr) {
		t.Errorf("killed script's reply:\n  redis-server: %q %v\n  cellserver:   %q %v", rr, err1, cr, err2)
	}
}

// TestScriptErrorStats: a failed redis.call is counted once, when the
// command fails, not again when the script passes the error on; errors the
// script makes itself are counted when they are replied.
func TestScriptErrorStats(t *testing.T) {
	c := newPair(t)
	c.Do("CONFIG", "RESETSTAT")
	c.Do("SET", "sk", "abc")
	for _, args := range [][]string{
		{"EVAL", "return redis.call('incr', KEYS[1])", "1", "sk"},
		{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "sk"},
		{"EVAL", "return {1, redis.pcall('incr', KEYS[1])}", "1", "sk"},
		{"EVAL", "return redis.pcall('incr', KEYS[1]).ignore_stats_update", "1", "sk"},
		{"EVAL", "redis.pcall('incr', KEYS[1]) return 1", "1", "sk"},
		{"EVAL", "redis.call('incr', KEYS[1])", "1", "sk"},
		{"EVAL", "error('x')", "0"},
		{"EVAL", "return {err='MY thing'}", "0"},
		{"EVAL", "return {1, {err='NESTED x'}}", "0"},
		{"EVAL", "return redis.error_reply('E2 x')", "0"},
		{"EVAL", "return redis.call('nosuch')", "0"},
		{"EVAL", "return redis.call('get')", "0"},
		{"EVAL", "return redis.call('get', {})", "0"},
		{"EVAL_RO", "return redis.call('set', KEYS[1], 1)", "1", "sk"},
	} {
		c.Do(args...)
	}
	c.DoMasked(maskInfo("errorstat_E2", "errorstat_ERR", "errorstat_MY", "errorstat_NESTED", "total_error_replies"), "INFO", "errorstats")
	c.DoMasked(maskInfo("total_error_replies"), "INFO", "stats")
}

// TestScriptMonitor: MONITOR shows EVAL before its script's commands, which
// come from "lua"; EVALSHA is shown even when it fails.
func TestScriptMonitor(t *testing.T) {
	c := newPair(t)
	var mons []*respConn
	for _, p := range []*process{c.srv.redis, c.srv.cell} {
		m, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		if r, err := m.Do("MONITOR"); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("%s: MONITOR replied %q, %v", p.name, r, err)
		}
		mons = append(mons, m)
	}
	c.Do("EVAL", "redis.call('set', KEYS[1], 'v') return redis.call('get', KEYS[1])", "1", "mk")
	c.Do("EVAL", "redis.call('select', 2) return redis.call('ping')", "0")
	// Undeclared: the first run is dropped and rerun, and must show once.
	c.Do("EVAL", "local v = redis.call('get', 'mon-a') redis.call('set', 'mon-b', 'x') return v", "0")
	c.Do("EVAL", "redis.call('set', KEYS[1], 'y') return redis.call('get', 'mon-c')", "1", "mk")
	c.Error("EVALSHA", "0000000000000000000000000000000000000000", "0")
	c.Error("EVAL", "return 1", "x")
	c.Do("ECHO", "end-script")
	lr := readMonitor(t, c.srv.redis.name, mons[0], "end-script")
	lc := readMonitor(t, c.srv.cell.name, mons[1], "end-script")
	luaTime := regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[([0-9]+) lua\] `)
	for _, lines := range [][]string{lr, lc} {
		for i, l := range lines {
			lines[i] = luaTime.ReplaceAllString(l, "+<time> [$1 lua] ")
		}
	}
	if strings.Join(lr, "") != strings.Join(lc, "") {
		t.Errorf("MONITOR lines differ\n  redis-server: %q\n  cellserver:   %q", lr, lc)
	}
}

// TestScriptSlowlog: a script's commands are logged one by one, from
// Redis's Lua client ("?:0", no name), before the EVAL that ran them.
func TestScriptSlowlog(t *testing.T) {
	c := newPair(t)
	slowlogEverything(t, c)
	c.Do("CLIENT", "SETNAME", "script-client")
	c.Do("EVAL", "redis.call('set', KEYS[1], 'v') return redis.call('get', KEYS[1])", "1", "sk")
	c.Error("EVAL", "return redis.call('nosuch')", "0")
	c.DoMasked(maskSlowlog, "SLOWLOG", "GET", "10")
}

// TestScriptDoubles: scores reach Lua as bulk strings, or as {double=n}
// under setresp(3), and go back to the client in its own protocol.
func TestScriptDoubles(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "zadd", "zscore", "zrange", "zincrby")
		c.Do("ZADD", "z", "1.5", "m", "0.1", "n")
		for _, body := range []string{
			"return redis.call('zscore', KEYS[1], 'm')",
			"redis.setresp(3) return redis.call('zscore', KEYS[1], 'm')",
			"redis.setresp(3) return redis.call('zscore', KEYS[1], 'm').double * 2",
			"redis.setresp(3) return type(redis.call('zscore', KEYS[1], 'nosuch'))",
			"return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
			"redis.setresp(3) return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
			"return redis.call('zincrby', KEYS[1], 1/3, 'm')",
			"return redis.call('zadd', KEYS[1], 'x', 'y')",
			"return redis.pcall('zadd', KEYS[1], 'nan', 'y')",
		} {
			c.Do("EVAL", body, "1", "z")
		}
	})
}

// TestScriptCompileErrors: syntax errors read as Lua 5.1's parser words
// them, line and "near" token included.
func TestScriptCompileErrors(t *testing.T) {
	c := newPair(t)
	for _, body := range []string{
		"x =", "local x 1", "return 1 +", "if x then", "if x then return 1", "for i=1 do end",
		"for i in pairs(t) end", "function f( return end", "local t = {1, 2", "return (1", "return 'abc",
		"x = = 1", "local = 1", "return 1goto", "return 0x", "return 1e", "return 3..2", "local function end",
		"while true do", "repeat until", "return @", "local a = {a=}", "f(", "return a.", "return a:b", "break",
		"return 1 return 2", "local x = 1 x", "x", "local 1 = 2", "return function() end end", "return 1 2",
		"if x then else elseif y then end", "return --[[ unfinished", "return '\\300'", "return 'a\\400'",
		"if x then\n\nreturn 1", "while true do\nlocal x = 1\n", "local t = {\n1,\n2\n", "f(1,\n2",
		"return [==[ x ]]", "return [=x", "(x) = 1", "f() = 1", "x, f() = 1, 2", "x, y",
		"local f = function(...) return function() return ... end end",
		"for i = 1, 2 do local function g() break end end", "while true do break; x = 1 end",
		"return ~1", "return 1 ~ 2", "local x = f\n(1)", "return 'a\nb'", "x.y.z", "return 1.5e+",
		"return 0x1G", "return {[1] 2}", "return not", "function a.b:c.d() end", "function a:b:c() end",
		"return 'x' 'y'", "return \\1", "return a // b", "return a & b", "::lbl::", "goto continue",
		"return 'a\x01", "return \x01", "return [[\n\nx",
	} {
		c.Error("EVAL", body, "0")
	}
	c.Error("SCRIPT", "LOAD", "if x then\nreturn")
	for _, body := range []string{
		"return [[a [[b]]", "return [=[a ]] [=[ b]=]", "return 'a\\0b'", "return '\\65\\066\\0677'",
		"local s = [[\nx]] return s", "return --[==[ c ]==] 1", "local t = {a = 1, b = 2; c = 3,} return t.c",
		"return a and a.b.c or 1", "return 0x10 + 1e5 + .5 + 5. + 3e-2 + 0XaB", "return 08",
		"local x = 5 return -x ^ 2", "return 2^-3 .. ''", "return 'ab\\\ncd'", "return #'abc' .. - - 1", "return '\\z'",
	} {
		c.Do("EVAL", body, "0")
	}
}

// TestScriptGotoName: goto is an ordinary name in Redis's Lua 5.1.
func TestScriptGotoName(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"local goto = 1 return goto", "local t = {goto = 5} return t.goto + t['goto']", "return goto",
			"local function goto(x) return x end return goto(3)",
			"local t = {} function t.goto() return 7 end return t:goto()", "goto = 1",
			"return 'goto' .. [[goto]] -- goto", "local goto", "local x = goto.y",
			"local goto = {} goto[1] = 2 return goto", "local goto goto = 3 return goto",
			"local gotox, xgoto, _goto = 1, 2, 3 return gotox + xgoto + _goto",
			"local __cellserver_goto_name__ = 1 local goto = 2 return goto",
			"return {pcall(function() return goto.x end)}", "for goto = 1, 2 do end return 1",
			"local t = {} t.goto = 4 return t.goto",
		)
	})
}

// TestScriptKeyOrder: cjson.encode and map and set replies list string
// keys in Lua 5.1's hash order, for tables made by constructors and by
// assignment, short and long keys.
func TestScriptKeyOrder(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return cjson.encode({a=1,b=2,c=3})", "return cjson.encode({b=1,a=2})",
			"return cjson.encode({x=1,y={z=2,w=3},foo='bar'})", "return cjson.encode({limit=10,remaining=9,reset=60})",
			"return cjson.encode({key='k', count=3, ts=1700000000})", "return cjson.encode({a=1,b=2,c=3,d=4,e=5})",
			"local t = {} t.a=1 t.b=2 t.c=3 t.d=4 t.e=5 return cjson.encode(t)",
			"local t = {} for i = 1, 20 do t['k'..i] = i end return cjson.encode(t)",
			"local t = {x=1} t.y = 2 t.z = 3 t.w = 4 return cjson.encode(t)",
			"local f = {'a','1','b','2','cc','3','ddd','4'} local t = {} for i=1,#f,2 do t[f[i]] = f[i+1] end return cjson.encode(t)",
			"local t = {} for i = 1, 100 do t[string.rep('key', i % 13 + 1) .. i] = i end return cjson.encode(t)",
			"local t = {} for i = 1, 9 do t[string.rep('x', 33) .. i] = i end return cjson.encode(t)",
			"return cjson.encode({[1]=1,[2]=2,x=3})",
			"return {map={a=1,b=2,c=3}}", "return {map={b=1,a=2}}", "redis.setresp(3) return {map={a=1,b=2,c=3}}",
			"return {set={a=true,b=true,c=true}}", "local m = {} for i = 1, 12 do m['f'..i] = i end return {map=m}",
		)
	})
}

// TestScriptNegativeZero: -0 from unary minus, * and / prints as "-0" in
// tostring, .., cjson and redis.call's arguments, and is :0 as a reply.
func TestScriptNegativeZero(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return tostring(1/-math.huge)", "return 1/-math.huge", "local x = 0 return tostring(-x)",
			"local x = 0 return {tostring(x * -1), tostring(-1 * x), x * -1 .. '', cjson.encode(-x)}",
			"local x = 0 return redis.call('echo', -x)", "local x = 0 return {double=-x}",
			"local x = 0 return tostring(-(x*2))", "local z = 0 local n = -z return tostring(n) .. tostring(n + 0)",
			"local t = setmetatable({}, {__unm = function() return 'neg' end}) return -t", "local s = '3' return -s",
			"return tostring(math.ceil(-0.5))", "local a, b = 0, -3 return tostring(a / b) .. tostring(a * b)",
			"local d = 0 return cjson.encode({v = -d})", "local inf = math.huge return tostring(-1 / inf) .. tostring(1 / -inf)",
			"local x = 0 return string.format('%g %s', -x, -x)", "local a, b = 6, 3 return {a / b, a * b, -a}",
			"local a, b = 1 return a * b", "local a = {} return a.x / a.y", "local a = 'x' return -a",
			// Unary minus names its operand in errors and calls __unm.
			"local a; return -a", "local t = {} return -t.x", "return -{}", "return -y",
			"local s = ' 0x10 ' return -s", "local a = true return {pcall(function() return -a end)}",
			"return -(function() return 3 end)()", "local x = 2 return - - x",
			"local t = setmetatable({}, {__unm = function(a, b) return rawequal(a, b) end}) return -t",
		)
	})
}

// TestScriptMoreConversions: the rest of spec section 4.3's tables: null
// arrays reach Lua as false (nil under setresp(3)), cjson's refusals, and
// the signs of NaN and zero through the math library.
func TestScriptMoreConversions(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scriptNeeds(t, c, "lpop")
		for _, body := range []string{
			"return {redis.call('lpop', KEYS[1], 1)}", "return type(redis.call('lpop', KEYS[1], 1))",
			"redis.setresp(3) return type(redis.call('lpop', KEYS[1], 1))",
			"return tostring(-(0/0))", "return cjson.encode(function() end)", "return cjson.encode({f=function() end})",
			"local t = {} local c = t for i = 1, 1100 do c[1] = {} c = c[1] end return cjson.encode(t)",
			"return cjson.decode('{\"a\":{\"b\":[true,false]}}').a.b", "return cmsgpack.unpack(cmsgpack.pack({a=1,b={1,2}})).b",
			"return string.format('%5.1f', -0.04)", "return tostring(2^63) .. ' ' .. tostring(-2^63)",
			"return {tostring(math.floor(-0.0)), tostring(math.abs(-0.0)), tostring(math.ceil(-0.5))}",
		} {
			c.Do("EVAL", body, "1", "emptylist")
		}
	})
}

// TestScriptBoxedNumbers: the values cellserver boxes in blocks (math.max,
// min, floor and ceil, tonumber, arithmetic helpers, reply integers and
// bulks, ARGV) read back as Redis's, errors included.
func TestScriptBoxedNumbers(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		evalEach(c,
			"return tostring(math.max(1, 2.5, -3))", "return tostring(math.min(1e300, -0.5, 7))",
			"return tostring(math.max('10', 9))", "return tostring(math.min(3, '2.5'))",
			"return math.max()", "return math.min()", "return math.max(1, 'x')", "return math.max(1, nil)",
			"return tostring(math.max(0/0, 1))", "return tostring(math.max(1, 0/0))", "return tostring(math.max(-0, 0))",
			"return tostring(math.floor(-0.5))", "return tostring(math.ceil(-0.5))", "return tostring(math.floor(1e300))",
			"return tostring(math.floor(2^53 + 0.5))", "return tostring(math.ceil(1700000000000.25))",
			"return tostring(math.floor('3.7'))", "return math.ceil()", "return math.floor({})", "return tostring(math.ceil(1/0))",
			"local m = {} for i = 1, 300 do m[i] = math.floor(i * 1000.5) end return tostring(m[1]) .. ' ' .. tostring(m[300])",
			"return tostring(tonumber('1700000000000') * 1000 / 3)", "return tostring(-tonumber('2.5'))",
			"local t = redis.call('TIME') return {type(t[1]), type(tonumber(t[2]))}",
		)
		for _, body := range []string{
			"redis.call('set', KEYS[1], '5000000000') return tostring(redis.call('incrby', KEYS[1], 3) + 0.5)",
			"redis.call('set', KEYS[1], 'abc') local s = redis.call('get', KEYS[1]) return {s, #s, s .. s}",
		} {
			c.Do("EVAL", body, "1", "boxed")
		}
		c.Do("EVAL", "return {ARGV[1] + ARGV[2], ARGV[3], #ARGV[3], tostring(tonumber(ARGV[1]))}", "0", "1700000000000", "-0.25", "")
	})
}
