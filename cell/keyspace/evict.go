package keyspace

import "math/rand/v2"

// EvictOne evicts one key, sampling up to samples keys of a random shard
// (trying every shard before giving up), and returns its estimated size,
// or 0 when nothing can be evicted. volatile: only keys with a TTL;
// random: the first key sampled, else the one whose TTL ends soonest. fx
// (nil: none) logs the deletion, committed before the shard unlocks;
// its error is the store's.
func (ks *Keyspace) EvictOne(volatile, random bool, samples int, fx *Effects) (n int64, err error) {
	nshards := len(ks.dbs[0].shards)
	total := len(ks.dbs) * nshards
	start := rand.IntN(total)
	for i := 0; i < total; i++ {
		g := (start + i) % total
		db, sh := g/nshards, &ks.dbs[g/nshards].shards[g%nshards]
		sh.mu.Lock()
		sh.preserve() // snapshot.go: before a key goes
		if sh.keys.len() == 0 || volatile && sh.withTTL == 0 {
			sh.mu.Unlock()
			continue
		}
		var bestKey string
		var best *Entry
		// seen counts candidates, visited every key looked at: once one
		// candidate is found, a shard of many keys without a TTL costs a
		// bounded scan under volatile-* (before that, the scan goes on:
		// withTTL says there is one).
		seen, visited := 0, 0
		for k, e := range sh.keys.from(rand.Uint64()) {
			if visited++; visited > 32*max(samples, 1) && best != nil {
				break
			}
			if volatile && e.Exp == 0 {
				continue
			}
			if best == nil || !random && e.Exp != 0 && (best.Exp == 0 || e.Exp < best.Exp) {
				bestKey, best = k, e
			}
			if seen++; seen >= samples || random {
				break
			}
		}
		if best == nil {
			sh.mu.Unlock()
			continue
		}
		n := EntrySize(bestKey, best)
		if fx != nil {
			err = fx.persistEviction(sh, db, bestKey)
		}
		sh.deleteGone(bestKey)
		if hook := ks.expiredHook(); hook != nil {
			hook(db, []byte(bestKey)) // a replica deletes it too (journal.go)
		}
		sh.mu.Unlock()
		return n, err
	}
	return 0, nil
}

// EntrySize estimates the bytes a key and its value hold, for the measure
// between collections: the index slot, the Entry, the key and the value.
func EntrySize(key string, e *Entry) int64 {
	const overhead = 16 + 32 // index slot at its average fill, Entry
	n := int64(overhead + len(key) + e.StrCap())
	if sz, ok := e.Obj().(interface{ MemoryBytes() int }); ok {
		n += int64(sz.MemoryBytes())
	} else if !e.IsString() {
		n += 64
	}
	return n
}
