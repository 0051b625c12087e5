package keyspace

import (
	"math"
	"strconv"

	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/zsetlite"
)

// How sorted sets reach the store.
//
// In the effect log, a set changed in place is logged as its expiry and
// the changes made to its members, in order (zsetRec, below): a sliding
// window's ZADD plus ZREMRANGEBYSCORE is two member records, whatever the
// window's size. A set that is new or replaced is logged whole.
//
// In the snapshot, a small set is one record (persist.KindZSet), rewritten
// whole by each checkpoint that finds it changed: for the sliding windows
// of a rate limiter that is a few hundred bytes. A large set is stored as a
// head record plus one record per member (persist.KindZSetWide), and a
// checkpoint writes only the members that changed since the previous one:
// a window of 1000 entries that moved by ten costs twenty member records
// instead of a 15 KB rewrite.
//
// A set in the wide form carries a zsetDisk: where it is stored and which
// members changed since the last checkpoint. The mutating methods below
// record the members they touch (a range delete shows them as it removes
// them); the checkpoint writes each changed member's current state (a
// record, or a delete) and forgets them. A set stored under another key
// than the one it is saved for (RENAME), or over a key that held another
// value, is rewritten whole, as is a set crossing the thresholds: the form
// in the snapshot is always either all of a set or nothing of it.

const (
	// WideMinEntries is the size from which a set is stored member by
	// member: zset-max-listpack-entries' default, from where the set in
	// memory is a tree, which is slow to serialise whole. Below
	// wideMaxPackedEntries a wide set goes back to one record; the gap
	// keeps a set that hovers around one size from being rewritten whole
	// at every write.
	WideMinEntries       = 128
	wideMaxPackedEntries = 64
	// A self-keyed set (a window of timestamps) is one record of delta
	// varints (persist.KindZSetInts), 1-2 bytes an entry, so rewriting
	// it whole costs less than its changed members as records of their
	// own, about 40 bytes each, which Pebble's compactions then rewrite
	// again and again across the whole snapshot (every window changes
	// between two checkpoints under a sliding-window load). It goes wide
	// only from wideMinIntEntries (a record of about 6 KB), and back
	// below wideMaxIntEntries.
	wideMinIntEntries = 4096
	wideMaxIntEntries = 2048
)

// storeWide reports whether z, of n entries, is to be stored member by
// member.
func storeWide(z *ZSet, n int) bool {
	lo, hi := wideMaxPackedEntries, WideMinEntries
	if z.Set.SelfKeyed() {
		lo, hi = wideMaxIntEntries, wideMinIntEntries
	}
	return n >= hi || z.disk != nil && n >= lo
}

// zsetDisk is the stored state of a set in the wide form.
type zsetDisk struct {
	db  int
	key string
	// changed holds the members changed since the last commit, each as
	// buf[offs[i]:offs[i+1]]; all: too many to list, rewrite the set.
	buf  []byte
	offs []int32
	all  bool
}

func (d *zsetDisk) note(member []byte) {
	if d.all {
		return
	}
	if len(d.offs) == 0 {
		d.offs = append(d.offs, 0)
	}
	d.buf = append(d.buf, member...)
	d.offs = append(d.offs, int32(len(d.buf)))
	// A delta as big as a set of WideMinEntries: writing the whole set
	// costs no more, and the list stops growing.
	if len(d.offs) > 4*WideMinEntries {
		d.all = true
	}
}

func (d *zsetDisk) reset() {
	d.buf, d.offs, d.all = d.buf[:0], d.offs[:0], false
}

// notePut records that member now has score, for the snapshot if the set
// is stored wide and for the effect log if a writer holds it; noteDel
// that member is gone.
func (z *ZSet) notePut(member []byte, score float64) {
	if z.disk != nil {
		z.disk.note(member)
	}
	if z.rec != nil {
		z.rec.note(z, member, score, false, z.Set.SelfKeyed())
	}
}

// noteDel's ownScore says that member is known to be the decimal text of
// its score: a visitor shown it by a self-keyed set.
func (z *ZSet) noteDel(member []byte, score float64, ownScore bool) {
	if z.disk != nil {
		z.disk.note(member)
	}
	if z.rec != nil {
		z.rec.note(z, member, score, true, ownScore)
	}
}

// noting reports whether changes to z are being recorded.
func (z *ZSet) noting() bool { return z.disk != nil || z.rec != nil }

// noteVisit is a visitor that records each member it sees as deleted:
// range deletes show it what they remove, before removing it, so the set
// is still self-keyed if it was.
func (z *ZSet) noteVisit(member []byte, score float64) bool {
	z.noteDel(member, score, z.Set.SelfKeyed())
	return true
}

// noteScoreVisit is noteVisit for a self-keyed set's range below 2^53,
// shown its members' scores only (DeleteRangeByScore).
func (z *ZSet) noteScoreVisit(_ []byte, score float64) bool {
	z.rec.noteDelScore(z, score)
	return true
}

// eachMember visits every member: wideValue.
func (z *ZSet) eachMember(fn func(member []byte, score float64)) {
	z.Range(0, -1, false, func(m []byte, score float64) bool {
		fn(m, score)
		return true
	})
}

