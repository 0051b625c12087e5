package cell

import (
	"fmt"

	"github.com/cellserver/cellserver/persist"
)

// Replaying the effect log at start, over the snapshot loadStore loaded.
//
// Each effect sets the state of one key, one sorted-set member or one
// database (persist/effect.go); none runs a command or reads a clock.
// Every change is noted for the next checkpoint as a live write is
// (checkpoint.go), so that the checkpoint the server runs after a replay
// folds it into the snapshot and the log can be dropped.

// replayLog applies the effect log and reports how many records it read,
// and how many it skipped as corrupt.
func (s *Server) replayLog() (records, bad int, err error) {
	var skipped int
	var sets []replayedSet // sorted sets the current record changed
	records, bad, err = s.store.Replay(func(e *persist.Effect) error {
		if e.Kind == persist.EffectEnd {
			s.dropEmptySets(sets)
			sets = sets[:0]
			s.dropEmptyForeignSets()
			return nil
		}
		if e.DB < 0 {
			skipped++
			return nil
		}
		if e.DB >= len(s.ks.dbs) {
			s.replayForeign(e)
			return nil
		}
		z, ok := s.applyEffect(e)
		if !ok {
			skipped++
		}
		if z != nil {
			sets = append(sets, replayedSet{e.DB, string(e.Key), z})
		}
		return nil
	})
	s.sealForeignSets()
	if skipped > 0 || bad > 0 {
		s.log.Warn("persistence: log effects skipped (unknown types or corrupt records)",
			"effects", skipped, "records", bad)
	}
	return records, bad, err
}

// replayForeign applies an effect on a database beyond --databases to
// the keys keepForeign holds for it, so that they stay what the log says
// (a server started with fewer databases after a crash would otherwise
// drop the log's changes to them with the log). The checkpoint after the
// replay then rewrites, which is what writes those keys (writeForeign).
// A sorted set the log changes is kept decoded in foreignSets until the
// replay ends (sealForeignSets), so that a window's thousand member
// effects cost a thousand updates, not a thousand decodings.
func (s *Server) replayForeign(e *persist.Effect) {
	s.ckptFull = true
	if s.foreign == nil {
		s.foreign = map[dbKey][]byte{}
	}
	id := dbKey{e.DB, string(e.Key)}
	switch e.Kind {
	case persist.EffectFlushDB:
		for k := range s.foreign {
			if k.db == e.DB {
				delete(s.foreign, k)
			}
		}
		for k := range s.foreignSets {
			if k.db == e.DB {
				delete(s.foreignSets, k)
			}
		}
	case persist.EffectDelete:
		s.dropForeign(id)
	case persist.EffectPut:
		if e.Value.Kind != persist.KindZSetWide {
			delete(s.foreignSets, id)
			s.foreign[id] = persist.AppendValue(nil, e.Value)
			return
		}
		f := s.foreignZSet(id)
		f.exp = e.Value.Exp
		s.noteForeignEmpty(id, f)
	case persist.EffectPutMember, persist.EffectDeleteMember:
		f := s.foreignZSet(id)
		if e.Kind == persist.EffectPutMember {
			f.z.Put(e.Member, e.Score)
		} else {
			f.z.Delete(e.Member)
		}
		s.noteForeignEmpty(id, f)
	}
}

// foreignSet is a sorted set of a database beyond --databases that the
// log changes, decoded, and its expiry.
type foreignSet struct {
	z   *ZSet
	exp int64
}

// foreignZSet returns the sorted set keepForeign holds under id, decoded
// once per replay: an empty set with no expiry in place of anything else,
// as replayZSet.
func (s *Server) foreignZSet(id dbKey) *foreignSet {
	if f, ok := s.foreignSets[id]; ok {
		return f
	}
	f := &foreignSet{z: newZSet(s.zsetConfig())}
	if b, ok := s.foreign[id]; ok {
		if v, err := persist.Decode(b); err == nil {
			if e, ok := s.entryFromStored(v); ok {
				if z, ok := e.obj().(*ZSet); ok {
					f.z, f.exp = z, e.Exp
				}
			}
		}
	}
	if s.foreignSets == nil {
		s.foreignSets = map[dbKey]*foreignSet{}
	}
	s.foreignSets[id] = f
	return f
}

// noteForeignEmpty lists f to be dropped at the record's end if it is
// empty then (dropEmptyForeignSets).
func (s *Server) noteForeignEmpty(id dbKey, f *foreignSet) {
	if f.z.Len() == 0 {
		s.foreignEmpty = append(s.foreignEmpty, id)
	}
}

// dropForeign forgets the key id of a database beyond --databases.
func (s *Server) dropForeign(id dbKey) {
	delete(s.foreign, id)
	delete(s.foreignSets, id)
}

// dropEmptyForeignSets is dropEmptySets for the sets of replayForeign.
func (s *Server) dropEmptyForeignSets() {
	for _, id := range s.foreignEmpty {
		if f, ok := s.foreignSets[id]; ok && f.z.Len() == 0 {
			s.dropForeign(id)
		}
	}
	s.foreignEmpty = s.foreignEmpty[:0]
}

