package cell

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/script"
)

// bothWays runs test with the callback serving (off false) and without.
func bothWays(t *testing.T, test func(t *testing.T, off bool)) {
	for _, off := range []bool{false, true} {
		t.Run("serve-in-poller="+strconv.FormatBool(!off), func(t *testing.T) { test(t, off) })
	}
}

// TestPolledPipelines: requests served inside the poller's callback and
// those handed to the ordinary loop (MULTI, CLIENT, an unknown command)
// interleave in one packet and answer in order.
func TestPolledPipelines(t *testing.T) {
	bothWays(t, testPolledPipelines)
}

func testPolledPipelines(t *testing.T, off bool) {
	srv := startServer(t, func(c *Config) { c.NoServeInPoller = off })
	c := dial(t, srv)
	var batch []byte
	for _, cmd := range [][]string{
		{"SET", "k", "1"}, {"GET", "k"}, {"MULTI"}, {"INCR", "k"}, {"EXEC"}, {"GET", "k"},
		{"PING"}, {"CLIENT", "SETNAME", "x"}, {"CLIENT", "GETNAME"}, {"NOPE"}, {"INCR", "k"},
	} {
		batch = append(batch, encode(cmd...)...)
	}
	want := []string{"+OK\r\n", "$1\r\n1\r\n", "+OK\r\n", "+QUEUED\r\n", "*1\r\n:2\r\n", "$1\r\n2\r\n",
		"+PONG\r\n", "+OK\r\n", "$1\r\nx\r\n", "-ERR unknown command 'NOPE', with args beginning with: \r\n", ":3\r\n"}
	for round := range 3 { // the whole batch, then byte by byte, then split in two
		switch round {
		case 0:
			c.nc.Write(batch)
		case 1:
			go func() {
				for i := range batch {
					c.nc.Write(batch[i : i+1])
				}
			}()
		case 2:
			c.nc.Write(batch[:len(batch)/2])
			time.Sleep(10 * time.Millisecond)
			c.nc.Write(batch[len(batch)/2:])
		}
		for i, w := range want {
			if got := c.read(); got != w {
				t.Fatalf("round %d, reply %d: %q, want %q", round, i, got, w)
			}
		}
		c.do("SET", "k", "1")
		want[len(want)-1] = ":3\r\n"
	}
}

// TestPolledQuitAndProtocolError: QUIT and a malformed request served in
// the callback end the connection after the replies before them.
func TestPolledQuitAndProtocolError(t *testing.T) {
	srv := startServer(t, nil)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"quit", append(append(encode("SET", "k", "v"), encode("QUIT")...), encode("GET", "k")...),
			"+OK\r\n+OK\r\n"},
		{"protocol error", append(encode("GET", "k"), "*x\r\n"...),
			"$1\r\nv\r\n-ERR Protocol error: invalid multibulk length\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, srv)
			c.nc.Write(tc.in)
			c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(c.br)
			if err != nil || string(got) != tc.want {
				t.Errorf("read %q, %v; want %q and the connection closed", got, err, tc.want)
			}
		})
	}
}

// TestPolledLargeInput: input larger than the reader's buffer, as one
// pipeline and as one big value, is all read and answered (a read that
// fills the buffer is followed by another, not by a wait).
func TestPolledLargeInput(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	const n = 5000
	var batch []byte
	for i := range n {
		batch = append(batch, encode("SET", "key:"+strconv.Itoa(i), "value")...)
	}
	go c.nc.Write(batch)
	for i := range n {
		if got := c.read(); got != "+OK\r\n" {
			t.Fatalf("reply %d: %q", i, got)
		}
	}
	big := strings.Repeat("v", 1<<20)
	if got := c.do("SET", "big", big); got != "+OK\r\n" {
		t.Fatalf("SET of 1 MiB: %q", got)
	}
	if got := c.do("STRLEN", "big"); got != ":1048576\r\n" {
		t.Errorf("STRLEN: %q", got)
	}
}

// TestPolledKillWhileWaiting: a client whose command waits for a shard a
// script holds waits outside the poller's callback, so CLIENT KILL of it
// (which closes its socket, and Close waits for a running callback) is
// answered while the script still runs.
// The waiting command is a GET, or the EXEC of a MULTI block, which the
// callback serves when its shards are free.
func TestPolledKillWhileWaiting(t *testing.T) {
	for _, off := range []bool{false, true} {
		for _, req := range []struct {
			name string
			b    []byte
		}{
			{"get", encode("GET", "k")},
			{"exec", append(append(encode("MULTI"), encode("SET", "k", "2")...), encode("EXEC")...)},
		} {
			t.Run(req.name+"/serve-in-poller="+strconv.FormatBool(!off), func(t *testing.T) { testPolledKillWhileWaiting(t, off, req.b) })
		}
	}
}

