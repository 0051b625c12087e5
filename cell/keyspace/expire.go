package keyspace

import (
	"math/rand/v2"
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
)

// ExpireCycle runs one cycle over the shards, stopping at deadline, and
// returns how many keys it deleted. It starts where the previous cycle
// stopped, so a keyspace too big for one cycle's budget is still covered
// in turn; one goroutine runs the cycles. persisted: deletions are noted
// for the next checkpoint.
func (ks *Keyspace) ExpireCycle(deadline time.Time, persisted bool) (reaped int) {
	n := len(ks.dbs) * ks.Shards()
	for visited := 0; visited < n; visited++ {
		idx := ks.expireNext % n
		ks.expireNext = idx + 1
		sh := &ks.dbs[idx/ks.Shards()].shards[idx%ks.Shards()]
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
			sh.preserve() // snapshot.go: before a key goes
			if sh.withTTL == 0 {
				sh.avgTTL = 0
				sh.shrink()
				sh.mu.Unlock()
				break
			}
			sampled, expired := ks.expireSample(sh, idx/ks.Shards(), time.Now().UnixMilli(), want, persisted)
			if expired*10 <= sampled {
				sh.shrink()
			}
			sh.mu.Unlock()
			reaped += expired
			if expired*10 >= sampled*9 && want < expireScanLimit {
				want *= 2
			}
			if expired*10 <= sampled || time.Now().After(deadline) {
				break
			}
		}
		if time.Now().After(deadline) {
			return reaped
		}
	}
	return reaped
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
func (ks *Keyspace) expireSample(sh *Shard, db int, now int64, want int, persisted bool) (sampled, expired int) {
	hook := ks.expiredHook()
	seen := 0
	var ttlSum, ttlN int64
	for k, e := range sh.keys.from(rand.Uint64()) {
		seen++
		if e.Exp != 0 {
			sampled++
			if e.Expired(now) {
				if persisted {
					sh.noteExpired([]byte(k), e)
				}
				ks.expire(sh, k, e)
				if hook != nil {
					hook(db, []byte(k))
				}
				expired++
			} else {
				ttlSum += e.Exp - now
				ttlN++
			}
		}
		if sampled >= want || seen >= expireScanLimit {
			break
		}
	}
	if ttlN > 0 {
		// Redis's running average: each sample weighs a fiftieth.
		avg := ttlSum / ttlN
		if sh.avgTTL == 0 {
			sh.avgTTL = avg
		} else {
			sh.avgTTL = sh.avgTTL/50*49 + avg/50
		}
	}
	return sampled, expired
}
