package cell

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// keysOnShards returns two keys that live on different shards of db 0.
func keysOnShards(srv *Server) (a, b string) {
	a = "k0"
	for i := 1; ; i++ {
		b = "k" + itoa(int64(i))
		if srv.ks.ShardOf(0, []byte(a)) != srv.ks.ShardOf(0, []byte(b)) {
			return a, b
		}
	}
}

func TestScriptStrictKeys(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.LuaStrictKeys = true })
	c := dial(t, srv)
	a, b := keysOnShards(srv)
	throttle := "return redis.call('cl.throttle', KEYS[1], 1, 2, 60)"
	if got := c.do("EVAL", throttle, "1", a); !strings.HasPrefix(got, "*5\r\n:0\r\n") {
		t.Errorf("declared key: %q", got)
	}
	got := c.do("EVAL", "return redis.call('cl.throttle', ARGV[1], 1, 2, 60)", "1", a, b)
	if !strings.HasPrefix(got, "-ERR script tried accessing undeclared key '"+b+"'") || !strings.Contains(got, "--lua-allow-undeclared-keys") {
		t.Errorf("undeclared key: %q", got)
	}
	if got := c.do("EVAL", "return redis.call('dbsize')", "0"); !strings.Contains(got, "'dbsize'") {
		t.Errorf("whole-db command: %q", got)
	}
	if got := c.do("EXISTS", b); got == ":1\r\n" {
		t.Errorf("the refused call wrote %s", b)
	}
}

// TestScriptUndeclaredKeys: by default a script reaches past its KEYS as
// on Redis, before or after writing, in its db or another.
func TestScriptUndeclaredKeys(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	a, b := keysOnShards(srv)
	for _, tt := range []struct{ body, want string }{
		// read of an undeclared key first: abandoned, rerun holding all
		{"local v = redis.call('get', ARGV[1]) redis.call('set', KEYS[1], 'r') return v", "$-1\r\n"},
		// write first, then an undeclared write and read
		{"redis.call('set', KEYS[1], 'w') redis.call('set', ARGV[1], 'u') return redis.call('get', ARGV[1])", "$1\r\nu\r\n"},
		// write first, then a whole-db command
		{"redis.call('set', KEYS[1], 'w') return #redis.call('keys', '*')", ":1\r\n"},
		{"redis.call('set', KEYS[1], 'w') return redis.call('dbsize')", ":1\r\n"},
	} {
		c.do("FLUSHALL")
		body := tt.body + " -- " + strconv.Itoa(len(tt.want)) // a fresh script each, not yet noted NeedsAll
		if got := c.do("EVAL", body, "1", a, b); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.body, got, tt.want)
		}
	}
	if got := c.do("GET", a); got != "$1\r\nw\r\n" {
		t.Errorf("declared key after the script: %q", got)
	}
	c.do("FLUSHALL")
	if got := c.do("EVAL", "redis.call('cl.throttle', 'x', 1, 2, 60) redis.call('select', 2) redis.call('cl.throttle', 'y', 1, 2, 60) return redis.call('dbsize')", "0"); got != ":1\r\n" {
		t.Errorf("undeclared keys and SELECT: %q", got)
	}
	if got := c.do("DBSIZE"); got != ":1\r\n" {
		t.Errorf("db 0 after the script: %q (SELECT must not leak)", got)
	}
}

func TestScriptReadOnly(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	want := "-ERR Write commands are not allowed from read-only scripts. script: "
	for _, args := range [][]string{
		{"EVAL_RO", "return redis.call('cl.throttle', KEYS[1], 1, 2, 60)", "1", "k"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('cl.throttle', KEYS[1], 1, 2, 60)", "1", "k"},
	} {
		if got := c.do(args...); !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q", args[1], got)
		}
	}
	if got := c.do("EVAL_RO", "return redis.call('cl.probe', KEYS[1], 1, 2, 60)[1]", "1", "k"); got != ":0\r\n" {
		t.Errorf("read from EVAL_RO: %q", got)
	}
	if got := c.do("EVAL", "return redis.call('cl.probe', KEYS[1], 1, 2, 60)[1]", "1", "k"); got != ":0\r\n" {
		t.Errorf("read from EVAL: %q", got)
	}
}

