package integration_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FUNCTION argument checks with no library loaded.
func TestFunctionNoFunctions(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("FUNCTION", "FLUSH")
		c.Do("FUNCTION", "FLUSH", "ASYNC")
		c.Do("FUNCTION", "flush", "sync")
		c.Error("FUNCTION", "FLUSH", "x")
		c.Error("FUNCTION", "FLUSH", "SYNC", "ASYNC")
		c.Do("FUNCTION", "LIST")
		c.Do("FUNCTION", "LIST", "WITHCODE")
		c.Do("FUNCTION", "LIST", "LIBRARYNAME", "x*")
		c.Error("FUNCTION", "LIST", "x")
		c.Error("FUNCTION", "LIST", "LIBRARYNAME")
		c.Error("FUNCTION", "LIST", "WITHCODE", "WITHCODE")
		c.Error("FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b")
		c.Do("FUNCTION", "LIST", "withcode", "libraryname", "a")
		c.Error("FUNCTION", "DELETE", "nosuch")
		c.Error("FUNCTION", "KILL")
		c.Error("FUNCTION", "STATS", "x")
		c.Do("FUNCTION", "STATS")
		c.Do("FUNCTION", "DUMP")
		c.Do("FUNCTION", "HELP")
		c.Error("FUNCTION")
		c.Error("FUNCTION", "nosuch")
	})
}

// A library with several functions, both forms of register_function,
// flags and descriptions, called by FCALL and FCALL_RO.
const testLibrary = `#!lua name=mylib
local function helper(n) return n * 2 end
redis.register_function('setit', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function{function_name='getit', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a key'}
redis.register_function('double', function(keys, args) return helper(tonumber(args[1])) end)
redis.register_function('fails', function(keys, args) error('oops') end)
redis.register_function('globals', function(keys, args) return KEYS end)
redis.register_function('nosuch', function(keys, args) return redis.call('nosuch') end)
redis.register_function('again', function(keys, args) return redis.register_function('z', function() end) end)
redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('set', 'x', 1) end, flags={'no-writes', 'ALLOW-OOM'}}
redis.register_function('lib', function(keys, args) return string.rep('a', 3) end)
redis.register_function('assign', function(keys, args) x = 5 end)
redis.register_function('echo', function(keys, args) return {keys[1], args[1], #keys, #args} end)
redis.register_function('undeclared', function(keys, args) return redis.call('incr', 'other') end)
`

func TestFunctionLoadAndCall(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("FUNCTION", "FLUSH")
		c.Do("FUNCTION", "LOAD", testLibrary)
		c.Error("FUNCTION", "LOAD", testLibrary)
		c.Do("FUNCTION", "LOAD", "REPLACE", testLibrary)
		c.Do("FUNCTION", "load", "replace", "replace", testLibrary)
		c.Do("FCALL", "setit", "1", "k", "v")
		c.Do("FCALL", "SETIT", "1", "k", "w")
		c.Do("FCALL", "getit", "1", "k")
		c.Do("FCALL_RO", "getit", "1", "k")
		c.Error("FCALL_RO", "setit", "1", "k", "v")
		c.Do("FCALL", "double", "0", "21")
		c.Error("FCALL", "fails", "0")
		c.Error("FCALL", "globals", "0")
		c.Error("FCALL", "nosuch", "0")
		c.Error("FCALL", "again", "0")
		c.Error("FCALL", "ro", "0")
		c.Do("FCALL", "lib", "0")
		c.Error("FCALL", "assign", "0")
		c.Do("FCALL", "echo", "2", "a", "b", "c", "d")
		c.Do("FCALL", "undeclared", "1", "k")
		c.Do("GET", "other")
		c.Error("FCALL", "missing", "0")
		c.Error("FCALL", "setit", "x")
		c.Error("FCALL", "setit", "5", "a")
		c.Error("FCALL", "setit", "-1")
		c.Error("FCALL")
		c.Do("FUNCTION", "STATS")
		// A function name taken by another library.
		c.Error("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('SETIT', function() return 1 end)")
		c.Do("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function{function_name='one', callback=function() return 1 end, flags={'allow-stale', 'no-cluster', 'allow-cross-slot-keys', 'allow-oom', 'no-writes'}, description='d'}")
		c.Do("FUNCTION", "LIST", "LIBRARYNAME", "oth*")
		c.Do("FUNCTION", "LIST", "LIBRARYNAME", "OTHER", "WITHCODE")
		c.Do("FUNCTION", "LIST", "LIBRARYNAME", "nomatch")
		c.Do("FUNCTION", "STATS")
		c.Do("FUNCTION", "DELETE", "other")
		c.Error("FUNCTION", "DELETE", "other")
		c.Error("FCALL", "one", "0")
		c.Do("FUNCTION", "FLUSH")
		c.Error("FCALL", "setit", "1", "k", "v")
		c.Do("FUNCTION", "LIST")
	})
}

