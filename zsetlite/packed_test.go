package zsetlite

import (
	"fmt"
	"math"
	"testing"
)

// TestSelfEntries checks the memSelf form: which (member, score) pairs take
// it, their sizes, and that decoding and member lookup see them as any
// other integer member.
func TestSelfEntries(t *testing.T) {
	tests := []struct {
		member string
		score  float64
		self   bool
		size   int
	}{
		{"0", 0, true, 3},
		{"-128", -128, true, 3},
		{"127", 127, true, 3},
		{"128", 128, true, 6},
		{"-32769", -32769, true, 6},
		{"2147483647", 2147483647, true, 6},
		{"2147483648", 2147483648, true, 8},
		{"1700000000000", 1700000000000, true, 8},
		{"-140737488355328", -1 << 47, true, 8},
		{"140737488355327", 1<<47 - 1, true, 8},
		{"140737488355328", 1 << 47, false, 18}, // the score is a float64 past int48
		{"1700000000000", 1700000000001, false, 14},
		{"1700000000000", 1700000000000.5, false, 16},
		{"5", 5.5, false, 11},
		{"05", 5, false, 5}, // not canonical: a raw member
		{"-0", 0, false, 5},
		{"abc", 0, false, 6},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s@%v", tt.member, tt.score), func(t *testing.T) {
			k := makeMemberKey([]byte(tt.member))
			skind, iv := scoreKind(tt.score)
			if got := isSelf(&k, skind, iv); got != tt.self {
				t.Fatalf("isSelf = %v, want %v", got, tt.self)
			}
			sz := entrySize(&k, skind, iv)
			if sz != tt.size {
				t.Fatalf("entrySize = %d, want %d", sz, tt.size)
			}
			// The entry between two others, so that lookups scan past a
			// neighbour and the word loads see bytes on both sides.
			var p []byte
			before, after := makeMemberKey([]byte("-1")), makeMemberKey([]byte("zz"))
			bk, bv := scoreKind(math.Inf(-1))
			p = insertEntry(p, 0, entrySize(&before, bk, bv), &before, math.Inf(-1), bk, bv)
			off := len(p)
			p = insertEntry(p, off, sz, &k, tt.score, skind, iv)
			if got := skip(p, off) - off; got != sz {
				t.Fatalf("skip = %d, want %d", got, sz)
			}
			for _, last := range []bool{true, false} {
				if !last {
					ak, av := scoreKind(math.Inf(1))
					p = insertEntry(p, len(p), entrySize(&after, ak, av), &after, math.Inf(1), ak, av)
				}
				e := decode(p, off)
				var scratch [20]byte
				if string(e.member(&scratch)) != tt.member || e.score != tt.score || e.end != off+sz {
					t.Fatalf("decode = %q %v end %d, want %q %v end %d", e.member(&scratch), e.score, e.end, tt.member, tt.score, off+sz)
				}
				if sc, end := entryScore(p, off); sc != tt.score || end != off+sz {
					t.Fatalf("entryScore = %v %d", sc, end)
				}
				if f, ok := packedFind(p, &k); !ok || f.off != off {
					t.Fatalf("packedFind = %d %v, want %d", f.off, ok, off)
				}
				for _, other := range []string{"1", "-1", "1700000000001", "140737488355326", "abc", "zz"} {
					if other == tt.member {
						continue
					}
					ok := makeMemberKey([]byte(other))
					if matches(p, off, &ok) {
						t.Fatalf("entry matches %q", other)
					}
				}
			}
		})
	}
}

// TestReserve: an empty set readied for more members than the packed
// encoding takes, or for a longer one, is large at once, as Redis loads
// a sorted set, and so keeps the sign of a -0 score it is given first.
func TestReserve(t *testing.T) {
	tests := []struct {
		n, maxLen int
		filled    bool
		want      string
	}{
		{128, 64, false, EncodingListpack},
		{129, 1, false, EncodingSkiplist},
		{1, 65, false, EncodingSkiplist},
		{0, 0, false, EncodingListpack},
		{1000, 1000, true, EncodingListpack}, // not empty: left as it is
	}
	for _, tt := range tests {
		s := New(DefaultConfig())
		if tt.filled {
			s.Put([]byte("a"), 1)
		}
		s.Reserve(tt.n, tt.maxLen)
		if got := s.Encoding(); got != tt.want {
			t.Errorf("Reserve(%d, %d) on filled=%v: encoding %s, want %s", tt.n, tt.maxLen, tt.filled, got, tt.want)
		}
		s.Put([]byte("0"), math.Copysign(0, -1))
		sc, _ := s.Score([]byte("0"))
		if neg := math.Signbit(sc); neg != (tt.want == EncodingSkiplist) {
			t.Errorf("Reserve(%d, %d): -0 stored as %v", tt.n, tt.maxLen, sc)
		}
	}
}

