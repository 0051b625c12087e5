package zsetlite

import (
	"bytes"
	"encoding/binary"
	"github.com/cellserver/cellserver/internal/prefetch"
	"math"
	"unsafe"
)

// The large encoding's ordered index: a B+tree whose leaves are packed
// blocks of entries in the codec of packed.go (a leaf of millisecond
// timestamps costs 8 bytes an entry, with no pointer for the collector to
// follow), and whose internal nodes count the entries under every child, so
// rank, select-by-rank and counting a range are O(log n). An internal node
// keeps, for each child, a lower bound of that child's entries (seps[i],
// unused for i == 0, its member a string of its own) and the child's entry
// count (cnts[i]).
//
// Leaves differ from the packed set in one way: a -0 score is stored as a
// float, not as the integer 0, because a skiplist keeps -0 (ZSCORE says
// "-0"); see leafScoreKind.
//
// Invariants:
//   - every leaf is at the same depth; no node is empty except an empty root;
//   - entries in kids[i] are >= seps[i] and < seps[i+1] (separators are lower
//     bounds that may lag behind deletions, never exact minima, which spares
//     fixing them on delete);
//   - cnts[i] is the number of entries under kids[i];
//   - a leaf holds at most maxLeaf entries and, unless it holds one entry,
//     at most maxLeafBytes bytes (see splitLeaf).
//
// Inserting past the end of a full leaf starts a new leaf instead of halving
// the full one (and trims the full one's spare capacity), so the window
// pattern (ever-increasing scores) keeps leaves full; deleting a prefix
// drops whole leaves without decoding them when nothing needs to see the
// removed members.
const (
	// A leaf is searched through its marks and a walk of at most
	// markStride-1 entries (leafmarks.go): 64 entries would need twice
	// the marks, more than the node's spare room holds, or twice the
	// walk, to save 1.8 bytes an element.
	maxLeaf      = 32
	maxLeafBytes = 4096 // keeps memmoves short when members are long
	maxKids      = 64
	minFill      = 16 // a child smaller than this is merged with a neighbour that has room
)

// item is a separator: a score and a member of its own.
type item struct {
	score  float64
	member string
}

type node struct {
	p     []byte           // leaf: the packed entries
	in    *inner           // nil in a leaf
	n     int32            // leaf: how many entries p holds
	marks [numMarks]uint16 // leaf: offsets of every markStride-th entry (leafmarks.go)
}

// inner is an internal node's children, kept apart so that a leaf (most
// nodes) is a small pointer-light struct.
type inner struct {
	kids []*node
	seps []item
	cnts []int
}

func (n *node) leaf() bool { return n.in == nil }

func (n *node) size() int {
	if n.leaf() {
		return int(n.n)
	}
	return len(n.in.kids)
}

func (n *node) count() int {
	if n.leaf() {
		return int(n.n)
	}
	c := 0
	for _, v := range n.in.cnts {
		c += v
	}
	return c
}

// predOp names the monotone predicates the tree searches by.
type predOp uint8

const (
	predLess           predOp = iota // (score, member) < the key
	predLessEq                       // (score, member) <= the key
	predBelowMin                     // score below a ScoreRange's minimum
	predNotAboveMax                  // score at or below a ScoreRange's maximum
	predLexBelowMin                  // member below a LexRange's minimum
	predLexNotAboveMax               // member at or below a LexRange's maximum
	predAll                          // every entry: the place past the last one
)

// pred is a monotone predicate over the order: true for a (possibly empty)
// prefix of the entries and false after it. It is a value with a method,
// not a closure, so that members formatted into a caller's stack scratch
// can be passed to it without escaping to the heap.
type pred struct {
	op     predOp
	score  float64
	member []byte
	// keyInt is member as an integer when it is one (keyIsInt): an entry
	// with an integer member then matches it without being formatted.
	keyInt   int64
	keyIsInt bool
	sr       *ScoreRange
	lr       *LexRange
}

