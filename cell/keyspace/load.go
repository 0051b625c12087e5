package keyspace

import (
	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/zsetlite"
)

// Loading: the server's start (loadStore and the log's replay, in the
// server) rebuilds the keyspace through these before it serves, so they
// take no locks and check no expiry. What the replay applies is marked
// for the next checkpoint, as a live write is, so that the checkpoint
// after a replay folds it into the snapshot and the log can be dropped.

// Loaded reports whether db's key is in the keyspace, expired or not.
func (ks *Keyspace) Loaded(db int, key []byte) bool {
	return ks.shardOf(db, key).keys.get(key) != nil
}

// LoadDrop deletes db's key, a state a later record replaces, and reports
// whether it was there.
func (ks *Keyspace) LoadDrop(db int, key []byte) bool {
	sh := ks.shardOf(db, key)
	if sh.keys.get(key) == nil {
		return false
	}
	sh.drop(string(key))
	return true
}

// LoadPut stores db's key from its stored form v, the key being absent;
// false: v is of a type this build does not know. A set Load gathered from
// member records stays stored that way (v.Wide).
func (ks *Keyspace) LoadPut(db int, key []byte, v persist.Value, cfg zsetlite.Config) bool {
	e, ok := entryFromLoaded(db, key, v, cfg)
	if ok {
		ks.shardOf(db, key).adopt(key, e)
	}
	return ok
}

// Reserve sizes db's shards for n keys in all, before a load: it spares the
// rehashing of indexes grown one doubling at a time.
func (ks *Keyspace) Reserve(db, n int) {
	shards := ks.dbs[db].shards
	per := n/len(shards) + n/(8*len(shards)) + 1
	for i := range shards {
		shards[i].keys.reserve(per)
	}
}

// ValueFromStored decodes a stored value into the aggregate it holds
// (nil: a string, or a type this build does not know).
func ValueFromStored(v persist.Value, cfg zsetlite.Config) (obj any, exp int64) {
	e, ok := entryFromStored(v, cfg)
	if !ok {
		return nil, 0
	}
	return e.Obj(), e.Exp
}

// NewZSet returns an empty sorted set with the thresholds cfg.
func NewZSet(cfg zsetlite.Config) *ZSet { return newZSet(cfg) }

// Stored appends the encoding of the set with expiry exp to dst.
func (z *ZSet) Stored(dst []byte, exp int64) []byte { return z.appendStored(dst, exp) }

// ReplayFlush empties db, a FLUSHDB the log holds.
func (ks *Keyspace) ReplayFlush(db int) {
	for i := range ks.dbs[db].shards {
		sh := &ks.dbs[db].shards[i]
		sh.keys.reset()
		sh.withTTL, sh.unsaved = 0, 0
	}
	ks.flushed[db].Store(true)
}

// ReplayDropEmpty deletes db's key if it still holds z and z is empty: a
// record lists a set's changes in order, so a set may be empty in the
// middle of one, never at its end (the execution would have deleted it).
func (ks *Keyspace) ReplayDropEmpty(db int, key string, z *ZSet) {
	if z.Len() != 0 {
		return
	}
	sh := ks.shardOf(db, []byte(key))
	if e := sh.keys.getS(key); e != nil && e.Obj() == any(z) {
		sh.drop(key)
		sh.noteChanged([]byte(key), nil, isWide(e))
	}
}

// Revive puts back db's key, a sorted set loading found expired, from its
// stored form v, and reports whether it could.
func (ks *Keyspace) Revive(db int, key []byte, v persist.Value, cfg zsetlite.Config) bool {
	return ks.LoadPut(db, key, v, cfg)
}

// Replay applies one effect of the log, other than a FLUSHDB (ReplayFlush),
// to the keyspace. It returns the sorted set a set effect (a head or a
// member) changed, and false for an effect it skipped (a value of an
// unknown type).
func (ks *Keyspace) Replay(e *persist.Effect, cfg zsetlite.Config) (*ZSet, bool) {
	sh := ks.shardOf(e.DB, e.Key)
	old := sh.keys.get(e.Key)
	switch e.Kind {
	case persist.EffectDelete:
		if old != nil {
			wide := isWide(old)
			sh.drop(string(e.Key))
			sh.noteChanged(e.Key, nil, wide)
		}
		return nil, true
	case persist.EffectPut:
		if e.Value.Kind == persist.KindZSetWide {
			ent, z := replayZSet(sh, e.Key, old, cfg)
			sh.setExp(ent, e.Value.Exp)
			sh.noteChanged(e.Key, ent, false)
			return z, true
		}
		if e.Value.Kind == persist.KindInt && old != nil && old.IsString() {
			// An integer over a string or an integer (a counter, a
			// CL.THROTTLE state) changes the entry in place: replaying
			// a log of a million such keys spent most of its time
			// removing each entry from the index and inserting a new one.
			old.SetInt(e.Value.Int)
			old.enc &= encUnsaved // "int", as adopt would make it
			sh.setExp(old, e.Value.Exp)
			sh.noteChanged(e.Key, old, false)
			return nil, true
		}
		v, ok := entryFromStored(e.Value, cfg)
		if !ok {
			return nil, false
		}
		wide := isWide(old)
		if old != nil {
			sh.drop(string(e.Key))
		}
		sh.noteChanged(e.Key, sh.adopt(e.Key, v), wide)
		return nil, true
	case persist.EffectPutMember, persist.EffectDeleteMember:
		ent, z := replayZSet(sh, e.Key, old, cfg)
		if e.Kind == persist.EffectPutMember {
			z.Put(e.Member, e.Score)
		} else {
			z.Delete(e.Member)
		}
		sh.noteChanged(e.Key, ent, false)
		return z, true
	}
	return nil, false
}

// replayZSet returns key's sorted set, making an empty one (with no
// expiry) in place of whatever else the key held.
func replayZSet(sh *Shard, key []byte, old *Entry, cfg zsetlite.Config) (*Entry, *ZSet) {
	if old != nil {
		if z, ok := old.Obj().(*ZSet); ok {
			return old, z
		}
		sh.drop(string(key))
	}
	z := newZSet(cfg)
	v := &Entry{}
	v.SetObj(z)
	return sh.adopt(key, v), z
}
