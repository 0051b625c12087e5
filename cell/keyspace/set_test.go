package keyspace

import (
	"slices"
	"strconv"
	"testing"

	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/zsetlite"
)

// TestSetEncodings: the form a set takes after each series of adds, and
// that its members, order and stored form survive the change.
func TestSetEncodings(t *testing.T) {
	nums := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, strconv.Itoa(n-i)) // descending: the intset sorts
		}
		return out
	}
	words := func(n, size int) []string {
		var out []string
		for i := range n {
			w := "w" + strconv.Itoa(i)
			for len(w) < size {
				w += "x"
			}
			out = append(out, w)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		adds     []string
		maxInts  int
		encoding string
		indexed  bool
		// reloaded: an intset when read back from the store, which
		// applies the default limit.
		reloaded bool
	}{
		{"ints", nums(5), 512, "intset", false, true},
		{"512 ints", nums(512), 512, "intset", false, true},
		{"513 ints", nums(513), 512, "hashtable", true, false},
		{"ints past a low limit", nums(3), 2, "hashtable", false, true},
		{"not canonical", []string{"1", "01"}, 512, "hashtable", false, false},
		{"negative zero", []string{"-0"}, 512, "hashtable", false, false},
		{"small words", words(128, 5), 512, "hashtable", false, false},
		{"129 words", words(129, 5), 512, "hashtable", true, false},
		{"a long word", words(1, 65), 512, "hashtable", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			for _, m := range tc.adds {
				if !s.Add([]byte(m), tc.maxInts) {
					t.Fatalf("Add(%q) not new", m)
				}
			}
			for _, m := range tc.adds {
				if s.Add([]byte(m), tc.maxInts) || !s.Has([]byte(m)) {
					t.Fatalf("%q: added twice or missing", m)
				}
			}
			if s.Encoding() != tc.encoding || (s.index != nil) != tc.indexed || s.Len() != len(tc.adds) {
				t.Fatalf("encoding %s indexed %v len %d", s.Encoding(), s.index != nil, s.Len())
			}
			var got []string
			for i := range s.Len() {
				got = append(got, s.At(i))
			}
			if s.IsIntset() && !slices.IsSortedFunc(got, func(a, b string) int {
				x, _ := strconv.Atoi(a)
				y, _ := strconv.Atoi(b)
				return x - y
			}) {
				t.Errorf("intset not ascending: %v", got)
			}
			v, err := persist.Decode(s.appendStored(nil, 0))
			if err != nil {
				t.Fatal(err)
			}
			o, ok := objectFromStored(v, zsetlite.Config{})
			if !ok {
				t.Fatal("stored form refused")
			}
			back := o.(*Set)
			if back.Len() != s.Len() || back.IsIntset() != tc.reloaded {
				t.Fatalf("read back %d members, intset %v", back.Len(), back.IsIntset())
			}
			for _, m := range tc.adds {
				if !back.Has([]byte(m)) {
					t.Errorf("%q lost in the stored form", m)
				}
			}
			for _, m := range tc.adds {
				if !s.Remove([]byte(m)) || s.Has([]byte(m)) || s.Remove([]byte(m)) {
					t.Fatalf("Remove(%q)", m)
				}
			}
			if s.Len() != 0 {
				t.Fatalf("%d left", s.Len())
			}
		})
	}
}

// TestSetStoredDuplicate: a stored set with a member twice is refused,
// not loaded smaller.
func TestSetStoredDuplicate(t *testing.T) {
	b := persist.AppendAggregate(nil, persist.KindSet, 0, 2)
	b = persist.AppendItem(b, "a")
	b = persist.AppendItem(b, "a")
	v, err := persist.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objectFromStored(v, zsetlite.Config{}); ok {
		t.Error("a set with a duplicate member was loaded")
	}
}

// TestSetToIntset: a set of another form goes back to an intset only when
// every member is a canonical integer and there are at most maxInts; the
// intset is ascending and has the same members.
func TestSetToIntset(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
		maxInts int
		want    bool
	}{
		{"integers", []string{"9", "-3", "0", "9223372036854775807"}, 512, true},
		{"at the limit", []string{"3", "1", "2"}, 3, true},
		{"past the limit", []string{"3", "1", "2"}, 2, false},
		{"limit 0", []string{"1"}, 0, false},
		{"a word", []string{"1", "a"}, 512, false},
		{"not canonical", []string{"1", "01"}, 512, false},
		{"indexed", func() []string {
			var out []string
			for i := range 200 {
				out = append(out, strconv.Itoa(200-i))
			}
			return out
		}(), 512, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			s.Add([]byte("x"), 512) // leave the intset form
			for _, m := range tc.members {
				s.Add([]byte(m), 512)
			}
			s.Remove([]byte("x"))
			if s.IsIntset() {
				t.Fatal("still an intset before ToIntset")
			}
			if got := s.ToIntset(tc.maxInts); got != tc.want || s.IsIntset() != tc.want {
				t.Fatalf("ToIntset(%d) = %v, intset %v; want %v", tc.maxInts, got, s.IsIntset(), tc.want)
			}
			if s.Len() != len(tc.members) {
				t.Fatalf("%d members, want %d", s.Len(), len(tc.members))
			}
			for _, m := range tc.members {
				if !s.Has([]byte(m)) {
					t.Errorf("%q lost", m)
				}
			}
			if tc.want && !slices.IsSorted(s.ints) {
				t.Errorf("not ascending: %v", s.ints)
			}
			if tc.want && s.Add([]byte("7"), tc.maxInts) && !s.Has([]byte("7")) {
				t.Error("the intset does not take a new member")
			}
		})
	}
}
