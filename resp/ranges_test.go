package resp

import (
	"math"
	"testing"
)

// The rows below were checked on redis-server 7.0.15 with ZRANGEBYSCORE
// z <x> +inf and ZRANGEBYSCORE z -inf <x> over members scored -inf, -5, 0,
// 1, 2, 3, 16, 1e300 and +inf.
func TestParseScoreRangeBound(t *testing.T) {
	inf, negZero := math.Inf(1), math.Copysign(0, -1)
	for _, tc := range []struct {
		in   string
		want float64
		ex   bool
		ok   bool
	}{
		{"1", 1, false, true},
		{"(1", 1, true, true},
		{".5", 0.5, false, true},
		{"0x10", 16, false, true},
		{"(0x10", 16, true, true},
		{"-0", negZero, false, true},
		{"(-0", negZero, true, true},
		{"inf", inf, false, true},
		{"+inf", inf, false, true},
		{"(inf", inf, true, true},
		{"(+inf", inf, true, true},
		{"-inf", -inf, false, true},
		{"(-inf", -inf, true, true},
		{"0x1P-1074", 4.9406564584124654e-324, false, true},
		{"1e-320", 9.9998886718268301e-321, false, true},
		// Nothing to convert is 0.
		{"", 0, false, true},
		{"(", 0, true, true},
		// strtod skips leading whitespace, after the '(' too.
		{" 1", 1, false, true},
		{"\t1", 1, false, true},
		{"\n1", 1, false, true},
		{"\v1", 1, false, true},
		{"\f1", 1, false, true},
		{"\r1", 1, false, true},
		{"( 1", 1, true, true},
		{" inf", inf, false, true},
		// The C string ends at the first NUL.
		{"1\x00abc", 1, false, true},
		{"(1\x00abc", 1, true, true},
		{"\x00", 0, false, true},
		{"\x00x", 0, false, true},
		{"(\x00x", 0, true, true},
		// No range checks: overflow is infinity, underflow is zero.
		{"1e400", inf, false, true},
		{"(1e400", inf, true, true},
		{"-1e400", -inf, false, true},
		{"1e-400", 0, false, true},
		{"(1e-400", 0, true, true},
		{"-1e-400", negZero, false, true},

		{"nan", 0, false, false},
		{"(nan", 0, false, false},
		{"-nan", 0, false, false},
		{"[1", 0, false, false},
		{"abc", 0, false, false},
		{"(abc", 0, false, false},
		{" ", 0, false, false},
		{"( ", 0, false, false},
		{"1 ", 0, false, false},
		{"((1", 0, false, false},
		{"  (1", 0, false, false},
		{"( (1", 0, false, false},
		{"\xa01", 0, false, false},
		{"(\xa01", 0, false, false},
		{"1e", 0, false, false},
		{"1e+", 0, false, false},
		{"0x", 0, false, false},
		{"0x1p", 0, false, false},
		{"infinit", 0, false, false},
		{"-", 0, false, false},
		{"(-", 0, false, false},
		{"+", 0, false, false},
		{".", 0, false, false},
		{"(.", 0, false, false},
	} {
		// As min, then as max.
		r, ok := ParseScoreRange([]byte(tc.in), []byte("+inf"))
		if ok != tc.ok || ok && (math.Float64bits(r.Min) != math.Float64bits(tc.want) || r.MinEx != tc.ex) {
			t.Errorf("ParseScoreRange(%q, +inf) = %+v, %v; want min %v ex %v ok %v", tc.in, r, ok, tc.want, tc.ex, tc.ok)
		}
		r, ok = ParseScoreRange([]byte("-inf"), []byte(tc.in))
		if ok != tc.ok || ok && (math.Float64bits(r.Max) != math.Float64bits(tc.want) || r.MaxEx != tc.ex) {
			t.Errorf("ParseScoreRange(-inf, %q) = %+v, %v; want max %v ex %v ok %v", tc.in, r, ok, tc.want, tc.ex, tc.ok)
		}
	}
}

