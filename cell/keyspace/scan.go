package keyspace

import "math/bits"

// SCAN's cursor is a position in a database: a shard, and a key hash
// within that shard's index (keyIndex.scan). With S = 2^b shards, cursor
// c names shard c&(S-1) and hash c>>b: the keys of that shard whose index
// hash is at or above it are still to come, then every key of the shards
// after it. A walk takes keys in that order and stops at a hash boundary,
// where the next one starts. A key's hash never changes while the server
// runs, so a key present from the first step to the last is met exactly
// once, whatever is added, deleted, grown or shrunk meanwhile, also
// between steps (keys added or deleted during the walk may or may not be
// met, as in Redis, whose reverse-binary cursor promises at least once).
// Cursor 0 starts and ends a walk. Index hashes have 32 bits, so cursors
// stay below 2^(32+b): below 2^53 for up to 2^21 shards a database, so
// clients and scripts that keep them as doubles (JavaScript, Lua) do not
// corrupt them.
//
// A step costs about the keys it yields, whatever the shard's size, and
// needs only its own shard locked: SCAN and KEYS lock one shard per step,
// so that other clients get in between steps.

// Scan is a walk over a database's keys in cursor order, a step at a time.
type Scan struct {
	ks    *Keyspace
	db    int
	shard uint64 // the shard the next step walks; past the last: done
	from  uint64 // the hash it starts from
	bits  uint   // b: log2 of the shards a database
}

// StartScan starts a walk of db at cursor (0: the beginning).
func (ks *Keyspace) StartScan(db int, cursor uint64) Scan {
	b := uint(bits.OnesCount64(ks.mask))
	return Scan{ks: ks, db: db, shard: cursor & ks.mask, from: cursor >> b, bits: b}
}

// Done reports whether the walk has met every shard.
func (sc *Scan) Done() bool { return sc.shard > sc.ks.mask }

// Shard is the shard the next step walks: lock it around Step.
func (sc *Scan) Shard() *Shard { return &sc.ks.dbs[sc.db].shards[sc.shard] }

// Step yields the keys of the next stretch of the walk, about want of
// them (at least want, unless the walk ends; a few more where the index
// has no empty slot to stop at), expired ones included, and returns how
// many it yielded. Only Shard() need be locked; yield must not change
// the keyspace.
func (sc *Scan) Step(want int, yield func(key string, e *Entry)) int {
	n := 0
	sc.from = sc.Shard().keys.scan(sc.from, want, func(e *Entry) {
		yield(e.Key(), e)
		n++
	})
	if sc.from >= hashEnd { // this shard is done: on to the next one, or the end
		sc.shard, sc.from = sc.shard+1, 0
	}
	return n
}

// Cursor is the cursor that resumes the walk: 0 once it is done.
func (sc *Scan) Cursor() uint64 {
	if sc.Done() {
		return 0
	}
	return sc.from<<sc.bits | sc.shard
}
