package keyspace

import (
	"encoding/binary"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/cellserver/cellserver/internal/prefetch"
	"github.com/cellserver/cellserver/persist"
)

// Checkpoints: folding the effect log into the snapshot.
//
// Every execution appends its effects to the log (persist.go); the
// snapshot in Pebble only changes at a checkpoint, which writes the
// current state of every key changed since the previous checkpoint began,
// then lets the store drop the log before its own start. A key written a
// thousand times between two checkpoints costs the snapshot one record,
// which is what keeps persistence cheap for hot rate-limiter keys.
//
// What changed is tracked in memory, for free on the write path: the
// commit of an execution sets the encUnsaved flag on each entry it wrote
// (and counts it in its shard), and appends each key it deleted, or
// whose value stored member by member it replaced, to its shard's
// tombstones, as does an expiry that needs one (noteExpired); a flushed
// database sets flushedDBs. A checkpoint visits the
// shards one at a time, under each shard's lock, while clients go on
// writing: a change made after the checkpoint began is also in the log
// after its position, so it is either in the snapshot already or replayed
// over it, and replay is idempotent (persist/effect.go).
//
// A checkpoint either writes the keys changed since the last one, each as
// a record of its own, over what the snapshot holds, or, when a large part
// of the keys changed, rewrites the whole keyspace into a new base of a
// few large records (persist/base.go): per key, that costs a fraction of
// a record of its own in Pebble. The records written after a rewrite lie
// over its base, and a key deleted since is written as a KindGone record.
//
// A checkpoint that fails (a disk error) may have cleared flags whose
// records never reached the disk; the next one is then a rewrite, which
// depends on no flag. So is one after a database was flushed (a record
// cannot empty the base's part of a database). The log is only dropped
// once a checkpoint has ended, so until then a crash replays it all.
//
// A checkpoint starts when the log since the last one reaches
// auto-aof-rewrite-min-size and auto-aof-rewrite-percentage of the
// snapshot's size (Redis's rule for rewriting its AOF), on SAVE and
// BGSAVE, by the save rules' clock, and at shutdown.

// snapshotBatchBytes is how much a checkpoint gathers before writing it to
// the snapshot.
const snapshotBatchBytes = 4 << 20

// tombstones lists keys deleted since the last checkpoint began, each as
// a flag byte (1: it was stored member by member) and its length-prefixed
// bytes; n counts them.
type tombstones struct {
	buf []byte
	n   int
}

func (t *tombstones) add(key []byte, wide bool) {
	t.n++
	flag := byte(0)
	if wide {
		flag = 1
	}
	t.buf = append(t.buf, flag)
	t.buf = binary.AppendUvarint(t.buf, uint64(len(key)))
	t.buf = append(t.buf, key...)
}

// reset empties the list, giving back a buffer a burst of deletions grew.
func (t *tombstones) reset() {
	t.n = 0
	if cap(t.buf) > 1<<20 {
		t.buf = nil
		return
	}
	t.buf = t.buf[:0]
}

func (t *tombstones) each(fn func(key []byte, wide bool)) {
	b := t.buf
	for len(b) > 0 {
		wide := b[0] == 1
		n, w := binary.Uvarint(b[1:])
		b = b[1+w:]
		fn(b[:n], wide)
		b = b[n:]
	}
}

// markUnsaved flags e for the next checkpoint.
func (s *Shard) markUnsaved(e *Entry) {
	if e.enc&encUnsaved == 0 {
		e.enc |= encUnsaved
		s.unsaved++
	}
}

// noteChanged records for the next checkpoint that key changed: e is its
// entry now (nil: it is gone), wide says it held a value stored member by
// member that was deleted or replaced.
func (s *Shard) noteChanged(key []byte, e *Entry, wide bool) {
	if e != nil {
		s.markUnsaved(e)
	}
	if e == nil || wide {
		s.tombs.add(key, wide)
	}
}

// noteExpired records for the next checkpoint that key's entry e expired
// and is being deleted. The effect log gets no record of it: every value
// there carries its absolute expiry, and loading drops what has passed
// (loadStore), so a replay ends the same without one, as Redis's RDB
// does. That spares the log a record for each of the keys a rate limiter
// lets lapse, which over a million CL.THROTTLE keys is every other
// operation. Nor does the snapshot need a tombstone when e is saved
// (flag clear): it or the log since its position already holds e, with
// the expiry that drops it. One is needed when e changed since (an
// older state with a later expiry may be there), or was stored member by
// member (its member records go too).
func (s *Shard) noteExpired(key []byte, e *Entry) {
	if wide := isWide(e); wide || e.enc&encUnsaved != 0 {
		s.noteChanged(key, nil, wide)
	}
}