// Redis's error for each kind of bad library.
func TestFunctionLoadErrors(t *testing.T) {
	c := newPair(t)
	c.Do("FUNCTION", "FLUSH")
	for _, code := range []string{
		"no header", "#!lua", "#!lua name=a name=b\n", "#!lua foo=bar\n", "#!py name=x\n",
		"#!lua name=a-b\n", "#!lua name=\n", "#!lua name=x\n", "#!lua NAME=x\nreturn 1 +",
		"#!lua name=x\nredis.call('get','a')",
		"#!lua name=x\nlocal a = nil; a()",
		"#!lua name=x\nerror('boom')",
		"#!lua name=x\nx = 1",
		"#!lua name=x\nlocal s = string.len('a')",
		"#!lua name=x\nredis.register_function('a-b', function() end)",
		"#!lua name=x\nredis.register_function('a', function() end) redis.register_function('a', function() end)",
		"#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags={'bad'}}",
		"#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags='no-writes'}",
		"#!lua name=x\nredis.register_function{function_name='a', callback=function() end, description={}}",
		"#!lua name=x\nredis.register_function{function_name={}, callback=function() end}",
		"#!lua name=x\nredis.register_function{function_name='a', callback=1}",
		"#!lua name=x\nredis.register_function(1)",
		"#!lua name=x\nredis.register_function{callback=function() end}",
		"#!lua name=x\nredis.register_function{function_name='a'}",
		"#!lua name=x\nredis.register_function{function_name='a', callback=function() end, foo=1}",
		"#!lua name=x\nredis.register_function('a', 'b')",
		"#!lua name=x\nredis.register_function({}, 'b')",
		"#!lua name=x\nredis.register_function()",
		"#!lua name=x\nredis.register_function('a', function() end, 3)",
	} {
		c.Error("FUNCTION", "LOAD", code)
	}
	c.Do("FUNCTION", "LOAD", "#!lua name=x\nredis.log(redis.LOG_NOTICE, 'loading') redis.register_function('v', function() return redis.REDIS_VERSION end)")
	c.Do("FCALL", "v", "0")
	c.Error("FUNCTION", "LOAD", "REPLACE")
	c.Error("FUNCTION", "LOAD", "foo", "bar")
	c.Error("FUNCTION", "LOAD")
	c.Do("FUNCTION", "FLUSH")
}

