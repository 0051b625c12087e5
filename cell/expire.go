package cell

import (
	"time"

	"github.com/cellserver/cellserver/persist"
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
			s.expireCycle(time.Now().Add(period / 4))
		}
	}
}

// expireCycle runs one cycle over every shard, stopping at deadline.
func (s *Server) expireCycle(deadline time.Time) {
	for d := range s.ks.dbs {
		for i := range s.ks.dbs[d].shards {
			sh := &s.ks.dbs[d].shards[i]
			for {
				sh.mu.Lock()
				if sh.withTTL == 0 {
					sh.mu.Unlock()
					break
				}
				sampled, expired := s.ks.expireSample(sh, time.Now().UnixMilli(), d, s.expBatch)
				if expired != 0 && s.expBatch != nil {
					// Committed under the shard lock, like a command's
					// effects, so a write to the key that follows is
					// logged after this delete.
					n, err := s.store.Commit(s.expBatch)
					if err != nil {
						s.log.Error("persistence: commit failed", "err", err)
					}
					sh.lastCommit = n
				}
				sh.mu.Unlock()
				if expired*10 <= sampled || time.Now().After(deadline) {
					break
				}
			}
			if time.Now().After(deadline) {
				return
			}
		}
	}
}

// expireSample checks up to expireSample keys with a TTL, starting at a
// random place of the shard (Go randomises map iteration), and deletes the
// expired ones, adding their deletion to b (nil: no persistence). The
// shard, of database db, must be locked.
func (ks *Keyspace) expireSample(sh *Shard, now int64, db int, b *persist.Batch) (sampled, expired int) {
	seen := 0
	for k, e := range sh.keys {
		seen++
		if e.Exp != 0 {
			sampled++
			if e.expired(now) {
				if b != nil {
					if isWide(e) {
						b.DeleteKey(db, []byte(k))
					} else {
						b.Delete(db, []byte(k))
					}
				}
				ks.expire(sh, k, e)
				expired++
			}
		}
		if sampled >= expireSample || seen >= expireScanLimit {
			break
		}
	}
	return sampled, expired
}