// Visit is one checkpoint's pass over the keyspace (Keyspace.Visit).
type Visit struct {
	Written int   // keys written
	Records int64 // key records written (not into the base)
	// Flushed: a database was flushed since the last checkpoint began,
	// so the checkpoint must be a rewrite (a record cannot empty the
	// base's part of a database).
	Flushed bool
}

// Flushed reports, and forgets, whether a database was flushed since the
// last call: the checkpoint that asks is after the log's position, so a
// database flushed from then on is flushed again by replaying the log,
// and rewritten by the next checkpoint.
func (ks *Keyspace) Flushed() bool {
	flushed := false
	for d := range ks.flushed {
		flushed = ks.flushed[d].Swap(false) || flushed
	}
	return flushed
}

// Visit writes to b the keys of every shard changed since the last
// checkpoint began and the deletions, or, with base (a rewrite), every
// key into base. It writes b to st's snapshot whenever it grows past
// snapshotBatchBytes; what is left in b is the caller's to write.
func (ks *Keyspace) Visit(st *persist.Store, b *persist.Batch, base *persist.BaseWriter) (Visit, error) {
	v := shardVisit{store: st, b: b, base: base}
	for d := range ks.dbs {
		for i := range ks.dbs[d].shards {
			if err := v.run(d, &ks.dbs[d].shards[i]); err != nil {
				return Visit{}, err
			}
		}
	}
	return Visit{Written: v.written, Records: v.records}, nil
}

// ChangedKeys counts the keys, and the keys changed since the last
// checkpoint began (flagged or deleted), one shard lock at a time.
func (ks *Keyspace) ChangedKeys() (keys, changed int) {
	for d := range ks.dbs {
		for i := range ks.dbs[d].shards {
			sh := &ks.dbs[d].shards[i]
			sh.mu.Lock()
			keys += sh.keys.len()
			changed += sh.unsaved + sh.tombs.n
			sh.mu.Unlock()
		}
	}
	return keys, changed
}

// visitChunk is how many slots of a shard's index a checkpoint visits per
// hold of the shard's lock. A shard of 60,000 changed keys took tens of
// milliseconds to write in one hold, during which every client that
// touched the shard waited: p99.9 of CL.THROTTLE over a million keys went
// from about 50 ms to about 30 ms when the visit let go of the lock every
// 256 slots. Tests make it tiny (SetVisitChunk), while checkpoints run.
var visitChunk atomic.Int64

func init() { visitChunk.Store(256) }

// visitAhead is how many slots ahead of the one it reads a visit
// prefetches the entry: each is a cache miss of its own (entries are
// allocated one by one), and a visit reads every entry of the shard to
// see its flag.
const visitAhead = 8

// visitRestarts is how many times a shard's visit starts over because
// entries escaped it (keyIndex.moved) before it does the rest of the shard
// in one hold, so that a shard with steady deletions is still visited.
const visitRestarts = 3

// shardVisit is a checkpoint's pass over the shards, one at a time.
type shardVisit struct {
	store *persist.Store
	b     *persist.Batch
	// base, for a rewrite, takes every key, into chunks it seals into b.
	base      *persist.BaseWriter
	wideTombs map[string]bool // the keys of the shard whose value stored member by member went
	written   int             // keys written
	records   int64           // key records written (not into the base)
}