func testPolledKillWhileWaiting(t *testing.T, off bool, req []byte) {
	srv := startServer(t, func(c *Config) {
		c.BusyReplyThreshold = time.Minute
		c.NoServeInPoller = off
	})
	runner, victim, killer := dial(t, srv), dial(t, srv), dial(t, srv)
	loop := "if ARGV[1] == 'loop' then while true do end end return 1"
	if got := runner.do("EVAL", loop, "1", "k", "once"); got != ":1\r\n" {
		t.Fatalf("first run: %q", got)
	}
	id := strings.TrimSpace(strings.TrimPrefix(victim.do("CLIENT", "ID"), ":"))
	runner.nc.Write(encode("EVAL", loop, "1", "k", "loop"))
	time.Sleep(20 * time.Millisecond)
	victim.nc.Write(req) // waits for the script's shard
	time.Sleep(20 * time.Millisecond)

	killed := make(chan string, 1)
	go func() {
		killer.nc.Write(encode("CLIENT", "KILL", "ID", id))
		killer.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := killer.br.ReadString('\n')
		if err != nil {
			line = err.Error()
		}
		killed <- line
	}()
	got := <-killed
	// Only now end the script: had the kill waited for the victim, it
	// would have waited for the script, past the read deadline.
	stop := dial(t, srv)
	stop.do("CONFIG", "SET", "busy-reply-threshold", "50")
	time.Sleep(100 * time.Millisecond)
	if r := stop.do("SCRIPT", "KILL"); r != "+OK\r\n" {
		t.Errorf("SCRIPT KILL: %q", r)
	}
	if got != ":1\r\n" {
		t.Fatalf("CLIENT KILL of a client waiting for a script's shard: %q", got)
	}
}

// TestPolledNativeScripts: an EVALSHA of a native script runs inside the
// poller's callback; one its Go version leaves to Lua (a non-numeric
// argument), and any while a MONITOR watches, is handed to the ordinary
// loop untouched. The replies, the count of native runs and MONITOR's
// lines are those of a server that serves nothing in the callback.
func TestPolledNativeScripts(t *testing.T) {
	type outcome struct {
		replies, monitor []string
		native           string
	}
	run := func(off bool) outcome {
		srv := startServer(t, func(c *Config) { c.NoServeInPoller = off })
		c, admin := dial(t, srv), dial(t, srv)
		body := readBody(t, "../bench/window.lua")
		sha := script.SHA1Hex([]byte(body))
		c.do("SCRIPT", "LOAD", body)
		call := func(now int, start string) []string {
			return []string{"EVALSHA", sha, "1", "w", strconv.Itoa(now), start, "60"}
		}
		batch := [][]string{
			call(1000, "0"), {"SET", "k", "1"}, call(2000, "abc"), {"GET", "k"}, call(3000, "1500"),
			{"EVALSHA", strings.Repeat("0", 40), "1", "w"}, call(4000, "0"), {"ZRANGE", "w", "0", "-1"},
		}
		var o outcome
		send := func() {
			var b []byte
			for _, args := range batch {
				b = append(b, encode(args...)...)
			}
			c.nc.Write(b)
			for range batch {
				o.replies = append(o.replies, c.read())
			}
		}
		send()
		mon := dial(t, srv)
		if got := mon.do("MONITOR"); got != "+OK\r\n" {
			t.Fatalf("MONITOR: %q", got)
		}
		send()
		// Each MONITOR line starts with a timestamp and a client address.
		// The batch's 8 commands, 4 calls in each of 3 native runs, and
		// the ZADD and ZCARD before the Lua run's error.
		for range 8 + 3*4 + 2 {
			line := mon.read()
			_, cmd, _ := strings.Cut(line, "] ")
			o.monitor = append(o.monitor, cmd)
		}
		info := admin.do("INFO", "limiters")
		_, v, _ := strings.Cut(info, "lua_native_calls:")
		o.native, _, _ = strings.Cut(v, "\r\n")
		return o
	}
	polled, plain := run(false), run(true)
	if strings.Join(polled.replies, "") != strings.Join(plain.replies, "") {
		t.Errorf("replies in the poller:\n%q\nwithout:\n%q", polled.replies, plain.replies)
	}
	if strings.Join(polled.monitor, "") != strings.Join(plain.monitor, "") {
		t.Errorf("MONITOR in the poller:\n%q\nwithout:\n%q", polled.monitor, plain.monitor)
	}
	if polled.native != plain.native || polled.native != "6" {
		t.Errorf("lua_native_calls: %s in the poller, %s without, want 6", polled.native, plain.native)
	}
	if !strings.HasPrefix(polled.replies[2], "-") || polled.replies[0] != ":1\r\n" {
		t.Errorf("the batch did not run as planned: %q", polled.replies)
	}
}

// TestPolledInputDuringOutsideCommand: a request that arrives while a
// command handed to the ordinary loop runs (a script busy for 50 ms), with
// nothing sent after it, is answered. Between the read that drained the
// socket and the next wait, the runtime's poller may note the arrival, and
// starting the next read operation forgets that note: the callback must
// read once before it waits, or this request would wait for an arrival
// that never comes.
func TestPolledInputDuringOutsideCommand(t *testing.T) {
	bothWays(t, testPolledInputDuringOutsideCommand)
}

