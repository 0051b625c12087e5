package keyspace

import (
	"math"
	"strconv"
	"testing"

	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/zsetlite"
)

// TestStoreZSetDelta: a write to a large set stored member by member logs
// the members it changed and the head, not the set.
func TestStoreZSetDelta(t *testing.T) {
	z := newZSet(zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64})
	for i := range 1000 {
		z.Put([]byte("m"+strconv.Itoa(i)), float64(i))
	}
	b := &persist.Batch{}
	storeZSet(b, 0, []byte("w"), z, 0, false)
	if b.Len() != 1002 { // range delete, head, members
		t.Fatalf("first write: %d records, want the whole set", b.Len())
	}
	b = &persist.Batch{}
	z.Add([]byte("m1000"), 1000, 0)
	z.DeleteRangeByScore(zsetlite.ScoreRange{Min: 0, Max: 1})
	storeZSet(b, 0, []byte("w"), z, 0, false)
	if b.Len() != 4 { // head, one added, two removed
		t.Fatalf("delta: %d records, want 4", b.Len())
	}
	b = &persist.Batch{}
	storeZSet(b, 0, []byte("other"), z, 0, false)
	if b.Len() != 1001 {
		t.Fatalf("under another key: %d records, want the whole set", b.Len())
	}
}

// TestStoreWideThresholds: a set goes wide (member by member) from 128
// entries and back below 64, except a window of timestamps (self-keyed),
// stored as one record of integers up to 4096 entries and back below 2048.
func TestStoreWideThresholds(t *testing.T) {
	for _, tt := range []struct {
		name       string
		self       bool
		sizes      []int // the set's size at each checkpoint
		wantRecord []int // records each checkpoint writes (1: the set whole, in one)
	}{
		{"members", false, []int{100, 128, 100, 64, 63, 100}, []int{1, 130, 1 + 28, 1 + 36, 2, 1}},
		{"window", true, []int{200, 4095, 4096, 3700, 3300, 2900, 2500, 2100, 2048, 2047, 4000},
			[]int{1, 1, 4098, 1 + 396, 1 + 400, 1 + 400, 1 + 400, 1 + 400, 1 + 52, 2, 1}},
		// More than 512 changed members: the wide set is written whole.
		{"window, big change", true, []int{4096, 3000}, []int{4098, 3002}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			z := newZSet(zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64})
			member := func(i int) string {
				if tt.self {
					return strconv.Itoa(i)
				}
				return "m" + strconv.Itoa(i)
			}
			lo, hi := 0, 0 // z holds [lo, hi)
			for i, n := range tt.sizes {
				for hi-lo < n {
					z.Add([]byte(member(hi)), float64(hi), 0)
					hi++
				}
				if hi-lo > n {
					d := z.DeleteRangeByScore(zsetlite.ScoreRange{Min: float64(lo), Max: float64(hi - n - 1)})
					lo = hi - n
					if d != 0 && z.Len() != n {
						t.Fatalf("size %d, want %d", z.Len(), n)
					}
				}
				if z.Set.SelfKeyed() != tt.self {
					t.Fatalf("SelfKeyed %v", z.Set.SelfKeyed())
				}
				b := &persist.Batch{}
				storeZSet(b, 0, []byte("k"), z, 0, false)
				if b.Len() != tt.wantRecord[i] {
					t.Errorf("checkpoint %d (%d entries): %d records, want %d", i, n, b.Len(), tt.wantRecord[i])
				}
			}
		})
	}
}

// TestZSetPopNotesEveryMember: a pop whose visitor stops early still
// records every member it removed.
func TestZSetPopNotesEveryMember(t *testing.T) {
	z := newZSet(zsetlite.Config{MaxListpackEntries: 128, MaxListpackValue: 64})
	for i := range 200 {
		z.Put([]byte(strconv.Itoa(1000+i)), float64(i))
	}
	z.setStoredWide(0, []byte("z"))
	seen := 0
	if n := z.PopMin(5, func([]byte, float64) bool { seen++; return false }); n != 5 || seen != 1 {
		t.Fatalf("PopMin = %d, visitor called %d times", n, seen)
	}
	b := &persist.Batch{}
	storeZSet(b, 0, []byte("z"), z, 0, false)
	if b.Len() != 6 { // head and five member deletes
		t.Fatalf("%d records, want 6", b.Len())
	}
}

