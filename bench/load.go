package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// loadConfig is the shape of the load for one row.
type loadConfig struct {
	conns    int
	depth    int // operations per pipeline batch
	warmup   time.Duration
	duration time.Duration
}

// Phases of a run. Workers read the phase once per batch.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// loadStats is what one worker measured; each worker owns one, so the hot
// loop shares no cache line with another.
type loadStats struct {
	hist     histogram
	ops      uint64
	all      uint64 // ops of every batch, warm-up included
	errors   uint64
	firstErr string
	ioErr    error
}

// measurement is the outcome of driving one server with one workload.
type measurement struct {
	ops          uint64
	allOps       uint64 // ops completed, the warm-up's included
	elapsed      time.Duration
	hist         histogram
	errors       uint64
	firstErr     string
	serverTicks  uint64 // CPU of the server process during the measured window
	clientTicks  uint64 // CPU of this driver during the same window
	otherTicks   int64  // CPU of every other process on the machine in the window
	rss          int64  // server RSS at the end of the window
	connectFails error
}

// target is one server a load goes to and the generator of the operations
// it gets. A cluster run has one per node, each generator drawing only
// keys of that node's slots, as a cluster client routes them.
type target struct {
	addr string
	gen  generator
}

// runLoad drives the targets from cfg.conns connections, spread over them
// in turn, each keeping one batch of cfg.depth operations in flight: write
// the batch, read all its replies, repeat. Latency is per batch (one round
// trip), from before the write to the last reply read. Server CPU and RSS
// are the sums over pids.
func runLoad(targets []target, pids []int, w *workload, cfg loadConfig) (measurement, error) {
	var m measurement
	conns := make([]net.Conn, 0, cfg.conns)
	gens := make([]generator, 0, cfg.conns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range cfg.conns {
		t := targets[i%len(targets)]
		c, err := net.DialTimeout("tcp", t.addr, 5*time.Second)
		if err != nil {
			return m, fmt.Errorf("connecting to %s: %v", t.addr, err)
		}
		conns = append(conns, c)
		gens = append(gens, t.gen)
	}

	var phase atomic.Int32
	stats := make([]*loadStats, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		st := &loadStats{}
		stats[i] = st
		seed := uint64(time.Now().UnixNano()) + uint64(i)*0x9e3779b97f4a7c15
		wg.Go(func() { worker(c, w, gens[i], cfg.depth, &phase, st, seed) })
	}

	time.Sleep(cfg.warmup)
	cpu0, err0 := readCPUs(pids)
	self0, _ := readCPU(os.Getpid())
	busy0, _ := readMachineBusy()
	start := time.Now()
	phase.Store(phaseMeasure)
	time.Sleep(cfg.duration)
	phase.Store(phaseStop)
	m.elapsed = time.Since(start)
	cpu1, err1 := readCPUs(pids)
	self1, _ := readCPU(os.Getpid())
	busy1, _ := readMachineBusy()
	for _, pid := range pids {
		rss, _ := readRSS(pid)
		m.rss += rss
	}
	// A batch in flight finishes within one round trip; a stuck server
	// does not hang the run: deadlines on the sockets end it.
	for _, c := range conns {
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	wg.Wait()
	if err := errors.Join(err0, err1); err != nil {
		return m, fmt.Errorf("reading server CPU: %v", err)
	}
	m.serverTicks = cpu1 - cpu0
	m.clientTicks = self1.ticks() - self0.ticks()
	if busy1 > busy0 {
		m.otherTicks = max(0, int64(busy1-busy0)-int64(m.serverTicks)-int64(m.clientTicks))
	}
	for _, st := range stats {
		m.hist.merge(&st.hist)
		m.ops += st.ops
		m.allOps += st.all
		m.errors += st.errors
		if m.firstErr == "" {
			m.firstErr = st.firstErr
		}
		if st.ioErr != nil && m.connectFails == nil {
			m.connectFails = st.ioErr
		}
	}
	return m, nil
}

func worker(c net.Conn, w *workload, gen generator, depth int, phase *atomic.Int32, st *loadStats, seed uint64) {
	g := &genState{rng: newRand(seed)}
	rr := newReplyReader(c)
	buf := make([]byte, 0, 64<<10)
	replies := depth * w.replies
	for {
		p := phase.Load()
		if p == phaseStop {
			return
		}
		g.nowMs = time.Now().UnixMilli()
		buf = buf[:0]
		for range depth {
			buf = gen(g, buf)
		}
		t0 := time.Now()
		if _, err := c.Write(buf); err != nil {
			st.ioErr = err
			return
		}
		var errs uint64
		for range replies {
			r, err := rr.next()
			if err != nil {
				if phase.Load() != phaseStop {
					st.ioErr = err
				}
				return
			}
			if r.err != "" {
				errs++
				if st.firstErr == "" {
					st.firstErr = r.err
				}
			}
		}
		lat := time.Since(t0)
		st.all += uint64(depth)
		// A batch counts if it was sent during the measured window.
		if p == phaseMeasure {
			st.hist.record(uint64(lat))
			st.ops += uint64(depth)
			st.errors += errs
		}
	}
}

func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb))
}
