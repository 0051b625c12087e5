package cell

import (
	"slices"
	"strconv"

	"github.com/cellserver/cellserver/resp"
)

// elemScan is what HSCAN, SSCAN and ZSCAN were asked: [MATCH pattern]
// [COUNT count]. usePat is false for no pattern or "*".
type elemScan struct {
	pat    []byte
	usePat bool
	count  int
}

// parseElemScan parses the options of HSCAN, SSCAN and ZSCAN as Redis's
// scanGenericCommand: a COUNT that is not an integer, then one below 1 (a
// syntax error), any other word a syntax error. COUNT defaults to 10.
func parseElemScan(x *Ctx) (o elemScan, ok bool) {
	o.count = 10
	for i := 3; i < len(x.Args); i += 2 {
		a, more := x.Args[i], i+1 < len(x.Args)
		switch {
		case optIs(a, "count") && more:
			n, ok := resp.ParseInt(x.Args[i+1])
			if !ok {
				x.Error(ErrNotInteger)
				return o, false
			}
			if n < 1 {
				x.Error(ErrSyntax)
				return o, false
			}
			o.count = int(min(n, 1<<30))
		case optIs(a, "match") && more:
			o.pat = x.Args[i+1]
			o.usePat = !(len(o.pat) == 1 && o.pat[0] == '*')
		default:
			x.Error(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// elemScanPages bounds the calls a walk of a large value takes whatever
// COUNT says (a hint, as on Redis, which also returns more): a page holds
// at least 1/elemScanPages of the value, so that each call, which reads
// the whole value to choose its page, keeps a walk linear in its size.
const elemScanPages = 32

// pick chooses what one call at cursor returns of a value of n elements
// (elem(i) names element i: a field or a member) and the next cursor (0:
// the walk is over), MATCH applied. A value Redis keeps compact (listpack,
// intset: compact), or one of at most COUNT elements, comes whole with
// cursor 0, as Redis returns it. A larger one, a hash table on Redis, is
// walked in the order of a hash of each element, and the cursor is the
// hash where the next page starts; elements of equal hash share a page.
// So an element present for the whole walk is returned exactly once,
// whatever is added or removed meanwhile (SCAN promises at least once).
func (o elemScan) pick(n int, compact bool, cursor uint64, elem func(i int) []byte) (idx []int, next uint64) {
	if compact || n <= o.count {
		for i := range n {
			if !o.usePat || globMatch(o.pat, elem(i)) {
				idx = append(idx, i)
			}
		}
		return idx, 0
	}
	type ranked struct {
		h uint64
		i int
	}
	var rest []ranked
	for i := range n {
		if h := elemScanHash(elem(i)); h >= cursor {
			rest = append(rest, ranked{h, i})
		}
	}
	slices.SortFunc(rest, func(a, b ranked) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	size := min(len(rest), max(o.count, (n+elemScanPages-1)/elemScanPages))
	for size < len(rest) && rest[size].h == rest[size-1].h {
		size++
	}
	if size < len(rest) {
		next = rest[size].h
	}
	for _, r := range rest[:size] {
		if !o.usePat || globMatch(o.pat, elem(r.i)) {
			idx = append(idx, r.i)
		}
	}
	return idx, next
}

// elemScanHash is an element's place in a walk: FNV-1a, cut to 53 bits
// (clients that read cursors as doubles keep them exact), plus one, so
// that no element's place is the cursor 0 that ends a walk.
func elemScanHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h>>11 + 1
}

// writeElemScanHead writes a scan reply's cursor and the header of its
// array of n items.
func writeElemScanHead(x *Ctx, next uint64, n int) {
	x.W.Array(2)
	var buf [20]byte
	x.W.Bulk(strconv.AppendUint(buf[:0], next, 10))
	x.W.Array(n)
}

// elemScanCursor checks an HSCAN/SSCAN/ZSCAN cursor, which is read before
// the key; false: the error is written.
func elemScanCursor(x *Ctx) bool {
	if _, ok := parseCursor(x.Args[2]); !ok {
		x.Error(ErrInvalidCursor)
		return false
	}
	return true
}

// emptyElemScan is the reply for a missing key, given before any option
// is read, as Redis gives it.
func emptyElemScan(x *Ctx) {
	x.W.Array(2)
	x.W.BulkString("0")
	x.W.Array(0)
}
