package keyspace

import (
	"strconv"
	"unsafe"
)

// What the replication stream needs to say a value's change in place
// member by member: a sliding window's ZADD plus ZREMRANGEBYSCORE as the
// member added and the members removed, not the whole set. The
// recorders the effect log uses (zsetRec for sorted sets, deltaRec for
// hashes, sets and strings) already hold what each execution touched;
// AppendChanges reads it, with the final state of each touched part.

// Change is one part of a value an execution changed in place, as it is
// now: a sorted set's or set's member or a hash's field (Item), present
// with its Score or Val, or gone (Del); or a string's bytes Val at Off.
// The slices point into the value or the caller's buffer, good while the
// key's shard stays locked.
type Change struct {
	Del   bool
	Item  []byte
	Score float64
	Val   []byte
	Off   int64
}

// AppendChanges appends to dst the changes in place that the execution
// made to the value e of the journal's entry je (so the shard is still
// locked and the execution not committed), each touched part once or
// more, with its state now; ints is scratch for members made from
// integers. ok is false when the changes cannot be said that way: the
// key was replaced (je.Whole), a change was not recorded, it is a list
// (a pop leaves no record), or the changes are about as big as the value,
// which is then the smaller statement. ok with nothing appended: only the
// expiry changed, if anything.
func (c *Effects) AppendChanges(dst []Change, ints []byte, je JournalEntry, e *Entry) (out []Change, buf []byte, ok bool) {
	if je.Whole || e == nil {
		return dst, ints, false
	}
	switch v := e.Obj().(type) {
	case *ZSet:
		if !c.zrec.held(v) {
			return dst, ints, !je.plain // untouched but for its expiry
		}
		if n := c.zrec.count(v); n > 8 && n > v.Len() {
			return dst, ints, false
		}
		return c.zrec.appendFinal(dst, ints, v)
	case *Hash, *Set:
		if je.plain {
			return dst, ints, false
		}
		p := objPointer(v)
		if c.drec.count(p) > lenOf(v) {
			return dst, ints, false
		}
		for i := range c.drec.ents {
			d := &c.drec.ents[i]
			if d.obj != p {
				continue
			}
			ch := Change{Item: c.drec.buf[d.off:d.end]}
			if h, isHash := v.(*Hash); isHash {
				ch.Val, ok = h.Get(ch.Item)
				ch.Del = !ok
			} else {
				ch.Del = !v.(*Set).Has(ch.Item)
			}
			dst = append(dst, ch)
		}
		return dst, ints, true
	case nil:
		if je.plain {
			return dst, ints, false
		}
		p := unsafe.Pointer(e)
		if c.drec.count(p) == 0 {
			return dst, ints, true
		}
		if !e.HasBytes() {
			return dst, ints, false
		}
		s := e.StrBytes()
		var bytes, patches int64
		c.drec.eachRange(e, func(off, n int64) { bytes, patches = bytes+n, patches+1 })
		if bytes+16*patches >= int64(len(s)) {
			return dst, ints, false
		}
		c.drec.eachRange(e, func(off, n int64) {
			dst = append(dst, Change{Off: off, Val: s[off : off+n]})
		})
		return dst, ints, true
	}
	return dst, ints, false
}

// objPointer is the pointer the delta recorder knows a hash or set by.
func objPointer(v any) unsafe.Pointer {
	switch v := v.(type) {
	case *Hash:
		return unsafe.Pointer(v)
	case *Set:
		return unsafe.Pointer(v)
	}
	return nil
}

func lenOf(v any) int {
	switch v := v.(type) {
	case *Hash:
		return v.Len()
	case *Set:
		return v.Len()
	}
	return 0
}