// sealForeignSets encodes the sets replayForeign changed back into
// s.foreign, where writeForeign finds them, once the replay is over.
func (s *Server) sealForeignSets() {
	for id, f := range s.foreignSets {
		s.foreign[id] = f.z.appendStored(nil, f.exp)
	}
	s.foreignSets = nil
}

// replayedSet is a sorted set a record changed in place.
type replayedSet struct {
	db  int
	key string
	z   *ZSet
}

// dropEmptySets deletes the sets of the list that a record left empty: a
// record lists a set's changes in order, so a set may be empty in the
// middle of one, never at its end (the execution would have deleted it).
func (s *Server) dropEmptySets(sets []replayedSet) {
	for _, r := range sets {
		if r.z.Len() != 0 {
			continue
		}
		sh := s.ks.shardOf(r.db, []byte(r.key))
		if e := sh.keys.getS(r.key); e != nil && e.obj() == any(r.z) {
			sh.drop(r.key)
			sh.noteChanged([]byte(r.key), nil, isWide(e))
		}
	}
}

// applyEffect applies one effect to the keyspace. It returns the sorted
// set a set effect (a head or a member) changed, and false for an effect
// it skipped (a value of an unknown type).
func (s *Server) applyEffect(e *persist.Effect) (*ZSet, bool) {
	if e.Kind == persist.EffectFlushDB {
		for i := range s.ks.dbs[e.DB].shards {
			sh := &s.ks.dbs[e.DB].shards[i]
			sh.keys.reset()
			sh.withTTL, sh.unsaved = 0, 0
		}
		s.flushedDBs[e.DB].Store(true)
		for id := range s.expiredSets {
			if id.db == e.DB {
				delete(s.expiredSets, id)
			}
		}
		return nil, true
	}
	sh := s.ks.shardOf(e.DB, e.Key)
	old := sh.keys.get(e.Key)
	if old == nil && len(s.expiredSets) != 0 {
		old = s.reviveExpiredSet(sh, e)
	}
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
			ent, z := s.replayZSet(sh, e.Key, old)
			sh.setExp(ent, e.Value.Exp)
			sh.noteChanged(e.Key, ent, false)
			return z, true
		}
		if e.Value.Kind == persist.KindInt && old != nil && old.isString() {
			// An integer over a string or an integer (a counter, a
			// CL.THROTTLE state) changes the entry in place: replaying
			// a log of a million such keys spent most of its time
			// removing each entry from the index and inserting a new one.
			old.setInt(e.Value.Int)
			old.enc &= encUnsaved // "int", as adopt would make it
			sh.setExp(old, e.Value.Exp)
			sh.noteChanged(e.Key, old, false)
			return nil, true
		}
		v, ok := s.entryFromStored(e.Value)
		if !ok {
			s.log.Warn("persistence: skipping a logged value of a type this build does not know",
				"db", e.DB, "key", fmt.Sprintf("%q", e.Key), "type", string(rune(e.Value.Kind)))
			return nil, false
		}
		wide := isWide(old)
		if old != nil {
			sh.drop(string(e.Key))
		}
		sh.noteChanged(e.Key, sh.adopt(e.Key, v), wide)
		return nil, true
	case persist.EffectPutMember, persist.EffectDeleteMember:
		ent, z := s.replayZSet(sh, e.Key, old)
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

// reviveExpiredSet returns, for an effect on a key that is not in memory,
// the sorted set loadStore kept aside as expired under it, back in the
// shard, when the effect changes the set in place (a head or a member);
// any other effect is a new state of the key, and the set is forgotten.
func (s *Server) reviveExpiredSet(sh *Shard, e *persist.Effect) *Entry {
	id := dbKey{e.DB, string(e.Key)}
	kept, ok := s.expiredSets[id]
	if !ok {
		return nil
	}
	delete(s.expiredSets, id)
	inPlace := e.Kind == persist.EffectPutMember || e.Kind == persist.EffectDeleteMember ||
		e.Kind == persist.EffectPut && e.Value.Kind == persist.KindZSetWide
	if !inPlace {
		return nil
	}
	v, err := persist.Decode(kept.enc)
	if err != nil {
		return nil // it encoded the value itself
	}
	v.Wide = kept.wide
	ent, ok := s.entryFromLoaded(e.DB, e.Key, v)
	if !ok {
		return nil
	}
	return sh.adopt(e.Key, ent)
}

// replayZSet returns key's sorted set, making an empty one (with no
// expiry) in place of whatever else the key held.
func (s *Server) replayZSet(sh *Shard, key []byte, old *Entry) (*Entry, *ZSet) {
	if old != nil {
		if z, ok := old.obj().(*ZSet); ok {
			return old, z
		}
		sh.drop(string(key))
	}
	z := newZSet(s.zsetConfig())
	v := &Entry{}
	v.setObj(z)
	return sh.adopt(key, v), z
}