func testPolledInputDuringOutsideCommand(t *testing.T, off bool) {
	srv := startServer(t, func(c *Config) { c.NoServeInPoller = off })
	c := dial(t, srv)
	busy := "local t = redis.call('TIME') local s = t[1] * 1e6 + t[2] " +
		"repeat local n = redis.call('TIME') until n[1] * 1e6 + n[2] - s > 50000 return 1"
	for round := range 5 {
		c.nc.Write(encode("EVAL", busy, "0"))
		time.Sleep(20 * time.Millisecond) // the script runs
		c.nc.Write(encode("SET", "k", strconv.Itoa(round)))
		if got := c.read(); got != ":1\r\n" {
			t.Fatalf("round %d, EVAL: %q", round, got)
		}
		if got := c.read(); got != "+OK\r\n" {
			t.Fatalf("round %d, SET sent while the script ran: %q", round, got)
		}
	}
}

// TestPolledTransactions: MULTI blocks sent whole in one packet, which the
// callback serves (plain key commands) or hands to the ordinary loop at
// EXEC (a WATCHed key, a subcommand, a script), answer as they would
// outside it, including an EXEC whose queue kills its own connection.
func TestPolledTransactions(t *testing.T) {
	bothWays(t, testPolledTransactions)
}

func testPolledTransactions(t *testing.T, off bool) {
	srv := startServer(t, func(c *Config) { c.NoServeInPoller = off })
	c, other := dial(t, srv), dial(t, srv)
	block := func(cmds ...[]string) []byte {
		var b []byte
		for _, cmd := range cmds {
			b = append(b, encode(cmd...)...)
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		batch []byte
		want  []string
	}{
		{"plain", block([]string{"MULTI"}, []string{"ZADD", "w", "1", "a"}, []string{"ZCARD", "w"}, []string{"EXPIRE", "w", "60"}, []string{"EXEC"}),
			[]string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*3\r\n:1\r\n:1\r\n:1\r\n"}},
		{"watched", block([]string{"WATCH", "k"}, []string{"MULTI"}, []string{"INCR", "k"}, []string{"EXEC"}),
			[]string{"+OK\r\n", "+OK\r\n", "+QUEUED\r\n", "*1\r\n:1\r\n"}},
		{"subcommand", block([]string{"MULTI"}, []string{"CLIENT", "SETNAME", "t"}, []string{"GET", "k"}, []string{"EXEC"}, []string{"CLIENT", "GETNAME"}),
			[]string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n+OK\r\n$1\r\n1\r\n", "$1\r\nt\r\n"}},
		{"script", block([]string{"MULTI"}, []string{"EVAL", "return redis.call('INCR', KEYS[1])", "1", "k"}, []string{"EXEC"}),
			[]string{"+OK\r\n", "+QUEUED\r\n", "*1\r\n:2\r\n"}},
		{"discard", block([]string{"MULTI"}, []string{"INCR", "k"}, []string{"DISCARD"}, []string{"GET", "k"}),
			[]string{"+OK\r\n", "+QUEUED\r\n", "+OK\r\n", "$1\r\n2\r\n"}},
		{"error", block([]string{"MULTI"}, []string{"INCR"}, []string{"EXEC"}),
			[]string{"+OK\r\n", "-ERR wrong number of arguments for 'incr' command\r\n",
				"-EXECABORT Transaction discarded because of previous errors.\r\n"}},
		{"exec without multi", block([]string{"EXEC"}), []string{"-ERR EXEC without MULTI\r\n"}},
	} {
		c.nc.Write(tc.batch)
		for i, w := range tc.want {
			if got := c.read(); got != w {
				t.Fatalf("%s, reply %d: %q, want %q", tc.name, i, got, w)
			}
		}
	}
	// A queue that kills its own connection: the replies, then the end,
	// with no wait for itself (the kill closes the socket it reads).
	id := strings.TrimSpace(strings.TrimPrefix(c.do("CLIENT", "ID"), ":"))
	c.nc.Write(block([]string{"MULTI"}, []string{"CLIENT", "KILL", "ID", id, "SKIPME", "no"}, []string{"EXEC"}))
	for i, w := range []string{"+OK\r\n", "+QUEUED\r\n", "*1\r\n:1\r\n"} {
		if got := c.read(); got != w {
			t.Fatalf("self-kill, reply %d: %q, want %q", i, got, w)
		}
	}
	if rest, closed := c.readToClose(5 * time.Second); !closed || rest != "" {
		t.Fatalf("self-kill: connection closed %v, then %q", closed, rest)
	}
	if got := other.do("GET", "k"); got != "$1\r\n2\r\n" {
		t.Fatalf("GET k after the transactions: %q", got)
	}
}