// appendFinal appends a Change for each member of z this execution
// changed, with its score now, or Del if it is gone; members recorded as
// integers are printed into ints.
func (r *zsetRec) appendFinal(dst []Change, ints []byte, z *ZSet) ([]Change, []byte, bool) {
	for i := range r.ents {
		e := &r.ents[i]
		if e.z != z {
			continue
		}
		var m []byte
		if e.isInt {
			at := len(ints)
			ints = strconv.AppendInt(ints, e.ival, 10)
			m = ints[at:len(ints):len(ints)]
		} else {
			m = r.buf[e.off:e.end]
		}
		sc, present := z.Score(m)
		dst = append(dst, Change{Item: m, Score: sc, Del: !present})
	}
	return dst, ints, true
}

// NoteSetMember records that member of s, a set the execution changes in
// place, was added or removed: the stream then says SADD or SREM of it
// rather than the whole set.
func (x *Tx) NoteSetMember(s *Set, member []byte) {
	if x.fx != nil {
		x.fx.drec.add(unsafe.Pointer(s), 0, 0, member)
	}
}

// NoteListSpan records, for the stream, where l is before a command that
// may change it: the span of the first note of an execution is where the
// list started (AppendListChanges). Nothing without replication.
func (x *Tx) NoteListSpan(l *List) {
	if x.fx != nil && x.fx.jr != nil {
		x.fx.drec.ents = append(x.fx.drec.ents, deltaEnt{obj: unsafe.Pointer(l), a: l.pos, b: int64(l.n), off: -1})
	}
}

// ListChange is how a list changed in place, as a replica's list is made
// the same: Front elements pushed at its head (the list's first ones now,
// pushed last first), Back at its tail (its last ones), then the list
// trimmed of TrimFront elements at its head and TrimBack at its tail,
// then the elements AppendListChanges gives set (LSET).
type ListChange struct {
	Front, Back         int
	TrimFront, TrimBack int
}

// AppendListChanges is AppendChanges for a list, which needs where the
// list began (NoteListSpan): the ListChange and, appended to dst, the
// elements changed within what was there before (Off their index now,
// Val their value). ok is false where the list is to be streamed whole:
// a change not recorded, no span noted, none of the old elements left,
// or changes as many as the list holds.
func (c *Effects) AppendListChanges(dst []Change, je JournalEntry, e *Entry) (out []Change, lc ListChange, ok bool) {
	if je.Whole || je.plain || e == nil {
		return dst, lc, false
	}
	l, isList := e.Obj().(*List)
	if !isList {
		return dst, lc, false
	}
	p := unsafe.Pointer(l)
	var pos0, end0 int64
	spanned, touched := false, false
	for i := range c.drec.ents {
		d := &c.drec.ents[i]
		if d.obj != p {
			continue
		}
		if d.off < 0 && !spanned {
			pos0, end0, spanned = d.a, d.a+d.b, true
		}
		touched = touched || d.off >= 0
	}
	if !spanned {
		// Untouched but for its expiry, or changed where no span was
		// noted: whole then.
		return dst, lc, !touched && je.Exp
	}
	pos, end := l.pos, l.pos+int64(l.n)
	lo, hi := max(pos, pos0), min(end, end0)
	if lo >= hi {
		return dst, lc, false
	}
	lc.Front, lc.TrimFront = int(max(0, pos0-pos)), int(max(0, pos-pos0))
	lc.Back, lc.TrimBack = int(max(0, end-end0)), int(max(0, end0-end))
	sets := 0
	for i := range c.drec.ents {
		d := &c.drec.ents[i]
		if d.obj == p && d.off >= 0 && d.a >= lo && d.a < hi {
			sets++
		}
	}
	if lc.Front+lc.Back+sets >= l.n {
		return dst, lc, false
	}
	for i := range c.drec.ents {
		d := &c.drec.ents[i]
		if d.obj == p && d.off >= 0 && d.a >= lo && d.a < hi {
			at := d.a - pos
			dst = append(dst, Change{Off: at, Val: l.At(int(at))})
		}
	}
	return dst, lc, true
}
