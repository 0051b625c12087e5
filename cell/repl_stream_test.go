package cell

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
)

// fakeReplica attaches a connection to srv as a replica (PSYNC from
// scratch) and reads the snapshot: what it reads next is the stream.
func fakeReplica(tb testing.TB, srv *Server) *testConn {
	tb.Helper()
	r := dial(tb, srv)
	if got := r.do("REPLCONF", "listening-port", "6380", "capa", "psync2"); got != "+OK\r\n" {
		tb.Fatalf("REPLCONF: %q", got)
	}
	r.nc.Write(encode("PSYNC", "?", "-1"))
	off, _, _ := srv.masterOffsets()
	line, _ := r.br.ReadString('\n')
	if want := fmt.Sprintf("+FULLRESYNC %s %d", srv.replID(), off); !strings.HasPrefix(line, want) {
		tb.Fatalf("PSYNC: %q, want %q", line, want)
	}
	size, _ := r.br.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(size[1:]))
	if err != nil {
		tb.Fatalf("snapshot header %q", size)
	}
	if _, err := io.CopyN(io.Discard, r.br, int64(n)); err != nil {
		tb.Fatal(err)
	}
	return r
}

// TestReplStreamEffects: each write reaches the stream as the commands
// that reproduce its effect, not as the command sent.
func TestReplStreamEffects(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	r := fakeReplica(t, srv)
	cmd := func(args ...string) string { return string(encode(args...)) }
	restore := func(key string) string { return cmd("RESTORE", key, "<ttl>", "<payload>", "REPLACE", "ABSTTL") }
	tests := []struct {
		name string
		send [][]string
		want string
	}{
		{"set", [][]string{{"SET", "k", "v"}}, cmd("SELECT", "0") + cmd("SET", "k", "v")},
		{"incr", [][]string{{"INCR", "n"}}, cmd("SET", "n", "1")},
		{"set ex", [][]string{{"SET", "k", "v", "PXAT", "4102444800000"}}, cmd("SET", "k", "v", "PXAT", "4102444800000")},
		// An expiry changed in place is that alone.
		{"expireat", [][]string{{"PEXPIREAT", "n", "4102444800001"}}, cmd("PEXPIREAT", "n", "4102444800001")},
		{"del", [][]string{{"DEL", "k"}}, cmd("DEL", "k")},
		{"del none", [][]string{{"DEL", "nothing"}}, ""},
		{"hset", [][]string{{"HSET", "h", "f", "1"}}, cmd("MULTI") + cmd("DEL", "h") + cmd("HSET", "h", "f", "1") + cmd("EXEC")},
		{"sadd", [][]string{{"SADD", "st", "a"}}, cmd("MULTI") + cmd("DEL", "st") + cmd("SADD", "st", "a") + cmd("EXEC")},
		{"zadd", [][]string{{"ZADD", "z", "1.5", "a"}}, cmd("MULTI") + cmd("DEL", "z") + cmd("ZADD", "z", "1.5", "a") + cmd("EXEC")},
		// Integer members (W1's timestamps) are each their own.
		{"zadd ints", [][]string{{"ZADD", "zi", "1", "1000", "2", "1001", "3", "1002"}},
			cmd("MULTI") + cmd("DEL", "zi") + cmd("ZADD", "zi", "1", "1000", "2", "1001", "3", "1002") + cmd("EXEC")},
		{"rpush expire", [][]string{{"MULTI"}, {"RPUSH", "l", "x", "y"}, {"PEXPIREAT", "l", "4102444800000"}, {"EXEC"}},
			cmd("MULTI") + cmd("DEL", "l") + cmd("RPUSH", "l", "x", "y") + cmd("PEXPIREAT", "l", "4102444800000") + cmd("EXEC")},
		// Changes in place: the parts changed, in their state now.
		{"zadd member", [][]string{{"ZADD", "z", "2", "b"}}, cmd("ZADD", "z", "2", "b")},
		{"zadd rescore", [][]string{{"ZADD", "z", "INCR", "1", "a"}}, cmd("ZADD", "z", "2.5", "a")},
		{"zrem", [][]string{{"ZREM", "z", "a", "nothing"}}, cmd("ZREM", "z", "a")},
		// b is removed and added back: both notes say what b is now.
		{"zrem then zadd back", [][]string{{"MULTI"}, {"ZADD", "z", "1", "c"}, {"ZREM", "z", "b"}, {"ZADD", "z", "3", "b"}, {"EXEC"}}, cmd("ZADD", "z", "1", "c", "3", "b", "3", "b")},
		{"zrem last", [][]string{{"ZADD", "z1", "1", "a"}, {"ZREM", "z1", "a"}}, cmd("MULTI") + cmd("DEL", "z1") + cmd("ZADD", "z1", "1", "a") + cmd("EXEC") + cmd("DEL", "z1")},
		{"window", [][]string{{"ZADD", "w", "1000", "1000", "1001", "1001", "1002", "1002"}}, cmd("MULTI") + cmd("DEL", "w") + cmd("ZADD", "w", "1000", "1000", "1001", "1001", "1002", "1002") + cmd("EXEC")},
		{"window slides", [][]string{{"MULTI"}, {"ZADD", "w", "1003", "1003"}, {"ZREMRANGEBYSCORE", "w", "-inf", "1001"}, {"PEXPIREAT", "w", "4102444800000"}, {"EXEC"}},
			cmd("MULTI") + cmd("ZADD", "w", "1003", "1003") + cmd("ZREM", "w", "1000", "1001") + cmd("PEXPIREAT", "w", "4102444800000") + cmd("EXEC")},
		{"zpopmin", [][]string{{"ZPOPMIN", "w"}}, cmd("ZREM", "w", "1002")},
		{"persist", [][]string{{"PERSIST", "w"}}, cmd("PERSIST", "w")},
		{"hset field", [][]string{{"HSET", "h", "g", "2", "f", "1"}}, cmd("HSET", "h", "g", "2", "f", "1")},
		{"hincrby", [][]string{{"HINCRBY", "h", "g", "5"}}, cmd("HSET", "h", "g", "7")},
		{"hdel", [][]string{{"HDEL", "h", "f"}}, cmd("HDEL", "h", "f")},
		{"hash expire", [][]string{{"PEXPIREAT", "h", "4102444800000"}}, cmd("PEXPIREAT", "h", "4102444800000")},
		{"sadd member", [][]string{{"SADD", "st", "b", "a"}}, cmd("SADD", "st", "b")},
		{"srem", [][]string{{"SREM", "st", "a"}}, cmd("SREM", "st", "a")},
		{"smove", [][]string{{"SADD", "st2", "x"}, {"SMOVE", "st2", "st", "x"}, {"SMOVE", "st", "st2", "b"}},
			cmd("MULTI") + cmd("DEL", "st2") + cmd("SADD", "st2", "x") + cmd("EXEC") +
				cmd("MULTI") + cmd("DEL", "st2") + cmd("SADD", "st", "x") + cmd("EXEC") +
				cmd("MULTI") + cmd("SREM", "st", "b") + cmd("DEL", "st2") + cmd("SADD", "st2", "b") + cmd("EXEC")},
		{"append big", [][]string{{"SET", "big", strings.Repeat("x", 100)}, {"APPEND", "big", "yz"}},
			cmd("SET", "big", strings.Repeat("x", 100)) + cmd("SETRANGE", "big", "100", "yz")},
		{"setrange big", [][]string{{"SETRANGE", "big", "3", "ab"}}, cmd("SETRANGE", "big", "3", "ab")},
		{"append small", [][]string{{"SET", "sm", "ab"}, {"APPEND", "sm", "c"}}, cmd("SET", "sm", "ab") + cmd("SET", "sm", "abc")},
		{"set over zset", [][]string{{"ZADD", "z", "9", "d"}, {"SET", "z", "str"}}, cmd("ZADD", "z", "9", "d") + cmd("SET", "z", "str")},
		{"rename", [][]string{{"RENAME", "h", "h2"}}, cmd("MULTI") + cmd("DEL", "h") + cmd("DEL", "h2") + cmd("HSET", "h2", "g", "7") + cmd("PEXPIREAT", "h2", "4102444800000") + cmd("EXEC")},
		{"hset while syncing", [][]string{{"HSET", "h2", "g", "8"}}, cmd("MULTI") + cmd("DEL", "h2") + cmd("HSET", "h2", "g", "8") + cmd("PEXPIREAT", "h2", "4102444800000") + cmd("EXEC")},
		{"hset after", [][]string{{"HSET", "h2", "g", "9"}}, cmd("HSET", "h2", "g", "9")},
		// Lists: pushes, a trim for pops, sets in between.
		{"rpush list", [][]string{{"RPUSH", "l", "z"}}, cmd("RPUSH", "l", "z")},
		{"lpush list", [][]string{{"LPUSH", "l", "a", "b"}}, cmd("LPUSH", "l", "a", "b")},
		{"pops", [][]string{{"MULTI"}, {"LPOP", "l"}, {"RPOP", "l"}, {"EXEC"}}, cmd("LTRIM", "l", "1", "-2")},
		{"lset", [][]string{{"LSET", "l", "1", "Q"}}, cmd("LSET", "l", "1", "Q")},
		{"pop then push", [][]string{{"MULTI"}, {"LPOP", "l"}, {"LPUSH", "l", "n"}, {"RPUSH", "l", "t"}, {"EXEC"}}, cmd("MULTI") + cmd("RPUSH", "l", "t") + cmd("LSET", "l", "0", "n") + cmd("EXEC")},
		{"lmove", [][]string{{"LMOVE", "l", "l", "LEFT", "RIGHT"}}, cmd("MULTI") + cmd("RPUSH", "l", "n") + cmd("LTRIM", "l", "1", "-1") + cmd("EXEC")},
		{"lpop count", [][]string{{"LPOP", "l", "2"}}, cmd("LTRIM", "l", "2", "-1")},
		// Changes as many as the list holds: whole.
		{"list turned over", [][]string{{"RPUSH", "l1", "a"}, {"MULTI"}, {"LPUSH", "l1", "b"}, {"RPOP", "l1"}, {"EXEC"}},
			cmd("MULTI") + cmd("DEL", "l1") + cmd("RPUSH", "l1", "a") + cmd("EXEC") + cmd("MULTI") + cmd("DEL", "l1") + cmd("RPUSH", "l1", "b") + cmd("EXEC")},
		{"list expire", [][]string{{"PEXPIREAT", "l", "4102444800000"}}, cmd("PEXPIREAT", "l", "4102444800000")},
		{"throttle", [][]string{{"CL.THROTTLE", "t", "5", "10", "60"}}, "SET t "},
		{"select", [][]string{{"SELECT", "3"}, {"SET", "k3", "v"}, {"SELECT", "0"}}, cmd("SELECT", "3") + cmd("SET", "k3", "v")},
		{"flushall", [][]string{{"FLUSHALL"}}, "FLUSHDB"},
		{"script two keys", [][]string{{"EVAL", "redis.call('SET', KEYS[1], 'a') redis.call('SET', KEYS[2], 'b')", "2", "s1", "s2"}},
			cmd("MULTI") + cmd("SELECT", "0") + cmd("SET", "s1", "a") + cmd("SET", "s2", "b") + cmd("EXEC")},
		// CL.WINDOW windows go as RESTORE (masked here), after a DEL of a
		// value they replaced: a redis-server replica refuses the RESTORE
		// and must not keep that value.
		{"window new", [][]string{{"CL.WINDOW", "wn", "5", "60000"}}, restore("wn")},
		{"window in place", [][]string{{"CL.WINDOW", "wn", "5", "60000"}}, restore("wn")},
		{"window renamed over a string", [][]string{{"SET", "ws", "str"}, {"COPY", "wn", "wn2"}, {"RENAME", "wn", "ws"}},
			cmd("SET", "ws", "str") + restore("wn2") + cmd("MULTI") + cmd("DEL", "wn") + cmd("DEL", "ws") + restore("ws") + cmd("EXEC")},
		{"window renamed to a new key", [][]string{{"RENAME", "ws", "wn"}}, cmd("MULTI") + cmd("DEL", "ws") + restore("wn") + cmd("EXEC")},
		{"window over a key deleted before", [][]string{{"SET", "wd", "x"}, {"MULTI"}, {"DEL", "wd"}, {"RENAME", "wn", "wd"}, {"EXEC"}},
			cmd("SET", "wd", "x") + cmd("MULTI") + cmd("DEL", "wd") + restore("wd") + cmd("DEL", "wn") + cmd("EXEC")},
		{"window over a key created before", [][]string{{"MULTI"}, {"SET", "wc", "x"}, {"COPY", "wd", "wc", "REPLACE"}, {"EXEC"}}, restore("wc")},
		{"window copied over a hash", [][]string{{"HSET", "wh", "f", "v"}, {"COPY", "wd", "wh", "REPLACE"}},
			cmd("MULTI") + cmd("DEL", "wh") + cmd("HSET", "wh", "f", "v") + cmd("EXEC") + cmd("MULTI") + cmd("DEL", "wh") + restore("wh") + cmd("EXEC")},
		{"window restored over a string", [][]string{{"SET", "wr", "x"}, {"RESTORE", "wr", "0", "<dump wd>", "REPLACE"}},
			cmd("SET", "wr", "x") + cmd("MULTI") + cmd("DEL", "wr") + restore("wr") + cmd("EXEC")},
		{"window restored over a window", [][]string{{"RESTORE", "wr", "0", "<dump wd>", "REPLACE"}},
			cmd("MULTI") + cmd("DEL", "wr") + restore("wr") + cmd("EXEC")},
	}
	for _, tc := range tests {
		srv.repl.mu.Lock()
		// A case "while syncing" is sent while a snapshot is being
		// taken, when every key goes whole.
		srv.repl.syncing = int(b2i(strings.HasSuffix(tc.name, "while syncing")))
		srv.repl.mu.Unlock()
		for _, a := range tc.send {
			for i, arg := range a {
				if k, ok := strings.CutPrefix(arg, "<dump "); ok {
					a[i] = bulkBody(t, c.do("DUMP", strings.TrimSuffix(k, ">")))
				}
			}
			c.do(a...)
		}
		// A PING streamed after each case marks its end.
		srv.propagateRaw(-1, encode("PING"))
		var got strings.Builder
		for !strings.HasSuffix(got.String(), cmd("PING")) {
			if err := readReply(r.br, &got); err != nil {
				t.Fatalf("%s: reading the stream: %v (%q)", tc.name, err, got.String())
			}
		}
		s := maskRestores(t, strings.TrimSuffix(got.String(), cmd("PING")))
		switch tc.name {
		case "throttle":
			// SET t <tat> PXAT <t>: the value and time depend on the clock.
			if !strings.HasPrefix(s, "*5\r\n$3\r\nSET\r\n$1\r\nt\r\n") || !strings.Contains(s, "PXAT") {
				t.Errorf("%s: stream %q", tc.name, s)
			}
		case "flushall":
			if strings.Count(s, cmd("FLUSHDB")) != 16 || !strings.HasPrefix(s, cmd("MULTI")) {
				t.Errorf("%s: stream %q", tc.name, s)
			}
		default:
			if s != tc.want {
				t.Errorf("%s: stream\n%q, want\n%q", tc.name, s, tc.want)
			}
		}
	}
	if got := c.do("WAIT", "1", "50"); got != ":0\r\n" {
		t.Errorf("WAIT with a replica that never ACKs: %q", got)
	}
	r.nc.Write(encode("REPLCONF", "ACK", strconv.FormatInt(srv.repl.off, 10)))
	if got := c.do("WAIT", "1", "0"); got != ":1\r\n" {
		t.Errorf("WAIT after the ACK: %q", got)
	}
	role := c.do("ROLE")
	if !strings.HasPrefix(role, "*3\r\n$6\r\nmaster\r\n") || !strings.Contains(role, "$4\r\n6380\r\n") {
		t.Errorf("ROLE: %q", role)
	}
}

