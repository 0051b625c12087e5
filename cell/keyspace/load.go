package keyspace

import (
	"unsafe"

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

// LoadEntry stores v, an Entry made outside the keyspace, under db's key
// while loading (an RDB file), and reports false, storing nothing, when
// the key is there already: a file listing a key twice is corrupt.
func (ks *Keyspace) LoadEntry(db int, key []byte, v *Entry) bool {
	return ks.LoadAdd(ks.LoadMake(db, key, v))
}

// Staged is a key a load made (LoadMake) and has yet to add (LoadAdd).
type Staged struct {
	sh *Shard
	e  *Entry
}

// Key is the staged key.
func (st Staged) Key() string { return st.e.Key() }

// LoadMake makes the entry of db's key holding v's value and expiry, not
// yet in the index, and asks the CPU for the index's lines where LoadAdd
// will look for it. On a keyspace larger than the cache, each key's
// probe and insert otherwise wait for those lines in turn: a third of
// the CPU of loading a million keys went there. A loader that makes a
// few keys ahead of adding them (cell's RDB load) has those lines in
// cache by then.
func (ks *Keyspace) LoadMake(db int, key []byte, v *Entry) Staged {
	sh, h := ks.locate(db, key)
	e := adopted(h, key, v)
	e.Exp = v.Exp
	sh.keys.prefetchHome(h)
	return Staged{sh, e}
}

// LoadAdd puts the key st into the index while loading, and reports
// false, storing nothing, when the key is there already.
func (ks *Keyspace) LoadAdd(st Staged) bool {
	sh, e := st.sh, st.e
	key := e.Key()
	if sh.keys.n != 0 && sh.keys.find(e.hash, unsafe.Slice(unsafe.StringData(key), len(key))) >= 0 {
		return false
	}
	sh.keys.insert(e)
	if e.Exp != 0 {
		sh.withTTL++
	}
	return true
}

// PutBase writes e, which LoadEntry stored under db's key, whole into w,
// a rewrite's new base: a load that makes the keyspace durable writes each
// key while it is in cache, instead of a rewrite's second pass over the
// whole keyspace (Visit), a cache miss per key.
func PutBase(w *persist.BaseWriter, db int, key []byte, e *Entry) { putWhole(w, db, key, e) }

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

// Aggregate is a sorted set, hash or list that a record changed in place.
type Aggregate interface{ Len() int }

// ReplayDropEmpty deletes db's key if it still holds v and v is empty: a
// record lists a value's changes in order, so it may be empty in the
// middle of one, never at its end (the execution would have deleted it),
// unless the record's head met a key that a later record deletes.
func (ks *Keyspace) ReplayDropEmpty(db int, key string, v Aggregate) {
	if v.Len() != 0 {
		return
	}
	sh := ks.shardOf(db, []byte(key))
	if e := sh.keys.getS(key); e != nil && e.Obj() == any(v) {
		sh.drop(key)
		sh.noteChanged([]byte(key), nil, isWide(e))
	}
}

// Revive puts back db's key, a value loading found expired that the log
// changes in place, from its stored form v, and reports whether it could.
func (ks *Keyspace) Revive(db int, key []byte, v persist.Value, cfg zsetlite.Config) bool {
	return ks.LoadPut(db, key, v, cfg)
}

// Replay applies one effect of the log, other than a FLUSHDB (ReplayFlush),
// to the keyspace. It returns the sorted set, hash or list a change in
// place (a head, a member, a field, a position) changed, and false for an
// effect it skipped (a value of an unknown type).
func (ks *Keyspace) Replay(e *persist.Effect, cfg zsetlite.Config) (Aggregate, bool) {
	sh := ks.shardOf(e.DB, e.Key)
	old := sh.keys.get(e.Key)
	switch e.Kind {
	case persist.EffectPatch, persist.EffectPutField, persist.EffectDeleteField,
		persist.EffectListSpan, persist.EffectListSet:
		return replayDelta(sh, old, e), true
	case persist.EffectDelete:
		if old != nil {
			wide := isWide(old)
			sh.drop(string(e.Key))
			sh.noteChanged(e.Key, nil, wide)
		}
		return nil, true
	case persist.EffectPut:
		if k := e.Value.Kind; k == persist.KindHashHead || k == persist.KindListHead {
			return replayDelta(sh, old, e), true
		}
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

// replayDelta applies a change in place of a string, hash or list to the
// key's entry old in sh (nil: none), and returns the hash or list it
// changed.
func replayDelta(sh *Shard, old *Entry, e *persist.Effect) Aggregate {
	ent, obj := applyDelta(old, e)
	exp, hasExp := deltaExp(e)
	if ent != old {
		wide := isWide(old)
		if old != nil {
			sh.drop(string(e.Key))
		}
		if hasExp {
			ent.Exp = exp
		}
		ent = sh.adopt(e.Key, ent)
		sh.noteChanged(e.Key, ent, wide)
		return obj
	}
	if hasExp {
		sh.setExp(ent, exp)
	}
	sh.noteChanged(e.Key, ent, false)
	return obj
}

// deltaExp is the expiry a change in place gives its key: a head's or a
// patch's.
func deltaExp(e *persist.Effect) (int64, bool) {
	return e.Value.Exp, e.Kind == persist.EffectPatch || e.Kind == persist.EffectPut
}

// applyDelta applies a change in place of a string, hash or list to the
// entry ent (nil: no key), in place when ent holds a value of the kind
// the change is for, else to a new entry in its stead (an empty value,
// with no expiry), which it returns with the hash or list changed. An
// entry it makes is in no shard: the caller adopts it. The expiry is the
// caller's to set (deltaExp).
func applyDelta(ent *Entry, e *persist.Effect) (*Entry, Aggregate) {
	switch e.Kind {
	case persist.EffectPatch:
		if ent == nil || !ent.IsString() {
			ent = &Entry{}
			ent.SetStr(nil)
		}
		ent.SetStr(patchString(ent.MutableStr(), e.Len, e.Pos, e.Data))
		ent.SetStrEnc(EncRaw) // APPEND's and SETRANGE's
		return ent, nil
	case persist.EffectPutField, persist.EffectDeleteField:
		ent, h := replayObj(ent, NewHash)
		if e.Kind == persist.EffectPutField {
			h.Set(e.Member, e.Data)
		} else {
			h.Delete(e.Member)
		}
		return ent, h
	case persist.EffectListSpan, persist.EffectListSet:
		ent, l := replayObj(ent, NewList)
		if e.Kind == persist.EffectListSet {
			l.setAt(e.Pos, e.Data)
		} else if e.Len <= 1<<32 { // past that, a record no server wrote
			l.setSpan(e.Pos, int(e.Len))
		}
		return ent, l
	case persist.EffectPut:
		if e.Value.Kind == persist.KindHashHead {
			return replayObj(ent, NewHash)
		}
		return replayObj(ent, NewList)
	}
	return ent, nil
}

// replayObj returns the value of type T that ent holds, or a new entry
// holding a new one (mk's) when ent holds anything else or is nil.
func replayObj[T Aggregate](ent *Entry, mk func() T) (*Entry, T) {
	if ent != nil {
		if v, ok := ent.Obj().(T); ok {
			return ent, v
		}
	}
	v := mk()
	ent = &Entry{}
	ent.SetObj(v)
	return ent, v
}

// ReplayStored applies a change in place of a string, hash or list (not
// a sorted set's) to enc, a key's stored form (nil: no key), and returns
// the new stored form, nil when the key holds an empty value (a head over
// nothing, which a later record deletes or replaces). It costs the
// value's size: it is for the keys of databases the server does not
// serve.
func ReplayStored(enc []byte, e *persist.Effect, cfg zsetlite.Config) []byte {
	var ent *Entry
	if enc != nil {
		if v, err := persist.Decode(enc); err == nil {
			ent, _ = entryFromStored(v, cfg)
		}
	}
	ent, obj := applyDelta(ent, e)
	if exp, ok := deltaExp(e); ok {
		ent.Exp = exp
	}
	if obj != nil && obj.Len() == 0 {
		return nil
	}
	if v, ok := ent.Obj().(storedValue); ok {
		return v.appendStored(nil, ent.Exp)
	}
	return persist.AppendString(nil, ent.Exp, ent.StrBytes())
}
