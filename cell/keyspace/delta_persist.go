package keyspace

import (
	"unsafe"

	"github.com/cellserver/cellserver/persist"
)

// Changes in place of strings, hashes and lists, for the effect log.
//
// Logging a changed value whole costs its size per command: APPEND of 10
// bytes to a 50 MB string wrote 50 MB, LPUSH onto a list of 120,000
// elements half a megabyte. Instead, the handlers that change such a
// value in place tell the execution's deltaRec what they touched (a
// string's byte range, a hash's field, a list's position) and end with
// TouchedNoted; the commit then logs, under the value's head, the final
// state of what was touched (persist.Batch.PatchString, PutHashHead,
// PutListHead): a cost in proportion to the command's arguments. LINSERT
// and LREM in the middle of a list log the elements they moved, the side
// nearer an end (ListChanged), or the whole list past half of it. A change
// the recorder did not see (anything through Touched) makes the record the
// whole value, as does a change that touched as much as the value holds,
// where the whole value is no bigger. Replay applies the records through
// applyDelta (load.go).
//
// Each record says what the touched parts are after the execution, not
// how they changed, so that replaying it over a later state (a
// checkpoint's) ends in the same state (persist/effect.go): a list's
// elements are named by position (List.pos), its pushes and pops become
// the list's new span, a string patch carries the string's new length
// (which only grows between two whole records of the key).

// deltaRec records, for one execution, the parts of strings, hashes and
// lists that its handlers changed in place, in order. Like zsetRec it is
// reset when the execution commits, under the same shard locks.
type deltaRec struct {
	ents []deltaEnt
	buf  []byte // the fields of deltaHash entries
}

// deltaEnt is one part touched: of the value at obj (a *Hash, a *List,
// or a string's *Entry), the field buf[off:end] (a hash), the position
// a (a list), or the bytes [a, a+b) (a string).
type deltaEnt struct {
	obj      unsafe.Pointer
	a, b     int64
	off, end int
}

func (r *deltaRec) add(obj unsafe.Pointer, a, b int64, field []byte) {
	r.ents = append(r.ents, deltaEnt{}) // and the fields in place, as noteDirty does
	e := &r.ents[len(r.ents)-1]
	e.obj, e.a, e.b, e.off = obj, a, b, len(r.buf)
	r.buf = append(r.buf, field...)
	e.end = len(r.buf)
}

// reset forgets the execution's changes, pointer by pointer (zsetRec.reset
// says why), giving back a buffer a burst of big fields grew.
func (r *deltaRec) reset() {
	for i := range r.ents {
		r.ents[i].obj = nil
	}
	r.ents = r.ents[:0]
	if cap(r.buf) > 1<<20 {
		r.buf = nil
		return
	}
	r.buf = r.buf[:0]
}

// NoteHashField records that field of h, a hash the execution changes in
// place, was set or deleted.
func (x *Tx) NoteHashField(h *Hash, field []byte) {
	if x.fx != nil {
		x.fx.drec.add(unsafe.Pointer(h), 0, 0, field)
	}
}

// NoteListPush records that the execution pushed one element onto l, at
// the head (front) or the tail; a pop needs no note, the span says it.
func (x *Tx) NoteListPush(l *List, front bool) {
	if front {
		x.noteListPos(l, l.pos)
	} else {
		x.noteListPos(l, l.pos+int64(l.n)-1)
	}
}

// NoteListIndex records that the execution set the i-th element of l
// (LSET).
func (x *Tx) NoteListIndex(l *List, i int) { x.noteListPos(l, l.pos+int64(i)) }

// ListChanged ends a change of key's list l that moved its elements
// [lo, hi) (Insert, RemoveIf): the key goes if the list is empty; else
// the log gets the moved elements, or the whole list when they are more
// than half of it.
func (x *Tx) ListChanged(key []byte, l *List, lo, hi int) {
	switch {
	case l.n == 0:
		x.Remove(key)
	case hi-lo > l.n/2:
		x.Touched(key)
	default:
		if x.fx != nil {
			for i := lo; i < hi; i++ {
				x.noteListPos(l, l.pos+int64(i))
			}
		}
		x.TouchedNoted(key)
	}
}

func (x *Tx) noteListPos(l *List, pos int64) {
	if x.fx != nil {
		x.fx.drec.add(unsafe.Pointer(l), pos, 0, nil)
	}
}

// NoteStrRange records that the execution wrote the n bytes at off of
// the string entry e.
func (x *Tx) NoteStrRange(e *Entry, off, n int64) {
	if x.fx != nil {
		x.fx.drec.add(unsafe.Pointer(e), off, n, nil)
	}
}

// patchMinLen is the length from which a string's expiry alone (EXPIRE)
// is logged as a patch of no bytes rather than the string.
const patchMinLen = 64

