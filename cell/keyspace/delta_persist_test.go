package keyspace

import (
	"fmt"
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
