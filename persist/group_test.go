package persist

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
)

// TestGroupMerge: a pending group keeps one record per key, its last, in
// the place of the key's first record, and never merges across a range
// delete.
func TestGroupMerge(t *testing.T) {
	type op struct {
		op       opKind
		key, val string
	}
	tests := []struct {
		name    string
		batches [][]op
		want    string
	}{
		{"distinct keys keep their order", [][]op{{{opSet, "a", "1"}, {opSet, "b", "2"}}, {{opDelete, "c", ""}}},
			"set a=1, set b=2, del c"},
		{"a rewrite replaces the record in place", [][]op{{{opSet, "a", "1"}, {opSet, "b", "2"}}, {{opSet, "a", "3"}}},
			"set a=3, set b=2"},
		{"a delete replaces a set, a set a delete", [][]op{{{opSet, "a", "1"}}, {{opDelete, "a", ""}}, {{opSet, "b", "x"}}, {{opDelete, "b", ""}, {opSet, "b", "y"}}},
			"del a, set b=y"},
		{"a range delete is a barrier", [][]op{{{opSet, "a", "1"}}, {{opDeleteRange, "a", "b"}}, {{opSet, "a", "2"}, {opSet, "a", "3"}}},
			"set a=1, range a-b, set a=3"},
		{"same batch, later wins", [][]op{{{opSet, "k", "1"}, {opSet, "k", "22"}, {opSet, "k", "333"}}},
			"set k=333"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGroup()
			for _, b := range tt.batches {
				var r records
				for _, o := range b {
					r.add(o.op, []byte(o.key), []byte(o.val))
				}
				g.merge(&r)
			}
			var got []string
			for _, x := range g.recs {
				switch x.op {
				case opSet:
					got = append(got, fmt.Sprintf("set %s=%s", g.key(x), g.val(x)))
				case opDelete:
					got = append(got, fmt.Sprintf("del %s", g.key(x)))
				case opDeleteRange:
					got = append(got, fmt.Sprintf("range %s-%s", g.key(x), g.val(x)))
				}
			}
			if s := strings.Join(got, ", "); s != tt.want {
				t.Fatalf("got %q, want %q", s, tt.want)
			}
		})
	}
}

// TestStoreGroupOrder: batches committed across several groups and range
// deletes load as their last state, and Sync makes a pending group durable.
func TestStoreGroupOrder(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	for i := range 100 {
		commit(t, s, func(b *Batch) { b.PutString(0, []byte("hot"), 0, fmt.Appendf(nil, "%d", i)) })
		if i == 50 {
			commit(t, s, func(b *Batch) { b.DeleteDB(0) })
		}
	}
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("other"), 0, []byte("x")) })
	n := commit(t, s, func(b *Batch) { b.Delete(0, []byte("other")) })
	if err := s.Sync(n); err != nil {
		t.Fatal(err)
	}
	if !s.Synced(n) {
		t.Fatal("Synced is false after Sync")
	}
	s.Close()
	s2, _ := openTest(t, dir, Options{})
	if got := strings.Join(dump(t, s2), ";"); got != `0/"hot"=s:0:"99"` {
		t.Fatalf("after reopen: %s", got)
	}
}

// TestGroupFull: a group whose buffer is mostly replaced records is
// compacted, not committed; one that holds that much live data is full.
func TestGroupFull(t *testing.T) {
	g := newGroup()
	put := func(key string, size int) {
		var r records
		r.add(opSet, []byte(key), []byte(strings.Repeat("v", size)+key))
		g.merge(&r)
	}
	// A hot key whose value grows: every write appends a new copy.
	for i := 0; len(g.buf) < groupMaxBytes; i++ {
		put("hot", 1000+i)
	}
	if g.full() {
		t.Fatal("a group of one live record is full")
	}
	if len(g.buf) >= groupMaxBytes || len(g.recs) != 1 || !strings.HasSuffix(string(g.val(g.recs[0])), "vhot") {
		t.Fatalf("after compaction: %d bytes, %d records", len(g.buf), len(g.recs))
	}
	// Smaller values overwrite in place.
	n := len(g.buf)
	put("hot", 10)
	if len(g.buf) != n || string(g.val(g.recs[0])) != strings.Repeat("v", 10)+"hot" {
		t.Fatalf("a smaller value was not written in place: %d -> %d bytes", n, len(g.buf))
	}
	for i := 0; len(g.buf) < groupMaxBytes; i++ {
		put(fmt.Sprintf("k%d", i), 1000)
	}
	if !g.full() {
		t.Fatal("a group of 4 MB of live records is not full")
	}
}

// BenchmarkGroupMerge merges W1-like batches (one ~200-byte record each,
// keys drawn from 100,000) into a group, committing it (reset) every
// 150,000 records as the everysec tick does at that rate.
func BenchmarkGroupMerge(b *testing.B) {
	const keys, perGroup = 100_000, 150_000
	val := []byte(strings.Repeat("v", 200))
	batches := make([]records, 1<<16)
	x := uint64(1)
	for i := range batches {
		x = x*6364136223846793005 + 1442695040888963407
		batches[i].add(opSet, fmt.Appendf(nil, "\x01\x00\x00w1:%d", x>>33%keys), val)
	}
	g := newGroup()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%perGroup == 0 {
			g.reset()
		}
		g.merge(&batches[i&(len(batches)-1)])
	}
}

// TestGroupIndexModel merges random sets, deletes and range deletes over
// enough keys to grow the index several times, with hashes forced to
// collide, and checks the group against a plain model: one record per key
// since the last range delete, in the place of its first.
func TestGroupIndexModel(t *testing.T) {
	for _, hashBits := range []uint{64, 3} { // 3: every key shares its hash with many
		t.Run(fmt.Sprintf("hash bits %d", hashBits), func(t *testing.T) {
			g := newGroup()
			type mrec struct{ op, key, val string }
			var model []mrec
			at := map[string]int{} // key -> index in model since the last barrier
			x := uint64(7)
			rnd := func(n uint64) uint64 {
				x = x*6364136223846793005 + 1442695040888963407
				return x >> 33 % n
			}
			for step := range 20000 {
				if step == 10000 {
					g.reset()
					model, at = nil, map[string]int{}
				}
				var r records
				switch k := fmt.Sprintf("k%d", rnd(3000)); rnd(2000) {
				case 0:
					r.addHashed(opDeleteRange, []byte(k), []byte(k+"~"), 0)
					model = append(model, mrec{"range", k, k + "~"})
					at = map[string]int{}
				default:
					op, name, val := opSet, "set", fmt.Sprint(step)
					if rnd(4) == 0 {
						op, name, val = opDelete, "del", ""
					}
					h := maphash.Bytes(groupSeed, []byte(k))
					if hashBits < 64 {
						h &= 1<<hashBits - 1
					}
					r.addHashed(op, []byte(k), []byte(val), h)
					if i, ok := at[k]; ok {
						model[i] = mrec{name, k, val}
					} else {
						at[k] = len(model)
						model = append(model, mrec{name, k, val})
					}
				}
				g.merge(&r)
			}
			if len(g.recs) != len(model) {
				t.Fatalf("%d records, want %d", len(g.recs), len(model))
			}
			names := map[opKind]string{opSet: "set", opDelete: "del", opDeleteRange: "range"}
			for i, x := range g.recs {
				if got := (mrec{names[x.op], string(g.key(x)), string(g.val(x))}); got != model[i] {
					t.Fatalf("record %d: %v, want %v", i, got, model[i])
				}
			}
		})
	}
}
