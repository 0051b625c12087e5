package script

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// Expected values below were read off redis-server 7.0.15 (or are quoted
// in spec/redis-subset.md section 4).

func TestFormatNumbers(t *testing.T) {
	for _, tc := range []struct {
		f        float64
		g14, g17 string
	}{
		{1, "1", "1"},
		{1.0 / 3, "0.33333333333333", "0.33333333333333331"},
		{0.1, "0.1", "0.10000000000000001"},
		{1e14, "1e+14", "100000000000000"},
		{1e15, "1e+15", "1000000000000000"},
		{math.Pow(2, 53), "9.007199254741e+15", "9007199254740992"},
		{1e20, "1e+20", "1e+20"},
		{123456789012345678, "1.2345678901235e+17", "1.2345678901234568e+17"},
		{1700000000000, "1700000000000", "1700000000000"},
		{math.Copysign(0, -1), "-0", "-0"},
		{3.0, "3", "3"},
		{math.Inf(1), "inf", "inf"},
		{math.Inf(-1), "-inf", "-inf"},
		{math.Copysign(math.NaN(), -1), "-nan", "-nan"},
	} {
		if got := fmt14(tc.f); got != tc.g14 {
			t.Errorf("%%.14g of %v = %q, want %q", tc.f, got, tc.g14)
		}
		if got := fmt17(tc.f); got != tc.g17 {
			t.Errorf("%%.17g of %v = %q, want %q", tc.f, got, tc.g17)
		}
		if got := string(appendG17(nil, tc.f)); got != tc.g17 {
			t.Errorf("appendG17 of %v = %q, want %q", tc.f, got, tc.g17)
		}
	}
	for _, f := range []float64{1e16 - 1, 1e16, -1e16 + 1, 9999999999999998, 255, 1023, 1024, -1} {
		if got, want := string(appendG17(nil, f)), fmt17(f); got != want {
			t.Errorf("appendG17 of %v = %q, want %q", f, got, want)
		}
	}
}