// storedWide reports whether the set is stored member by member (under
// z.disk's key): wideValue.
func (z *ZSet) storedWide() bool { return z.disk != nil }

// The mutating methods of zsetlite.Set, recording what they change.

func (z *ZSet) Add(member []byte, score float64, flags zsetlite.AddFlags) (zsetlite.AddResult, float64) {
	res, sc := z.Set.Add(member, score, flags)
	if res == zsetlite.Added || res == zsetlite.Updated {
		z.notePut(member, sc)
	}
	return res, sc
}

func (z *ZSet) Put(member []byte, score float64) bool {
	added := z.Set.Put(member, score)
	z.notePut(member, score)
	return added
}

// AddInts is zsetlite's one-pass load of a window's integers when nothing
// records z's changes, as for a set just loaded; otherwise a Put each.
func (z *ZSet) AddInts(vs []int64) {
	if !z.noting() {
		z.Set.AddInts(vs)
		return
	}
	var buf [20]byte
	for _, v := range vs {
		z.Put(strconv.AppendInt(buf[:0], v, 10), float64(v))
	}
}

func (z *ZSet) Delete(member []byte) bool {
	ok := z.Set.Delete(member)
	if ok {
		z.noteDel(member, 0, false)
	}
	return ok
}

func (z *ZSet) DeleteRangeByScore(r zsetlite.ScoreRange) int {
	if z.noting() {
		if z.rec != nil && z.disk == nil && z.Set.SelfKeyed() && r.Min > -1<<53 && r.Max < 1<<53 {
			// Each member removed is its score's integer, which tells it
			// apart (below 2^53): noted from the score, no text made.
			return z.Set.DeleteRangeByScoreVisit(r, z.noteScoreVisit, nil)
		}
		if z.rec != nil {
			return z.Set.DeleteRangeByScoreVisit(r, z.noteVisit, &z.rec.scratch)
		}
		return z.Set.DeleteRangeByScoreVisit(r, z.noteVisit, new([20]byte)) // a wide set without a writer: rare
	}
	return z.Set.DeleteRangeByScore(r)
}

func (z *ZSet) DeleteRangeByLex(r zsetlite.LexRange) int {
	if z.noting() {
		z.Set.RangeByLex(r, false, 0, -1, z.noteVisit)
	}
	return z.Set.DeleteRangeByLex(r)
}

func (z *ZSet) DeleteRangeByRank(start, stop int) int {
	if z.noting() {
		lo, hi := zsetlite.RankBounds(start, stop, z.Len())
		if lo < hi {
			z.Set.Range(lo, hi-1, false, z.noteVisit)
		}
	}
	return z.Set.DeleteRangeByRank(start, stop)
}

func (z *ZSet) PopMin(count int, fn zsetlite.Visitor) int {
	return z.Set.PopMin(count, z.notingVisitor(fn))
}

func (z *ZSet) PopMax(count int, fn zsetlite.Visitor) int {
	return z.Set.PopMax(count, z.notingVisitor(fn))
}

// notingVisitor wraps fn to record the members it is shown as deleted. A
// pop removes its count members even if fn stops early, so the wrapper
// goes on visiting (and recording) them, without calling fn again.
func (z *ZSet) notingVisitor(fn zsetlite.Visitor) zsetlite.Visitor {
	if !z.noting() {
		return fn
	}
	stopped := false
	return func(m []byte, score float64) bool {
		z.noteDel(m, score, z.Set.SelfKeyed())
		if !stopped && !fn(m, score) {
			stopped = true
		}
		return true
	}
}

// storeZSet adds to b the snapshot records that make db's key hold z.
// wasWide: the snapshot may hold, under the key, a wide set other than z
// (the key was replaced or deleted since the last checkpoint).
func storeZSet(b *persist.Batch, db int, key []byte, z *ZSet, exp int64, wasWide bool) {
	wide := storeWide(z, z.Len())
	here := z.disk != nil && z.disk.db == db && z.disk.key == string(key) && !wasWide
	switch {
	case !wide:
		if wasWide || here {
			b.DeleteKey(db, key)
		}
		z.disk = nil
		b.PutEncoded(db, key, z.appendStored(b.Scratch(), exp))
	case here && !z.disk.all:
		b.PutZSetHead(db, key, exp)
		d := z.disk
		for i := 0; i+1 < len(d.offs); i++ {
			m := d.buf[d.offs[i]:d.offs[i+1]]
			if sc, ok := z.Score(m); ok {
				b.PutMember(db, key, m, sc)
			} else {
				b.DeleteMember(db, key, m)
			}
		}
		d.reset()
	default:
		b.DeleteKey(db, key)
		b.PutZSetHead(db, key, exp)
		z.eachMember(func(m []byte, score float64) { b.PutMember(db, key, m, score) })
		z.setStoredWide(db, key)
	}
}

// setStoredWide notes that z is stored member by member under db's key,
// with no change pending.
func (z *ZSet) setStoredWide(db int, key []byte) {
	if z.disk == nil || z.disk.db != db || z.disk.key != string(key) {
		z.disk = &zsetDisk{db: db, key: string(key)}
	}
	z.disk.reset()
}

