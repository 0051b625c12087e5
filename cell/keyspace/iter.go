package keyspace

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/cellserver/cellserver/cell/hashslot"
)

// Whole-database reads: KEYS, RANDOMKEY, DBSIZE, the cluster's per-slot
// commands, INFO's and the metrics' counts, and WATCH. Where a method says
// the shards must be locked, the server's dispatch holds them (a LockSet
// of the database, or of every database); the others take each shard's
// lock in turn, for figures that need not be consistent across shards.

// DBSize is the number of keys of db, expired ones not yet reaped
// included, as Redis counts them. db's shards must be locked.
func (ks *Keyspace) DBSize(db int) int {
	n := 0
	for i := range ks.dbs[db].shards {
		n += ks.dbs[db].shards[i].keys.len()
	}
	return n
}

// CountKeys is DBSize taking each shard's lock in turn.
func (ks *Keyspace) CountKeys(db int) int {
	n := 0
	for i := range ks.dbs[db].shards {
		sh := &ks.dbs[db].shards[i]
		sh.mu.Lock()
		n += sh.keys.len()
		sh.mu.Unlock()
	}
	return n
}

// Counts are a database's figures for INFO and the metrics.
type Counts struct {
	Keys    int   // keys, expired ones not yet reaped included
	Expires int   // keys with an expiry
	Dirty   int64 // writes since start (Redis's server.dirty)
	Expired int64 // keys expired since start
	// AvgTTL is the expiry cycle's estimate of the remaining TTL of the
	// keys with one, in ms (INFO keyspace's avg_ttl; 0: none sampled).
	AvgTTL int64
}

// Counts sums db's figures. lock: take each shard's lock in turn; else
// the caller holds them.
func (ks *Keyspace) Counts(db int, lock bool) Counts {
	var c Counts
	var ttlSum, ttlKeys float64
	for i := range ks.dbs[db].shards {
		sh := &ks.dbs[db].shards[i]
		if lock {
			sh.mu.Lock()
		}
		c.Keys += sh.keys.len()
		c.Expires += sh.withTTL
		c.Dirty += sh.dirty
		c.Expired += sh.expired
		if sh.avgTTL > 0 {
			ttlSum += float64(sh.avgTTL) * float64(sh.withTTL)
			ttlKeys += float64(sh.withTTL)
		}
		if lock {
			sh.mu.Unlock()
		}
	}
	if ttlKeys > 0 {
		c.AvgTTL = int64(ttlSum / ttlKeys)
	}
	return c
}

// Dirty is the writes since start over every database (Redis's
// server.dirty), one shard lock at a time.
func (ks *Keyspace) Dirty() int64 {
	var n int64
	for d := range ks.dbs {
		n += ks.Counts(d, true).Dirty
	}
	return n
}

// RandomKey picks a live key of the execution's database at random: a
// shard with probability by its size, then the first key at or after a
// random slot of its index. Expired keys met on the way are deleted, as
// Redis does, until a live one turns up. ok is false when the database is
// empty. Its shards must be locked.
func (x *Tx) RandomKey() (key string, ok bool) {
	shards := x.ks.dbs[x.db].shards
	for {
		total := 0
		for i := range shards {
			total += shards[i].keys.len()
		}
		if total == 0 {
			return "", false
		}
		r := rand.IntN(total)
		var s *Shard
		for i := range shards {
			if r < shards[i].keys.len() {
				s = &shards[i]
				break
			}
			r -= shards[i].keys.len()
		}
		for k := range s.keys.from(rand.Uint64()) {
			if x.Lookup([]byte(k)) != nil {
				return k, true
			}
			break
		}
	}
}

// slotShard is the shard of database 0 that holds slot's keys (in cluster
// mode keys are placed by slot).
func (ks *Keyspace) slotShard(slot int) *Shard {
	return &ks.dbs[0].shards[uint64(slot)&ks.mask]
}

// CountKeysInSlot counts slot's keys in database 0, expired ones not yet
// reaped included, as Redis's per-slot count does. It takes the shard's
// lock.
func (ks *Keyspace) CountKeysInSlot(slot int) int {
	s := ks.slotShard(slot)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k := range s.keys.all() {
		if hashslot.Of([]byte(k)) == slot {
			n++
		}
	}
	return n
}

// KeysInSlot lists up to count of slot's keys in database 0, as
// GETKEYSINSLOT, expired ones not yet reaped included. It takes the
// shard's lock.
func (ks *Keyspace) KeysInSlot(slot, count int) []string {
	s := ks.slotShard(slot)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.keys.all() {
		if len(out) >= count {
			break
		}
		if hashslot.Of([]byte(k)) == slot {
			out = append(out, k)
		}
	}
	return out
}

// Exists reports whether db's key is live at now. Its shard must be locked.
func (ks *Keyspace) Exists(db int, key []byte, now int64) bool {
	e := ks.shardOf(db, key).keys.get(key)
	return e != nil && !e.Expired(now)
}

// ExistsLocking is Exists taking the shard's lock for the look.
func (ks *Keyspace) ExistsLocking(db int, key []byte, now int64) bool {
	sh := ks.shardOf(db, key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.keys.get(key)
	return e != nil && !e.Expired(now)
}

// Watch makes every later change of db's key, and its expiry or
// eviction, set dirty (a WATCHing client's flag), and reports whether the
// key exists but has expired at now. Its shard must be locked.
func (ks *Keyspace) Watch(db int, key []byte, dirty *atomic.Bool, now int64) (expired bool) {
	s := ks.shardOf(db, key)
	e := s.keys.get(key)
	if s.watchers == nil {
		s.watchers = map[string][]*atomic.Bool{}
	}
	s.watchers[string(key)] = append(s.watchers[string(key)], dirty)
	return e != nil && e.Expired(now)
}

// Unwatch undoes Watch, taking the shard's lock.
func (ks *Keyspace) Unwatch(db int, key string, dirty *atomic.Bool) {
	s := ks.shardOf(db, []byte(key))
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.watchers[key]
	for i, other := range list {
		if other == dirty {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(s.watchers, key)
	} else {
		s.watchers[key] = list
	}
}

// ExpiredAt reports whether db's key exists but has expired at now. Its
// shard must be locked.
func (ks *Keyspace) ExpiredAt(db int, key string, now int64) bool {
	e := ks.shardOf(db, []byte(key)).keys.getS(key)
	return e != nil && e.Expired(now)
}

// AllShards lists every shard of every database, for a LockSet or a
// script that may touch any key.
func (ks *Keyspace) AllShards() []*Shard {
	var all []*Shard
	for d := range ks.dbs {
		for i := range ks.dbs[d].shards {
			all = append(all, &ks.dbs[d].shards[i])
		}
	}
	return all
}