// TestZSetRecIntForm: the changes a writer records are logged as the
// integers of a self-keyed set's members where that integer is the
// member's and its score's, and as text otherwise; either way the record
// is the bytes the text path (PutHeadMember, DeleteHeadMember) makes.
func TestZSetRecIntForm(t *testing.T) {
	type change struct {
		member string
		score  float64
		del    bool
	}
	const ts = 1_700_000_000_000
	put := func(m string, sc float64) func(*ZSet) {
		return func(z *ZSet) { z.Put([]byte(m), sc) }
	}
	tests := []struct {
		name    string
		maxEnts int // zset-max-listpack-entries: small to get a tree
		ops     []func(*ZSet)
		want    []change
		ints    int // changes noted as integers; -1: not checked
	}{
		{"a packed window", 128, []func(*ZSet){
			put("1700000000000", ts), put("1700000000001", ts+1), put("1700000000002", ts+2),
			func(z *ZSet) { z.DeleteRangeByScore(zsetlite.ScoreRange{Min: 0, Max: ts + 1}) },
		}, []change{{"1700000000000", ts, false}, {"1700000000001", ts + 1, false}, {"1700000000002", ts + 2, false},
			{"1700000000000", ts, true}, {"1700000000001", ts + 1, true}}, 5},
		{"a window in a tree, popped", 2, []func(*ZSet){
			put("1", 1), put("2", 2), put("3", 3), put("-4", -4),
			func(z *ZSet) { z.PopMin(2, func([]byte, float64) bool { return false }) },
			func(z *ZSet) { z.DeleteRangeByRank(-1, -1) },
		}, []change{{"1", 1, false}, {"2", 2, false}, {"3", 3, false}, {"-4", -4, false},
			{"-4", -4, true}, {"1", 1, true}, {"3", 3, true}}, 7},
		{"a window in a tree, cut by score", 2, []func(*ZSet){
			put("10", 10), put("20", 20), put("30", 30),
			func(z *ZSet) { z.DeleteRangeByScore(zsetlite.ScoreRange{Min: 0, Max: 25}) },
		}, []change{{"10", 10, false}, {"20", 20, false}, {"30", 30, false}, {"10", 10, true}, {"20", 20, true}}, 5},
		{"-0 and 0 cut by score", 128, []func(*ZSet){
			put("0", math.Copysign(0, -1)), put("1", 1),
			func(z *ZSet) { z.DeleteRangeByScore(zsetlite.ScoreRange{Min: -1, Max: 1}) },
		}, []change{{"0", math.Copysign(0, -1), false}, {"1", 1, false}, {"0", 0, true}, {"1", 1, true}}, -1},
		{"ZREM is text", 128, []func(*ZSet){
			put("5", 5), func(z *ZSet) { z.Delete([]byte("5")) },
		}, []change{{"5", 5, false}, {"5", 0, true}}, 1},
		{"-0 keeps its sign as text", 128, []func(*ZSet){put("0", math.Copysign(0, -1))},
			[]change{{"0", math.Copysign(0, -1), false}}, 0},
		{"2^53 and beyond are text", 128, []func(*ZSet){
			put("9007199254740991", 1<<53-1), put("9007199254740993", 1<<53), put("-9007199254740993", -(1 << 53)),
			func(z *ZSet) { z.DeleteRangeByScore(zsetlite.ScoreRange{Min: math.Inf(-1), Max: math.Inf(1)}) },
		}, []change{{"9007199254740991", 1<<53 - 1, false}, {"9007199254740993", 1 << 53, false},
			{"-9007199254740993", -(1 << 53), false}, {"-9007199254740993", -(1 << 53), true},
			{"9007199254740991", 1<<53 - 1, true}, {"9007199254740993", 1 << 53, true}}, 2},
		{"a set that is not self-keyed", 128, []func(*ZSet){
			put("7", 7), put("a", 1), put("8", 8),
			func(z *ZSet) { z.DeleteRangeByScore(zsetlite.ScoreRange{Min: 7, Max: 8}) },
		}, []change{{"7", 7, false}, {"a", 1, false}, {"8", 8, false}, {"7", 7, true}, {"8", 8, true}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := newZSet(zsetlite.Config{MaxListpackEntries: tt.maxEnts, MaxListpackValue: 64})
			var r zsetRec
			r.attach(z)
			for _, op := range tt.ops {
				op(z)
			}
			ints := 0
			for _, e := range r.ents {
				if e.isInt {
					ints++
				}
			}
			if tt.ints >= 0 && ints != tt.ints { // -1: either form
				t.Errorf("%d changes noted as integers, want %d", ints, tt.ints)
			}
			if n := r.count(z); n != len(tt.want) {
				t.Errorf("count %d, want %d", n, len(tt.want))
			}
			var got, want persist.Batch
			got.PutZSetHead(0, []byte("w"), 0)
			r.appendChanges(&got, z)
			want.PutZSetHead(0, []byte("w"), 0)
			for _, c := range tt.want {
				if c.del {
					want.DeleteHeadMember([]byte(c.member))
				} else {
					want.PutHeadMember([]byte(c.member), c.score)
				}
			}
			if g, w := got.Encoded(), want.Encoded(); string(g) != string(w) {
				t.Errorf("record\n%x\nwant\n%x", g, w)
			}
			r.reset()
		})
	}
}