func TestScoreRangeMembership(t *testing.T) {
	scores := []float64{math.Inf(-1), -5, 0, 1, 2, 3, 16, 1e300, math.Inf(1)}
	for _, tc := range []struct {
		min, max string
		want     []float64 // what ZRANGEBYSCORE returned
	}{
		{"", "3", []float64{0, 1, 2, 3}},
		{"(", "+inf", []float64{1, 2, 3, 16, 1e300, math.Inf(1)}},
		{"-inf", "(", []float64{math.Inf(-1), -5}},
		{"(1", "(3", []float64{2}},
		{"(-inf", "(+inf", []float64{-5, 0, 1, 2, 3, 16, 1e300}},
		{"+inf", "+inf", []float64{math.Inf(1)}},
		{"(1e400", "+inf", nil},
		{"1", "1", []float64{1}},
		{"(1", "1", nil},
		{"1", "(1", nil},
		{"2", "1", nil},
		{"-inf", "-inf", []float64{math.Inf(-1)}},
		{"+inf", "-inf", nil},
		{"1", "(1e-400", nil},
	} {
		r, ok := ParseScoreRange([]byte(tc.min), []byte(tc.max))
		if !ok {
			t.Errorf("ParseScoreRange(%q, %q) failed", tc.min, tc.max)
			continue
		}
		var got []float64
		for _, s := range scores {
			if r.Contains(s) {
				got = append(got, s)
			}
		}
		if !equalFloats(got, tc.want) {
			t.Errorf("[%q, %q] contains %v, want %v", tc.min, tc.max, got, tc.want)
		}
		if r.Empty() && len(got) > 0 {
			t.Errorf("[%q, %q] is Empty but contains %v", tc.min, tc.max, got)
		}
	}
	for _, tc := range []struct {
		min, max string
		empty    bool
	}{
		{"1", "1", false},
		{"(1", "1", true},
		{"1", "(1", true},
		{"2", "1", true},
		{"inf", "inf", false},
		{"(inf", "inf", true},
		{"+inf", "-inf", true},
		{"(1", "(2", false}, // nothing in a set of integers, yet not Empty
	} {
		r, _ := ParseScoreRange([]byte(tc.min), []byte(tc.max))
		if r.Empty() != tc.empty {
			t.Errorf("[%q, %q].Empty() = %v, want %v", tc.min, tc.max, r.Empty(), tc.empty)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseLexRange(t *testing.T) {
	for _, tc := range []struct {
		in  string
		s   string
		ex  bool
		inf int8
		ok  bool
	}{
		{"-", "", true, -1, true},
		{"+", "", true, 1, true},
		{"-\x00x", "", true, -1, true}, // Redis reads "-" as a C string
		{"+\x00", "", true, 1, true},
		{"[a", "a", false, 0, true},
		{"(a", "a", true, 0, true},
		{"[", "", false, 0, true},
		{"(", "", true, 0, true},
		{"[a\x00", "a\x00", false, 0, true},
		{"[-", "-", false, 0, true},
		{"[+", "+", false, 0, true},
		{"", "", false, 0, false},
		{"a", "", false, 0, false},
		{"-a", "", false, 0, false},
		{"+a", "", false, 0, false},
		{" [a", "", false, 0, false},
		{"5", "", false, 0, false},
		{"0", "", false, 0, false},
	} {
		r, ok := ParseLexRange([]byte(tc.in), []byte("+"))
		if ok != tc.ok || ok && (string(r.Min) != tc.s || r.MinEx != tc.ex || r.MinInf != tc.inf) {
			t.Errorf("ParseLexRange(%q, +) = %+v, %v", tc.in, r, ok)
		}
		r, ok = ParseLexRange([]byte("-"), []byte(tc.in))
		if ok != tc.ok || ok && (string(r.Max) != tc.s || r.MaxEx != tc.ex || r.MaxInf != tc.inf) {
			t.Errorf("ParseLexRange(-, %q) = %+v, %v", tc.in, r, ok)
		}
	}
}

func TestLexRangeMembership(t *testing.T) {
	members := []string{"", "a", "a\x00", "ab", "b", "c"}
	for _, tc := range []struct {
		min, max string
		want     []string // what ZRANGEBYLEX returned
		empty    bool
	}{
		{"-", "+", members, false},
		{"-", "-", nil, true},
		{"+", "+", nil, true},
		{"+", "-", nil, true},
		{"[a", "+", []string{"a", "a\x00", "ab", "b", "c"}, false},
		{"(a", "+", []string{"a\x00", "ab", "b", "c"}, false},
		{"-", "[a", []string{"", "a"}, false},
		{"-", "(a", []string{""}, false},
		{"[", "+", members, false},
		{"(", "+", []string{"a", "a\x00", "ab", "b", "c"}, false},
		{"-", "[", []string{""}, false},
		{"-", "(", nil, false},
		{"(a\x00", "+", []string{"ab", "b", "c"}, false},
		{"-", "[a\x00", []string{"", "a", "a\x00"}, false},
		{"[\xff", "+", nil, false},
		{"-", "[\xff", members, false},
		{"[-", "+", []string{"a", "a\x00", "ab", "b", "c"}, false},
		{"[a", "[a", []string{"a"}, false},
		{"[a", "(a", nil, true},
		{"(a", "[a", nil, true},
		{"[b", "[a", nil, true},
		{"[", "[", []string{""}, false},
		{"(", "[", nil, true},
	} {
		r, ok := ParseLexRange([]byte(tc.min), []byte(tc.max))
		if !ok {
			t.Errorf("ParseLexRange(%q, %q) failed", tc.min, tc.max)
			continue
		}
		var got []string
		for _, m := range members {
			if r.Contains([]byte(m)) {
				got = append(got, m)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("[%q, %q] contains %q, want %q", tc.min, tc.max, got, tc.want)
		} else {
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("[%q, %q] contains %q, want %q", tc.min, tc.max, got, tc.want)
					break
				}
			}
		}
		if r.Empty() != tc.empty {
			t.Errorf("[%q, %q].Empty() = %v, want %v", tc.min, tc.max, r.Empty(), tc.empty)
		}
	}
}
