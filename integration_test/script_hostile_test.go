package integration_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Scripts that lean on the builtins: Lua 5.1 patterns, and the functions
// that return many values, compared byte for byte with redis-server.

// TestScriptPatterns: string.find, match, gmatch and gsub as lstrlib has
// them, errors included.
func TestScriptPatterns(t *testing.T) {
	c := newPair(t)
	evalEach(c,
		"local t={} for c in ('abc'):gmatch('.') do t[#t+1]=c end return t",
		"local t={} for k,v in string.gmatch('a=1, b=2, c=3', '(%w+)=(%w+)') do t[#t+1]=k..v end return t",
		"local t={} for w in string.gmatch('one two  three', '%a*') do t[#t+1]='['..w..']' end return t",
		"local t={} for p in string.gmatch('abc', '()') do t[#t+1]=p end return t",
		"local t={} for w in string.gmatch('^a^a', '^a') do t[#t+1]=w end return t",
		"local t={} for w in string.gfind('a b', '%a') do t[#t+1]=w end return t",
		"return {string.find('hello world', 'o w')}", "return {string.find('hello world', 'o', 6)}",
		"return {string.find('hello', 'l+')}", "return {string.find('hello', '(l)(l)')}",
		"return {string.find('hello', '()ll()')}", "return {string.find('abc', '', 10)}",
		"return {string.find('abc', '', 4)}", "return {string.find('abc', '', -10)}",
		"return {string.find('a.b', '.', 1, true)}", "return {string.find('a+b', '+', 1)}",
		"return {string.find('a\\0b', '\\0b')}", "return {string.find('abc', 'b\\0z')}",
		"return {string.match('abc', 'b\\0z')}", "return {string.match('key:123', '(%a+):(%d+)')}",
		"return {string.match('  trim  ', '^%s*(.-)%s*$')}", "return {string.match('hello', 'l', -2)}",
		"return {string.match('THE (quick) fox', '%((%a+)%)')}", "return {string.match('f(a(b)c)d', '%b()')}",
		"return {string.match('THE (quick) fox', '%f[%a]%a+', 5)}", "return {string.match('hello world', '%f[%w]%w+$')}",
		"return {string.match('abcabc', '(abc)%1')}", "return {string.match('xyz', '[^%a]')}",
		"return {string.match('a]b', '[]]')}", "return {string.match('a-b', '[a%-]+')}",
		"return {string.match('a-z', '[%a-]+')}", "return {string.match('09afG', '%x+')}",
		"return {string.match('\\0a', '%z')}", "return {string.match('\\t\\n x', '%s+()')}",
		"return {string.match('ABc', '%u+')}", "return {string.match('a,b;c', '%p')}",
		"return {string.match('\\1\\2x', '%c+')}", "return {string.match('x_', '%W')}",
		"return {string.match('hello', '.-l')}", "return {string.match('hello', '.*l')}",
		"return {string.match('hello', 'x*')}", "return {string.match('hello', 'h?e')}",
		"return {string.match('hello', '$')}", "return {string.match('hel$lo', 'l$l')}",
		"return {string.match(1e15, '%d+')}", "return {string.find(12345, 34)}",
		"return {string.find('a', 'a', '1')}",
		"return string.match(string.rep('a', 40), string.rep('(a)', 33))",
		"return #{string.match(string.rep('a', 40), string.rep('(a)', 32))}",
		"return {string.gsub('hello world', 'o', '0')}", "return {string.gsub('hello world', 'o', '0', 1)}",
		"return {string.gsub('hello world', '(o)', '[%1%1]')}", "return {string.gsub('hello world', 'o', '%0%0')}",
		"return {string.gsub('hello', 'l', '%%')}", "return {string.gsub('hello', 'l', '%')}",
		"return {string.gsub('hello', 'l', '%1')}", "return {string.gsub('hello', '()l', '%1')}",
		"return {string.gsub('hello', 'l', '%a')}",
		"return {string.gsub('hello world', '%w+', function(w) return w:upper() end)}",
		"return {string.gsub('hello world', '(%w+) (%w+)', '%2 %1')}",
		"return {string.gsub('$name is $age', '%$(%w+)', {name='bob', age=42})}",
		"return {string.gsub('$name is $x', '%$(%w+)', {name='bob'})}",
		"return {string.gsub('abc', '%w', function(c) if c=='b' then return false end return c..c end)}",
		"return {string.gsub('abc', '%w', 1.5)}", "return {string.gsub('abc', '%w', 1e15)}",
		"return {string.gsub('abc', '', '-')}", "return {string.gsub('abc', '^', '-')}",
		"return {string.gsub('abc', '$', '-')}", "return {string.gsub('aaa', '^a', '-')}",
		"return {string.gsub('abc', '.', {a=1, b=true})}", "return {string.gsub('abc', 'x*', '-')}",
		"return {string.gsub('abc', 'b', '%0', -1)}", "return {string.gsub(12345, 3, 9)}",
		"local r, n = string.gsub(string.rep('ab', 5e5), '(a)(b)', '%2%1') return {n, r:sub(1, 6)}",
		"local n=0 for c in string.rep('x', 1e6):gmatch('.') do n=n+1 end return n",
		"return {string.find(string.rep('a', 1e5)..'b', '.-b')}",
	)
	for _, body := range []string{
		"return string.match('hello', '%')", "return string.match('hello', '[a')",
		"return string.match('hello', '[^')", "return string.match('hello', '[%')",
		"return string.match('hello', '(()')", "return string.match('hello', '%1')",
		"return string.match('hello', '(h)%2')", "return string.match('hello', 'h)')",
		"return string.find('hello', '(h')", "return string.match('hello', '%b')",
		"return string.match('hello', '%bx')", "return string.match('hello', '%f')",
		"return string.match('hello', '%fa')", "return {string.gsub('hello', 'l', '%2')}",
		"return {string.gsub('abc', '%w', function(c) return {} end)}",
		"return string.gsub('abc', 'b')", "return string.gsub('abc', 'b', true)",
		"return string.gsub()", "return string.find('a', {})", "return string.find('a', 'a', 'x')",
		"for w in string.gmatch('abc', '%') do end",
	} {
		c.Error("EVAL", body, "0")
	}
}

