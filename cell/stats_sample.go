package cell

import (
	"math"
	"sync/atomic"
	"time"
)

// INFO's connection counters (total_net_input_bytes, keyspace_hits, ...)
// are kept per client, written by the client alone, and summed when read:
// a command writes no cache line another core writes. The instantaneous_*
// rates are Redis's: every 100 ms a sampler takes the totals, and a rate
// is the mean of the last 16 samples' rates (trackInstantaneousMetric).

// connCounts are per-connection totals summed over clients.
type connCounts struct {
	netIn, netOut, hits, misses atomic.Int64
}

// connTotals is a plain snapshot of the sums.
type connTotals struct {
	cmds, netIn, netOut, hits, misses int64
}

// rawTotals sums every client's counters and those of the clients that
// have gone, since start (RESETSTAT does not change them).
func (s *Server) rawTotals() connTotals {
	st := &s.stats
	t := connTotals{
		cmds:   st.closedCommands.Load(),
		netIn:  st.closed.netIn.Load(),
		netOut: st.closed.netOut.Load(),
		hits:   st.closed.hits.Load(),
		misses: st.closed.misses.Load(),
	}
	s.mu.Lock()
	for _, c := range s.clients {
		t.cmds += c.ncmds.Load()
		t.netIn += c.netIn.Load()
		t.netOut += c.netOut.Load()
		t.hits += c.hits.Load()
		t.misses += c.misses.Load()
	}
	s.mu.Unlock()
	return t
}

// connStats is what INFO shows: the totals since the last RESETSTAT.
func (s *Server) connStats() connTotals {
	t := s.rawTotals()
	b := &s.stats.base
	t.netIn -= b.netIn.Load()
	t.netOut -= b.netOut.Load()
	t.hits -= b.hits.Load()
	t.misses -= b.misses.Load()
	return t
}

// resetConnStats is RESETSTAT's part: the totals now become the base.
func (s *Server) resetConnStats() {
	t := s.rawTotals()
	b := &s.stats.base
	b.netIn.Store(t.netIn)
	b.netOut.Store(t.netOut)
	b.hits.Store(t.hits)
	b.misses.Store(t.misses)
}

// statsSamples and statsSamplePeriod are Redis's STATS_METRIC_SAMPLES and
// the 100 ms period at which serverCron tracks them.
const (
	statsSamples      = 16
	statsSamplePeriod = 100 * time.Millisecond
)

// instantRates are the rates INFO reads, as float64 bits.
type instantRates struct {
	ops, inKbps, outKbps atomic.Uint64
}

// rateTracker is one metric's samples (Redis's inst_metric).
type rateTracker struct {
	last    int64
	lastT   time.Time
	samples [statsSamples]float64
	idx     int
}

// add records the rate since the last sample and returns the mean.
func (r *rateTracker) add(now time.Time, v int64) float64 {
	if !r.lastT.IsZero() {
		if dt := now.Sub(r.lastT); dt > 0 {
			r.samples[r.idx] = float64(v-r.last) / dt.Seconds()
			r.idx = (r.idx + 1) % statsSamples
		}
	}
	r.last, r.lastT = v, now
	sum := 0.0
	for _, x := range r.samples {
		sum += x
	}
	return sum / statsSamples
}

// sampleStats runs the sampler until the server stops.
func (s *Server) sampleStats() {
	defer s.bg.Done()
	t := time.NewTicker(statsSamplePeriod)
	defer t.Stop()
	var ops, in, out rateTracker
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			tot := s.rawTotals()
			r := &s.stats.inst
			r.ops.Store(math.Float64bits(ops.add(now, tot.cmds)))
			r.inKbps.Store(math.Float64bits(in.add(now, tot.netIn) / 1024))
			r.outKbps.Store(math.Float64bits(out.add(now, tot.netOut) / 1024))
		}
	}
}

func loadRate(v *atomic.Uint64) float64 { return math.Float64frombits(v.Load()) }
