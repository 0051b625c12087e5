package cell

import "sync"

// The event loop (--event-loop yes, off by default): connections in their plain state wait
// for input in a few shared loops instead of each in its own goroutine.
//
// Why: at pipeline depth 1 every request otherwise parks its connection's
// goroutine and has the runtime's poller wake it again, about 0.8 µs per
// request (bench/results/depth1.md). A loop is one goroutine over an epoll
// instance of its own: when it wakes, it serves every connection that has
// input, one after the other, inside each socket's read callback exactly
// as the connection's goroutine would (servePolled), so a busy server pays
// one wake-up for many requests.
//
// Ownership: a connection is served by its goroutine or by its loop, never
// both. loopState says which; the goroutine hands a connection to the loop
// only while it is in the state servePolled serves (polledReady), and the
// loop hands it back, waking the parked goroutine, when a command must run
// outside (a transaction, a blocking pop, a script...), when the
// connection ends, or when its replies do not fit the socket. The loop's
// epoll instance is edge-triggered: every arrival after the last read
// raises one event, and servePolled reads until the socket is drained.
//
// Whoever closes a connection from elsewhere (CLIENT KILL, the idle
// timeout, Shutdown) calls kickLoop afterwards: no event announces a
// socket closed on this side, so the parked goroutine is woken directly.

// loopState values.
const (
	loopOwnedByConn int32 = iota // the connection's goroutine serves it
	loopIdle                     // the loop waits for its input
	loopServing                  // the loop is serving it now
	loopConnPending              // the goroutine owns it and the loop saw input
)

// evLoop is one loop: its poller and the connections registered with it.
type evLoop struct {
	p     *loopPoller // loop_linux.go
	mu    sync.Mutex
	conns map[int64]*Client
}

// startLoops starts n loops when the platform has them. The slice is
// published under s.mu once whole, before any client is accepted.
func (s *Server) startLoops(n int) {
	var loops []*evLoop
	for range n {
		p, err := newLoopPoller()
		if err != nil {
			s.log.Warn("event loop not available, connections wait on their own", "err", err)
			for _, l := range loops {
				l.p.close()
			}
			return
		}
		l := &evLoop{p: p, conns: make(map[int64]*Client)}
		loops = append(loops, l)
		go l.run()
	}
	s.mu.Lock()
	s.loops = loops
	s.mu.Unlock()
}

// stopLoops ends the loops (Shutdown): their goroutines return.
func (s *Server) stopLoops() {
	for _, l := range s.loops {
		l.p.close()
	}
}

// run serves the connections with input until the poller is closed.
func (l *evLoop) run() {
	l.p.wait(func(id int64) {
		l.mu.Lock()
		c := l.conns[id]
		l.mu.Unlock()
		if c != nil {
			l.serve(c)
		}
	})
}

// serve runs c's requests when the loop owns c, or notes the input for
// c's goroutine when it does not.
func (l *evLoop) serve(c *Client) {
	for {
		switch st := c.loopState.Load(); st {
		case loopIdle:
			if !c.loopState.CompareAndSwap(loopIdle, loopServing) {
				continue
			}
			if c.serveOnce() {
				c.loopState.Store(loopIdle)
				if c.loopKicked.Load() && c.loopState.CompareAndSwap(loopIdle, loopOwnedByConn) {
					c.loopWake <- struct{}{} // kickLoop came while this served
				}
				return
			}
			c.loopState.Store(loopOwnedByConn)
			c.loopWake <- struct{}{}
			return
		case loopOwnedByConn:
			if c.loopState.CompareAndSwap(loopOwnedByConn, loopConnPending) {
				return
			}
		default:
			return
		}
	}
}

// serveOnce serves what c's socket holds, inside its read callback; true
// when c stays with the loop, false when its goroutine must take over
// (with the command in pending, the end in fillErr, or replies unsent).
func (c *Client) serveOnce() bool {
	leave, err := c.sock.ServeOnce(c.pollBody)
	if err != nil {
		c.fillErr = err
		return false
	}
	return !leave && c.unsent == nil
}

// loopReady says whether c may wait in its loop now: servePolled's plain
// state, and no output limit for normal clients (the loop never waits
// for a socket to take replies).
func (c *Client) loopReady() bool {
	if c.loop == nil || c.loopKicked.Load() || !c.polledReady() {
		return false
	}
	l := c.srv.ops.outLimit.Load()
	return l == nil || l.hard == 0 && l.soft == 0
}

// parkInLoop hands c to its loop and waits until the loop gives it back.
// It reports false when c may not be handed over now. On true, what the
// loop served is done and fill's results (pending, pendErr, fillErr,
// unsent) are set.
func (c *Client) parkInLoop() bool {
	if !c.inLoop {
		if err := c.loop.add(c); err != nil {
			c.loop = nil
			return false
		}
		c.inLoop = true
	}
	for {
		if c.loopState.CompareAndSwap(loopOwnedByConn, loopIdle) {
			<-c.loopWake
			return true
		}
		// The loop saw input while this goroutine owned c and left it
		// here: serve it as the loop would, then try again.
		c.loopState.Store(loopOwnedByConn)
		c.fillErr = nil
		if !c.serveOnce() {
			return true
		}
		if c.loopKicked.Load() {
			return true
		}
	}
}

// kickLoop wakes c's goroutine if it waits in the loop, and keeps c out
// of the loop from now on: its socket was closed or is being shut down,
// which no event reports.
func (c *Client) kickLoop() {
	if c.loop == nil {
		return
	}
	c.loopKicked.Store(true)
	if c.loopState.CompareAndSwap(loopIdle, loopOwnedByConn) {
		c.loopWake <- struct{}{}
	}
}

// closeConn closes c's socket from another goroutine than c's.
func (c *Client) closeConn() {
	c.nc.Close()
	c.kickLoop()
}

// add registers c with the loop.
func (l *evLoop) add(c *Client) error {
	l.mu.Lock()
	l.conns[c.id] = c
	l.mu.Unlock()
	var err error
	if cerr := c.sock.rc.Control(func(fd uintptr) { err = l.p.add(int(fd), c.id) }); cerr != nil {
		err = cerr
	}
	if err != nil {
		l.remove(c)
	}
	return err
}

// remove forgets c (its socket leaves the epoll set when it is closed).
func (l *evLoop) remove(c *Client) {
	l.mu.Lock()
	delete(l.conns, c.id)
	l.mu.Unlock()
}
