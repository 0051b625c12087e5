package persist

import (
	"hash/maphash"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Group commit and write coalescing.
//
// One Pebble commit per command made persistence cost more than the
// command itself: each commit goes through Pebble's commit pipeline
// (sequence numbers, a WAL record, ordered publication, where concurrent
// committers park and wake each other) while the caller held its shard
// locks, and each record is a random insert into Pebble's memtable
// skiplist, a chain of cache misses that was the largest single cost of a
// CL.THROTTLE under persistence.
//
// So Store.Commit only merges a batch's records into a shared pending
// group, under a mutex, in the order callers commit. A record for a key
// the group already holds replaces that record in place (coalescing): the
// group keeps one record per key, its last state, as the final-state
// records of this layout allow. Range deletes (DeleteKey, DeleteDB) are
// barriers: records after one never merge into records before it, so a
// key rewritten after a range delete that covers it stays after it.
//
// The group reaches Pebble as one batch when a Sync needs it (appendfsync
// always, and the everysec ticker), when it grows past groupMaxBytes, or
// groupDelay after its first record, whichever comes first; groups are
// committed in the order they were formed. The per-key order on disk is
// therefore the lock order in memory, as before, and a key written many
// times within a second costs one memtable insert.
//
// What a crash of the process loses: under always, nothing acknowledged
// (no reply waits on a group that is not synced: Sync commits it first);
// under everysec, the writes since the last tick, at most about a second,
// as a crash of the machine would lose anyway; under no, at most
// groupDelay of writes.

const (
	// groupDelay bounds how long a record waits in the pending group.
	// One second matches everysec's own bound, so that policy loses
	// nothing more to a process crash than to a machine crash.
	groupDelay = time.Second
	// groupMaxBytes commits a group early, bounding its memory (the
	// bytes of replaced records stay in the buffer until the commit).
	groupMaxBytes = 4 << 20
)

// opKind is a record's Pebble operation.
type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange // key is the start, value the exclusive end
)

// rec is one record of a Batch or group: its key is buf[k0:k1] and its
// value buf[k1:v1]; h is the key's hash for coalescing, computed when the
// record is added so that the merge under the group's mutex does not.
type rec struct {
	op         opKind
	k0, k1, v1 uint32
	h          uint64
}

// records is a list of records over one byte buffer.
type records struct {
	buf  []byte
	recs []rec
}

func (r *records) add(op opKind, key, val []byte) {
	var h uint64
	if op != opDeleteRange {
		h = maphash.Bytes(groupSeed, key)
	}
	r.addHashed(op, key, val, h)
}

func (r *records) addHashed(op opKind, key, val []byte, h uint64) {
	k0 := len(r.buf)
	r.buf = append(r.buf, key...)
	k1 := len(r.buf)
	r.buf = append(r.buf, val...)
	r.recs = append(r.recs, rec{op, uint32(k0), uint32(k1), uint32(len(r.buf)), h})
}

func (r *records) reset() { r.buf, r.recs = r.buf[:0], r.recs[:0] }

func (r *records) key(x rec) []byte { return r.buf[x.k0:x.k1] }
func (r *records) val(x rec) []byte { return r.buf[x.k1:x.v1] }

// group is a pending group: records coalesced by key since the last range
// delete.
type group struct {
	records
	// index finds a key's record since the last range delete
	// (groupindex.go).
	index groupIndex
	last  uint64 // the number of the last batch merged
	// live is the bytes of buf that records still use; the rest is what
	// replaced records left behind.
	live int
}

var groupSeed = maphash.MakeSeed()

func newGroup() *group { return &group{} }

