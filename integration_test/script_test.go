package integration_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scripting: EVAL and friends compared byte for byte with redis-server
// (spec section 4). Scripts that touch keys declare them in KEYS, since
// cellserver refuses undeclared keys by default (spec section 7).

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
	s := startServers(t, serverOptions{busyReplyThresholdMs: 200})
	runner := newPairOn(t, s)
	other := newPairOn(t, s)
	loop := []string{"EVAL", "while true do end", "1", "busykey"}
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
		start := time.Now()
		if r, err := cell.Do("ECHO", "alive"); err != nil || string(r) != "$5\r\nalive\r\n" || time.Since(start) > 150*time.Millisecond {
			t.Errorf("ECHO beside a busy script: %q %v after %v", r, err, time.Since(start))
		}
		fast := 0
		for i := range 4 {
			start := time.Now()
			r, err := cell.Do("EVAL", "return 1", "1", "elsewhere"+strconv.Itoa(i))
			if err == nil && string(r) == ":1\r\n" && time.Since(start) < 150*time.Millisecond {
				fast++
			}
		}
		if fast == 0 {
			t.Errorf("no script on another shard ran beside the busy one")
		}
	}

	// Same key: answered BUSY once the threshold passes, on both servers.
	start := time.Now()
	other.Error("EVAL", "return 1", "1", "busykey")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("BUSY came after %v", d)
	}
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
	s := startServers(t, serverOptions{busyReplyThresholdMs: 100})
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