// keyPred is predLess or predLessEq of (score, member).
func keyPred(op predOp, score float64, member []byte) pred {
	v, ok := parseCanonicalInt(member)
	return pred{op: op, score: score, member: member, keyInt: v, keyIsInt: ok}
}

// needsMember reports whether holds must see the member of an entry with
// this score; integer members then need formatting.
func (p *pred) needsMember(score float64) bool {
	switch p.op {
	case predLess, predLessEq:
		return score == p.score
	case predLexBelowMin, predLexNotAboveMax:
		return true
	}
	return false
}

func (p *pred) holds(score float64, member []byte) bool {
	switch p.op {
	case predLess, predLessEq:
		if score != p.score {
			return score < p.score
		}
		c := bytes.Compare(member, p.member)
		return c < 0 || c == 0 && p.op == predLessEq
	case predBelowMin:
		return score < p.sr.Min || score == p.sr.Min && p.sr.MinEx
	case predNotAboveMax:
		return score < p.sr.Max || score == p.sr.Max && !p.sr.MaxEx
	case predLexBelowMin:
		return p.lr.belowMin(member)
	case predLexNotAboveMax:
		return p.lr.notAboveMax(member)
	}
	return true // predAll
}

func (p *pred) holdsItem(it *item) bool {
	return p.holds(it.score, unsafeBytes(it.member))
}

func (p *pred) holdsEntry(e *pentry, scratch *[20]byte) bool {
	if !p.needsMember(e.score) {
		return p.holds(e.score, nil)
	}
	if e.isInt && p.keyIsInt && e.ival == p.keyInt && p.op <= predLessEq {
		return p.op == predLessEq // the key itself
	}
	return p.holds(e.score, e.member(scratch))
}