// TestAddInts: AddInts leaves a set exactly as Put of each integer's text
// would, byte for byte while packed, whether it takes its one pass or
// falls back to the Puts.
func TestAddInts(t *testing.T) {
	ramp := func(from, n, step int64) []int64 {
		vs := make([]int64, n)
		for i := range vs {
			vs[i] = from + int64(i)*step
		}
		return vs
	}
	tests := []struct {
		name    string
		cfg     Config
		before  []int64 // added with Put first
		vs      []int64
		onePass bool
	}{
		{"window", DefaultConfig(), nil, ramp(1_700_000_000_000, 10, 7), true},
		{"one", DefaultConfig(), nil, []int64{42}, true},
		{"none", DefaultConfig(), nil, nil, true},
		{"every width", DefaultConfig(), nil, []int64{math.MinInt64, -1 << 47, -32769, -129, -128, -1, 0, 127, 128, 32768, 1<<31 - 1, 1 << 31, 1<<47 - 1, 1 << 47, 1 << 53, math.MaxInt64}, true},
		{"full", DefaultConfig(), nil, ramp(-64, 128, 1), true},
		{"one past full", DefaultConfig(), nil, ramp(-64, 129, 1), false},
		{"descending", DefaultConfig(), nil, []int64{3, 2, 1}, false},
		{"one score for two", DefaultConfig(), nil, []int64{1 << 60, 1<<60 + 1}, false},
		{"negative scores shared", DefaultConfig(), nil, []int64{-1<<60 - 1, -1 << 60}, false},
		{"not empty", DefaultConfig(), []int64{5}, []int64{1, 9}, false},
		{"short members only", Config{MaxListpackEntries: 128, MaxListpackValue: 5}, nil, []int64{1, 12345, 123456}, false},
		{"never packed", Config{}, nil, []int64{1, 2}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, want := New(tc.cfg), New(tc.cfg)
			for _, v := range tc.before {
				got.Put(fmt.Appendf(nil, "%d", v), float64(v))
				want.Put(fmt.Appendf(nil, "%d", v), float64(v))
			}
			if onePass := New(tc.cfg).addIntsPacked(tc.vs) && len(tc.before) == 0; onePass != tc.onePass {
				t.Fatalf("one pass: %v, want %v", onePass, tc.onePass)
			}
			got.AddInts(tc.vs)
			for _, v := range tc.vs {
				want.Put(fmt.Appendf(nil, "%d", v), float64(v))
			}
			if got.Len() != want.Len() || got.Encoding() != want.Encoding() || got.SelfKeyed() != want.SelfKeyed() {
				t.Fatalf("len %d %s self-keyed %v, want %d %s %v", got.Len(), got.Encoding(), got.SelfKeyed(), want.Len(), want.Encoding(), want.SelfKeyed())
			}
			if got.big == nil && string(got.packed) != string(want.packed) {
				t.Fatalf("packed\n%x\nwant\n%x", got.packed, want.packed)
			}
			var g, w []string
			got.Range(0, -1, false, func(m []byte, sc float64) bool { g = append(g, fmt.Sprintf("%s@%v", m, sc)); return true })
			want.Range(0, -1, false, func(m []byte, sc float64) bool { w = append(w, fmt.Sprintf("%s@%v", m, sc)); return true })
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("members %v, want %v", g, w)
			}
			for _, v := range tc.vs {
				if sc, ok := got.Score(fmt.Appendf(nil, "%d", v)); !ok || sc != float64(v) {
					t.Fatalf("Score(%d) = %v, %v", v, sc, ok)
				}
			}
		})
	}
}
