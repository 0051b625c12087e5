package zsetlite

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func window(n int) *Set {
	s := New(DefaultConfig())
	for i := 0; i < n; i++ {
		s.Put([]byte(fmt.Sprint(i)), float64(i))
	}
	return s
}

func visited(walk func(Visitor) int) string {
	var b strings.Builder
	walk(func(m []byte, sc float64) bool {
		fmt.Fprintf(&b, "%s:%g ", m, sc)
		return true
	})
	return strings.TrimSpace(b.String())
}

var inf = math.Inf(1)

// TestScoreRanges pins Redis's score range rules on sets of both encodings.
func TestScoreRanges(t *testing.T) {
	tests := []struct {
		name          string
		r             ScoreRange
		rev           bool
		offset, count int
		want          string
	}{
		{"all", ScoreRange{Min: -inf, Max: inf}, false, 0, -1, "0:0 1:1 2:2 3:3 4:4"},
		{"inclusive", ScoreRange{Min: 1, Max: 3}, false, 0, -1, "1:1 2:2 3:3"},
		{"exclusive min", ScoreRange{Min: 1, Max: 3, MinEx: true}, false, 0, -1, "2:2 3:3"},
		{"exclusive both", ScoreRange{Min: 1, Max: 3, MinEx: true, MaxEx: true}, false, 0, -1, "2:2"},
		{"min > max", ScoreRange{Min: 3, Max: 1}, false, 0, -1, ""},
		{"min == max excluded", ScoreRange{Min: 2, Max: 2, MaxEx: true}, false, 0, -1, ""},
		{"min == max", ScoreRange{Min: 2, Max: 2}, false, 0, -1, "2:2"},
		{"between scores", ScoreRange{Min: 1.5, Max: 2.5}, false, 0, -1, "2:2"},
		{"beyond", ScoreRange{Min: 10, Max: inf}, false, 0, -1, ""},
		{"reverse", ScoreRange{Min: 1, Max: 3}, true, 0, -1, "3:3 2:2 1:1"},
		{"limit", ScoreRange{Min: -inf, Max: inf}, false, 1, 2, "1:1 2:2"},
		{"limit reverse", ScoreRange{Min: -inf, Max: inf}, true, 1, 2, "3:3 2:2"},
		{"offset beyond end", ScoreRange{Min: -inf, Max: inf}, false, 5, 2, ""},
		{"negative offset", ScoreRange{Min: -inf, Max: inf}, false, -1, 2, ""},
		{"negative count is all", ScoreRange{Min: -inf, Max: inf}, false, 2, -5, "2:2 3:3 4:4"},
		{"zero count", ScoreRange{Min: -inf, Max: inf}, false, 0, 0, ""},
		{"count past end", ScoreRange{Min: 3, Max: inf}, false, 1, 10, "4:4"},
		{"-inf exclusive", ScoreRange{Min: -inf, Max: 0, MinEx: true}, false, 0, -1, "0:0"},
	}
	for _, big := range []bool{false, true} {
		for _, tt := range tests {
			s := window(5)
			if big {
				s = New(Config{})
				for i := 0; i < 5; i++ {
					s.Put([]byte(fmt.Sprint(i)), float64(i))
				}
			}
			got := visited(func(v Visitor) int { return s.RangeByScore(tt.r, tt.rev, tt.offset, tt.count, v) })
			if got != tt.want {
				t.Errorf("%s (%s): got %q, want %q", tt.name, s.Encoding(), got, tt.want)
			}
		}
	}
}