// route returns the child of internal node n whose range holds the boundary
// of p: the last i >= 1 with p(seps[i]), or 0.
func (n *node) route(p *pred) int {
	seps := n.in.seps
	lo, hi := 1, len(seps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.holdsItem(&seps[m]) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// routeKey is route for a predLessEq key pred (exact lookups and
// removals), with the comparison written out: the last i >= 1 whose
// separator is at or below the key, or 0.
func (n *node) routeKey(p *pred) int {
	seps := n.in.seps
	lo, hi := 1, len(seps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		it := &seps[m]
		if it.score < p.score || it.score == p.score && bytes.Compare(unsafeBytes(it.member), p.member) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// leafSearch returns how many of the leaf's entries satisfy p and the
// offset of the first that does not. When the last entry satisfies p all
// do, which makes appending O(1) in the leaf. Otherwise it walks the
// entries before the first mark (the window's prefix removal ends its
// range there, where a walk is cheaper than probing marks), then lets the
// marks narrow the rest to fewer than markStride entries. The walk reads
// scores only, decoding a member only where p must see it.
func (n *node) leafSearch(p *pred) (i, off int) {
	if n.n == 0 {
		return 0, 0
	}
	var scratch [20]byte
	q := n.p
	if last := lastEntry(q); p.holdsAt(q, last, &scratch) {
		return int(n.n), len(q)
	}
	for off < len(q) {
		if i == markStride {
			if j, o := n.markStart(p, &scratch); j > i {
				i, off = j, o
			}
		}
		sc, end := entryScore(q, off)
		if p.needsMember(sc) {
			if !p.holdsAt(q, off, &scratch) {
				break
			}
		} else if !p.holds(sc, nil) {
			break
		}
		off = end
		i++
	}
	return i, off
}

// holdsAt is holdsEntry for the entry at q[off:], decoding the member only
// when p must see it.
func (p *pred) holdsAt(q []byte, off int, scratch *[20]byte) bool {
	sc, _ := entryScore(q, off)
	if !p.needsMember(sc) {
		return p.holds(sc, nil)
	}
	e := decode(q, off)
	return p.holdsEntry(&e, scratch)
}

// memberLen gives, by member descriptor, the member's encoded size where
// the descriptor alone determines it (all but extended raw members); a
// memSelf member is its score and takes no room of its own.
var memberLen = func() (t [64]uint8) {
	for d := range t {
		switch {
		case d <= memRawInline:
			t[d] = uint8(d)
		case d >= memI8:
			t[d] = uint8(memIntSize[d-memI8])
		}
	}
	return t
}()

// entryScore reads the score and the end of the entry at off, without
// decoding the member.
func entryScore(p []byte, off int) (float64, int) {
	h := p[off]
	l := int(entryLen[h])
	if l == 0 {
		e := decode(p, off)
		return e.score, e.end
	}
	i := off + 1 + int(memberLen[h&0x3f])
	switch h & 0xc0 {
	case scoreI48:
		return float64(int48(p[i:])), off + l
	case scoreF64:
		return math.Float64frombits(binary.LittleEndian.Uint64(p[i:])), off + l
	case scoreI8:
		return float64(int8(p[i])), off + l
	default:
		return float64(int32(binary.LittleEndian.Uint32(p[i:]))), off + l
	}
}

type btree struct {
	root *node
	n    int
}

// rank returns how many entries satisfy p (the length of p's true prefix).
func (t *btree) rank(p *pred) int {
	n := t.root
	if n == nil {
		return 0
	}
	r := 0
	for !n.leaf() {
		i := n.route(p)
		for _, c := range n.in.cnts[:i] {
			r += c
		}
		n = n.in.kids[i]
	}
	i, _ := n.leafSearch(p)
	return r + i
}

// find returns the stored score of the entry equal to (score, member): the
// same value, except that it tells -0 from 0.
func (t *btree) find(score float64, member []byte) (float64, bool) {
	p := keyPred(predLessEq, score, member)
	_, sc, ok := t.findRank(&p, false)
	return sc, ok
}

// findRank is find that also returns the entry's rank when withRank, in
// the same descent: the route of an entry equal to a separator goes to the
// separator's child, so every entry of the children before it is below the
// key.
// p is the key's predLessEq pred.
func (t *btree) findRank(p *pred, withRank bool) (int, float64, bool) {
	n := t.root
	if n == nil {
		return 0, 0, false
	}
	r := 0
	for !n.leaf() {
		i := n.routeKey(p)
		if withRank {
			for _, c := range n.in.cnts[:i] {
				r += c
			}
		}
		n = n.in.kids[i]
	}
	i, off, _, sc := n.leafFind(p)
	return r + i, sc, off >= 0
}

// leafFind returns the index, offset, end and stored score of the leaf's
// entry equal to p's key (a predLessEq key pred), or a negative offset. It
// starts at the last marked entry below the key's score, compares scores
// only until it reaches the key's, and integer members as integers.
func (n *node) leafFind(p *pred) (int, int, int, float64) {
	q := n.p
	var scratch [20]byte
	i, off := n.markBelow(p.score)
	for ; off < len(q); i++ {
		sc, end := entryScore(q, off)
		if sc < p.score {
			off = end
			continue
		}
		if sc > p.score {
			break
		}
		if d := int(q[off] & 0x3f); d <= memRawInline {
			// A raw member, compared in place (an integer key is
			// always stored as an integer, so never equals it).
			if c := bytes.Compare(q[off+1:off+1+d], p.member); c == 0 {
				return i, off, end, sc
			} else if c > 0 {
				break
			}
		} else if e := decode(q, off); e.isInt && p.keyIsInt {
			if e.ival == p.keyInt {
				return i, off, end, sc
			}
		} else if c := bytes.Compare(e.member(&scratch), p.member); c == 0 {
			return i, off, end, sc
		} else if c > 0 {
			break
		}
		off = end
	}
	return 0, -1, 0, 0
}

// at returns the entry of rank r, 0 <= r < t.n.
func (t *btree) at(r int) pentry {
	n := t.root
	for !n.leaf() {
		i := 0
		for r >= n.in.cnts[i] {
			r -= n.in.cnts[i]
			i++
		}
		n = n.in.kids[i]
	}
	return decode(n.p, n.seek(r))
}

// insert adds (score, member), known to be absent; k is member's key.
func (t *btree) insert(score float64, member []byte, k *memberKey) {
	route, place := keyPred(predLessEq, score, member), keyPred(predLess, score, member)
	t.add(&route, &place, score, member, k)
}

// push adds (score, member) known to sort after every entry: the window's
// ZADD of a new newest timestamp, which then compares nothing on the way.
func (t *btree) push(score float64, member []byte, k *memberKey) {
	all := pred{op: predAll}
	t.add(&all, &all, score, member, k)
}

// maxScore returns the score of the last entry.
func (t *btree) maxScore() (float64, bool) {
	n := t.root
	if n == nil {
		return 0, false
	}
	for !n.leaf() {
		n = n.in.kids[len(n.in.kids)-1]
	}
	sc, _ := entryScore(n.p, lastEntry(n.p))
	return sc, true
}

// add inserts the entry under route (which picks children: an entry equal
// to a separator belongs to the separator's child) and place (which picks
// the position in the leaf).
func (t *btree) add(route, place *pred, score float64, member []byte, k *memberKey) {
	if t.root == nil {
		t.root = &node{}
	}
	t.n++
	sibs, seps := t.root.insert(route, place, score, member, k)
	if sibs != nil {
		left := t.root
		t.root = &node{in: &inner{
			kids: append([]*node{left}, sibs...),
			seps: append([]item{{}}, seps...),
			cnts: []int{left.count()},
		}}
		for _, r := range sibs {
			t.root.in.cnts = append(t.root.in.cnts, r.count())
		}
	}
}

// leafScoreKind is scoreKind for leaves: -0 keeps its sign as a float.
func leafScoreKind(f float64) (byte, int64) {
	if f == 0 && 1/f < 0 {
		return scoreF64, 0
	}
	return scoreKind(f)
}

// firstItem copies the leaf's first entry out as a separator.
func (n *node) firstItem() item {
	var scratch [20]byte
	e := decode(n.p, 0)
	return item{e.score, string(e.member(&scratch))}
}

// overfull reports whether a leaf breaks its size limits.
func (n *node) overfull() bool {
	return n.n > maxLeaf || n.n > 1 && len(n.p) > maxLeafBytes
}

// insert adds an entry under n; when n splits it returns the new siblings
// to its right, in order, and their separators.
func (n *node) insert(route, place *pred, score float64, member []byte, k *memberKey) ([]*node, []item) {
	if n.leaf() {
		i, off := n.leafSearch(place)
		skind, iv := leafScoreKind(score)
		sz := entrySize(k, skind, iv)
		if i == int(n.n) && n.n > 0 && (n.n == maxLeaf || len(n.p)+sz > maxLeafBytes) {
			// Appending to a full leaf: it stays full, so give back
			// its spare room, and the entry starts the next leaf,
			// sized like this one so that filling it takes one
			// allocation, not a dozen.
			n.p = trimBytes(n.p)
			buf := make([]byte, 0, max(allocSize(len(n.p)), sz))
			right := &node{p: insertEntry(buf, 0, sz, k, score, skind, iv), n: 1}
			return []*node{right}, []item{{score, string(member)}}
		}
		n.p = insertEntry(n.p, off, sz, k, score, skind, iv)
		n.n++
		if n.overfull() {
			return n.splitLeaf()
		}
		if i == int(n.n)-1 {
			n.markAppended(off)
		} else {
			n.remark()
		}
		return nil, nil
	}
	in := n.in
	i := n.route(route)
	ksibs, kseps := in.kids[i].insert(route, place, score, member, k)
	in.cnts[i]++
	if ksibs == nil {
		return nil, nil
	}
	for j, r := range ksibs {
		c := r.count()
		in.cnts[i] -= c
		in.kids = insertAt(in.kids, i+1+j, r)
		in.seps = insertAt(in.seps, i+1+j, kseps[j])
		in.cnts = insertAt(in.cnts, i+1+j, c)
	}
	if len(in.kids) <= maxKids {
		return nil, nil
	}
	h := len(in.kids) / 2
	if i+len(ksibs) == len(in.kids)-1 {
		h = maxKids // appending: leave this node full
	}
	right := &node{in: &inner{
		kids: append([]*node(nil), in.kids[h:]...),
		seps: append([]item(nil), in.seps[h:]...),
		cnts: append([]int(nil), in.cnts[h:]...),
	}}
	clear(in.kids[h:])
	clear(in.seps[h:])
	in.kids, in.seps, in.cnts = in.kids[:h], in.seps[:h], in.cnts[:h]
	return []*node{right}, []item{right.in.seps[0]}
}

// splitLeaf cuts an overfull leaf: in halves when it has one entry too
// many, else greedily into pieces within the byte budget (a long entry
// inserted in the middle of a leaf can take three). n keeps the first
// piece; the others are returned with their separators.
func (n *node) splitLeaf() ([]*node, []item) {
	var cuts, counts []int // where each later piece starts, and entries per piece
	if len(n.p) <= maxLeafBytes {
		h := int(n.n) / 2
		// Not n.seek: the insert that made n overfull left its marks stale.
		cuts, counts = []int{packedSeek(n.p, h)}, []int{h, int(n.n) - h}
	} else {
		bytes, c := 0, 0
		for off := 0; off < len(n.p); {
			end := skip(n.p, off)
			if c > 0 && (bytes+end-off > maxLeafBytes || c == maxLeaf) {
				cuts, counts = append(cuts, off), append(counts, c)
				bytes, c = 0, 0
			}
			bytes += end - off
			c++
			off = end
		}
		counts = append(counts, c)
	}
	sibs := make([]*node, len(cuts))
	seps := make([]item, len(cuts))
	for j, a := range cuts {
		z := len(n.p)
		if j+1 < len(cuts) {
			z = cuts[j+1]
		}
		sibs[j] = &node{p: append(make([]byte, 0, allocSize(z-a)), n.p[a:z]...), n: int32(counts[j+1])}
		sibs[j].remark()
		seps[j] = sibs[j].firstItem()
	}
	n.p, n.n = trimBytes(n.p[:cuts[0]]), int32(counts[0])
	n.remark()
	return sibs, seps
}

// insertEntry writes the entry (k, score) of sz bytes at p[off:], moving
// what follows; it grows p by a quarter when full, so appends are
// amortised O(1).
func insertEntry(p []byte, off, sz int, k *memberKey, score float64, skind byte, iv int64) []byte {
	need := len(p) + sz
	if need > cap(p) {
		np := make([]byte, len(p), allocSize(need+need/4))
		copy(np, p)
		p = np
	}
	p = p[:need]
	copy(p[off+sz:], p[off:need-sz])
	putEntry(p[off:off+sz], k, score, skind, iv)
	return p
}

// cutBytes removes p[a:z] with one memmove and gives memory back when the
// buffer has become mostly empty.
func cutBytes(p []byte, a, z int) []byte {
	m := copy(p[a:], p[z:])
	p = p[:a+m]
	if cap(p) > 2*len(p)+64 {
		np := make([]byte, len(p), allocSize(len(p)+len(p)/4))
		copy(np, p)
		p = np
	}
	return p
}

// trimBytes returns p in a buffer of the smallest size class that holds it.
func trimBytes(p []byte) []byte {
	if allocSize(cap(p)) <= allocSize(len(p)) {
		return p
	}
	np := make([]byte, len(p), allocSize(len(p)))
	copy(np, p)
	return np
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

// delete removes the entry equal to (score, member) and reports whether it
// was there.
func (t *btree) delete(score float64, member []byte) bool {
	p := keyPred(predLessEq, score, member)
	_, ok := t.deleteKey(&p)
	return ok
}

// deleteKey removes the entry equal to p's key (a predLessEq key pred)
// and returns its stored score, if it was there.
func (t *btree) deleteKey(p *pred) (float64, bool) {
	if t.root == nil {
		return 0, false
	}
	sc, ok := t.root.delete(p)
	if ok {
		t.n--
		t.shrinkRoot()
	}
	return sc, ok
}

// delete removes the entry equal to p's key (a predLessEq key pred, which
// routes an entry equal to a separator to the separator's child).
// It returns the removed entry's stored score (which tells -0 from 0).
func (n *node) delete(p *pred) (float64, bool) {
	if n.leaf() {
		i, off, end, sc := n.leafFind(p)
		if off < 0 {
			return 0, false
		}
		n.cut(i, i+1, off, end)
		return sc, true
	}
	i := n.routeKey(p)
	sc, ok := n.in.kids[i].delete(p)
	if !ok {
		return 0, false
	}
	n.in.cnts[i]--
	n.fix(i)
	return sc, true
}

// mergeable reports whether nodes a and b fit in one.
func mergeable(a, b *node) bool {
	if a.leaf() {
		return a.n+b.n <= maxLeaf && len(a.p)+len(b.p) <= maxLeafBytes
	}
	return len(a.in.kids)+len(b.in.kids) <= maxKids
}

// fix restores the invariants around kids[i] after entries left it: an
// empty child goes, a small one merges with a neighbour that has room for
// it.
func (n *node) fix(i int) {
	in := n.in
	k := in.kids[i]
	if in.cnts[i] == 0 {
		in.kids = removeAt(in.kids, i)
		in.seps = removeAt(in.seps, i)
		in.cnts = removeAt(in.cnts, i)
		return
	}
	if k.size() >= minFill {
		return
	}
	switch {
	case i+1 < len(in.kids) && mergeable(k, in.kids[i+1]):
		n.merge(i)
	case i > 0 && mergeable(in.kids[i-1], k):
		n.merge(i - 1)
	}
}

// merge moves kids[i+1] into kids[i].
func (n *node) merge(i int) {
	in := n.in
	l, r := in.kids[i], in.kids[i+1]
	if l.leaf() {
		if need := len(l.p) + len(r.p); need > cap(l.p) {
			np := make([]byte, len(l.p), allocSize(need))
			copy(np, l.p)
			l.p = np
		}
		l.p = append(l.p, r.p...)
		l.n += r.n
		l.remark()
	} else {
		l.in.kids = append(l.in.kids, r.in.kids...)
		// r's first child is bounded below by r's own separator.
		l.in.seps = append(l.in.seps, in.seps[i+1])
		l.in.seps = append(l.in.seps, r.in.seps[1:]...)
		l.in.cnts = append(l.in.cnts, r.in.cnts...)
	}
	in.cnts[i] += in.cnts[i+1]
	in.kids = removeAt(in.kids, i+1)
	in.seps = removeAt(in.seps, i+1)
	in.cnts = removeAt(in.cnts, i+1)
}

func (t *btree) shrinkRoot() {
	for t.root != nil && !t.root.leaf() && len(t.root.in.kids) == 1 {
		t.root = t.root.in.kids[0]
	}
	if t.n == 0 {
		t.root = nil
	}
}

// deleteRange removes ranks [lo, hi). gone, when not nil, sees each removed
// entry before it goes; without it whole leaves are dropped unread.
func (t *btree) deleteRange(lo, hi int, gone Visitor) {
	if lo >= hi {
		return
	}
	var scratch *[20]byte // only gone needs one: none, no allocation
	if gone != nil {
		scratch = new([20]byte)
	}
	t.root.deleteRange(lo, hi, gone, scratch)
	t.n -= hi - lo
	t.shrinkRoot()
}

func (n *node) deleteRange(lo, hi int, gone Visitor, scratch *[20]byte) {
	if n.leaf() {
		a := n.seek(lo)
		z := a
		for range hi - lo {
			if gone != nil {
				e := decode(n.p, z)
				gone(e.member(scratch), e.score)
				z = e.end
			} else {
				z = skip(n.p, z)
			}
		}
		n.cut(lo, hi, a, z)
		return
	}
	in := n.in
	first, last := -1, -1
	off := 0
	for i := 0; i < len(in.kids) && off < hi; i++ {
		c := in.cnts[i]
		if off+c > lo {
			a, b := max(lo-off, 0), min(hi-off, c)
			if a == 0 && b == c {
				if gone != nil {
					in.kids[i].ascend(0, gone, scratch)
				}
			} else {
				in.kids[i].deleteRange(a, b, gone, scratch)
			}
			in.cnts[i] -= b - a
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
		if in.cnts[i] > 0 {
			in.kids[w], in.seps[w], in.cnts[w] = in.kids[i], in.seps[i], in.cnts[i]
			w++
		}
	}
	k := copy(in.kids[w:], in.kids[last+1:])
	copy(in.seps[w:], in.seps[last+1:])
	copy(in.cnts[w:], in.cnts[last+1:])
	clear(in.kids[w+k:])
	clear(in.seps[w+k:])
	in.kids, in.seps, in.cnts = in.kids[:w+k], in.seps[:w+k], in.cnts[:w+k]
	for i := min(w, len(in.kids)-1); i >= max(first-1, 0) && i < len(in.kids); i-- {
		n.fix(i)
	}
}

// ascend calls fn for the entries of rank >= from under n, in order, until
// fn returns false; it reports whether fn never did. Integer members are
// formatted into scratch.
func (n *node) ascend(from int, fn Visitor, scratch *[20]byte) bool {
	if n.leaf() {
		for off := n.seek(from); off < len(n.p); {
			e := decode(n.p, off)
			if !fn(e.member(scratch), e.score) {
				return false
			}
			off = e.end
		}
		return true
	}
	for i, c := range n.in.cnts {
		if from >= c {
			from -= c
			continue
		}
		if !n.in.kids[i].ascend(from, fn, scratch) {
			return false
		}
		from = 0
	}
	return true
}

// appendIntDeltas is AppendIntDeltas under n.
func (n *node) appendIntDeltas(dst []byte, prev int64) ([]byte, int64, bool) {
	if n.leaf() {
		return appendIntDeltas(n.p, dst, prev)
	}
	kids := n.in.kids
	// The children are a cache miss each, then their entries: ask for
	// every child at once, and for the next leaf's entries while this
	// one's are encoded.
	for _, k := range kids {
		prefetch.Line((*byte)(unsafe.Pointer(k)))
	}
	for i, k := range kids {
		if i+1 < len(kids) {
			if next := kids[i+1]; next.in == nil {
				prefetchBytes(next.p)
			}
		}
		var ok bool
		if dst, prev, ok = k.appendIntDeltas(dst, prev); !ok {
			return dst, prev, false
		}
	}
	return dst, prev, true
}

// prefetchBytes asks for every cache line of p.
func prefetchBytes(p []byte) {
	for off := 0; off < len(p); off += 64 {
		prefetch.Line(&p[off])
	}
}

// descend calls fn for the entries of rank <= from under n, in reverse
// order.
func (n *node) descend(from int, fn Visitor, scratch *[20]byte) bool {
	if n.leaf() {
		end := n.seek(from + 1)
		for end > 0 {
			off := readBacklen(n.p, end)
			e := decode(n.p, off)
			if !fn(e.member(scratch), e.score) {
				return false
			}
			end = off
		}
		return true
	}
	in := n.in
	i := 0
	for from >= in.cnts[i] {
		from -= in.cnts[i]
		i++
	}
	for ; i >= 0; i-- {
		if !in.kids[i].descend(from, fn, scratch) {
			return false
		}
		if i > 0 {
			from = in.cnts[i-1] - 1
		}
	}
	return true
}

// memory estimates the heap bytes of the nodes.
func (n *node) memory() int {
	b := allocSize(int(unsafe.Sizeof(*n)))
	if n.leaf() {
		return b + allocSize(cap(n.p))
	}
	in := n.in
	b += allocSize(int(unsafe.Sizeof(*in))) + allocSize(cap(in.kids)*8) +
		allocSize(cap(in.seps)*int(unsafe.Sizeof(item{}))) + allocSize(cap(in.cnts)*8)
	for i, k := range in.kids {
		if i > 0 {
			b += allocSize(len(in.seps[i].member))
		}
		b += k.memory()
	}
	return b
}