// TestScriptBusyPerShard: a looping script makes its own shard answer BUSY
// past the threshold while another shard keeps serving; SCRIPT KILL ends
// it; after a write it is UNKILLABLE.
func TestScriptBusyPerShard(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.BusyReplyThreshold = 100 * time.Millisecond })
	a, b := keysOnShards(srv)
	runner, other, killer := dial(t, srv), dial(t, srv), dial(t, srv)
	// A script's first run holds every shard (as Redis runs every script);
	// once seen within its declared keys it holds only theirs.
	loop := "if ARGV[1] == 'loop' then while true do end end return 1"
	if got := runner.do("EVAL", loop, "1", a, "once"); got != ":1\r\n" {
		t.Fatalf("first run: %q", got)
	}
	runner.nc.Write(encode("EVAL", loop, "1", a, "loop"))
	time.Sleep(20 * time.Millisecond)

	// The script loops until killed: an answer at all shows no wait.
	if got := other.do("CL.PROBE", b, "1", "2", "60"); !strings.HasPrefix(got, "*5") {
		t.Errorf("other shard: %q", got)
	}
	if got := other.do("CL.PROBE", a, "1", "2", "60"); got != "-"+ErrBusy+"\r\n" {
		t.Errorf("busy shard: %q", got)
	}
	if got := killer.do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Errorf("SCRIPT KILL: %q", got)
	}
	// The OK comes once the script has ended: a command sent after it
	// finds the shard free (go-redis's suite sends FLUSHDB so).
	if got := killer.do("CL.PROBE", a, "1", "2", "60"); !strings.HasPrefix(got, "*5") {
		t.Errorf("the killed script's shard right after the OK: %q", got)
	}
	if got := runner.read(); !strings.HasPrefix(got, "-"+ErrScriptKilled+" script: ") {
		t.Errorf("killed script: %q", got)
	}
	if got := killer.do("SCRIPT", "KILL"); got != "-"+ErrNotBusy+"\r\n" {
		t.Errorf("SCRIPT KILL with nothing running: %q", got)
	}

	runner.nc.Write(encode("EVAL", "redis.call('cl.throttle', KEYS[1], 1, 2, 60) while true do end", "1", a))
	time.Sleep(20 * time.Millisecond)
	if got := killer.do("SCRIPT", "KILL"); got != "-"+ErrUnkillable+"\r\n" {
		t.Errorf("SCRIPT KILL after a write: %q", got)
	}
	// Nothing but SHUTDOWN NOSAVE stops it in Redis; end it from here.
	srv.scriptMu.Lock()
	for r := range srv.running {
		r.halt(scriptError(ErrScriptKilled))
	}
	srv.scriptMu.Unlock()
	runner.read()
}

// TestScriptAtomic: read-modify-write scripts on one key from many clients
// lose no update.
func TestScriptAtomic(t *testing.T) {
	if commands["get"] == nil {
		t.Skip("needs GET and SET")
	}
	srv := startServer(t, nil)
	const clients, each = 8, 100
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, srv)
			for range each {
				c.do("EVAL", "local v = tonumber(redis.call('get', KEYS[1]) or '0') redis.call('set', KEYS[1], v + 1) return v", "1", "n")
			}
		}()
	}
	wg.Wait()
	if got := dial(t, srv).do("GET", "n"); got != "$3\r\n800\r\n" {
		t.Errorf("counter = %q, want 800", got)
	}
}

