package cell

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// TestReplStreamEffects: each write reaches the stream as the commands
// that reproduce its effect, not as the command sent.
func TestReplStreamEffects(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	r := dial(t, srv)
	if got := r.do("REPLCONF", "listening-port", "6380", "capa", "psync2"); got != "+OK\r\n" {
		t.Fatalf("REPLCONF: %q", got)
	}
	r.nc.Write(encode("PSYNC", "?", "-1"))
	line, _ := r.br.ReadString('\n')
	if !strings.HasPrefix(line, "+FULLRESYNC "+srv.replID()+" 0") {
		t.Fatalf("PSYNC: %q", line)
	}
	size, _ := r.br.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(size[1:]))
	if err != nil {
		t.Fatalf("snapshot header %q", size)
	}
	if _, err := io.CopyN(io.Discard, r.br, int64(n)); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) string { return string(encode(args...)) }
	tests := []struct {
		name string
		send [][]string
		want string
	}{
		{"set", [][]string{{"SET", "k", "v"}}, cmd("SELECT", "0") + cmd("SET", "k", "v")},
		{"incr", [][]string{{"INCR", "n"}}, cmd("SET", "n", "1")},
		{"set ex", [][]string{{"SET", "k", "v", "PXAT", "4102444800000"}}, cmd("SET", "k", "v", "PXAT", "4102444800000")},
		{"expireat", [][]string{{"PEXPIREAT", "n", "4102444800001"}}, cmd("SET", "n", "1", "PXAT", "4102444800001")},
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
		{"throttle", [][]string{{"CL.THROTTLE", "t", "5", "10", "60"}}, "SET t "},
		{"select", [][]string{{"SELECT", "3"}, {"SET", "k3", "v"}, {"SELECT", "0"}}, cmd("SELECT", "3") + cmd("SET", "k3", "v")},
		{"flushall", [][]string{{"FLUSHALL"}}, "FLUSHDB"},
		{"script two keys", [][]string{{"EVAL", "redis.call('SET', KEYS[1], 'a') redis.call('SET', KEYS[2], 'b')", "2", "s1", "s2"}},
			cmd("MULTI") + cmd("SELECT", "0") + cmd("SET", "s1", "a") + cmd("SET", "s2", "b") + cmd("EXEC")},
	}
	for _, tc := range tests {
		for _, a := range tc.send {
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
		s := strings.TrimSuffix(got.String(), cmd("PING"))
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