// FUNCTION DUMP and RESTORE: each server restores its own payload and the
// other's, with every policy.
func TestFunctionDumpRestore(t *testing.T) {
	c := newPair(t)
	c.Do("FUNCTION", "FLUSH")
	one := "#!lua name=one\nredis.register_function('f1', function() return 1 end)"
	c.Do("FUNCTION", "LOAD", one)
	redisDump, cellDump := c.Replies("FUNCTION", "DUMP")
	payloads := map[string]string{"redis": bulkBody(t, redisDump), "cell": bulkBody(t, cellDump)}
	for from, p := range payloads {
		t.Run(from, func(t *testing.T) {
			c := newPair(t)
			c.Do("FUNCTION", "FLUSH")
			c.Do("FUNCTION", "RESTORE", p)
			c.Do("FCALL", "f1", "0")
			c.Error("FUNCTION", "RESTORE", p)
			c.Error("FUNCTION", "RESTORE", p, "APPEND")
			c.Do("FUNCTION", "RESTORE", p, "REPLACE")
			c.Do("FUNCTION", "RESTORE", p, "flush")
			c.Error("FUNCTION", "RESTORE", p, "bad")
			c.Error("FUNCTION", "RESTORE", p, "flush", "x")
			c.Do("FUNCTION", "LIST", "WITHCODE")
			c.Do("FUNCTION", "DELETE", "one")
			c.Do("FUNCTION", "LOAD", "#!lua name=two\nredis.register_function('f1', function() return 2 end)")
			c.Error("FUNCTION", "RESTORE", p, "REPLACE")
			c.Do("FCALL", "f1", "0")
			c.Do("FUNCTION", "FLUSH")
		})
	}
	c.Error("FUNCTION", "RESTORE", "xx")
	c.Error("FUNCTION", "RESTORE", payloads["redis"][:len(payloads["redis"])-1]+"x")
	c.Do("FUNCTION", "FLUSH")
}

// bulkBody is the content of a RESP bulk string reply.
func bulkBody(t *testing.T, reply []byte) string {
	t.Helper()
	s := string(reply)
	i := 0
	for i < len(s) && s[i] != '\n' {
		i++
	}
	if len(s) < i+3 || s[0] != '$' {
		t.Fatalf("not a bulk string: %q", s)
	}
	return s[i+1 : len(s)-2]
}