// TestLexRanges pins the lex bounds: [ and ( and the infinities.
func TestLexRanges(t *testing.T) {
	lr := func(min, max string) LexRange {
		var r LexRange
		parse := func(b string) ([]byte, bool, int8) {
			switch b {
			case "-":
				return nil, true, -1
			case "+":
				return nil, true, 1
			}
			return []byte(b[1:]), b[0] == '(', 0
		}
		r.Min, r.MinEx, r.MinInf = parse(min)
		r.Max, r.MaxEx, r.MaxInf = parse(max)
		return r
	}
	tests := []struct {
		min, max string
		rev      bool
		want     string
	}{
		{"-", "+", false, ":0 A:0 a:0 ab:0 b:0"},
		{"-", "+", true, "b:0 ab:0 a:0 A:0 :0"},
		{"[a", "[b", false, "a:0 ab:0 b:0"},
		{"(a", "(b", false, "ab:0"},
		{"[", "(a", false, ":0 A:0"},
		{"(", "+", false, "A:0 a:0 ab:0 b:0"},
		{"[b", "[a", false, ""},
		{"+", "-", false, ""},
		{"-", "-", false, ""},
		{"+", "+", false, ""},
		{"[c", "+", false, ""},
	}
	for _, cfg := range []Config{DefaultConfig(), {}} {
		s := New(cfg)
		for _, m := range []string{"b", "a", "ab", "A", ""} {
			s.Put([]byte(m), 0)
		}
		for _, tt := range tests {
			r := lr(tt.min, tt.max)
			got := visited(func(v Visitor) int { return s.RangeByLex(r, tt.rev, 0, -1, v) })
			if got != tt.want {
				t.Errorf("%s %s %v (%s): got %q, want %q", tt.min, tt.max, tt.rev, s.Encoding(), got, tt.want)
			}
			if c, n := s.CountByLex(r), len(strings.Fields(tt.want)); c != n && tt.want != "" {
				t.Errorf("CountByLex(%s, %s) = %d, want %d", tt.min, tt.max, c, n)
			}
		}
	}
}

