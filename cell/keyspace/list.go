package keyspace

import "slices"

// List is the value of a list key: a deque of byte strings in a ring
// buffer, so pushes and pops at either end are O(1) amortized and indexing
// is O(1). Inserting or removing in the middle (LINSERT, LREM) moves the
// elements after it, as a listpack would.
//
// Invariants: len(buf) is zero or a power of two; the elements are
// buf[(head+i) & (len(buf)-1)] for 0 <= i < n; unused slots are nil, so
// popped values can be collected. A List is never empty while it is stored
// in the keyspace.
type List struct {
	buf  [][]byte
	head int
	n    int
	// pos numbers the head element: LPUSH takes pos-1, LPOP moves it on.
	// The effect log names elements by it (delta_persist.go), so that a
	// push or pop on a long list is logged as what it changed.
	pos int64
}

// NewList returns an empty list.
func NewList() *List { return &List{} }

// newListSized returns an empty list with room for n elements, for one
// loaded whole (newHashSized says why). The ring's size stays a power of
// two, at least grow's 4.
func newListSized(n int) *List {
	size := 4
	for size < n {
		size *= 2
	}
	return &List{buf: make([][]byte, size)}
}

// TypeName is the TYPE of a list key.
func (l *List) TypeName() string { return "list" }

// Encoding is what OBJECT ENCODING reports. Redis 7.0 stores every list as
// a quicklist (of listpack nodes), however small; the plain listpack
// encoding for small lists arrived in 7.2.
func (l *List) Encoding() string { return "quicklist" }

// Len is the number of elements.
func (l *List) Len() int { return l.n }

func (l *List) slot(i int) int { return (l.head + i) & (len(l.buf) - 1) }

// At returns the i-th element from the head, 0 <= i < Len(). The value is
// the list's own: callers must not keep or change it.
func (l *List) At(i int) []byte { return l.buf[l.slot(i)] }

// Set replaces the i-th element with a copy of v, 0 <= i < Len().
func (l *List) Set(i int, v []byte) { l.buf[l.slot(i)] = ownCopy(v) }

// grow makes room for one more element.
func (l *List) grow() {
	if l.n < len(l.buf) {
		return
	}
	size := max(4, 2*len(l.buf))
	nb := make([][]byte, size)
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[l.slot(i)]
	}
	l.buf, l.head = nb, 0
}

// shrink gives memory back when the list has emptied to a quarter of its
// buffer, so a list that was once long does not hold its peak forever.
func (l *List) shrink() {
	if len(l.buf) <= 16 || l.n > len(l.buf)/4 {
		return
	}
	nb := make([][]byte, len(l.buf)/2)
	for i := 0; i < l.n; i++ {
		nb[i] = l.buf[l.slot(i)]
	}
	l.buf, l.head = nb, 0
}

// PushFront adds a copy of v at the head (LPUSH).
func (l *List) PushFront(v []byte) {
	l.grow()
	l.head = (l.head - 1) & (len(l.buf) - 1)
	l.buf[l.head] = ownCopy(v)
	l.n++
	l.pos--
}

// PushBack adds a copy of v at the tail (RPUSH).
func (l *List) PushBack(v []byte) {
	l.grow()
	l.buf[l.slot(l.n)] = ownCopy(v)
	l.n++
}

// PopFront removes and returns the head element. The list must not be empty.
func (l *List) PopFront() []byte {
	v := l.buf[l.head]
	l.buf[l.head] = nil
	l.head = (l.head + 1) & (len(l.buf) - 1)
	l.n--
	l.pos++
	l.shrink()
	return v
}

// PopBack removes and returns the tail element. The list must not be empty.
func (l *List) PopBack() []byte {
	s := l.slot(l.n - 1)
	v := l.buf[s]
	l.buf[s] = nil
	l.n--
	l.shrink()
	return v
}

// Insert puts a copy of v at position i (0 <= i <= Len()), moving the
// shorter side of the list by one. The elements [lo, hi) of the list
// after it are the new one and those that moved, the others keep their
// positions in pos's numbering (what ListChanged logs).
func (l *List) Insert(i int, v []byte) (lo, hi int) {
	if i == 0 {
		l.PushFront(v)
		return 0, 1
	}
	if i == l.n {
		l.PushBack(v)
		return i, i + 1
	}
	l.grow()
	if i < l.n/2 {
		l.head = (l.head - 1) & (len(l.buf) - 1)
		l.pos--
		for j := 0; j < i; j++ {
			l.buf[l.slot(j)] = l.buf[l.slot(j+1)]
		}
		lo, hi = 0, i+1
	} else {
		for j := l.n; j > i; j-- {
			l.buf[l.slot(j)] = l.buf[l.slot(j-1)]
		}
		lo, hi = i, l.n+1
	}
	l.buf[l.slot(i)] = ownCopy(v)
	l.n++
	return lo, hi
}

// Trim keeps the elements [start, stop) and drops the rest,
// 0 <= start <= stop <= Len().
func (l *List) Trim(start, stop int) {
	for i := 0; i < start; i++ {
		l.buf[l.slot(i)] = nil
	}
	for i := stop; i < l.n; i++ {
		l.buf[l.slot(i)] = nil
	}
	if len(l.buf) > 0 {
		l.head = l.slot(start)
	}
	l.n = stop - start
	l.pos += int64(start)
	l.shrink()
}

// RemoveIf drops the elements for which drop returns true, visiting them
// from the head (fromTail false) or from the tail, and returns how many
// it dropped. drop sees each element once, in visiting order. The kept
// elements then close up toward the end nearer the dropped ones, as few
// moving as can; those that moved are [lo, hi) of the list after it, the
// others keep their positions in pos's numbering (what ListChanged logs).
func (l *List) RemoveIf(fromTail bool, drop func(v []byte) bool) (removed, lo, hi int) {
	var gone []int // the indexes dropped, ascending
	for k := 0; k < l.n; k++ {
		i := k
		if fromTail {
			i = l.n - 1 - k
		}
		if drop(l.At(i)) {
			gone = append(gone, i)
		}
	}
	removed = len(gone)
	if removed == 0 {
		return 0, 0, 0
	}
	if fromTail {
		slices.Reverse(gone)
	}
	first, last := gone[0], gone[removed-1]
	if l.n-first <= last+1 {
		// Toward the head: the kept elements after first move back.
		w, j := first, 0
		for r := first; r < l.n; r++ {
			if j < removed && gone[j] == r {
				j++
				continue
			}
			l.buf[l.slot(w)] = l.buf[l.slot(r)]
			w++
		}
		for i := w; i < l.n; i++ {
			l.buf[l.slot(i)] = nil
		}
		l.n = w
		lo, hi = first, w
	} else {
		// Toward the tail: the kept elements before last move on.
		w, j := last, removed-1
		for r := last; r >= 0; r-- {
			if j >= 0 && gone[j] == r {
				j--
				continue
			}
			l.buf[l.slot(w)] = l.buf[l.slot(r)]
			w--
		}
		// The kept elements now occupy [w+1, n).
		for i := 0; i <= w; i++ {
			l.buf[l.slot(i)] = nil
		}
		l.head = l.slot(w + 1)
		l.n -= w + 1
		l.pos += int64(w + 1)
		lo, hi = 0, last+1-removed
	}
	l.shrink()
	return removed, lo, hi
}

// ownCopy copies b so the keyspace never aliases a request buffer.
func ownCopy(b []byte) []byte { return append([]byte(nil), b...) }
