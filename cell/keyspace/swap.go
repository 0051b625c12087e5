package keyspace

// SwapDB swaps the contents of databases a and b (SWAPDB); every shard of
// both must be locked. Shard i of a and shard i of b own the same keys
// (placement does not depend on the database), so the swap is one of
// each pair of shards' contents; a shard's lock, order and watchers stay
// with its database. As Redis's dbSwapDatabases, it breaks the WATCHes of
// every key that exists in either database. The effect log and the
// replication journal see both databases flushed and every key of both
// written again, and the next checkpoint rewrites.
func (x *Tx) SwapDB(a, b int) {
	if a == b {
		return
	}
	ks := x.ks
	if x.fx != nil {
		x.fx.noteFlush(a)
		x.fx.noteFlush(b)
		if x.fx.store != nil {
			ks.flushed[a].Store(true)
			ks.flushed[b].Store(true)
		}
	}
	for i := range ks.dbs[a].shards {
		sa, sb := &ks.dbs[a].shards[i], &ks.dbs[b].shards[i]
		sa.touchSwapped(sb)
		sb.touchSwapped(sa)
		sa.keys.swap(&sb.keys)
		sa.withTTL, sb.withTTL = sb.withTTL, sa.withTTL
		sa.avgTTL, sb.avgTTL = sb.avgTTL, sa.avgTTL
		sa.peak, sb.peak = sb.peak, sa.peak
		sa.dirty++
		if x.fx == nil {
			continue
		}
		for _, s := range []*Shard{sa, sb} {
			db := a
			if s == sb {
				db = b
			}
			for k := range s.keys.all() {
				x.fx.noteDirty(s, db, []byte(k), false, true, false)
			}
		}
	}
}

// touchSwapped breaks the WATCHes of s's keys that exist in s or in o,
// the shard whose contents s is about to get.
func (s *Shard) touchSwapped(o *Shard) {
	for k := range s.watchers {
		if s.keys.getS(k) != nil || o.keys.getS(k) != nil {
			s.touchWatchers(k)
		}
	}
}

// swap exchanges the tables of ix and o; a checkpoint's visit of either
// (its mark) stays with the shard and starts over (moved).
func (ix *keyIndex) swap(o *keyIndex) {
	ix.tags, o.tags = o.tags, ix.tags
	ix.slots, o.slots = o.slots, ix.slots
	ix.n, o.n = o.n, ix.n
	ix.shift, o.shift = o.shift, ix.shift
	ix.moved, o.moved = true, true
	ix.publish()
	o.publish()
}