// TestFunctionsInRDB: libraries go through dump.rdb both ways: cellserver
// starts from redis-server's file with its libraries, and redis-server
// starts from cellserver's.
func TestFunctionsInRDB(t *testing.T) {
	lib := "#!lua name=rdblib\nredis.register_function{function_name='rdbf', callback=function(keys, args) return 'from ' .. args[1] end, flags={'no-writes'}, description='kept'}"
	s := startServers(t, serverOptions{})
	ref, cell := mustDial(t, s.redis), mustDial(t, s.cell)
	for _, c := range []*respConn{ref, cell} {
		mustDo(t, c, "FUNCTION", "LOAD", lib)
		mustDo(t, c, "SET", "k", "v")
		if got := mustDo(t, c, "SAVE"); got != "+OK\r\n" {
			t.Fatalf("SAVE: %q", got)
		}
	}
	want := mustDo(t, ref, "FUNCTION", "LIST", "WITHCODE")
	dir := t.TempDir()
	for from, srcDir := range map[string]string{"redis": s.redis.Cmd.Dir, "cell": s.cell.Cmd.Dir} {
		b, err := os.ReadFile(filepath.Join(srcDir, "dump.rdb"))
		if err != nil {
			t.Fatal(err)
		}
		name := from + ".rdb"
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		var c *respConn
		if from == "redis" {
			cdir := t.TempDir()
			if err := os.WriteFile(filepath.Join(cdir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
			c = mustDial(t, cellOnDir(t, cdir, "--dbfilename", name))
		} else {
			loaded, err := startProcess("redis-server", "redis-server", func(port int, pdir string) []string {
				return redisArgs(port, pdir, serverOptions{args: []string{"--dir", dir, "--dbfilename", name}})
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(loaded.Stop)
			c = mustDial(t, loaded)
		}
		if got := mustDo(t, c, "FCALL", "rdbf", "0", "file"); got != "$9\r\nfrom file\r\n" {
			t.Errorf("%s's file: FCALL %q", from, got)
		}
		if got := mustDo(t, c, "FUNCTION", "LIST", "WITHCODE"); got != want {
			t.Errorf("%s's file: FUNCTION LIST %q, want %q", from, got, want)
		}
		if got := mustDo(t, c, "GET", "k"); got != "$1\r\nv\r\n" {
			t.Errorf("%s's file: GET k %q", from, got)
		}
	}
}

// TestFunctionBusy: while a function runs past busy-reply-threshold,
// FUNCTION STATS describes it (name, command, duration), commands that
// need its keys get BUSY naming FUNCTION KILL, SCRIPT KILL is refused
// with that text, and FUNCTION KILL stops it. While an EVAL script is
// busy, FUNCTION STATS and FUNCTION KILL get BUSY naming SCRIPT KILL.
// No timing is asserted: the test polls until each server shows the
// script busy.
func TestFunctionBusy(t *testing.T) {
	s := startServers(t, serverOptions{args: []string{"--busy-reply-threshold", "100"}})
	runner := newPairOn(t, s)
	other := newPairOn(t, s)
	other.Do("FUNCTION", "LOAD", "REPLACE",
		"#!lua name=busylib\nredis.register_function('spin', function(keys, args) if args[1] == 'loop' then while true do end end return 1 end)")
	// cellserver runs a script it has not seen yet holding every shard:
	// once known, it holds only its declared key's, as the rest expects.
	runner.Do("FCALL", "spin", "1", "busykey", "once")
	start := func(args ...string) {
		t.Helper()
		for _, conn := range []*respConn{runner.redis, runner.cell} {
			if err := conn.Send(args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	finish := func(prefix string) {
		t.Helper()
		rr, err1 := runner.redis.ReadReply()
		cr, err2 := runner.cell.ReadReply()
		if err1 != nil || err2 != nil || !bytes.Equal(rr, cr) || !strings.HasPrefix(string(rr), prefix) {
			t.Errorf("the killed script's reply:\n  redis-server: %q %v\n  cellserver:   %q %v", rr, err1, cr, err2)
		}
	}
	// untilBusy polls FUNCTION STATS on each server until seen says the
	// script is past the threshold there.
	untilBusy := func(seen func(reply string) bool) {
		t.Helper()
		for _, conn := range []*respConn{other.redis, other.cell} {
			deadline := time.Now().Add(replyTimeout)
			for {
				r, err := conn.Do("FUNCTION", "STATS")
				if err != nil {
					t.Fatal(err)
				}
				if seen(string(r)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the script never showed busy: FUNCTION STATS %q", r)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}

	start("FCALL", "spin", "1", "busykey", "loop")
	untilBusy(func(r string) bool { return strings.Contains(r, "duration_ms") })
	other.DoMasked(maskRunningDuration, "FUNCTION", "STATS")
	other.Error("GET", "busykey")
	other.Error("DBSIZE")
	other.Error("SCRIPT", "KILL")
	other.Do("MULTI")
	other.Error("GET", "busykey")
	other.Error("EXEC")
	other.Do("FUNCTION", "KILL")
	finish("-ERR Script killed by user with SCRIPT KILL...")
	other.Error("FUNCTION", "KILL")
	other.Do("FUNCTION", "STATS")

	body := "if ARGV[1] == 'loop' then while true do end end return 1"
	runner.Do("EVAL", body, "1", "busykey", "once")
	start("EVAL", body, "1", "busykey", "loop")
	untilBusy(func(r string) bool { return strings.HasPrefix(r, "-BUSY") })
	other.Error("FUNCTION", "STATS")
	other.Error("GET", "busykey")
	other.Error("FUNCTION", "KILL")
	other.Do("SCRIPT", "KILL")
	finish("-ERR Script killed by user with SCRIPT KILL...")
	other.Do("FUNCTION", "STATS")
}

// maskRunningDuration hides duration_ms in FUNCTION STATS's
// running_script (a flat array in RESP2, a map in RESP3).
func maskRunningDuration(v *value) {
	if !isAggregate(v.kind) || v.null {
		return
	}
	for i := 0; i+1 < len(v.elems); i += 2 {
		k, val := v.elems[i], v.elems[i+1]
		if k.kind != '$' || k.text != "running_script" || !isAggregate(val.kind) || val.null {
			continue
		}
		for j := 0; j+1 < len(val.elems); j += 2 {
			if val.elems[j].text == "duration_ms" {
				maskInt(val.elems[j+1])
			}
		}
	}
}