func TestToInteger(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want int64
	}{
		{1.9, 1}, {-1.9, -1}, {-0.5, 0}, {3.99999999, 3}, {1e20, math.MinInt64},
		{math.Inf(1), math.MinInt64}, {math.NaN(), math.MinInt64}, {math.Pow(2, 63), math.MinInt64},
		{9007199254740993, 9007199254740992}, {-9223372036854775808, math.MinInt64},
	} {
		if got := toInteger(tc.f); got != tc.want {
			t.Errorf("toInteger(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

// run is a table of script bodies and the exact RESP2 reply Redis gives.
func run(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, tc := range cases {
		got := eval(t, tc[0])
		want := tc[1]
		// Error replies end with the script's sha, which the table leaves out.
		if strings.HasSuffix(want, "on @user_script:") || strings.Contains(want, " script: SHA") {
			want = strings.Replace(want, "SHA", SHA1Hex([]byte(tc[0])), 1)
		}
		if got != want {
			t.Errorf("%q\n   got  %q\n   want %q", tc[0], got, want)
		}
	}
}

func TestLuaToReply(t *testing.T) {
	run(t, [][2]string{
		{"return 1.9", ":1\r\n"},
		{"return -0.5", ":0\r\n"},
		{"return 1e20", ":-9223372036854775808\r\n"},
		{"return 'x'", "$1\r\nx\r\n"},
		{"return true", ":1\r\n"},
		{"return false", "$-1\r\n"},
		{"return nil", "$-1\r\n"},
		{"return print", "-ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: SHA, on @user_script:1.\r\n"},
		{"return function() end", "$-1\r\n"},
		{"return {1,nil,3}", "*1\r\n:1\r\n"},
		{"return {1,false,3}", "*3\r\n:1\r\n$-1\r\n:3\r\n"},
		{"return {a=1}", "*0\r\n"},
		{"return {err=1}", "*0\r\n"},
		{"return {err='bad thing'}", "-bad thing\r\n"},
		{"return {err='-X y'}", "--X y\r\n"},
		{"return {ok='fine'}", "+fine\r\n"},
		{"return {ok='a\\r\\nb'}", "+a  b\r\n"},
		{"return {double=3.14}", "$18\r\n3.1400000000000001\r\n"},
		{"return {double=1/0}", "$3\r\ninf\r\n"},
		{"return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n"},
		{"return {big_number='123'}", "$3\r\n123\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "$2\r\nhi\r\n"},
		{"redis.setresp(3) return true", ":1\r\n"},
		{"redis.setresp(3) return false", ":0\r\n"},
		{"local t = {} t[1] = t return #cjson.encode({1})", ":3\r\n"},
	})
}

func TestLuaToReplyRESP3(t *testing.T) {
	for _, tc := range [][2]string{
		{"return false", "_\r\n"},
		{"redis.setresp(3) return false", "#f\r\n"},
		{"return {double=1.5}", ",1.5\r\n"},
		{"return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", "~1\r\n$1\r\na\r\n"},
		{"return {big_number='123'}", "(123\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "=6\r\ntxt:hi\r\n"},
	} {
		if got := evalProto(t, 3, tc[0], nil, nil); got != tc[1] {
			t.Errorf("%q: got %q, want %q", tc[0], got, tc[1])
		}
	}
}

func TestReplyToLua(t *testing.T) {
	run(t, [][2]string{
		{"return type(redis.call('ping'))", "$5\r\ntable\r\n"},
		{"return redis.call('ping').ok", "$4\r\nPONG\r\n"},
		{"return redis.call('nil') == false", ":1\r\n"},
		{"return redis.call('int') + 1", ":43\r\n"},
		{"return {redis.call('arr')}", "*1\r\n*3\r\n:1\r\n$-1\r\n$1\r\nx\r\n"},
		{"return redis.call('double')", "$3\r\n1.5\r\n"},
		{"redis.setresp(3) return redis.call('double').double", ":1\r\n"},
		{"redis.setresp(3) return redis.call('nil') == nil", ":1\r\n"},
		{"redis.setresp(3) return redis.call('map').map.f", "$1\r\nv\r\n"},
		{"redis.setresp(3) return type(redis.call('bool'))", "$7\r\nboolean\r\n"},
		{"return redis.pcall('wrongtype')", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"return redis.pcall('wrongtype').err", "$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
		{"return redis.call('wrongtype')", "-WRONGTYPE Operation against a key holding the wrong kind of value script: SHA, on @user_script:1.\r\n"},
		{"return redis.call('echo', 1/3)", "$19\r\n0.33333333333333331\r\n"},
		{"return redis.call('echo', true)", "-ERR Lua redis lib command arguments must be strings or integers script: SHA, on @user_script:1.\r\n"},
		{"return redis.call()", "-ERR Please specify at least one argument for this redis lib call script: SHA, on @user_script:1.\r\n"},
	})
}

func TestErrorFormat(t *testing.T) {
	run(t, [][2]string{
		{"error('boom')", "-ERR user_script:1: boom script: SHA, on @user_script:1.\r\n"},
		{"error({err='CUSTOM boom'})", "-CUSTOM boom script: SHA, on @user_script:1.\r\n"},
		{"error('x', 0)", "-ERR x script: SHA, on @user_script:1.\r\n"},
		{"error(nil)", "-ERR nil script: SHA, on @user_script:1.\r\n"},
		{"\n\nerror('three')", "-ERR user_script:3: three script: SHA, on @user_script:3.\r\n"},
		{"error('a'..string.char(13,10)..'b')", "-ERR user_script:1: a  b script: SHA, on @user_script:1.\r\n"},
		{"error({})", "-" + msgBadErrorObject + " script: SHA, on @user_script:1.\r\n"},
		{"x = 1", "-ERR user_script:1: Attempt to modify a readonly table script: SHA, on @user_script:1.\r\n"},
		{"rawset(_G, 'x', 1)", "-ERR Attempt to modify a readonly table script: SHA, on @user_script:1.\r\n"},
		{"string.foo = 1", "-ERR user_script:1: Attempt to modify a readonly table script: SHA, on @user_script:1.\r\n"},
		{"return {pcall(function() redis.call('nosuch') end)}", "*2\r\n$-1\r\n$44\r\nERR Unknown Redis command called from script\r\n"},
		{"return redis.error_reply('boom')", "-ERR boom\r\n"},
		{"return redis.error_reply('My Error')", "-My Error\r\n"},
		{"return redis.error_reply('')", "-ERR \r\n"},
		{"return redis.error_reply(1)", "-ERR wrong number or type of arguments\r\n"},
		{"redis.setresp(4)", "-ERR RESP version must be 2 or 3. script: SHA, on @user_script:1.\r\n"},
		{"redis.log(99, 'x')", "-ERR Invalid debug level. script: SHA, on @user_script:1.\r\n"},
		{"local function f() return f() + 1 end return f()", "-ERR user_script:1: stack overflow script: SHA, on @user_script:1.\r\n"},
		{"local a = nil; return a + 1", "-ERR user_script:1: attempt to perform arithmetic on local 'a' (a nil value) script: SHA, on @user_script:1.\r\n"},
		{"local t = {} return t.x.y", "-ERR user_script:1: attempt to index field 'x' (a nil value) script: SHA, on @user_script:1.\r\n"},
		{"local t = {} t:m()", "-ERR user_script:1: attempt to call method 'm' (a nil value) script: SHA, on @user_script:1.\r\n"},
		{"local up; local function f() return up + 1 end return f()", "-ERR user_script:1: attempt to perform arithmetic on upvalue 'up' (a nil value) script: SHA, on @user_script:1.\r\n"},
		{"return KEYS[1] + 1", "-ERR user_script:1: attempt to perform arithmetic on field '?' (a nil value) script: SHA, on @user_script:1.\r\n"},
		{"for i = 1, 'x' do end", "-ERR user_script:1: 'for' limit must be a number script: SHA, on @user_script:1.\r\n"},
		{"return {pcall(function() local a; return #a end)}", "*2\r\n$-1\r\n$63\r\nuser_script:1: attempt to get length of local 'a' (a nil value)\r\n"},
	})
}

func TestNumberText(t *testing.T) {
	run(t, [][2]string{
		{"return tostring(1/3)", "$16\r\n0.33333333333333\r\n"},
		{"return 1/3 .. ''", "$16\r\n0.33333333333333\r\n"},
		{"return 2^53 .. 'x'", "$19\r\n9.007199254741e+15x\r\n"},
		{"return tostring(0/0)", "$4\r\n-nan\r\n"},
		{"return string.format('%s', 1/3)", "$16\r\n0.33333333333333\r\n"},
		{"return table.concat({1/3, 2}, ',')", "$18\r\n0.33333333333333,2\r\n"},
		{"return string.len(1/3)", ":16\r\n"},
	})
}

func TestLibraries(t *testing.T) {
	run(t, [][2]string{
		{"return cjson.encode({string.char(127), '/', 1e15, 123456789012345, 0.1, {}, {1,nil,3}})", "$59\r\n[\"\\u007f\",\"\\/\",1e+15,1.2345678901234e+14,0.1,{},[1,null,3]]\r\n"},
		{"return cjson.encode({[1]=1,[20]=3})", "-ERR user_script:1: Cannot serialise table: excessively sparse array script: SHA, on @user_script:1.\r\n"},
		{"return cjson.decode('[1,2')", "-ERR user_script:1: Expected comma or array end but found T_END at character 5 script: SHA, on @user_script:1.\r\n"},
		{"return cjson.decode('{\"a\" 1}')", "-ERR user_script:1: Expected colon but found T_NUMBER at character 6 script: SHA, on @user_script:1.\r\n"},
		{"return type(cjson.decode('null'))", "$8\r\nuserdata\r\n"},
		{"return cjson.encode(1/0)", "-ERR user_script:1: Cannot serialise number: must not be NaN or Inf script: SHA, on @user_script:1.\r\n"},
		{"return struct.pack('>I2', 258)", "$2\r\n\x01\x02\r\n"},
		{"return struct.pack('<i4', -2)", "$4\r\n\xfe\xff\xff\xff\r\n"},
		{"return {struct.unpack('>I2', struct.pack('>I2', 258))}", "*2\r\n:258\r\n:3\r\n"},
		{"return struct.size('>I2i4')", ":6\r\n"},
		{"return #struct.pack('>i9', 1)", ":9\r\n"},
		{"return {struct.unpack('Bc0I', struct.pack('Bc0I', 3, 'abc', 7))}", "*3\r\n$3\r\nabc\r\n:7\r\n:9\r\n"},
		{"return struct.pack('z')", "-ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'z') script: SHA, on @user_script:1.\r\n"},
		{"return struct.unpack('c0', 'xyz')", "-ERR user_script:1: format 'c0' needs a previous size script: SHA, on @user_script:1.\r\n"},
		{"return struct.size('s')", "-ERR user_script:1: bad argument #1 to 'size' (option 's' has no fixed size) script: SHA, on @user_script:1.\r\n"},
		{"return {bit.lshift(1,31), bit.rshift(-1,28), bit.arshift(-16,2), bit.tohex(255), bit.tohex(-1,4), bit.tobit(2^32+5), bit.bswap(0x12345678), bit.rol(1,33)}",
			"*8\r\n:-2147483648\r\n:15\r\n:-4\r\n$8\r\n000000ff\r\n$4\r\nffff\r\n:5\r\n:2018915346\r\n:2\r\n"},
		{"return cmsgpack.pack({1,2,'a'}, 1.5, -1, 300, -200, {a=1}, true, nil)", "$23\r\n\x93\x01\x02\xa1a\xca?\xc0\x00\x00\xff\xcd\x01,\xd1\xff8\x81\xa1a\x01\xc3\xc0\r\n"},
		{"return {cmsgpack.unpack(cmsgpack.pack({1,2,{x=3}}, 'abc', 2.5, 70000))}", "*4\r\n*3\r\n:1\r\n:2\r\n*0\r\n$3\r\nabc\r\n:2\r\n:70000\r\n"},
	})
}

// TestRandom: Redis 7.0's generator from a fresh server gives 40, 85, 36;
// after math.randomseed(7): 27, then a float (0 as an integer), then 4.
func TestRandom(t *testing.T) {
	r := rand48{x: rand48Initial}
	var got []float64
	for range 3 {
		got = append(got, math.Floor(float64(r.next()%lrand48Max)/lrand48Max*100)+1)
	}
	if got[0] != 40 || got[1] != 85 || got[2] != 36 {
		t.Errorf("first three math.random(100) = %v, want [40 85 36]", got)
	}
	run(t, [][2]string{
		{"math.randomseed(7) return {math.random(100), math.random(), math.random(3, 9)}", "*3\r\n:27\r\n:0\r\n:4\r\n"},
	})
}

func TestShebang(t *testing.T) {
	for _, tc := range []struct {
		body  string
		flags Flags
		err   string
	}{
		{"return 1", FlagCompat, ""},
		{"#!lua\nreturn 1", 0, ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", FlagNoWrites | FlagAllowOOM, ""},
		{"#!lua flags=\nreturn 1", 0, ""},
		{"#!lua", 0, "ERR Invalid script shebang"},
		{"#!python\nreturn 1", 0, "ERR Unexpected engine in script shebang: #!python"},
		{"#!lua flags=bogus\nreturn 1", 0, "ERR Unexpected flag in script shebang: bogus"},
		{"#!lua name=foo\nreturn 1", 0, "ERR Unknown lua shebang option: name=foo"},
	} {
		flags, _, err := parseShebang([]byte(tc.body))
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q: error %v, want %q", tc.body, err, tc.err)
		case tc.err == "" && (err != nil || flags != tc.flags):
			t.Errorf("%q: flags %b err %v, want %b", tc.body, flags, err, tc.flags)
		}
	}
}

// TestKill: cancelling the context ends an endless loop, even one that
// catches errors with pcall, with the cause's text.
func TestKill(t *testing.T) {
	for _, body := range []string{"while true do end", "while true do pcall(function() while true do end end) end"} {
		s, err := testEngine.Load([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(errors.New("ERR Script killed by user with SCRIPT KILL...")) })
		w := resp.NewWriter()
		testEngine.Run(ctx, s, nil, nil, &fakeHost{}, w)
		want := "-ERR Script killed by user with SCRIPT KILL... script: " + s.SHA + ", on @user_script:1.\r\n"
		if string(w.Bytes()) != want {
			t.Errorf("%q: %q, want %q", body, w.Bytes(), want)
		}
	}
}

// TestHostileScripts: whatever a script does, the reply is well-formed
// RESP and nothing panics.
func TestHostileScripts(t *testing.T) {
	for _, body := range []string{
		"error({})", "error(setmetatable({}, {__tostring = function() error('x') end}))",
		"return setmetatable({}, {__index = function() error('y') end})",
		"local t = {} t[1] = t return t", "return string.rep('x', 1e10)",
		"return struct.pack('i' .. string.rep('9', 20), 1)", "return struct.unpack('c2000000000', 'x')",
		"return cmsgpack.unpack(string.char(0xdd, 0xff, 0xff, 0xff, 0xff))",
		"return cjson.decode(string.rep('[', 5000))", "return coroutine.resume(coroutine.create(function() error('z') end))",
		"return loadstring('x =')", "return getmetatable('').__index.upper('a')",
		"getmetatable('').__index = nil", "return tostring(nil) .. tostring(true)",
		"return redis.call(string.rep('x', 100000))", "return bit.tohex(1, 2^40)",
		"return math.random(2^40)",
	} {
		got := eval(t, body)
		if got == "" || !strings.HasSuffix(got, "\r\n") {
			t.Errorf("%q: reply %q", body, got)
		}
	}
}
