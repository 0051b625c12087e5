package zsetlite

import (
	"strings"
	"unsafe"
)

// The large encoding's ordered index: a B+tree of (score, member) items that
// counts the items under every child, so rank, select-by-rank and counting a
// range are O(log n). Items live only in leaves. An internal node keeps, for
// each child, a lower bound of that child's items (seps[i], unused for
// i == 0) and the child's item count (cnts[i]).
//
// Invariants:
//   - every leaf is at the same depth; no node is empty except an empty root;
//   - items in kids[i] are >= seps[i] and < seps[i+1] (separators are lower
//     bounds that may lag behind deletions, never exact minima, which spares
//     fixing them on delete);
//   - cnts[i] is the number of items under kids[i].
//
// Inserting past the end of a full leaf starts a new leaf instead of halving
// the full one, so the window pattern (ever-increasing scores) keeps leaves
// full; deleting a prefix drops whole leaves.
const (
	maxLeaf = 64
	maxKids = 64
	minFill = 16 // a child smaller than this is merged with a neighbour that has room
)

type item struct {
	score  float64
	member string
}

// cmpItem orders by score, then member bytes. -0 and 0 are equal scores.
func cmpItem(a, b item) int {
	if a.score < b.score {
		return -1
	}
	if a.score > b.score {
		return 1
	}
	return strings.Compare(a.member, b.member)
}

type node struct {
	items []item  // leaf
	kids  []*node // internal; nil in a leaf
	seps  []item  // internal
	cnts  []int   // internal
}

func (n *node) leaf() bool { return n.kids == nil }

func (n *node) size() int {
	if n.leaf() {
		return len(n.items)
	}
	return len(n.kids)
}

func (n *node) count() int {
	if n.leaf() {
		return len(n.items)
	}
	c := 0
	for _, v := range n.cnts {
		c += v
	}
	return c
}

// pred is a monotone predicate over the order: true for a (possibly empty)
// prefix of the items and false after it.
type pred func(item) bool

