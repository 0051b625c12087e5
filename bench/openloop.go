package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// The open loop of fixed-load mode (fixedload.go): requests leave on a
// schedule, one every 1/rate seconds spread over the connections in turn,
// whether or not earlier ones were answered, and each one's latency runs
// from the time it was scheduled to leave, not from when it left. A server
// that stalls for 10 ms thus shows 10 ms on every request scheduled during
// the stall, as the users behind those requests would see it, instead of
// one slow request (the closed loop's coordinated omission).
//
// One pacer goroutine, locked to its thread, sleeps with nanosleep at a
// timer slack of 1 ns until the next request is due, then writes every
// request that is due. Go's own timers were not used: on this machine
// time.Sleep(100µs) overslept by 1 ms at the median, which would have
// been measured as server latency. How late the pacer wrote (send lag) is
// reported beside the latency: when its p99 nears the latency's, the
// driver, not the server, set the numbers.

// openConfig is the shape of one open-loop row.
type openConfig struct {
	conns    int
	rate     float64 // operations per second, all connections together
	warmup   time.Duration
	duration time.Duration
}

// openMeasurement is what one open-loop row measured: operations scheduled
// in the measured window, all of them answered.
type openMeasurement struct {
	ops         uint64
	hist        histogram // latency from the scheduled send to the last reply
	lag         histogram // from the scheduled send to the write
	errors      uint64
	firstErr    string
	serverTicks uint64
	otherTicks  int64
	elapsed     time.Duration
}

// openConn is one connection's queue of scheduled times, pacer to reader,
// in the order the requests were written.
type openConn struct {
	nc      net.Conn
	pending chan time.Time
	st      loadStats
}

// runOpenLoad drives addr at cfg.rate for warmup+duration and measures the
// operations scheduled in the window after the warm-up. pid is the
// server's, for its CPU in the window.
func runOpenLoad(addr string, pid int, w *workload, gen generator, cfg openConfig) (openMeasurement, error) {
	var m openMeasurement
	if cfg.rate <= 0 || cfg.conns < 1 {
		return m, fmt.Errorf("open loop: rate %.0f with %d connections", cfg.rate, cfg.conns)
	}
	conns := make([]*openConn, 0, cfg.conns)
	defer func() {
		for _, c := range conns {
			c.nc.Close()
		}
	}()
	for range cfg.conns {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return m, fmt.Errorf("connecting to %s: %v", addr, err)
		}
		// Room for a second of requests on each: a server further behind
		// than that holds the pacer back, which its lag shows.
		conns = append(conns, &openConn{nc: nc, pending: make(chan time.Time, int(cfg.rate)/cfg.conns+64)})
	}
	start := time.Now().Add(20 * time.Millisecond)
	from := start.Add(cfg.warmup)
	until := from.Add(cfg.duration)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.read(w.replies, from, until) })
	}
	var lag histogram
	var pacerErr error
	pacerDone := make(chan struct{})
	go func() {
		defer close(pacerDone)
		lag, pacerErr = pace(conns, gen, cfg.rate, start, from, until)
	}()

	sleepUntil(from)
	cpu0, err0 := readCPU(pid)
	self0, _ := readCPU(os.Getpid())
	busy0, _ := readMachineBusy()
	sleepUntil(until)
	m.elapsed = time.Since(from)
	cpu1, err1 := readCPU(pid)
	self1, _ := readCPU(os.Getpid())
	busy1, _ := readMachineBusy()
	<-pacerDone
	// Every request written is answered within the drain time, or the
	// row fails: a request left unanswered is not a latency.
	for _, c := range conns {
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	}
	wg.Wait()
	if err := errors.Join(err0, err1); err != nil {
		return m, fmt.Errorf("reading server CPU: %v", err)
	}
	if pacerErr != nil {
		return m, pacerErr
	}
	m.serverTicks = cpu1.ticks() - cpu0.ticks()
	if busy1 > busy0 {
		m.otherTicks = max(0, int64(busy1-busy0)-int64(m.serverTicks)-int64(self1.ticks()-self0.ticks()))
	}
	m.lag = lag
	for _, c := range conns {
		if c.st.ioErr != nil {
			return m, fmt.Errorf("connection lost during the run: %v", c.st.ioErr)
		}
		m.hist.merge(&c.st.hist)
		m.ops += c.st.ops
		m.errors += c.st.errors
		if m.firstErr == "" {
			m.firstErr = c.st.firstErr
		}
	}
	return m, nil
}

// pace writes the requests on schedule, from start until until, each
// connection in turn, and closes every connection's queue at the end. It
// returns the send lag of the requests scheduled in [from, until).
func pace(conns []*openConn, gen generator, rate float64, start, from, until time.Time) (histogram, error) {
	var lag histogram
	defer func() {
		for _, c := range conns {
			close(c.pending)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setTimerSlack(1)
	defer setTimerSlack(0) // the thread's default again
	g := &genState{rng: newRand(uint64(start.UnixNano()))}
	buf := make([]byte, 0, 4096)
	interval := time.Duration(float64(time.Second) / rate)
	for k, i := int64(0), 0; ; k++ {
		due := start.Add(time.Duration(k) * interval)
		if !due.Before(until) {
			return lag, nil
		}
		now := time.Now()
		if d := due.Sub(now); d > 0 {
			nanosleep(d)
			now = time.Now()
		}
		c := conns[i]
		i = (i + 1) % len(conns)
		g.nowMs = now.UnixMilli()
		buf = gen(g, buf[:0])
		c.pending <- due // before the write: the reply can come at once
		if _, err := c.nc.Write(buf); err != nil {
			return lag, fmt.Errorf("writing a request: %v", err)
		}
		if !due.Before(from) {
			lag.record(uint64(now.Sub(due)))
		}
	}
}

// read takes the replies of c's requests in order and records the latency
// of those scheduled in [from, until).
func (c *openConn) read(replies int, from, until time.Time) {
	rr := newReplyReader(c.nc)
	for due := range c.pending {
		var errs uint64
		for range replies {
			r, err := rr.next()
			if err != nil {
				c.st.ioErr = err
				for range c.pending { // let the pacer finish
				}
				return
			}
			if r.err != "" {
				errs++
				if c.st.firstErr == "" {
					c.st.firstErr = r.err
				}
			}
		}
		lat := time.Since(due)
		if !due.Before(from) && due.Before(until) {
			c.st.hist.record(uint64(lat))
			c.st.ops++
			c.st.errors += errs
		}
	}
}

// nanosleep sleeps d on this thread, without Go's timers.
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

// setTimerSlack sets this thread's timer slack (prctl PR_SET_TIMERSLACK):
// how late the kernel may wake a sleep, 50 µs by default; 0 restores it.
func setTimerSlack(ns uintptr) {
	const prSetTimerSlack = 29
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, ns, 0)
}

func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}