// TestScriptW2Concurrent: the sliding-window script from many connections
// on a few keys: each script is atomic, so the ZCARD replies for a key are
// exactly 1..n, whatever the interleaving.
func TestScriptW2Concurrent(t *testing.T) {
	if commands["zadd"] == nil {
		t.Skip("needs the sorted set commands")
	}
	srv := startServer(t, nil)
	const clients, each, keys = 8, 60, 3
	body := "redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) local c = redis.call('ZCARD', KEYS[1]) redis.call('EXPIRE', KEYS[1], 60) return c"
	var mu sync.Mutex
	seen := map[string][]bool{}
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, srv)
			for i := range each {
				key := "w2:" + itoa(int64(i%keys))
				member := itoa(int64(cl*each + i))
				got := c.do("EVAL", body, "1", key, "1700000000000", member)
				n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(got, ":"), "\r\n"))
				if err != nil {
					t.Errorf("EVAL: %q", got)
					return
				}
				mu.Lock()
				if seen[key] == nil {
					seen[key] = make([]bool, clients*each+1)
				}
				if n <= 0 || n >= len(seen[key]) || seen[key][n] {
					t.Errorf("%s: ZCARD %d twice or out of range", key, n)
				} else {
					seen[key][n] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, s := range seen {
		for _, v := range s {
			if v {
				total++
			}
		}
	}
	if total != clients*each {
		t.Errorf("%d distinct replies, want %d", total, clients*each)
	}
}

// TestEvalKeys checks EVAL's key positions, from the shared table and
// past it, and that appending them leaves the shared table as it was.
func TestEvalKeys(t *testing.T) {
	args := func(numkeys string, n int) [][]byte {
		a := [][]byte{[]byte("EVAL"), []byte("return 1"), []byte(numkeys)}
		for i := 0; i < n; i++ {
			a = append(a, []byte("k"))
		}
		return a
	}
	for _, tc := range []struct {
		numkeys string
		n, want int
	}{
		{"0", 2, 0}, {"1", 1, 1}, {"2", 3, 2}, {"64", 64, 64}, {"65", 70, 65}, {"3", 2, 0}, {"-1", 2, 0}, {"x", 2, 0},
	} {
		got := evalKeys(args(tc.numkeys, tc.n))
		if len(got) != tc.want {
			t.Fatalf("numkeys %s: %d positions, want %d", tc.numkeys, len(got), tc.want)
		}
		for i, p := range got {
			if p != 3+i {
				t.Fatalf("numkeys %s: position %d is %d", tc.numkeys, i, p)
			}
		}
		if tc.want > 0 {
			got = append(got, 99) // must not write into the shared table
		}
	}
	if evalKeyIdx[1] != 4 {
		t.Fatalf("shared positions changed: %v", evalKeyIdx[:4])
	}
}

// TestScriptWaiterServedAtEnd: a command on a running script's shard,
// sent before busy-reply-threshold, waits and runs once the script ends
// (its end signal is made on demand, while the script runs).
func TestScriptWaiterServedAtEnd(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.BusyReplyThreshold = 10 * time.Second })
	runner, other := dial(t, srv), dial(t, srv)
	runner.nc.Write(encode("EVAL", "while true do end", "1", "k"))
	for {
		srv.scriptMu.Lock()
		n := len(srv.running)
		srv.scriptMu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	other.nc.Write(encode("SET", "k", "v"))
	// Wait until the SET waits on the script's end signal.
	for {
		var asked bool
		srv.scriptMu.Lock()
		for r := range srv.running {
			asked = r.mark.Waited()
		}
		srv.scriptMu.Unlock()
		if asked {
			break
		}
		time.Sleep(time.Millisecond)
	}
	srv.scriptMu.Lock()
	for r := range srv.running {
		r.halt(scriptError(ErrScriptKilled))
	}
	srv.scriptMu.Unlock()
	if got := runner.read(); !strings.HasPrefix(got, "-"+ErrScriptKilled+" script: ") {
		t.Errorf("stopped script: %q", got)
	}
	if got := other.read(); got != "+OK\r\n" {
		t.Errorf("waiting SET: %q", got)
	}
}
