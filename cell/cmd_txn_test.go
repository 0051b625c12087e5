package cell

import (
	"strings"
	"testing"
)

// TestMultiQueueReuse: a client reuses its queue and argument arenas from
// one transaction to the next; arguments queued before an arena grew, and
// those of a larger earlier transaction, must come back intact.
func TestMultiQueueReuse(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	big := strings.Repeat("x", 100<<10) // past txnArenaMax: dropped at the next MULTI
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"echo", "first"}, "+QUEUED\r\n"},
		{[]string{"echo", big}, "+QUEUED\r\n"},
		{[]string{"set", "k", "v1"}, "+QUEUED\r\n"},
		{[]string{"exec"}, "*3\r\n$5\r\nfirst\r\n$102400\r\n" + big + "\r\n+OK\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"echo", "second"}, "+QUEUED\r\n"},
		{[]string{"get", "k"}, "+QUEUED\r\n"},
		{[]string{"exec"}, "*2\r\n$6\r\nsecond\r\n$2\r\nv1\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"echo", "gone"}, "+QUEUED\r\n"},
		{[]string{"discard"}, "+OK\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"echo", "third"}, "+QUEUED\r\n"},
		{[]string{"exec"}, "*1\r\n$5\r\nthird\r\n"},
	}
	for _, s := range steps {
		if got := c.do(s.args...); got != s.want {
			t.Errorf("%.40q: got %.80q, want %.80q", s.args, got, s.want)
		}
	}
}

// TestMultiBlockAllocs: once a client has run a MULTI block, running one
// like it again allocates nothing (queueing, EXEC's contexts).
func TestMultiBlockAllocs(t *testing.T) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	block := [][][]byte{
		{[]byte("MULTI")},
		{[]byte("SET"), []byte("k"), []byte("v")},
		{[]byte("INCR"), []byte("n")},
		{[]byte("GET"), []byte("k")},
		{[]byte("EXEC")},
	}
	run := func() {
		for _, args := range block {
			c.dispatch(args)
		}
		c.w.Reset()
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("a repeated MULTI block allocates %.1f times, want 0", n)
	}
}
