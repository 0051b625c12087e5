package cell

import (
	"runtime"
	"runtime/metrics"
	"time"
)

func (s *Server) activeExpiry() {
	defer s.bg.Done()
	period := time.Second / time.Duration(s.cfg.Hz)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			if s.activeExpiryOff.Load() {
				continue
			}
			s.reap.reaped += s.ks.ExpireCycle(time.Now().Add(period/4), s.store != nil)
			s.collectAfterReaping()
		}
	}
}

// collectAfterReaping runs the garbage collector once active expiry has
// deleted many keys and the runtime has not collected since: an idle
// server allocates nothing, so without this the memory of expired keys
// would wait for the runtime's two-minute forced collection before INFO
// and RSS showed it gone.
func (s *Server) collectAfterReaping() {
	if s.reap.due(time.Now(), gcCycles) {
		runtime.GC()
	}
}

// reapedBeforeGC is how many keys active expiry deletes before it asks
// for a collection.
const reapedBeforeGC = 100_000

// reapGCDelay is how long a collection that reaping asked for waits for
// the runtime to run one of its own. A server under load collects every
// few seconds anyway; forcing one more at once cost a full mark of the
// heap (about 100 ms of CPU over a million keys) every second under
// CL.THROTTLE over a million short-lived keys.
const reapGCDelay = 5 * time.Second

// reapCollect decides when reaped keys call for a collection; the expiry
// goroutine owns it.
type reapCollect struct {
	reaped  int       // keys deleted since the last request
	pending bool      // a collection is asked for
	since   time.Time // since when
	cycles  uint64    // gcCycles then
}

// due reports whether to collect now: reapGCDelay after reapedBeforeGC
// keys were reaped, unless the runtime completed a collection meanwhile.
func (r *reapCollect) due(now time.Time, gcCycles func() uint64) bool {
	if r.reaped >= reapedBeforeGC {
		r.reaped = 0
		if !r.pending {
			r.pending, r.since, r.cycles = true, now, gcCycles()
			return false
		}
	}
	if !r.pending {
		return false
	}
	if gcCycles() != r.cycles {
		// The runtime collected: most of the reaped keys' memory went
		// with it (a cycle under way at the request may miss the last
		// ones), and a server that collects on its own soon does again.
		r.pending = false
		return false
	}
	if now.Sub(r.since) < reapGCDelay {
		return false
	}
	r.pending = false
	return true
}

// gcCycles is how many collections the runtime has completed.
func gcCycles() uint64 {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
