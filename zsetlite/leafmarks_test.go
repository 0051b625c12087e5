package zsetlite

import (
	"fmt"
	"testing"
	"unsafe"
)

// The marks live in the node's spare room: a node must stay in the
// 48-byte size class, or they cost memory on every leaf.
func TestNodeSizeClass(t *testing.T) {
	if got := allocSize(int(unsafe.Sizeof(node{}))); got != 48 {
		t.Fatalf("a node takes %d bytes, want 48", got)
	}
}

// leafOf builds a leaf of n entries by appends, members of mixed lengths so
// that offsets are not multiples of one entry size.
func leafOf(n int) *node {
	l := &node{}
	for i := range n {
		m := []byte(fmt.Sprintf("%0*d", 1+i%7, i))
		k := makeMemberKey(m)
		skind, iv := leafScoreKind(float64(i))
		sz := entrySize(&k, skind, iv)
		off := len(l.p)
		l.p = insertEntry(l.p, off, sz, &k, float64(i), skind, iv)
		l.n++
		l.markAppended(off)
	}
	return l
}

// checkMarks compares every live mark with a walk of the leaf.
func checkMarks(t *testing.T, l *node, what string) {
	t.Helper()
	for j := range l.liveMarks() {
		if want := packedSeek(l.p, (j+1)*markStride); int(l.marks[j]) != want {
			t.Fatalf("%s: mark %d is %d, entry %d is at %d", what, j, l.marks[j], (j+1)*markStride, want)
		}
	}
}

// TestLeafMarks cuts every range out of leaves of every size and checks
// the marks that appends, cut and seek rely on.
func TestLeafMarks(t *testing.T) {
	for n := 1; n <= maxLeaf; n++ {
		checkMarks(t, leafOf(n), fmt.Sprintf("appended %d", n))
		for lo := 0; lo < n; lo++ {
			for hi := lo + 1; hi <= n; hi++ {
				l := leafOf(n)
				l.cut(lo, hi, packedSeek(l.p, lo), packedSeek(l.p, hi))
				what := fmt.Sprintf("%d entries cut [%d, %d)", n, lo, hi)
				if int(l.n) != n-(hi-lo) {
					t.Fatalf("%s: holds %d", what, l.n)
				}
				checkMarks(t, l, what)
				for r := 0; r <= int(l.n); r++ {
					if got, want := l.seek(r), packedSeek(l.p, r); got != want {
						t.Fatalf("%s: seek(%d) = %d, want %d", what, r, got, want)
					}
				}
			}
		}
	}
}
