package cell

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPersistDeltas: strings, hashes and lists changed in place come back
// from the log exactly (values, order, TTLs, OBJECT ENCODING), with a
// checkpoint before the changes or among them, and a change in place of a
// big value adds to the log about its arguments' size, not the value's.
func TestPersistDeltas(t *testing.T) {
	big := strings.Repeat("0123456789", 200) // 2000 bytes
	hash := []string{"HSET", "h"}
	for i := range 600 {
		hash = append(hash, fmt.Sprintf("f%03d", i), strconv.Itoa(i))
	}
	list := []string{"RPUSH", "l"}
	for i := range 1000 {
		list = append(list, fmt.Sprintf("e%04d", i))
	}
	setup := [][]string{{"SET", "s", big}, hash, list, {"HSET", "small", "a", "1", "b", "2", "c", "3"}}
	tests := []struct {
		name   string
		change [][]string
		// maxLog bounds the bytes the changes add to the log; 0: not
		// checked (the change is logged whole, or holds a checkpoint).
		maxLog uint64
	}{
		{"append", [][]string{{"APPEND", "s", "abcdefghij"}, {"APPEND", "s", "k"}, {"APPEND", "s", "\x00\r\n"}}, 150},
		{"setrange inside and past the end", [][]string{{"SETRANGE", "s", "5", "xyz"}, {"SETRANGE", "s", "2100", "tail"}, {"SETRANGE", "s", "0", "H"}}, 150},
		{"bitmap writes inside and past the end", [][]string{
			{"SETBIT", "s", "5", "1"}, {"SETBIT", "s", "20000", "1"}, {"SETBIT", "s", "8", "0"},
			{"BITFIELD", "s", "INCRBY", "u8", "100", "3", "SET", "i16", "#10", "-1", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"},
			{"BITFIELD", "s", "SET", "u8", "#3000", "7"}, {"SETBIT", "s", "5", "1"},
		}, 200},
		{"string expiry", [][]string{{"PEXPIRE", "s", "3600000"}, {"APPEND", "s", "x"}, {"PERSIST", "s"}, {"EXPIRE", "s", "7200"}}, 150},
		{"hash fields", [][]string{
			{"HSET", "h", "f001", "new", "added", "v"}, {"HDEL", "h", "f002", "f003", "missing"},
			{"HINCRBY", "h", "f004", "10"}, {"HINCRBYFLOAT", "h", "f005", "1.25"}, {"HSETNX", "h", "f006", "no"},
			{"HSETNX", "h", "nx", "yes"}, {"HMSET", "h", "f007", "x"}, {"PEXPIRE", "h", "3600000"},
		}, 400},
		{"small hash keeps its order and encoding", [][]string{{"HSET", "small", "d", "4"}, {"HDEL", "small", "a"}, {"HSET", "small", "b", "22"}}, 0},
		{"small hash converted by a long value", [][]string{{"HSET", "small", "long", strings.Repeat("v", 65)}, {"HDEL", "small", "long"}}, 0},
		{"list ends", [][]string{
			{"LPUSH", "l", "a", "b"}, {"RPUSH", "l", "c"}, {"LPOP", "l"}, {"RPOP", "l", "2"},
			{"LSET", "l", "5", "set5"}, {"LSET", "l", "-1", "last"}, {"LTRIM", "l", "1", "-2"},
			{"LPUSHX", "l", "x"}, {"RPUSHX", "l", "y"}, {"LPOP", "l", "0"}, {"PEXPIRE", "l", "3600000"},
			{"LINSERT", "l", "BEFORE", "x", "before-head"}, {"LINSERT", "l", "AFTER", "y", "after-tail"},
		}, 600},
		{"list middle", [][]string{{"LINSERT", "l", "AFTER", "e0500", "mid"}, {"LREM", "l", "1", "e0007"}, {"LPUSH", "l", "z"}}, 0},
		// The side nearer an end moves: a few elements each.
		{"list inserts and removals near the ends", [][]string{
			{"LINSERT", "l", "AFTER", "e0995", "i1"}, {"LINSERT", "l", "BEFORE", "e0004", "i2"},
			{"LREM", "l", "1", "e0990"}, {"LREM", "l", "-1", "e0002"}, {"RPUSH", "l", "e0002"}, {"LREM", "l", "-2", "e0002"},
		}, 800},
		{"list pops past its start", [][]string{{"LPOP", "l", "600"}, {"LPUSH", "l", "p", "q"}, {"RPOP", "l", "300"}}, 0},
		{"transaction", [][]string{
			{"MULTI"}, {"APPEND", "s", "1"}, {"SETRANGE", "s", "3", "mid"}, {"APPEND", "s", "2"},
			{"LPUSH", "l", "x"}, {"LPOP", "l"}, {"RPUSH", "l", "y"}, {"LSET", "l", "0", "zero"},
			{"HSET", "h", "f", "v"}, {"HDEL", "h", "f"}, {"HSET", "h", "g", "w"}, {"EXEC"},
		}, 300},
		{"replaced between changes", [][]string{
			{"APPEND", "s", "x"}, {"SET", "s", "short"}, {"APPEND", "s", "y"}, {"SET", "s", big}, {"APPEND", "s", "z"},
			{"DEL", "l"}, {"RPUSH", "l", "a"}, {"LPUSH", "l", "b"}, {"RENAME", "h", "h2"}, {"HSET", "h2", "f000", "r"},
		}, 0},
		{"checkpoints among the changes", [][]string{
			{"APPEND", "s", "a"}, {"LPUSH", "l", "a"}, {"HSET", "h", "f000", "a"}, {"SAVE"},
			{"APPEND", "s", "b"}, {"RPOP", "l"}, {"HDEL", "h", "f001"}, {"BGSAVE"},
			{"SETRANGE", "s", "1", "c"}, {"LSET", "l", "3", "c"}, {"HINCRBY", "h", "f010", "3"},
		}, 0},
	}
	for _, rewrite := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/rewrite=%v", tt.name, rewrite), func(t *testing.T) {
				defer func(n int) { rewriteShare = n }(rewriteShare)
				rewriteShare = 0
				if rewrite {
					rewriteShare = 1 << 30
				}
				dir := t.TempDir()
				srv, stop := openServer(t, dir, nil)
				c := dial(t, srv)
				for _, cmd := range setup {
					c.do(cmd...)
				}
				if got := c.do("SAVE"); got != "+OK\r\n" {
					t.Fatalf("SAVE: %q", got)
				}
				before := srv.store.Committed()
				for _, cmd := range tt.change {
					if got := c.do(cmd...); strings.HasPrefix(got, "-") {
						t.Fatalf("%q: %q", cmd, got)
					}
				}
				if n := srv.store.Committed() - before; tt.maxLog != 0 && n > tt.maxLog {
					t.Errorf("the changes added %d bytes to the log, want at most %d", n, tt.maxLog)
				}
				for srv.bgsave.Load() {
					c.do("PING")
				}
				want, wantEnc := dumpKeyspace(srv), encodings(c)
				crashStop(srv, stop)
				srv, _ = openServer(t, dir, nil)
				sameKeys(t, dumpKeyspace(srv), want)
				if got := encodings(dial(t, srv)); got != wantEnc {
					t.Errorf("OBJECT ENCODING after restart: %s, want %s", got, wantEnc)
				}
			})
		}
	}
}

