package cell

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
	"github.com/cellserver/cellserver/zsetlite"
)

// TestWindowZSetCopies: a sorted set whose members are their own scores
// (a window, stored as integers) keeps every member through DUMP/RESTORE
// and COPY, which read it through entryValue.
func TestWindowZSetCopies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("ZADD", "w", "1795000000001", "1795000000001", "1795000000002", "1795000000002", "1795000000003", "1795000000003")
	want := c.do("ZRANGE", "w", "0", "-1", "WITHSCORES")
	payload := c.do("DUMP", "w")
	if len(payload) < 4 || payload[0] != '$' {
		t.Fatalf("DUMP: %q", payload)
	}
	_, body, _ := cutLine(payload)
	c.do("RESTORE", "r", "0", body[:len(body)-2])
	c.do("COPY", "w", "c")
	for _, k := range []string{"r", "c"} {
		if got := c.do("ZRANGE", k, "0", "-1", "WITHSCORES"); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// cutLine splits a raw reply after its first line.
func cutLine(s string) (line, rest string, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\r' && s[i+1] == '\n' {
			return s[:i], s[i+2:], true
		}
	}
	return s, "", false
}

// TestValueObjectInts: a sorted set a borrowing reader gives as integers
// that are their own scores (rdb.Value.Ints) becomes the set its members
// and scores as text would make: the same members, scores and encoding,
// under the default thresholds and under small ones.
func TestValueObjectInts(t *testing.T) {
	var long []int64
	for i := range 200 {
		long = append(long, 1_795_000_000_000+int64(i))
	}
	cases := []struct {
		name string
		ints []int64
		cfg  zsetlite.Config
	}{
		{"window", []int64{1795000000001, 1795000000002, 1795000000005}, zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64}},
		{"signed", []int64{-9007199254740991, -70000, -1, 0, 7, 9007199254740991}, zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64}},
		{"too many to pack", long, zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64}},
		{"too long to pack", []int64{1, 22, 1795000000001}, zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 5}},
		{"sign too long to pack", []int64{-12345, 1}, zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 5}},
	}
	for _, c := range cases {
		text := rdb.Value{Type: rdb.TypeZSet}
		for _, n := range c.ints {
			text.Elems = append(text.Elems, strconv.AppendInt(nil, n, 10))
			text.Scores = append(text.Scores, float64(n))
		}
		_, want, ok := valueObject(&text, c.cfg, keyspace.SetMaxIntsetEntries)
		if !ok {
			t.Fatalf("%s: members as text refused", c.name)
		}
		_, got, ok := valueObject(&rdb.Value{Type: rdb.TypeZSet, Ints: c.ints}, c.cfg, keyspace.SetMaxIntsetEntries)
		if !ok {
			t.Fatalf("%s: Ints refused", c.name)
		}
		w, g := want.(*keyspace.ZSet), got.(*keyspace.ZSet)
		if g.Encoding() != w.Encoding() {
			t.Errorf("%s: encoding %s, want %s", c.name, g.Encoding(), w.Encoding())
		}
		var ge, we keyspace.Entry
		ge.SetObj(g)
		we.SetObj(w)
		gv, _ := entryValue(&ge)
		wv, _ := entryValue(&we)
		if fmt.Sprint(gv.Elems, gv.Scores) != fmt.Sprint(wv.Elems, wv.Scores) {
			t.Errorf("%s: %q %v, want %q %v", c.name, gv.Elems, gv.Scores, wv.Elems, wv.Scores)
		}
	}
	for _, n := range []int64{0, 7, 10, -1, -10, 99, 100, 1795000000001, -9007199254740991} {
		if got, want := intTextLen(n), len(strconv.FormatInt(n, 10)); got != want {
			t.Errorf("intTextLen(%d) = %d, want %d", n, got, want)
		}
	}
}
