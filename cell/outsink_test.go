package cell

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestClassLimitsOver: the hard limit closes at once, the soft one only
// after staying reached for more than its seconds, as Redis counts them.
func TestClassLimitsOver(t *testing.T) {
	l := classLimits{hard: 100, soft: 50, softSec: 2}
	steps := []struct {
		used, now int64
		want      bool
	}{
		{10, 1000, false},
		{50, 1000, false}, // soft reached: the clock starts
		{60, 1001, false}, // 1 s
		{70, 1002, false}, // 2 s: not more than softSec yet
		{40, 1003, false}, // below soft: the clock stops
		{55, 1004, false}, // reached again: starts over
		{55, 1006, false}, // 2 s
		{55, 1007, true},  // 3 s
		{100, 1007, true}, // hard
		{99, 2000, false}, // soft reached anew
		{100, 2000, true}, // hard, whatever the time
	}
	var softAt int64
	for i, s := range steps {
		if got := l.over(s.used, &softAt, s.now); got != s.want {
			t.Errorf("step %d: %d bytes at %d: over=%v, want %v", i, s.used, s.now, got, s.want)
		}
		// check, which reads the clock itself, agrees below the limits.
		if under := s.used < l.soft; under {
			var at int64 = 1
			if l.check(s.used, &at) || at != 0 {
				t.Errorf("step %d: check(%d) = true or kept the soft clock", i, s.used)
			}
		}
		if s.want {
			softAt = 0 // a closed client starts no later clock
		}
	}
	none := classLimits{}
	if none.over(1<<40, &softAt, 0) {
		t.Error("0 0 0 limited something")
	}
	hardOnly := classLimits{hard: 10}
	if hardOnly.over(9, &softAt, 0) || !hardOnly.over(10, &softAt, 0) {
		t.Error("a hard limit of 10 is reached at 10 bytes, not before")
	}
	if hardOnly.check(9, &softAt) || !hardOnly.check(10, &softAt) || none.check(1<<40, &softAt) {
		t.Error("check: a hard limit of 10 is reached at 10 bytes, not before; 0 0 0 never")
	}
	softOnly := classLimits{soft: 10, softSec: 0}
	softAt = 0
	if softOnly.check(10, &softAt) || softAt == 0 {
		t.Error("check: reaching the soft limit starts its clock")
	}
}

// sinkPair is a sink writing to one end of a loopback TCP connection,
// and the other end, for a test to read.
func sinkPair(t *testing.T) (*outSink, net.Conn) {
	t.Helper()
	srv := startServer(t, nil)
	near, far := socketPair(t, "tcp")
	c := newClient(srv, near)
	s := c.attachSink()
	s.replica = true
	t.Cleanup(func() { close(s.quit); <-s.done })
	return s, far
}

// TestOutSinkHoldsOnlyUnsent: a snapshot and a stream that went through
// a replica's sink leave it holding no more than its few reusable blocks,
// where the arrays it had grown to (the snapshot's size, twice over) were
// kept for the connection's life; the snapshot is queued, not copied; the
// bytes arrive whole and in order.
func TestOutSinkHoldsOnlyUnsent(t *testing.T) {
	s, far := sinkPair(t)
	snap := make([]byte, 8<<20)
	for i := range snap {
		snap[i] = byte(i * 7)
	}
	var want bytes.Buffer
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(far, int64(len("$EOF\r\n")+len(snap)+len("mark")+1000*100)))
		got <- b
	}()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	s.pushExempt([]byte("$EOF\r\n"), snap, []byte("mark"))
	runtime.ReadMemStats(&ms1)
	if a := ms1.TotalAlloc - ms0.TotalAlloc; a > 1<<20 {
		t.Errorf("queueing an 8 MB snapshot allocated %d bytes: it was copied", a)
	}
	want.WriteString("$EOF\r\n")
	want.Write(snap)
	want.WriteString("mark")
	cmd := bytes.Repeat([]byte("x"), 99)
	for i := range 1000 {
		cmd[0] = byte('a' + i%26)
		s.push(cmd, []byte("\n"))
		want.Write(cmd)
		want.WriteString("\n")
	}
	if b := <-got; !bytes.Equal(b, want.Bytes()) {
		t.Fatalf("read %d bytes, not the %d pushed, in order", len(b), want.Len())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		unsent, held := s.queued+s.sending, s.held()
		s.mu.Unlock()
		if unsent == 0 {
			if held > sinkKeep*sinkBlock {
				t.Errorf("drained, the sink holds %d bytes, more than its %d reusable blocks", held, sinkKeep)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still unsent", unsent)
		}
		time.Sleep(time.Millisecond)
	}
}
