package cell

import (
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"time"
)

// Active expiry: expired keys that nobody touches must still leave memory.
// Like Redis's activeExpireCycle, each cycle samples keys that have a TTL
// in every shard, deletes the expired ones, and samples that shard again
// while more than a tenth of the sample had expired, within a time budget
// of a quarter of the cycle period. Shards without TTLs cost one check, so
// an idle server does almost nothing.

const (
	expireSample    = 20  // keys with a TTL checked per loop
	expireScanLimit = 400 // entries looked at per loop, TTL or not
	// shrinkMin is the size a shard's map must have reached before it is
	// worth rebuilding smaller.
	shrinkMin = 4096
	// reapedBeforeGC is how many keys active expiry deletes before it asks
	// for a collection.
	reapedBeforeGC = 100_000
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
			s.expireCycle(time.Now().Add(period / 4))
			s.collectAfterReaping()
		}
	}
}

// expireCycle runs one cycle over the shards, stopping at deadline. It
// starts where the previous cycle stopped, so a keyspace too big for one
// cycle's budget is still covered in turn.
func (s *Server) expireCycle(deadline time.Time) {
	n := len(s.ks.dbs) * s.ks.Shards()
	for visited := 0; visited < n; visited++ {
		idx := s.expireNext % n
		s.expireNext = idx + 1
		sh := &s.ks.dbs[idx/s.ks.Shards()].shards[idx%s.ks.Shards()]
		// The sample grows while nearly all of it had expired, so a mass
		// expiry is reaped in big bites rather than 20 keys per lock.
		want := expireSample
		for {
			// A shard a running script holds is skipped rather than
			// waited for: the script may run for seconds.
			if sh.script.Load() != nil {
				if !sh.mu.TryLock() {
					break
				}
			} else {
				sh.mu.Lock()
			}
			if sh.withTTL == 0 {
				sh.shrink()
				sh.mu.Unlock()
				break
			}
			sampled, expired := s.ks.expireSample(sh, time.Now().UnixMilli(), want, s.store != nil)
			if expired*10 <= sampled {
				sh.shrink()
			}
			sh.mu.Unlock()
			s.reap.reaped += expired
			if expired*10 >= sampled*9 && want < expireScanLimit {
				want *= 2
			}
			if expired*10 <= sampled || time.Now().After(deadline) {
				break
			}
		}
		if time.Now().After(deadline) {
			return
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

// shrink rebuilds the shard's index once it holds far fewer keys than it
// once did, so that a burst of keys that expired does not hold its memory
// for good. The shard must be locked.
func (sh *Shard) shrink() {
	n := sh.keys.len()
	if n > sh.peak {
		sh.peak = n
		return
	}
	if sh.peak < shrinkMin || n > sh.peak/4 {
		return
	}
	sh.keys.compact()
	sh.peak = n
}

// expireSample checks up to want keys with a TTL, starting at a
// random slot of the shard's index, and deletes the expired ones, noting
// them for the snapshot when persisted (noteExpired). The shard must be
// locked.
func (ks *Keyspace) expireSample(sh *Shard, now int64, want int, persisted bool) (sampled, expired int) {
	seen := 0
	for k, e := range sh.keys.from(rand.Uint64()) {
		seen++
		if e.Exp != 0 {
			sampled++
			if e.expired(now) {
				if persisted {
					sh.noteExpired([]byte(k), e)
				}
				ks.expire(sh, k, e)
				expired++
			}
		}
		if sampled >= want || seen >= expireScanLimit {
			break
		}
	}
	return sampled, expired
}
