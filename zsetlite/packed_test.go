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