// encodings lists OBJECT ENCODING of the keys TestPersistDeltas uses.
func encodings(c *testConn) string {
	var out []string
	for _, k := range []string{"s", "h", "h2", "l", "small"} {
		out = append(out, k+"="+strings.TrimSpace(c.do("OBJECT", "ENCODING", k)))
	}
	return strings.Join(out, " ")
}

// TestPersistBigAppendLogsLittle: fifty APPENDs of 10 bytes to a 4 MB
// string, and LPUSH and HSET on a list and a hash of 20,000 elements, add
// to the log in proportion to their arguments (the issue this fixes: a
// whole copy of the value per command).
func TestPersistBigAppendLogsLittle(t *testing.T) {
	srv, _ := openServer(t, t.TempDir(), nil)
	c := dial(t, srv)
	c.do("SET", "s", strings.Repeat("x", 4<<20))
	rpush, hset := []string{"RPUSH", "l"}, []string{"HSET", "h"}
	for i := range 20000 {
		rpush = append(rpush, strconv.Itoa(i))
		hset = append(hset, strconv.Itoa(i), "v")
	}
	c.do(rpush...)
	c.do(hset...)
	for _, tt := range []struct {
		cmd []string
		max uint64 // per command
	}{
		{[]string{"APPEND", "s", "0123456789"}, 40},
		{[]string{"SETBIT", "s", "1000", "1"}, 40},
		{[]string{"BITFIELD", "s", "INCRBY", "i32", "#100", "1"}, 40},
		{[]string{"LPUSH", "l", "0123456789"}, 50},
		{[]string{"HSET", "h", "field", "0123456789"}, 50},
	} {
		before := srv.store.Committed()
		for range 50 {
			c.do(tt.cmd...)
		}
		if per := (srv.store.Committed() - before) / 50; per > tt.max {
			t.Errorf("%s: %d bytes of log a command, want at most %d", tt.cmd[0], per, tt.max)
		}
	}
}

// TestPersistDeltasOverExpiredSnapshot: a string, hash and list whose
// snapshot copy has expired by the restart, but whose later changes in
// place (the log's) gave them a longer life, come back whole: loading
// keeps them aside until the log shows they lived on.
func TestPersistDeltasOverExpiredSnapshot(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	c.do("SET", "s", strings.Repeat("s", 100), "PX", "300")
	c.do("RPUSH", "l", "a", "b", "c")
	c.do("HSET", "h", "f", "1", "g", "2")
	c.do("PEXPIRE", "l", "300")
	c.do("PEXPIRE", "h", "300")
	c.do("SET", "gone", strings.Repeat("g", 100), "PX", "300") // expires for good
	if got := c.do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	for _, cmd := range [][]string{
		{"APPEND", "s", "x"}, {"PEXPIRE", "s", "3600000"},
		{"LPUSH", "l", "z"}, {"RPOP", "l"}, {"PEXPIRE", "l", "3600000"},
		{"HSET", "h", "f", "9"}, {"HDEL", "h", "g"}, {"PEXPIRE", "h", "3600000"},
	} {
		if got := c.do(cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("%q: %q", cmd, got)
		}
	}
	live, srv := restartPastExpiry(t, srv, stop, dir)
	if len(live) != 3 {
		t.Fatalf("before the restart: %q", live)
	}
	sameKeys(t, dumpKeyspace(srv), live)
}

// restartPastExpiry stops srv as a crash would, waits past the 300 ms
// expiry of its snapshot's keys, and starts a server on dir again. live
// is what srv held but the key "gone" of db 0, which expired for good.
func restartPastExpiry(t *testing.T, srv *Server, stop func(), dir string) (live []string, again *Server) {
	t.Helper()
	want := dumpKeyspace(srv)
	crashStop(srv, stop)
	time.Sleep(400 * time.Millisecond)
	again, _ = openServer(t, dir, nil)
	for _, k := range want {
		if !strings.HasPrefix(k, `0/"gone"`) {
			live = append(live, k)
		}
	}
	return live, again
}