// TestScriptManyResults: the builtins that return many values stop where
// C Lua's stack does, with Redis's errors, and at once.
func TestScriptManyResults(t *testing.T) {
	c := newPair(t)
	packed := func(n int, extra string) string {
		return "local t={} for i=1," + strconv.Itoa(n) + " do t[i]=cmsgpack.pack(i%100) end " + extra
	}
	evalEach(c,
		"return select('#', unpack({1,2,3}))", "return {unpack({1,2,3}, 2)}", "return {unpack({1,2,3}, 2, 5)}",
		"return {unpack({1,2,3}, -1, 1)}", "return {unpack({1,2,3}, 3, 1)}", "return {unpack({1,2,3}, '2')}",
		"return select('#', unpack({}, 1, 7997))",
		"return {string.byte('abc', 1, -1)}", "return {string.byte('abc', 0)}", "return {string.byte('abc', -1)}",
		"return {string.byte('abc', 2, 10)}", "return {string.byte('abc', 3, 2)}", "return {string.byte('', 1)}",
		"return select('#', string.byte(string.rep('x', 7997), 1, -1))",
		"return string.char(72, 105)", "return string.char()", "return string.char('65', 66.9)",
		packed(7999, "return select('#', cmsgpack.unpack(table.concat(t)))"),
		packed(9000, "return select('#', cmsgpack.unpack_limit(table.concat(t), 7998))"),
		packed(7996, "t[#t+1]=cmsgpack.pack({a=1}) return select('#', cmsgpack.unpack(table.concat(t)))"),
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0)}", "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0, 1)}",
		"return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 1)}", "return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)}",
		"return table.concat({1, 2, 'x', 1e15}, ', ')", "return table.concat({1, 2, 3}, '-', 2)",
	)
	for _, body := range []string{
		"return select('#', unpack({}, 1, 7998))", "return select('#', unpack({}, 1, 400000))",
		"return select('#', unpack({}, -2147483648, 2147483647))", "return #string.char(unpack({}, 1, 400000))",
		"return unpack()", "return unpack({}, 'x')",
		"return select('#', string.byte(string.rep('x', 1e6), 1, -1))",
		"return select('#', string.byte(string.rep('x', 7998), 1, -1))",
		"return string.char(256)", "return string.char(-1)", "return string.char('x')",
		packed(1e6, "return select('#', cmsgpack.unpack(table.concat(t)))"),
		packed(8000, "return select('#', cmsgpack.unpack(table.concat(t)))"),
		packed(9000, "return select('#', cmsgpack.unpack_limit(table.concat(t), 7999))"),
		packed(9000, "return select('#', cmsgpack.unpack_limit(table.concat(t), 8000))"),
		packed(7997, "t[#t+1]=cmsgpack.pack({1}) return select('#', cmsgpack.unpack(table.concat(t)))"),
		packed(7998, "t[#t+1]=cmsgpack.pack({1}) return select('#', cmsgpack.unpack(table.concat(t)))"),
		packed(7997, "t[#t+1]=cmsgpack.pack({a=1}) return select('#', cmsgpack.unpack(table.concat(t)))"),
		"return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 5)}", "return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), -1)}",
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), -1)}", "return table.concat({1, {}, 3})",
	} {
		c.Error("EVAL", body, "0")
	}
}