// TestRankBounds pins ZRANGE's index clamping.
func TestRankBounds(t *testing.T) {
	tests := []struct{ start, stop, n, lo, hi int }{
		{0, -1, 5, 0, 5},
		{-2, -1, 5, 3, 5},
		{-100, 100, 5, 0, 5},
		{3, 1, 5, 0, 0},
		{5, 10, 5, 0, 0},
		{0, 0, 0, 0, 0},
		{-1, -1, 1, 0, 1},
		{-6, -6, 5, 0, 0},
		{4, 4, 5, 4, 5},
	}
	for _, tt := range tests {
		if lo, hi := RankBounds(tt.start, tt.stop, tt.n); lo != tt.lo || hi != tt.hi {
			t.Errorf("RankBounds(%d, %d, %d) = %d, %d, want %d, %d", tt.start, tt.stop, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

// TestEncodingConversions follows Redis's rules: convert on the insert that
// crosses a threshold, never back.
func TestEncodingConversions(t *testing.T) {
	s := New(Config{MaxListpackEntries: 3, MaxListpackValue: 4})
	steps := []struct {
		do   func()
		want string
	}{
		{func() { s.Put([]byte("a"), 1) }, EncodingListpack},
		{func() { s.Put([]byte("abcd"), 2) }, EncodingListpack},
		{func() { s.Put([]byte("c"), 3) }, EncodingListpack},
		{func() { s.Put([]byte("c"), 4) }, EncodingListpack}, // update, no insert
		{func() { s.Add([]byte("d"), 5, AddXX) }, EncodingListpack},
		{func() { s.Put([]byte("d"), 5) }, EncodingSkiplist},
		{func() { s.DeleteRangeByRank(0, -2) }, EncodingSkiplist},
	}
	for i, st := range steps {
		st.do()
		if got := s.Encoding(); got != st.want {
			t.Fatalf("step %d: %s, want %s", i, got, st.want)
		}
	}
	s = New(Config{MaxListpackEntries: 3, MaxListpackValue: 4})
	s.Put([]byte("abcde"), 1)
	if s.Encoding() != EncodingSkiplist {
		t.Fatalf("a long first member must convert")
	}
	s = New(Config{})
	s.Put(nil, 1)
	if s.Encoding() != EncodingSkiplist {
		t.Fatalf("max entries 0 means never packed")
	}
}

// TestNegativeZero: a packed set stores -0 as 0 (a listpack stores the text
// d2string wrote), a B+tree keeps it; Add returns the computed score.
func TestNegativeZero(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, tt := range []struct {
		cfg     Config
		wantNeg bool
	}{{DefaultConfig(), false}, {Config{}, true}} {
		s := New(tt.cfg)
		r, sc := s.Add([]byte("m"), negZero, AddIncr)
		if r != Added || !math.Signbit(sc) {
			t.Errorf("%s: Add = %v %v, want Added -0", s.Encoding(), r, sc)
		}
		got, _ := s.Score([]byte("m"))
		if math.Signbit(got) != tt.wantNeg {
			t.Errorf("%s: stored %v", s.Encoding(), got)
		}
		if r, _ := s.Add([]byte("m"), 0, 0); r != Unchanged {
			t.Errorf("%s: 0 over -0 is %v, want Unchanged", s.Encoding(), r)
		}
		s.Put([]byte("a"), 0)
		s.Put([]byte("b"), negZero)
		if got := visited(func(v Visitor) int { return s.Range(0, -1, false, v) }); got != "a:0 b:0 m:0" && got != "a:0 b:-0 m:-0" {
			t.Errorf("%s: order %q", s.Encoding(), got)
		}
	}
}

// TestAddFlags pins zsetAdd's results for each option.
func TestAddFlags(t *testing.T) {
	s := window(3) // 0:0 1:1 2:2
	tests := []struct {
		member string
		score  float64
		flags  AddFlags
		res    AddResult
		want   float64
	}{
		{"1", 5, AddNX, Skipped, 0},
		{"9", 5, AddXX, Skipped, 0},
		{"9", 5, AddNX, Added, 5},
		{"1", 0, AddGT, Skipped, 0},
		{"1", 3, AddGT, Updated, 3},
		{"1", 3, AddGT, Skipped, 0},
		{"1", 3, 0, Unchanged, 3},
		{"1", 2, AddLT | AddXX, Updated, 2},
		{"1", 1, AddIncr, Updated, 3},
		{"1", 0, AddIncr, Unchanged, 3},
		{"new", 1.5, AddIncr, Added, 1.5},
		{"x", inf, 0, Added, inf},
		{"x", -inf, AddIncr, NotANumber, 0},
		{"x", -1, AddIncr | AddGT, Skipped, 0},
	}
	for _, tt := range tests {
		res, sc := s.Add([]byte(tt.member), tt.score, tt.flags)
		if res != tt.res || sc != tt.want {
			t.Errorf("Add(%q, %v, %b) = %v %v, want %v %v", tt.member, tt.score, tt.flags, res, sc, tt.res, tt.want)
		}
	}
}

// TestHostileArguments: extreme arguments the API permits give empty or
// clamped answers, never a panic.
func TestHostileArguments(t *testing.T) {
	for _, cfg := range []Config{DefaultConfig(), {}} {
		s := New(cfg)
		if r, _ := s.Add([]byte("nan"), math.NaN(), 0); r != NotANumber || s.Len() != 0 {
			t.Fatalf("NaN score: %v, len %d", r, s.Len())
		}
		for i := 0; i < 5; i++ {
			s.Put([]byte(fmt.Sprint(i)), float64(i))
		}
		none := func([]byte, float64) bool { return true }
		const big, small = math.MaxInt, math.MinInt
		for _, c := range [][2]int{{small, big}, {big, small}, {small, small}, {big, big}} {
			s.Range(c[0], c[1], false, none)
			s.Range(c[0], c[1], true, none)
			s.RangeByScore(ScoreRange{Min: -inf, Max: inf}, false, c[0], c[1], none)
			s.RangeByScore(ScoreRange{Min: -inf, Max: inf}, true, c[0], c[1], none)
		}
		nan := math.NaN()
		if n := s.CountByScore(ScoreRange{Min: nan, Max: nan}); n != 0 {
			t.Errorf("NaN range counts %d", n)
		}
		s.RandomMembers(randAdapter{nil}, 0, none)
		if n := s.PopMin(big, none); n != 5 {
			t.Errorf("PopMin(MaxInt) = %d", n)
		}
		if n := s.DeleteRangeByRank(small, big); n != 0 {
			t.Errorf("DeleteRangeByRank on empty = %d", n)
		}
	}
}

// TestWalksDoNotAllocatePerElement: a walk may allocate its closure, never
// per member.
func TestWalksDoNotAllocatePerElement(t *testing.T) {
	for _, n := range []int{100, 5000} {
		s, _ := windowSet(n)
		s.Put([]byte("not self-keyed"), 1) // a map too, when large
		sum := 0.0
		fn := func(_ []byte, sc float64) bool { sum += sc; return true }
		all := ScoreRange{Min: -inf, Max: inf}
		for name, walk := range map[string]func(){
			"Range":        func() { s.Range(0, -1, false, fn) },
			"Range rev":    func() { s.Range(0, -1, true, fn) },
			"RangeByScore": func() { s.RangeByScore(all, true, 1, -1, fn) },
			"CountByScore": func() { s.CountByScore(all) },
		} {
			if a := testing.AllocsPerRun(20, walk); a > 2 {
				t.Errorf("%s over %d (%s): %.0f allocations", name, n, s.Encoding(), a)
			}
		}
	}
}