// run writes the keys of db's shard sh changed since the last checkpoint
// began (for a rewrite, every key) and the deletions.
//
// It visits the index in slot order, in parts of visitChunk slots, and
// lets go of the lock between parts (then writes the batch if it is big).
// What happens to the shard meanwhile is also in the log after the
// checkpoint's position: a key changed behind the visit keeps its
// encUnsaved flag for the next checkpoint, one changed ahead of it is
// written as it is now, and the deletions recorded meanwhile are written
// when the lock is taken again, before the keys that follow (a rewrite
// leaves them to the next checkpoint: the key may be in its base). The
// one thing the log does not make up for is a key changed before the
// checkpoint began that the visit never reaches: an entry a deletion
// shifted from ahead of the visit to behind it, or a rebuilt index.
// keyIndex notes both (moved), and the visit starts over; the entries it
// wrote already have their flag cleared, so starting over costs only a
// walk. A rewrite writes every entry it meets, flagged or not, and
// starts over the same way: the entries it wrote before are written again,
// later in the base, and loading keeps the later copy (loadStore). That
// spares it a pass over the shard to flag every entry first, a cache miss
// per entry.
func (v *shardVisit) run(db int, sh *Shard) (err error) {
	clear(v.wideTombs)
	all := v.base != nil
	sh.mu.Lock()
	if all {
		// Gone keys are not in memory, so not in the new base.
		sh.tombs.reset()
	} else {
		v.deletions(db, sh)
	}
	if all && sh.keys.len() == 0 || !all && sh.unsaved == 0 {
		sh.mu.Unlock()
		return nil
	}
	// Counted again from here: an entry flagged from now on may be
	// behind the visit.
	sh.unsaved = 0
	sh.keys.moved = false
	pos, restarts := 0, 0
	for {
		end := len(sh.keys.slots)
		if restarts < visitRestarts {
			end = min(end, pos+int(visitChunk.Load()))
		}
		slots := sh.keys.slots
		for ; pos < end; pos++ {
			if ahead := pos + visitAhead; ahead < len(slots) && slots[ahead] != nil {
				prefetch.Line((*byte)(unsafe.Pointer(slots[ahead])))
			}
			if mid := pos + visitAhead/2; mid < len(slots) {
				// The value of an entry to be written: its aggregate
				// or its bytes, by now the entry itself is in cache.
				if e := slots[mid]; e != nil && (all || writes(e)) && e.kind != valInt && e.ptr != nil {
					prefetch.Line((*byte)(e.ptr))
				}
			}
			e := slots[pos]
			if e == nil || !all && !writes(e) {
				continue
			}
			v.write(db, e)
			e.enc &^= encUnsaved
		}
		if pos >= len(sh.keys.slots) {
			break
		}
		sh.keys.mark = pos
		sh.mu.Unlock()
		if v.b.Size() >= snapshotBatchBytes {
			err = v.store.WriteSnapshot(v.b)
		}
		if f := visitPause.Load(); f != nil {
			(*f)(sh)
		}
		runtime.Gosched() // the clients that waited for the lock go first
		sh.mu.Lock()
		sh.keys.mark = 0
		if err != nil {
			sh.mu.Unlock()
			return err
		}
		if v.base == nil {
			v.deletions(db, sh)
		}
		if sh.keys.moved {
			sh.keys.moved = false
			pos = 0
			restarts++
		}
	}
	sh.mu.Unlock()
	if v.b.Size() >= snapshotBatchBytes {
		err = v.store.WriteSnapshot(v.b)
	}
	return err
}

// write writes db's entry e: into the base, whole, for a rewrite, else as
// its key's records.
func (v *shardVisit) write(db int, e *Entry) {
	k := e.Key()
	key := unsafe.Slice(unsafe.StringData(k), len(k))
	v.written++
	if v.base == nil {
		storeEntry(v.b, db, key, e, v.wideTombs[k])
		v.records++
		return
	}
	putWhole(v.base, db, key, e)
	if z, ok := e.Obj().(*ZSet); ok {
		z.disk = nil // no longer stored member by member: the rewrite's end deletes those records
	}
	if v.base.Full() {
		v.base.Seal(v.b)
	}
}

// writes reports whether a visit writes e, a slot's entry (nil: none).
func writes(e *Entry) bool {
	return e != nil && e.enc&encUnsaved != 0
}

// visitPause, when set (by tests), runs between two parts of a shard's
// visit, with the shard unlocked.
var visitPause atomic.Pointer[func(sh *Shard)]

// deletions writes the deletions recorded on sh, locked, and forgets them:
// a key that is gone gets a KindGone record (a delete would let the base's
// show through), and a key whose value was stored member by member loses
// all its records (its new value, if any, is then written whole:
// wideTombs).
func (v *shardVisit) deletions(db int, sh *Shard) {
	sh.tombs.each(func(key []byte, wide bool) {
		if wide {
			v.b.DeleteKey(db, key)
			if v.wideTombs == nil {
				v.wideTombs = map[string]bool{}
			}
			v.wideTombs[string(key)] = true
		}
		if sh.keys.get(key) == nil {
			v.b.Gone(db, key)
			v.records++
		}
	})
	sh.tombs.reset()
}