// TestChangeCmds: changes in place become the commands that state them,
// additions before removals, then the expiry if it changed.
func TestChangeCmds(t *testing.T) {
	cmd := func(args ...string) string { return string(encode(args...)) }
	put := func(item string, score float64, val string) keyspace.Change {
		return keyspace.Change{Item: []byte(item), Score: score, Val: []byte(val)}
	}
	del := func(item string) keyspace.Change { return keyspace.Change{Item: []byte(item), Del: true} }
	tests := []struct {
		name       string
		typ        rdb.Type
		chs        []keyspace.Change
		exp        int64
		expChanged bool
		want       string
		n          int
	}{
		{"nothing", rdb.TypeZSet, nil, 0, false, "", 0},
		{"expiry only", rdb.TypeHash, nil, 7, true, cmd("PEXPIREAT", "k", "7"), 1},
		{"expiry removed", rdb.TypeSet, nil, 0, true, cmd("PERSIST", "k"), 1},
		{"expiry unchanged", rdb.TypeZSet, []keyspace.Change{put("m", 1, "")}, 7, false, cmd("ZADD", "k", "1", "m"), 1},
		{"zset", rdb.TypeZSet, []keyspace.Change{del("a"), put("b", 1.5, ""), del("c"), put("d", math.Inf(-1), "")}, 9, true,
			cmd("ZADD", "k", "1.5", "b", "-inf", "d") + cmd("ZREM", "k", "a", "c") + cmd("PEXPIREAT", "k", "9"), 3},
		{"zset big score", rdb.TypeZSet, []keyspace.Change{put("m", 1e300, "")}, 0, false, cmd("ZADD", "k", "1e+300", "m"), 1},
		{"zset timestamps", rdb.TypeZSet, []keyspace.Change{put("1732700000123", 1732700000123, ""), put("n", -42, "")}, 0, false,
			cmd("ZADD", "k", "1732700000123", "1732700000123", "-42", "n"), 1},
		{"zset removals only", rdb.TypeZSet, []keyspace.Change{del("1000"), del("1001")}, 0, false, cmd("ZREM", "k", "1000", "1001"), 1},
		{"hash", rdb.TypeHash, []keyspace.Change{put("f", 0, "v"), del("g"), put("h", 0, "")}, 0, false,
			cmd("HSET", "k", "f", "v", "h", "") + cmd("HDEL", "k", "g"), 2},
		{"set", rdb.TypeSet, []keyspace.Change{del("x"), put("y", 0, "")}, 0, true, cmd("SADD", "k", "y") + cmd("SREM", "k", "x") + cmd("PERSIST", "k"), 3},
		{"string", rdb.TypeString, []keyspace.Change{{Off: 0, Val: []byte("ab")}, {Off: 100, Val: []byte("z")}}, 5, true,
			cmd("SETRANGE", "k", "0", "ab") + cmd("SETRANGE", "k", "100", "z") + cmd("PEXPIREAT", "k", "5"), 3},
	}
	for _, tc := range tests {
		b, n := changeCmds([]byte("x"), []byte("k"), tc.typ, tc.chs, tc.exp, tc.expChanged)
		if string(b) != "x"+tc.want || n != tc.n {
			t.Errorf("%s: %q (%d commands), want %q (%d)", tc.name, b, n, "x"+tc.want, tc.n)
		}
	}
}

