package cell

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// testLink makes srv a replica whose link applies what a test gives
// applyStream; what the replica sends its master (ACKs) collects in the
// returned function's result.
func testLink(tb testing.TB, srv *Server) (*replLink, func() string) {
	l := &replLink{srv: srv, stop: make(chan struct{}), done: make(chan struct{})}
	nc, peer := net.Pipe()
	var mu sync.Mutex
	var sent bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := peer.Read(buf)
			mu.Lock()
			sent.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	l.nc = nc
	l.up.Store(true)
	srv.link.Store(l)
	tb.Cleanup(func() {
		if l.master != nil {
			srv.removeClient(l.master) // as run does when the link ends
		}
		srv.link.Store(nil)
		nc.Close()
		peer.Close()
	})
	return l, func() string {
		mu.Lock()
		defer mu.Unlock()
		return sent.String()
	}
}

// chunkReader reads r at most max bytes at a time, each read a random
// size: the stream reaches the replica cut anywhere.
type chunkReader struct {
	r   io.Reader
	max int
	rng *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	n := min(len(p), 1+c.rng.IntN(c.max))
	return c.r.Read(p[:n])
}

// waitTrue polls cond for up to 5 s.
func waitTrue(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestReplicaApplyStream: a recorded stream applied through the link,
// read whole or cut at random places, leaves the replica holding what
// the master holds, its backlog the stream byte for byte (what its own
// replicas get), its offset at the stream's end, an ACK at each GETACK
// with the offset of what came before it, and INFO commandstats counting
// what it ran as Redis's replica counts its master's commands (MULTI,
// EXEC, each command between, REPLCONF).
func TestReplicaApplyStream(t *testing.T) {
	big := strings.Repeat("v", 150<<10) // a command bigger than the read buffer
	var many []string                   // a MULTI block bigger than the read buffer
	for i := range 3000 {
		many = append(many, fmt.Sprintf("m%d", i), strconv.Itoa(i))
	}
	cmds := [][]string{
		{"SET", "s", "1"},
		{"MULTI"}, {"SET", "a", "1"}, {"SET", "b", "2"}, {"HSET", "h", "f", "v"}, {"INCR", "n"}, {"EXEC"},
		{"WAIT", "1", "1"},
		{"MSET", "x", "1", "y", "2", "z", "3"},
		{"SELECT", "3"}, {"RPUSH", "l", "a", "b", "c"}, {"RPOP", "l"}, {"SET", "d3", "v", "PXAT", "4102444800000"}, {"SELECT", "0"},
		{"SET", "big", big},
		append([]string{"MSET"}, many...),
		{"CL.THROTTLE", "t", "10", "1", "86400"},
		{"SADD", "st", "a", "b"}, {"SREM", "st", "a"},
		{"DEL", "x"},
		{"WAIT", "1", "1"},
		{"SELECT", "5"}, {"SET", "gone", "1"}, {"FLUSHDB"}, {"SELECT", "0"},
		{"PEXPIREAT", "y", "4102444800000"},
	}
	w1 := w1Write(50, 3, 20) // windows of about 20 entries, sliding
	stream, master := recordStream(t, len(cmds)+3000, func(b []byte, i int) ([]byte, int) {
		if i < len(cmds) {
			return append(b, encode(cmds[i]...)...), 1
		}
		return w1(b, i-len(cmds))
	})
	want := dumpKeyspace(master)

	// What the stream holds, command by command.
	var argv [][]byte
	counts := map[string]int{}
	var getackAt []int
	for p := 0; p < len(stream); {
		var n int
		var err error
		argv, n, err = parseStreamCommand(stream[p:], argv[:0])
		if err != nil || n == 0 {
			t.Fatalf("recorded stream at %d: %v", p, err)
		}
		name := strings.ToLower(string(argv[0]))
		counts[name]++
		if isGetack(argv) {
			getackAt = append(getackAt, p)
		}
		p += n
	}
	if len(getackAt) < 2 || counts["multi"] < 3 {
		t.Fatalf("recorded stream has %d GETACKs and %d MULTI blocks: %v", len(getackAt), counts["multi"], counts)
	}

	for _, max := range []int{len(stream), 1 << 16, 5000, 97} {
		t.Run(fmt.Sprintf("reads of up to %d bytes", max), func(t *testing.T) {
			srv := startServer(t, nil)
			l, sent := testLink(t, srv)
			in := &chunkReader{r: bytes.NewReader(stream), max: max, rng: rand.New(rand.NewPCG(uint64(max), 1))}
			if err := l.applyStream(bufio.NewReaderSize(in, 16)); err != io.EOF {
				t.Fatalf("applyStream: %v", err)
			}
			sameKeys(t, dumpKeyspace(srv), want)
			if got := l.off.Load(); got != int64(len(stream)) {
				t.Errorf("offset %d, want %d", got, len(stream))
			}
			srv.repl.mu.Lock()
			backlog := string(srv.repl.backlog)
			srv.repl.mu.Unlock()
			if backlog != string(stream) {
				t.Errorf("backlog of %d bytes differs from the stream of %d", len(backlog), len(stream))
			}
			for _, at := range getackAt {
				ack := string(replCmd(nil, []byte("REPLCONF"), []byte("ACK"), []byte(strconv.Itoa(at))))
				if !waitTrue(func() bool { return strings.Contains(sent(), ack) }) {
					t.Errorf("no ACK of %d (the GETACK's offset); sent %q", at, sent())
				}
			}
			stats := dial(t, srv).do("INFO", "commandstats")
			for _, name := range []string{"multi", "exec", "replconf", "set", "select"} {
				if w := fmt.Sprintf("cmdstat_%s:calls=%d,", name, counts[name]); !strings.Contains(stats, w) {
					t.Errorf("INFO commandstats lacks %q:\n%s", w, stats)
				}
			}
		})
	}
}

// TestReplicaApplyBlocks: MULTI blocks the lean path does not take whole
// (a command the replica does not know, DISCARD, a GETACK inside) go
// through dispatch command by command, as any client's, and end as a
// redis-server replica ends them; a block SELECTing inside and touching
// several shards applies whole; a block cut short applies nothing and
// is not counted in the offset until its EXEC comes.
func TestReplicaApplyBlocks(t *testing.T) {
	cmd := func(args ...string) string { return string(encode(args...)) }
	block := func(cmds ...string) string { return cmd("MULTI") + strings.Join(cmds, "") + cmd("EXEC") }
	tests := []struct {
		name   string
		stream string
		keys   map[string]string // db/key: value; "" none
	}{
		{"several shards", block(cmd("SET", "a", "1"), cmd("SET", "b", "2"), cmd("SET", "c", "3"), cmd("SET", "d", "4")),
			map[string]string{"0/a": "1", "0/b": "2", "0/c": "3", "0/d": "4"}},
		{"select inside", block(cmd("SET", "a", "1"), cmd("SELECT", "2"), cmd("SET", "a", "2")) + cmd("SET", "after", "x"),
			map[string]string{"0/a": "1", "2/a": "2", "2/after": "x", "0/after": ""}},
		{"unknown command aborts the block", block(cmd("SET", "a", "1"), cmd("NOSUCHCMD", "a")) + cmd("SET", "b", "2"),
			map[string]string{"0/a": "", "0/b": "2"}},
		{"wrong arity aborts the block", block(cmd("SET", "a", "1"), cmd("GET")) + cmd("SET", "b", "2"),
			map[string]string{"0/a": "", "0/b": "2"}},
		{"discard", cmd("MULTI") + cmd("SET", "a", "1") + cmd("DISCARD") + cmd("SET", "b", "2"),
			map[string]string{"0/a": "", "0/b": "2"}},
		{"getack inside", block(cmd("SET", "a", "1"), cmd("REPLCONF", "GETACK", "*"), cmd("SET", "b", "2")),
			map[string]string{"0/a": "1", "0/b": "2"}},
		{"exec alone", cmd("EXEC") + cmd("SET", "b", "2"), map[string]string{"0/b": "2"}},
		{"cut short", cmd("SET", "b", "2") + cmd("MULTI") + cmd("SET", "a", "1"),
			map[string]string{"0/a": "", "0/b": "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, nil)
			l, _ := testLink(t, srv)
			if err := l.applyStream(bufio.NewReader(strings.NewReader(tc.stream))); err != io.EOF {
				t.Fatalf("applyStream: %v", err)
			}
			c := dial(t, srv)
			for k, want := range tc.keys {
				db, key, _ := strings.Cut(k, "/")
				c.do("SELECT", db)
				got := c.do("GET", key)
				if w := "$-1\r\n"; want != "" {
					w = fmt.Sprintf("$%d\r\n%s\r\n", len(want), want)
					if got != w {
						t.Errorf("GET %s: %q, want %q", k, got, w)
					}
				} else if got != w {
					t.Errorf("GET %s: %q, want none", k, got)
				}
			}
			want := int64(len(tc.stream))
			if i := strings.LastIndex(tc.stream, cmd("MULTI")); tc.name == "cut short" {
				want = int64(i)
			}
			if got := l.off.Load(); got != want {
				t.Errorf("offset %d, want %d", got, want)
			}
		})
	}
}