// PatchedMin is the shortest string the log may change with a patch: a
// patch of one byte costs about 16 more (logString).
const PatchedMin = 18

// log adds to b the record of db's key, whose entry is e, as the changes
// in place recorded for its value, and reports whether it did: false for
// a value of another kind (an int, a sorted set) and where the whole
// value is the smaller record.
func (r *deltaRec) log(b *persist.Batch, db int, key []byte, e *Entry) bool {
	if e == nil {
		return false
	}
	switch v := e.Obj().(type) {
	case nil:
		if !e.HasBytes() {
			return false
		}
		return r.logString(b, db, key, e)
	case *Hash:
		if r.count(unsafe.Pointer(v)) > v.Len() {
			return false
		}
		b.PutHashHead(db, key, e.Exp)
		for i := range r.ents {
			d := &r.ents[i]
			if d.obj != unsafe.Pointer(v) {
				continue
			}
			f := r.buf[d.off:d.end]
			if val, ok := v.Get(f); ok {
				b.PutHeadField(f, val)
			} else {
				b.DeleteHeadField(f)
			}
		}
		return true
	case *List:
		if r.count(unsafe.Pointer(v)) > v.Len() {
			return false
		}
		b.PutListHead(db, key, e.Exp)
		b.ListSpan(v.pos, v.n)
		for i := range r.ents {
			d := &r.ents[i]
			if d.obj != unsafe.Pointer(v) {
				continue
			}
			if d.off < 0 {
				continue // a span noted for the stream (NoteListSpan)
			}
			if at := d.a - v.pos; at >= 0 && at < int64(v.n) {
				b.ListSet(d.a, v.At(int(at)))
			}
		}
		return true
	}
	return false
}

// logString logs the byte ranges written to the string entry e, read
// from it as they are now: runs of adjacent ranges (APPEND after APPEND)
// as one patch.
func (r *deltaRec) logString(b *persist.Batch, db int, key []byte, e *Entry) bool {
	s := e.StrBytes()
	size := int64(len(s))
	var bytes, patches int64
	r.eachRange(e, func(off, n int64) {
		bytes += n
		patches++
	})
	if patches == 0 && size < patchMinLen || bytes+16*patches >= size {
		return false
	}
	if patches == 0 {
		b.PatchString(db, key, e.Exp, size, size, nil)
		return true
	}
	r.eachRange(e, func(off, n int64) {
		b.PatchString(db, key, e.Exp, size, off, s[off:off+n])
	})
	return true
}

// eachRange calls fn with the ranges recorded for the string entry e,
// adjacent ones joined, each cut to the string's length.
func (r *deltaRec) eachRange(e *Entry, fn func(off, n int64)) {
	size := int64(e.StrLen())
	var off, end int64 = 0, -1
	for i := range r.ents {
		d := &r.ents[i]
		if d.obj != unsafe.Pointer(e) {
			continue
		}
		if d.a == end {
			end += d.b
			continue
		}
		if end >= 0 {
			fn(off, min(end, size)-off)
		}
		off, end = d.a, d.a+d.b
	}
	if end >= 0 {
		fn(off, min(end, size)-off)
	}
}

// count is how many changes were recorded for obj (a list's spans are
// not changes).
func (r *deltaRec) count(obj unsafe.Pointer) int {
	n := 0
	for i := range r.ents {
		if r.ents[i].obj == obj && r.ents[i].off >= 0 {
			n++
		}
	}
	return n
}

// setSpan makes l hold the positions [pos, pos+n) of its numbering
// (replay of persist.EffectListSpan): the elements outside go, positions
// it did not hold are empty until a persist.EffectListSet fills them.
func (l *List) setSpan(pos int64, n int) {
	end := pos + int64(n)
	if pos >= l.pos+int64(l.n) || end <= l.pos {
		l.Trim(0, 0)
		l.pos = pos
	}
	for l.n > 0 && l.pos < pos {
		l.PopFront()
	}
	for l.n > 0 && l.pos+int64(l.n) > end {
		l.PopBack()
	}
	if l.n == 0 {
		l.pos = pos
	}
	for l.pos > pos {
		l.PushFront(nil)
	}
	for l.pos+int64(l.n) < end {
		l.PushBack(nil)
	}
}

// setAt puts v at position pos of l's numbering, if l holds it.
func (l *List) setAt(pos int64, v []byte) {
	if i := pos - l.pos; i >= 0 && i < int64(l.n) {
		l.Set(int(i), v)
	}
}

// patchString applies a string patch (persist.EffectPatch) to the bytes
// s, which it may reuse: s made length bytes long, data at off.
func patchString(s []byte, length, off int64, data []byte) []byte {
	if int64(len(s)) >= length {
		s = s[:length]
	} else {
		s = append(s, make([]byte, length-int64(len(s)))...)
	}
	copy(s[off:], data)
	return s
}
