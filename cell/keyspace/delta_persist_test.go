package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestListSetSpan: a list made to hold a span of positions keeps the
// elements inside it, in place, drops those outside and holds empty ones
// where it had none, whatever the overlap; pushes and pops keep the
// numbering the log's positions use.
func TestListSetSpan(t *testing.T) {
	// l holds a b c d at positions -2..1 (two LPUSHes before a b's RPUSH).
	mk := func() *List {
		l := NewList()
		l.PushBack([]byte("c"))
		l.PushBack([]byte("d"))
		l.PushFront([]byte("b"))
		l.PushFront([]byte("a"))
		return l
	}
	tests := []struct {
		pos  int64
		n    int
		want string
	}{
		{-2, 4, "-2:a,b,c,d"},
		{-1, 2, "-1:b,c"},
		{-4, 3, "-4:,,a"},
		{0, 5, "0:c,d,,,"},
		{-3, 6, "-3:,a,b,c,d,"},
		{10, 2, "10:,"},
		{-9, 1, "-9:"},
		{1, 0, "1:"},
	}
	for _, tt := range tests {
		l := mk()
		l.setSpan(tt.pos, tt.n)
		if got := spanString(l); got != tt.want {
			t.Errorf("setSpan(%d, %d) = %s, want %s", tt.pos, tt.n, got, tt.want)
		}
	}
	l := mk()
	l.PopFront()
	l.Trim(1, 3)
	l.setAt(0, []byte("x"))
	l.setAt(5, []byte("outside"))
	if got := spanString(l); got != "0:x,d" {
		t.Errorf("after LPOP, LTRIM 1 2 and two sets: %s, want 0:x,d", got)
	}
}

func spanString(l *List) string {
	var items []string
	for i := range l.Len() {
		items = append(items, string(l.At(i)))
	}
	return fmt.Sprintf("%d:%s", l.pos, strings.Join(items, ","))
}

// TestPatchString: a patch makes the string its length, cut or padded
// with zero bytes, then writes its bytes.
func TestPatchString(t *testing.T) {
	for _, tt := range []struct {
		s         string
		len, off  int64
		data, out string
	}{
		{"abc", 5, 3, "de", "abcde"},
		{"abc", 6, 5, "x", "abc\x00\x00x"},
		{"abcdef", 6, 1, "XY", "aXYdef"},
		{"abcdef", 4, 2, "Z", "abZd"},
		{"", 3, 0, "", "\x00\x00\x00"},
		{"abc", 3, 3, "", "abc"},
	} {
		if got := string(patchString([]byte(tt.s), tt.len, tt.off, []byte(tt.data))); got != tt.out {
			t.Errorf("patch %q to %d with %q at %d: %q, want %q", tt.s, tt.len, tt.data, tt.off, got, tt.out)
		}
	}
}

// TestListMovedRanges: after Insert and RemoveIf, every element outside
// the range they report as moved keeps its position in the list's
// numbering, and the elements inside it are where a model list has them:
// the log writes only the moved range (ListChanged), so a wrong range
// loses elements on replay.
func TestListMovedRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 300 {
		l, next := NewList(), 0
		push := func(front bool) {
			v := []byte(fmt.Sprint("v", next))
			next++
			if front {
				l.PushFront(v)
			} else {
				l.PushBack(v)
			}
		}
		for range 1 + r.IntN(40) {
			push(r.IntN(2) == 0)
		}
		before := map[string]int64{}
		for i := range l.Len() {
			before[string(l.At(i))] = l.pos + int64(i)
		}
		var lo, hi int
		var what string
		if r.IntN(2) == 0 {
			i := r.IntN(l.Len() + 1)
			what = fmt.Sprintf("Insert(%d) into %d", i, l.Len())
			lo, hi = l.Insert(i, []byte("new"))
		} else {
			fromTail, mod := r.IntN(2) == 0, 2+r.IntN(5)
			what = fmt.Sprintf("RemoveIf(fromTail %v, every %dth) from %d", fromTail, mod, l.Len())
			_, lo, hi = l.RemoveIf(fromTail, func(v []byte) bool { return len(v)%mod == 0 || v[len(v)-1]%byte(mod) == 0 })
		}
		for i := range l.Len() {
			p, was := before[string(l.At(i))]
			if (i < lo || i >= hi) && (!was || p != l.pos+int64(i)) {
				t.Fatalf("round %d, %s: element %d (%q) is outside the moved [%d, %d) but moved from %d (known %v) to %d",
					round, what, i, l.At(i), lo, hi, p, was, l.pos+int64(i))
			}
		}
	}
}