// route returns the child of internal node n whose range holds the boundary
// of p: the last i >= 1 with p(seps[i]), or 0.
func (n *node) route(p pred) int {
	lo, hi := 1, len(n.kids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p(n.seps[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

func searchItems(items []item, p pred) int {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p(items[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

type btree struct {
	root *node
	n    int
}

// rank returns how many items satisfy p (the length of p's true prefix).
func (t *btree) rank(p pred) int {
	n := t.root
	if n == nil {
		return 0
	}
	r := 0
	for !n.leaf() {
		i := n.route(p)
		for _, c := range n.cnts[:i] {
			r += c
		}
		n = n.kids[i]
	}
	return r + searchItems(n.items, p)
}

// contains reports whether an item equal to it is in the tree.
func (t *btree) contains(it item) bool {
	n := t.root
	if n == nil {
		return false
	}
	for !n.leaf() {
		n = n.kids[n.route(func(x item) bool { return cmpItem(x, it) <= 0 })]
	}
	i := searchItems(n.items, func(x item) bool { return cmpItem(x, it) < 0 })
	return i < len(n.items) && cmpItem(n.items[i], it) == 0
}

// at returns the item of rank r, 0 <= r < t.n.
func (t *btree) at(r int) item {
	n := t.root
	for !n.leaf() {
		i := 0
		for r >= n.cnts[i] {
			r -= n.cnts[i]
			i++
		}
		n = n.kids[i]
	}
	return n.items[r]
}

func (t *btree) insert(it item) {
	if t.root == nil {
		t.root = &node{}
	}
	t.n++
	right, sep := t.root.insert(it)
	if right != nil {
		left := t.root
		t.root = &node{
			kids: []*node{left, right},
			seps: []item{{}, sep},
			cnts: []int{left.count(), right.count()},
		}
	}
}

// insert adds it under n; when n splits it returns the new right sibling
// and its separator.
func (n *node) insert(it item) (*node, item) {
	less := func(x item) bool { return cmpItem(x, it) < 0 }
	if n.leaf() {
		i := searchItems(n.items, less)
		if len(n.items) < maxLeaf {
			n.items = insertAt(n.items, i, it)
			return nil, item{}
		}
		// Leaves grow by append (1, 2, 4 ... 64 items, each a size
		// class), so a set just past the threshold and the rightmost
		// leaf of a growing one do not pay for 64 slots.
		right := &node{}
		if i == len(n.items) {
			right.items = append(right.items, it)
			return right, it
		}
		h := len(n.items) / 2
		right.items = append(right.items, n.items[h:]...)
		clear(n.items[h:])
		n.items = n.items[:h]
		if i <= h {
			n.items = insertAt(n.items, i, it)
		} else {
			right.items = insertAt(right.items, i-h, it)
		}
		return right, right.items[0]
	}
	// An item equal to a separator belongs to the separator's child.
	i := n.route(func(x item) bool { return cmpItem(x, it) <= 0 })
	kr, ksep := n.kids[i].insert(it)
	n.cnts[i]++
	if kr == nil {
		return nil, item{}
	}
	kc := kr.count()
	n.cnts[i] -= kc
	n.kids = insertAt(n.kids, i+1, kr)
	n.seps = insertAt(n.seps, i+1, ksep)
	n.cnts = insertAt(n.cnts, i+1, kc)
	if len(n.kids) <= maxKids {
		return nil, item{}
	}
	h := len(n.kids) / 2
	if i+1 == len(n.kids)-1 {
		h = len(n.kids) - 1 // appending: leave this node full
	}
	right := &node{
		kids: append([]*node(nil), n.kids[h:]...),
		seps: append([]item(nil), n.seps[h:]...),
		cnts: append([]int(nil), n.cnts[h:]...),
	}
	clear(n.kids[h:])
	clear(n.seps[h:])
	n.kids, n.seps, n.cnts = n.kids[:h], n.seps[:h], n.cnts[:h]
	return right, right.seps[0]
}

func insertAt[T any](s []T, i int, v T) []T {
	var zero T
	s = append(s, zero)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

func removeAt[T any](s []T, i int) []T {
	copy(s[i:], s[i+1:])
	var zero T
	s[len(s)-1] = zero
	return s[:len(s)-1]
}

// delete removes the item equal to it and returns the stored one.
func (t *btree) delete(it item) (item, bool) {
	if t.root == nil {
		return item{}, false
	}
	old, ok := t.root.delete(it)
	if ok {
		t.n--
		t.shrinkRoot()
	}
	return old, ok
}

func (n *node) delete(it item) (item, bool) {
	less := func(x item) bool { return cmpItem(x, it) < 0 }
	if n.leaf() {
		i := searchItems(n.items, less)
		if i == len(n.items) || cmpItem(n.items[i], it) != 0 {
			return item{}, false
		}
		old := n.items[i]
		n.items = removeAt(n.items, i)
		return old, true
	}
	i := n.route(func(x item) bool { return cmpItem(x, it) <= 0 })
	old, ok := n.kids[i].delete(it)
	if !ok {
		return item{}, false
	}
	n.cnts[i]--
	n.fix(i)
	return old, true
}

// fix restores the invariants around kids[i] after items left it: an empty
// child goes, a small one merges with a neighbour that has room for it.
func (n *node) fix(i int) {
	k := n.kids[i]
	if n.cnts[i] == 0 {
		n.kids = removeAt(n.kids, i)
		n.seps = removeAt(n.seps, i)
		n.cnts = removeAt(n.cnts, i)
		return
	}
	if k.size() >= minFill {
		return
	}
	limit := maxKids
	if k.leaf() {
		limit = maxLeaf
	}
	switch {
	case i+1 < len(n.kids) && k.size()+n.kids[i+1].size() <= limit:
		n.merge(i)
	case i > 0 && n.kids[i-1].size()+k.size() <= limit:
		n.merge(i - 1)
	}
}

// merge moves kids[i+1] into kids[i].
func (n *node) merge(i int) {
	l, r := n.kids[i], n.kids[i+1]
	if l.leaf() {
		l.items = append(l.items, r.items...)
	} else {
		l.kids = append(l.kids, r.kids...)
		// r's first child is bounded below by r's own separator.
		l.seps = append(l.seps, n.seps[i+1])
		l.seps = append(l.seps, r.seps[1:]...)
		l.cnts = append(l.cnts, r.cnts...)
	}
	n.cnts[i] += n.cnts[i+1]
	n.kids = removeAt(n.kids, i+1)
	n.seps = removeAt(n.seps, i+1)
	n.cnts = removeAt(n.cnts, i+1)
}

func (t *btree) shrinkRoot() {
	for t.root != nil && !t.root.leaf() && len(t.root.kids) == 1 {
		t.root = t.root.kids[0]
	}
	if t.n == 0 {
		t.root = nil
	}
}

// deleteRange removes ranks [lo, hi), calling gone for each removed item
// before it is removed.
func (t *btree) deleteRange(lo, hi int, gone func(item)) {
	if lo >= hi {
		return
	}
	t.root.deleteRange(lo, hi, gone)
	t.n -= hi - lo
	t.shrinkRoot()
}

func (n *node) deleteRange(lo, hi int, gone func(item)) {
	if n.leaf() {
		for _, it := range n.items[lo:hi] {
			gone(it)
		}
		m := copy(n.items[lo:], n.items[hi:])
		clear(n.items[lo+m:])
		n.items = n.items[:lo+m]
		return
	}
	first, last := -1, -1
	off := 0
	for i := 0; i < len(n.kids) && off < hi; i++ {
		c := n.cnts[i]
		if off+c > lo {
			a, b := max(lo-off, 0), min(hi-off, c)
			if a == 0 && b == c {
				n.kids[i].each(gone)
			} else {
				n.kids[i].deleteRange(a, b, gone)
			}
			n.cnts[i] -= b - a
			if first < 0 {
				first = i
			}
			last = i
		}
		off += c
	}
	// Drop emptied children, then mend the (at most two) partial ones.
	w := first
	for i := first; i <= last; i++ {
		if n.cnts[i] > 0 {
			n.kids[w], n.seps[w], n.cnts[w] = n.kids[i], n.seps[i], n.cnts[i]
			w++
		}
	}
	k := copy(n.kids[w:], n.kids[last+1:])
	copy(n.seps[w:], n.seps[last+1:])
	copy(n.cnts[w:], n.cnts[last+1:])
	clear(n.kids[w+k:])
	clear(n.seps[w+k:])
	n.kids, n.seps, n.cnts = n.kids[:w+k], n.seps[:w+k], n.cnts[:w+k]
	for i := min(w, len(n.kids)-1); i >= max(first-1, 0) && i < len(n.kids); i-- {
		n.fix(i)
	}
}

// each calls fn for every item under n, in order.
func (n *node) each(fn func(item)) {
	if n.leaf() {
		for _, it := range n.items {
			fn(it)
		}
		return
	}
	for _, k := range n.kids {
		k.each(fn)
	}
}

// ascend calls fn for the items of rank >= from under n, in order, until fn
// returns false; it reports whether fn never did.
func (n *node) ascend(from int, fn func(item) bool) bool {
	if n.leaf() {
		for _, it := range n.items[from:] {
			if !fn(it) {
				return false
			}
		}
		return true
	}
	for i, c := range n.cnts {
		if from >= c {
			from -= c
			continue
		}
		if !n.kids[i].ascend(from, fn) {
			return false
		}
		from = 0
	}
	return true
}

// descend calls fn for the items of rank <= from under n, in reverse order.
func (n *node) descend(from int, fn func(item) bool) bool {
	if n.leaf() {
		for i := from; i >= 0; i-- {
			if !fn(n.items[i]) {
				return false
			}
		}
		return true
	}
	i := 0
	for from >= n.cnts[i] {
		from -= n.cnts[i]
		i++
	}
	for ; i >= 0; i-- {
		if !n.kids[i].descend(from, fn) {
			return false
		}
		if i > 0 {
			from = n.cnts[i-1] - 1
		}
	}
	return true
}

// memory estimates the heap bytes of the nodes.
func (n *node) memory() int {
	b := allocSize(int(unsafe.Sizeof(*n))) + allocSize(cap(n.items)*int(unsafe.Sizeof(item{})))
	if n.leaf() {
		return b
	}
	b += allocSize(cap(n.kids)*8) + allocSize(cap(n.seps)*int(unsafe.Sizeof(item{}))) + allocSize(cap(n.cnts)*8)
	for _, k := range n.kids {
		b += k.memory()
	}
	return b
}
