package cell

import (
	"fmt"

	"github.com/cellserver/cellserver/cell/keyspace"
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
	var sets []replayedSet // sorted sets, hashes and lists the current record changed
	records, bad, err = s.store.Replay(func(e *persist.Effect) error {
		if e.Kind == persist.EffectEnd {
			s.dropEmptySets(sets)
			sets = sets[:0]
			s.dropEmptyForeignSets()
			return nil
		}
		if s.replayLibrary(e) { // functions_persist.go
			return nil
		}
		if e.DB < 0 {
			skipped++
			return nil
		}
		if e.DB >= s.ks.DBs() {
			s.replayForeign(e)
			return nil
		}
		v, ok := s.applyEffect(e)
		if !ok {
			skipped++
		}
		if v != nil {
			sets = append(sets, replayedSet{e.DB, string(e.Key), v})
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
		if k := e.Value.Kind; k == persist.KindHashHead || k == persist.KindListHead {
			delete(s.foreignSets, id)
			if enc := keyspace.ReplayStored(s.foreign[id], e, s.zsetConfig()); enc != nil {
				s.foreign[id] = enc
			} else {
				delete(s.foreign, id)
			}
			return
		}
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
	default: // a change in place of a string, hash or list
		if enc := keyspace.ReplayStored(s.foreign[id], e, s.zsetConfig()); enc != nil {
			s.foreign[id] = enc
		} else {
			delete(s.foreign, id)
		}
	}
}

// foreignSet is a sorted set of a database beyond --databases that the
// log changes, decoded, and its expiry.
type foreignSet struct {
	z   *keyspace.ZSet
	exp int64
}

// foreignZSet returns the sorted set keepForeign holds under id, decoded
// once per replay: an empty set with no expiry in place of anything else,
// as replayZSet.
func (s *Server) foreignZSet(id dbKey) *foreignSet {
	if f, ok := s.foreignSets[id]; ok {
		return f
	}
	f := &foreignSet{z: keyspace.NewZSet(s.zsetConfig())}
	if b, ok := s.foreign[id]; ok {
		if v, err := persist.Decode(b); err == nil {
			if obj, exp := keyspace.ValueFromStored(v, s.zsetConfig()); obj != nil {
				if z, ok := obj.(*keyspace.ZSet); ok {
					f.z, f.exp = z, exp
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
		s.foreign[id] = f.z.Stored(nil, f.exp)
	}
	s.foreignSets = nil
}

// replayedSet is a sorted set, hash or list a record changed in place.
type replayedSet struct {
	db  int
	key string
	v   keyspace.Aggregate
}

// dropEmptySets deletes the values of the list that a record left empty.
func (s *Server) dropEmptySets(sets []replayedSet) {
	for _, r := range sets {
		s.ks.ReplayDropEmpty(r.db, r.key, r.v)
	}
}

// applyEffect applies one effect to the keyspace. It returns the sorted
// set, hash or list a change in place changed, and false for an effect it
// skipped (a value of an unknown type).
func (s *Server) applyEffect(e *persist.Effect) (keyspace.Aggregate, bool) {
	if e.Kind == persist.EffectFlushDB {
		s.ks.ReplayFlush(e.DB)
		for id := range s.expiredSets {
			if id.db == e.DB {
				delete(s.expiredSets, id)
			}
		}
		return nil, true
	}
	if len(s.expiredSets) != 0 && !s.ks.Loaded(e.DB, e.Key) {
		s.reviveExpiredSet(e)
	}
	v, ok := s.ks.Replay(e, s.zsetConfig())
	if !ok {
		s.log.Warn("persistence: skipping a logged value of a type this build does not know",
			"db", e.DB, "key", fmt.Sprintf("%q", e.Key), "type", string(rune(e.Value.Kind)))
	}
	return v, ok
}

// reviveExpiredSet puts back, for an effect on a key that is not in
// memory, the value loadStore kept aside as expired under it, when the
// effect changes it in place (a head, a member, a field, a list position,
// a string patch); any other effect is a new state of the key, and the
// value is forgotten.
func (s *Server) reviveExpiredSet(e *persist.Effect) {
	id := dbKey{e.DB, string(e.Key)}
	kept, ok := s.expiredSets[id]
	if !ok {
		return
	}
	delete(s.expiredSets, id)
	if !e.InPlace() {
		return
	}
	v, err := persist.Decode(kept.enc)
	if err != nil {
		return // it encoded the value itself
	}
	v.Wide = kept.wide
	s.ks.Revive(e.DB, e.Key, v, s.zsetConfig())
}