// maskRestores rewrites a stretch of the stream with each RESTORE's ttl
// and payload as <ttl> and <payload>: a window's depend on the clock.
func maskRestores(t *testing.T, s string) string {
	t.Helper()
	var out []byte
	for rest := s; rest != ""; {
		var args []string
		line, after, _ := strings.Cut(rest, "\r\n")
		n, ok := cutInt(line, '*')
		if !ok {
			t.Fatalf("stream %q: not an array at %q", s, rest)
		}
		rest = after
		for range n {
			line, after, _ = strings.Cut(rest, "\r\n")
			size, ok := cutInt(line, '$')
			if !ok || len(after) < size+2 {
				t.Fatalf("stream %q: not a bulk at %q", s, rest)
			}
			args = append(args, after[:size])
			rest = after[size+2:]
		}
		if len(args) == 6 && args[0] == "RESTORE" {
			args[2], args[3] = "<ttl>", "<payload>"
		}
		out = append(out, encode(args...)...)
	}
	return string(out)
}

func cutInt(line string, prefix byte) (int, bool) {
	if line == "" || line[0] != prefix {
		return 0, false
	}
	n, err := strconv.Atoi(line[1:])
	return n, err == nil
}

// TestAppendScore: a score streamed parses back to the same bits, whole
// numbers below 2^53 written as integers.
func TestAppendScore(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {1, "1"}, {-7, "-7"}, {1732700000123, "1732700000123"},
		{1<<53 - 1, "9007199254740991"}, {1 << 53, "9.007199254740992e+15"}, {1.5, "1.5"}, {0.1, "0.1"},
		{1e300, "1e+300"}, {-1e-300, "-1e-300"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	} {
		got := string(appendScore(nil, tc.f))
		if got != tc.want {
			t.Errorf("appendScore(%v) = %q, want %q", tc.f, got, tc.want)
		}
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(tc.f) {
			t.Errorf("appendScore(%v) = %q parses back as %v, %v", tc.f, got, back, err)
		}
	}
}