// zsetRec records, for the effect log, each change the running execution
// made to sorted sets it changed in place, in order: a member's new score,
// or its removal. A client's log record then holds those changes
// (logZSetDelta) instead of the whole set, which for a sliding window is
// two members instead of every entry. A set is attached when a writer
// looks it up (Ctx.lookupZSetW) and detached when the execution commits,
// under the same shard locks, so no other client sees the attachment.
type zsetRec struct {
	attached []*ZSet
	ents     []zrecEnt
	buf      []byte
	// scratch holds a member a range delete makes up for noting it (a
	// window's timestamp as text): here, it costs no allocation per
	// ZREMRANGEBYSCORE.
	scratch [20]byte
}

// zrecEnt is one change: member buf[off:end] of set z, or when isInt the
// member that is ival's decimal text, has score, or is gone (del).
type zrecEnt struct {
	z        *ZSet
	off, end int32
	del      bool
	isInt    bool
	score    float64
	ival     int64
}

func (r *zsetRec) attach(z *ZSet) {
	if z.rec != r {
		z.rec = r
		r.attached = append(r.attached, z)
	}
}

// note records that z's member now has score, or is gone (del).
// ownScore says that member is the decimal text of an integer whose value
// is score: then, where that integer is score's and no other's (below
// 2^53, and not -0, which the log's integer form cannot say), the integer
// is noted instead of the text, which spares copying it here and parsing
// it back for the log (persist.Batch.PutHeadMemberInt).
func (r *zsetRec) note(z *ZSet, member []byte, score float64, del, ownScore bool) {
	if ownScore && score > -1<<53 && score < 1<<53 {
		if v := int64(score); math.Float64bits(float64(v)) == math.Float64bits(score) {
			r.noteInt(z, v, score, del)
			return
		}
	}
	off := len(r.buf)
	r.buf = append(r.buf, member...)
	e := r.add(z, score, del)
	e.off, e.end = int32(off), int32(len(r.buf))
}

// noteInt records a change of the member that is v's decimal text.
func (r *zsetRec) noteInt(z *ZSet, v int64, score float64, del bool) {
	e := r.add(z, score, del)
	e.isInt, e.ival = true, v
}

// add appends a change of z and returns it for its member to be set.
func (r *zsetRec) add(z *ZSet, score float64, del bool) *zrecEnt {
	r.ents = append(r.ents, zrecEnt{}) // and the fields in place, as noteDirty does
	e := &r.ents[len(r.ents)-1]
	e.z, e.del, e.score = z, del, score
	return e
}

// noteDelScore records that the member of z whose score is score is gone,
// z being self-keyed and |score| below 2^53, so that the member is the
// decimal text of int64(score): noted as that integer, or, for a score of
// -0, which the integer form leaves out (note), as that text ("0").
func (r *zsetRec) noteDelScore(z *ZSet, score float64) {
	v := int64(score)
	if math.Float64bits(float64(v)) == math.Float64bits(score) {
		r.noteInt(z, v, score, true)
		return
	}
	r.note(z, strconv.AppendInt(r.scratch[:0], v, 10), score, true, false)
}

// held reports whether z's in-place changes in this execution are all
// recorded here.
func (r *zsetRec) held(z *ZSet) bool { return z.rec == r }

// count reports how many changes are recorded for z.
func (r *zsetRec) count(z *ZSet) int {
	if len(r.attached) == 1 && r.attached[0] == z {
		return len(r.ents) // all of them are z's: a count needs no walk
	}
	n := 0
	for i := range r.ents {
		if r.ents[i].z == z {
			n++
		}
	}
	return n
}

// appendChanges adds to b each change recorded for z, in order, in the
// form that follows z's head (persist.Batch.PutHeadMember).
func (r *zsetRec) appendChanges(b *persist.Batch, z *ZSet) {
	for i := range r.ents {
		e := &r.ents[i]
		switch {
		case e.z != z:
		case e.isInt && e.del:
			b.DeleteHeadMemberInt(e.ival)
		case e.isInt:
			b.PutHeadMemberInt(e.ival)
		case e.del:
			b.DeleteHeadMember(r.buf[e.off:e.end])
		default:
			b.PutHeadMember(r.buf[e.off:e.end], e.score)
		}
	}
}

// reset detaches every set and forgets the changes. The pointers are
// dropped one by one, not with clear: an execution holds a set or two,
// and clear of a slice with pointers is a call into the runtime's bulk
// write barrier, which W1's profile showed at 26 ns per operation.
func (r *zsetRec) reset() {
	for i, z := range r.attached {
		if z.rec == r {
			z.rec = nil
		}
		r.attached[i] = nil
	}
	for i := range r.ents {
		r.ents[i].z = nil
	}
	r.attached, r.ents, r.buf = r.attached[:0], r.ents[:0], r.buf[:0]
}

// StoredWide reports whether the set is stored member by member.
func (z *ZSet) StoredWide() bool { return z.storedWide() }
