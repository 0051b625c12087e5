package cell

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// outSink is a client's output when other goroutines write to it too:
// MONITOR lines (monitor.go) and pub/sub messages (pubsub.go). Everything
// the client sends then goes through the sink, its own replies included,
// so that the stream stays in the order things were added. A goroutine per
// sink writes it to the socket; pushers only append under the sink's lock
// and never wait for the network.
//
// The unsent bytes are bounded as Redis bounds a client's output buffer: a
// subscribed client by client-output-buffer-limit's pubsub class, a monitor
// by monitorOutputLimit. Past the limit the sink drops everything and the
// connection is closed, with Redis's log line; the client's goroutine then
// finds the socket closed and cleans up.
type outSink struct {
	c  *Client
	mu sync.Mutex
	// buf is what waits for the writer; sending what the writer has taken
	// and not written yet. Both count against the limits.
	buf     []byte
	sending int
	dead    bool  // over the limit or the socket failed: drop everything
	softAt  int64 // Unix s the unsent bytes went above the soft limit; 0: below
	proto   atomic.Int32
	replica bool          // a replica's: client-output-buffer-limit replica
	exempt  int64         // unsent bytes of a snapshot, which no limit counts (pushExempt)
	wake    chan struct{} // capacity 1: "buf has data"
	quit    chan struct{}
	done    chan struct{}
}

// sinkChunk is how much the writer sends per write, so that the unsent
// count falls as the client reads.
const sinkChunk = 64 << 10

// attachSink routes c's output through a sink, starting one when there is
// none. Replies already written go first.
func (c *Client) attachSink() *outSink {
	if c.out != nil {
		return c.out
	}
	s := &outSink{c: c, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	s.proto.Store(int32(c.w.Proto()))
	s.push(c.w.Bytes(), nil)
	c.w.Reset()
	c.out = s
	go s.run()
	return s
}

// releaseSink stops the sink once neither MONITOR nor a subscription needs
// it: its writer ends, and what it had not sent yet is written before
// anything else the client sends.
func (c *Client) releaseSink() {
	s := c.out
	if s == nil || c.monitoring || c.subscribed() {
		return
	}
	c.out = nil
	close(s.quit)
	<-s.done
	s.mu.Lock()
	rest, dead := s.buf, s.dead
	s.buf = nil
	s.mu.Unlock()
	if !dead && len(rest) > 0 {
		n, _ := c.nc.Write(rest)
		c.netOut.Add(int64(n))
	}
}

// flushSink is flush for a client whose output goes through its sink.
func (c *Client) flushSink() bool {
	s := c.out
	s.push(c.w.Bytes(), nil)
	c.w.Reset()
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.dead
}

// push appends a and b, then checks the limits.
func (s *outSink) push(a, b []byte) { s.pushParts(false, a, b) }

// pushExempt is push for a snapshot sent to a replica: as in Redis, the
// RDB file does not count against the output buffer limits, only the
// stream queued behind it. The parts go in together, nothing between.
func (s *outSink) pushExempt(parts ...[]byte) { s.pushParts(true, parts...) }

func (s *outSink) pushParts(exempt bool, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 {
		return
	}
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return
	}
	if exempt {
		s.exempt += int64(n)
	}
	for _, p := range parts {
		s.buf = append(s.buf, p...)
	}
	if s.overLimit() {
		s.dead, s.buf = true, nil
		s.mu.Unlock()
		s.c.closeForOutputLimit()
		return
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// overLimit checks the unsent bytes against the client's class: replica,
// pubsub while subscribed, else a monitor's fixed limit. s.mu is held.
func (s *outSink) overLimit() bool {
	l := classLimits{hard: monitorOutputLimit}
	switch {
	case s.replica:
		l = replicaLimits(s.c)
	case clientFlag(s.c.shared.flags.Load())&cflagPubSub != 0:
		l = s.c.srv.ops.outLimit.Load().pubsub
	}
	return l.over(int64(len(s.buf)+s.sending)-s.exempt, &s.softAt, time.Now().Unix())
}

// over is Redis's checkClientOutputBufferLimits for used bytes at now
// (Unix s): at or past hard at once; at or past soft when it has been so
// for more than softSec whole seconds, counted from *softAt (0: below soft
// until now), which it updates.
func (l classLimits) over(used int64, softAt *int64, now int64) bool {
	if l.hard > 0 && used >= l.hard {
		return true
	}
	if l.soft == 0 || used < l.soft {
		*softAt = 0
		return false
	}
	if *softAt == 0 {
		*softAt = now
		return false
	}
	return now-*softAt > l.softSec
}

// closeForOutputLimit closes c's connection, with the line Redis logs when
// it schedules a client over its output buffer limit to be closed.
func (c *Client) closeForOutputLimit() {
	info := c.appendInfo(nil, &Ctx{srv: c.srv})
	if n := len(info); n > 0 && info[n-1] == '\n' {
		info = info[:n-1]
	}
	c.srv.log.Warn("Client " + string(info) + " scheduled to be closed ASAP for overcoming of output buffer limits.")
	c.nc.Close()
}

// run writes the sink to the socket until stopped; buffers are swapped so
// pushers never wait for the network.
func (s *outSink) run() {
	defer close(s.done)
	var out []byte
	for {
		select {
		case <-s.wake:
		case <-s.quit:
			return
		}
		if s.replica {
			// Let the writers that are running add theirs first: one
			// write for several executions' stream, as Redis writes a
			// replica's buffer once per event loop.
			runtime.Gosched()
		}
		s.mu.Lock()
		out, s.buf = s.buf, out[:0]
		s.sending = len(out)
		s.mu.Unlock()
		for b := out; len(b) > 0; {
			n, err := s.c.nc.Write(b[:min(len(b), sinkChunk)])
			s.c.netOut.Add(int64(n))
			b = b[n:]
			s.mu.Lock()
			s.sending = len(b)
			s.exempt = max(0, s.exempt-int64(n)) // a snapshot's bytes go first
			if err != nil {
				s.dead, s.buf, s.sending = true, nil, 0
			}
			s.mu.Unlock()
			if err != nil {
				s.c.nc.Close()
				return
			}
		}
	}
}