// merge appends o's records to g, each replacing g's record of its key:
// in place when the new value fits in the old one's room, else appended.
func (g *group) merge(o *records) {
	for _, x := range o.recs {
		key, val := o.key(x), o.val(x)
		g.live += len(key) + len(val)
		if x.op == opDeleteRange {
			g.index.barrier(int32(len(g.recs)))
			g.addHashed(x.op, key, val, 0)
			continue
		}
		i, slot := g.index.find(&g.records, key, x.h)
		if i >= 0 {
			old := g.recs[i]
			g.live -= int(old.v1 - old.k0)
			if room := g.buf[old.k1:cap(g.buf)]; int(old.v1-old.k1) >= len(val) && len(room) >= len(val) {
				copy(room, val)
				g.recs[i] = rec{x.op, old.k0, old.k1, old.k1 + uint32(len(val)), x.h}
				continue
			}
			k0 := len(g.buf)
			g.buf = append(g.buf, key...)
			k1 := len(g.buf)
			g.buf = append(g.buf, val...)
			g.recs[i] = rec{x.op, uint32(k0), uint32(k1), uint32(len(g.buf)), x.h}
			continue
		}
		g.addHashed(x.op, key, val, x.h)
		g.index.add(&g.records, slot, x.h, int32(len(g.recs)-1))
	}
}

// full reports whether the group should be committed now to bound its
// memory; a buffer that is mostly the leftovers of replaced records is
// compacted instead, so that a few hot keys rewritten with large values
// (sorted sets) do not commit the group many times a second.
func (g *group) full() bool {
	if len(g.buf) < groupMaxBytes {
		return false
	}
	if g.live >= groupMaxBytes/2 {
		return true
	}
	buf := make([]byte, 0, max(2*g.live, 64<<10))
	for i, x := range g.recs {
		k0 := len(buf)
		buf = append(buf, g.buf[x.k0:x.v1]...)
		g.recs[i] = rec{x.op, uint32(k0), uint32(k0) + x.k1 - x.k0, uint32(len(buf)), x.h}
	}
	g.buf = buf
	return false
}

func (g *group) reset() {
	g.records.reset()
	g.index.reset()
	g.live = 0
}

// commitLoop is the committer goroutine: woken by the first record of a
// group, it commits the group after groupDelay, or at once when it is full.
func (s *Store) commitLoop() {
	defer close(s.loopDone)
	t := time.NewTimer(groupDelay)
	t.Stop()
	for {
		var full bool
		select {
		case full = <-s.wake:
		case <-s.stop:
			return
		}
		if !full {
			t.Reset(groupDelay)
		wait:
			for {
				select {
				case <-t.C:
					break wait
				case full = <-s.wake:
					// A wake that is not "full" comes from a group
					// started after a Sync committed this one.
					if full {
						t.Stop()
						break wait
					}
				case <-s.stop:
					t.Stop()
					return
				}
			}
		}
		s.mu.RLock()
		if !s.closed {
			if err := s.commitPending(s.appended.Load()); err != nil {
				s.log.Error("persistence: group commit failed", "err", err)
			}
		}
		s.mu.RUnlock()
	}
}

// commitPending commits the pending group to Pebble unless batch n already
// is. Groups are swapped out and committed under commitMu, so they reach
// Pebble in the order they were formed. s.mu must be held (shared is
// enough).
func (s *Store) commitPending(n uint64) error {
	if s.committed.Load() >= n {
		return nil
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if s.committed.Load() >= n {
		return nil
	}
	s.pendMu.Lock()
	g := s.pend
	s.pend, s.spare = s.spare, nil
	s.pendMu.Unlock()
	defer func() {
		g.reset()
		s.pendMu.Lock()
		s.spare = g
		s.pendMu.Unlock()
	}()
	if len(g.recs) == 0 {
		return nil
	}
	pb := s.pb
	for _, x := range g.recs {
		switch x.op {
		case opSet:
			pb.Set(g.key(x), g.val(x), nil)
		case opDelete:
			pb.Delete(g.key(x), nil)
		case opDeleteRange:
			pb.DeleteRange(g.key(x), g.val(x), nil)
		}
	}
	err := pb.Commit(pebble.NoSync)
	pb.Reset()
	if err != nil {
		return err
	}
	s.committed.Store(g.last)
	return nil
}