// TestScriptKillBuiltins: SCRIPT KILL stops a script that spends its time
// in gsub calls, on both servers (Redis looks every 100000 instructions,
// so its calls are short here); and on cellserver also long calls and a
// single call that would never end, which Redis cannot stop inside a C
// function.
func TestScriptKillBuiltins(t *testing.T) {
	s := startServers(t, serverOptions{args: []string{"--busy-reply-threshold", "100"}})
	runner := newPairOn(t, s)
	other := newPairOn(t, s)
	loop := "local s=string.rep('x',100) while true do string.gsub(s,'x','y') end"
	for _, conn := range []*respConn{runner.redis, runner.cell} {
		if err := conn.Send("EVAL", loop, "1", "lk"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	other.Error("GET", "lk")
	other.Do("SCRIPT", "KILL")
	start := time.Now()
	rr, err1 := runner.redis.ReadReply()
	cr, err2 := runner.cell.ReadReply()
	if err1 != nil || err2 != nil || !bytes.Equal(rr, cr) || !strings.HasPrefix(string(cr), "-ERR Script killed by user") {
		t.Errorf("killed gsub loop:\n  redis-server: %q %v\n  cellserver:   %q %v", rr, err1, cr, err2)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the killed loop answered after %v", d)
	}
	other.Do("GET", "lk")

	if selfTest() {
		return
	}
	for _, body := range []string{
		"local s=string.rep('x',3e5) for i=1,1e6 do string.gsub(s,'x','y') end return 1",
		"return string.find(string.rep('a', 40), string.rep('a*', 40)..'b')",
		"return string.gsub(string.rep('a', 40), string.rep('a*', 40)..'b', '')",
		"for w in string.gmatch(string.rep('a', 40), string.rep('a*', 40)..'b') do end",
	} {
		cell, err := dialRESP(s.cell.addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := cell.Send("EVAL", body, "1", "lk"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		killer, err := dialRESP(s.cell.addr)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := killer.Do("SCRIPT", "KILL"); err != nil || string(r) != "+OK\r\n" {
			t.Errorf("SCRIPT KILL during %q: %q %v", body, r, err)
		}
		start := time.Now()
		r, err := cell.ReadReply()
		if err != nil || !strings.HasPrefix(string(r), "-ERR Script killed by user with SCRIPT KILL...") || time.Since(start) > time.Second {
			t.Errorf("%q after SCRIPT KILL: %q %v after %v", body, r, err, time.Since(start))
		}
		cell.Close()
		killer.Close()
	}
}
