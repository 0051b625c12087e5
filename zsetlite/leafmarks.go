package zsetlite

// Leaf marks: a leaf's entries have variable lengths and no offsets table,
// so finding one used to be a walk of up to 32 entries, which cost most of a
// large set's ZSCORE, ZRANK and ZREM. A leaf therefore keeps the byte offset
// of every markStride-th entry (entries markStride, 2*markStride, ...) in
// spare room of its node struct: a lookup binary-searches those entries and
// walks at most markStride-1 more. The marks take the 12 bytes between the
// node's 36 bytes of fields and its 48-byte size class, so they cost no
// memory.
//
// Invariant: for every j with (j+1)*markStride < n, marks[j] is the offset
// of entry (j+1)*markStride; other marks mean nothing. Appending keeps the
// marks before the new entry and adds one when the entry falls on a mark;
// a cut (ZREM, range removals) moves them (cut); every other change to a
// leaf's bytes (middle inserts, splits, merges) rebuilds them (remark).
const (
	markStride = 5
	numMarks   = 6 // (numMarks+1)*markStride >= maxLeaf: no walk is longer than markStride-1 entries
)

// liveMarks is how many marks hold: those of entries below n.
func (n *node) liveMarks() int {
	return min((int(n.n)-1)/markStride, numMarks)
}

// remark rebuilds the marks from the leaf's bytes. A leaf past
// maxLeafBytes holds one entry (see overfull), so every marked offset fits
// 16 bits.
func (n *node) remark() {
	live := n.liveMarks()
	off := 0
	for j := range live {
		for range markStride {
			off = skip(n.p, off)
		}
		n.marks[j] = uint16(off)
	}
}

// markAppended records the entry just appended at off, now the last of n.n.
func (n *node) markAppended(off int) {
	if i := int(n.n) - 1; i%markStride == 0 && i > 0 && i/markStride <= numMarks {
		n.marks[i/markStride-1] = uint16(off)
	}
}

// markStart returns the entry index and offset to start a walk for the
// first entry that fails p: the last marked entry that satisfies p, or the
// first entry. p must be monotone over the leaf, as every pred is.
func (n *node) markStart(p *pred, scratch *[20]byte) (i, off int) {
	lo, hi := 0, n.liveMarks() // marks[:lo] hold p, marks[hi:] do not
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.holdsAt(n.p, int(n.marks[m]), scratch) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0
	}
	return lo * markStride, int(n.marks[lo-1])
}

// markBelow is markStart for an exact lookup of score: the last marked
// entry whose score is below it, by scores alone (every entry before that
// one is below the key whatever its member).
func (n *node) markBelow(score float64) (i, off int) {
	lo, hi := 0, n.liveMarks()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if sc, _ := entryScore(n.p, int(n.marks[m])); sc < score {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, 0
	}
	return lo * markStride, int(n.marks[lo-1])
}

// seek returns the offset of the leaf's entry of rank r (len(n.p) for
// r == n.n), starting from the nearest mark.
func (n *node) seek(r int) int {
	j := min(r/markStride, n.liveMarks())
	off := 0
	if j > 0 {
		off = int(n.marks[j-1])
		r -= j * markStride
	}
	for ; r > 0; r-- {
		off = skip(n.p, off)
	}
	return off
}

// cut removes entries [lo, hi), the bytes p[a:z], from the leaf. Each new
// mark is an old entry at or after hi: it is found from the old mark at or
// below it in fewer than markStride steps, the steps of different marks
// independent of each other, which is cheaper than remark's one long walk
// (the window's prefix removal cuts its first leaf on every step).
func (n *node) cut(lo, hi, a, z int) {
	c := hi - lo
	old := n.marks
	oldLive := n.liveMarks()
	n.n -= int32(c)
	for j := range n.liveMarks() {
		m := (j + 1) * markStride
		if m < lo {
			continue
		}
		src := m + c                         // the entry's old index
		from := min(src/markStride, oldLive) // start at old mark from-1, or at entry 0
		off := 0
		if from > 0 {
			off = int(old[from-1])
			src -= from * markStride
		}
		for ; src > 0; src-- {
			off = skipFast(n.p, off)
		}
		n.marks[j] = uint16(off - (z - a))
	}
	n.p = cutBytes(n.p, a, z)
}

// skipFast is skip with its common case, an entry whose header gives its
// length, inlined into the caller's loop.
func skipFast(p []byte, off int) int {
	if l := entryLen[p[off]]; l != 0 {
		return off + int(l)
	}
	return skip(p, off)
}
