package cell

import (
	"net"
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
	// q is what waits for the writer, queued bytes long; sending what the
	// writer has taken and not written yet. Both count against the limits.
	q       []sinkSeg
	queued  int
	sending int
	free    [][]byte // written blocks kept for reuse, at most sinkKeep
	blk     int      // the size of new blocks (sinkMinBlock up to sinkBlock)
	dead    bool     // over the limit or the socket failed: drop everything
	holding bool     // hold: the writer leaves q alone until release
	softAt  int64    // Unix s the unsent bytes went above the soft limit; 0: below
	proto   atomic.Int32
	replica bool          // a replica's: client-output-buffer-limit replica
	exempt  int64         // unsent bytes of a snapshot, which no limit counts (pushExempt)
	wake    chan struct{} // capacity 1: "q has data"
	quit    chan struct{}
	done    chan struct{}
}

// sinkSeg is a stretch of the output: a block of the sink's that pushes
// copy into, or a snapshot's bytes, held as they are (pushExempt).
type sinkSeg struct {
	b     []byte
	owned bool // a block of sinkBlock bytes: appendable, reused once written
}

// The output is queued in blocks, not one growing array: what the sink
// holds is what is unsent plus sinkKeep blocks, where an array grown for
// a lagging replica or a snapshot stayed that big (twice, with the
// writer's) for the connection's life. Blocks start at sinkMinBlock and
// double, up to sinkBlock, each time a push fills one, so that a quiet
// subscriber keeps a few KB and a replica's stream gets big blocks.
const (
	sinkMinBlock = 1 << 10
	sinkBlock    = 16 << 10
	sinkKeep     = 4
)

// sinkChunk is how much the writer sends per write (writev of several
// blocks), so that the unsent count falls as the client reads.
const sinkChunk = 256 << 10

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
	rest, dead := s.q, s.dead
	s.q, s.queued = nil, 0
	s.mu.Unlock()
	if !dead && len(rest) > 0 {
		bufs := make(net.Buffers, 0, len(rest))
		for _, sg := range rest {
			bufs = append(bufs, sg.b)
		}
		n, _ := bufs.WriteTo(c.nc)
		c.netOut.Add(n)
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
// stream queued behind it. The parts go in together, nothing between;
// parts of a block or more are queued as they are, not copied, so the
// caller must not change them after.
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
		if exempt && len(p) >= sinkBlock {
			s.q = append(s.q, sinkSeg{b: p})
			s.queued += len(p)
			continue
		}
		s.appendCopy(p)
	}
	if s.overLimit() {
		s.dead, s.q, s.queued = true, nil, 0
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

// hold keeps the writer from sending until release, so that what is
// pushed meanwhile (a subscription's confirmation) reaches the client
// only after the caller has done what must precede it (joining the
// registry: a client that read the confirmation is counted by the next
// PUBLISH, as in Redis).
func (s *outSink) hold() {
	s.mu.Lock()
	s.holding = true
	s.mu.Unlock()
}

// release ends hold and lets the writer send what was queued.
func (s *outSink) release() {
	s.mu.Lock()
	s.holding = false
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// appendCopy queues a copy of p in the sink's blocks. s.mu is held.
func (s *outSink) appendCopy(p []byte) {
	for len(p) > 0 {
		n := len(s.q)
		if n == 0 || !s.q[n-1].owned || len(s.q[n-1].b) == cap(s.q[n-1].b) {
			switch {
			case s.blk == 0:
				s.blk = sinkMinBlock
			case n > 0 && s.q[n-1].owned && s.blk < sinkBlock:
				s.blk *= 2 // a block filled: the traffic wants bigger ones
				clear(s.free)
				s.free = s.free[:0]
			}
			var blk []byte
			if k := len(s.free); k > 0 && cap(s.free[k-1]) == s.blk {
				blk, s.free = s.free[k-1], s.free[:k-1]
			} else {
				blk = make([]byte, 0, s.blk)
			}
			s.q = append(s.q, sinkSeg{b: blk, owned: true})
			n++
		}
		t := &s.q[n-1]
		k := copy(t.b[len(t.b):cap(t.b)], p)
		t.b = t.b[:len(t.b)+k]
		s.queued += k
		p = p[k:]
	}
}

// held is the bytes of memory the sink holds: its queue's arrays and the
// blocks kept for reuse. s.mu is held.
func (s *outSink) held() int {
	n := 0
	for _, sg := range s.q {
		n += cap(sg.b)
	}
	for _, b := range s.free {
		n += cap(b)
	}
	return n
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
	return l.check(int64(s.queued+s.sending)-s.exempt, &s.softAt)
}

// check is over at the time now, read only when used reached a limit:
// a replica's sink is checked at every push of the stream, where the
// clock was a tenth of the check's cost.
func (l classLimits) check(used int64, softAt *int64) bool {
	if (l.hard == 0 || used < l.hard) && (l.soft == 0 || used < l.soft) {
		*softAt = 0
		return false
	}
	return l.over(used, softAt, time.Now().Unix())
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

// run writes the sink to the socket until stopped: it takes the whole
// queue at each wake-up, so pushers never wait for the network, and
// writes it with one writev per sinkChunk.
func (s *outSink) run() {
	defer close(s.done)
	var segs []sinkSeg
	var vec net.Buffers
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
		if s.holding {
			s.mu.Unlock()
			continue // release wakes it again
		}
		segs, s.q = s.q, segs[:0]
		s.sending, s.queued = s.queued, 0
		s.mu.Unlock()
		for i := 0; i < len(segs); {
			// One writev of whole segments up to sinkChunk, a big one
			// cut at it.
			vec = vec[:0]
			size, j, cut := 0, i, false
			for ; j < len(segs) && size < sinkChunk; j++ {
				b := segs[j].b
				if size+len(b) > sinkChunk && size > 0 {
					break
				}
				if len(b) > sinkChunk {
					b, cut = b[:sinkChunk], true
				}
				vec = append(vec, b)
				size += len(b)
			}
			bufs := vec // WriteTo consumes its receiver
			n, err := bufs.WriteTo(s.c.nc)
			s.c.netOut.Add(n)
			if cut && err == nil {
				// A big segment was cut: its rest goes next.
				segs[j-1].b = segs[j-1].b[sinkChunk:]
				j--
			}
			s.mu.Lock()
			s.sending -= int(n)
			s.exempt = max(0, s.exempt-n) // a snapshot's bytes go first
			for k := i; k < j; k++ {
				if segs[k].owned && len(s.free) < sinkKeep && cap(segs[k].b) == s.blk {
					s.free = append(s.free, segs[k].b[:0])
				}
				segs[k] = sinkSeg{}
			}
			if err != nil {
				s.dead, s.q, s.queued, s.sending = true, nil, 0, 0
			}
			s.mu.Unlock()
			if err != nil {
				s.c.nc.Close()
				return
			}
			i = j
		}
		clear(segs)
	}
}
