package resp

import (
	"math"
	"strconv"
	"testing"
)

// Every row below was checked on redis-server 7.0.15: INCRBY n <x> for
// integers, ZADD z <x> m then ZSCORE z m for floats.

func TestParseInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"0", 0, true},
		{"-1", -1, true},
		{"1700000000000", 1700000000000, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"18446744073709551615", 0, false},
		{"18446744073709551616", 0, false},
		{"99999999999999999999", 0, false},
		{"-99999999999999999999", 0, false},
		{"09223372036854775807", 0, false},
		{"+5", 0, false},
		{"05", 0, false},
		{"00", 0, false},
		{"-0", 0, false},
		{"-00", 0, false},
		{"-05", 0, false},
		{" 5", 0, false},
		{"5 ", 0, false},
		{"5\x00", 0, false},
		{"1.0", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"+", 0, false},
		{"--1", 0, false},
		{"0-", 0, false},
	} {
		got, ok := ParseInt([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseFloat(t *testing.T) {
	const (
		maxF    = math.MaxFloat64
		minSub  = 4.9406564584124654e-324 // smallest subnormal
		minNorm = 2.2250738585072014e-308
	)
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		// Plain decimals.
		{"1", 1, true},
		{"-1.5", -1.5, true},
		{"1.5", 1.5, true},
		{"2.5", 2.5, true},
		{"0.1", 0.1, true},
		{"1e-5", 1e-5, true},
		{"1e20", 1e20, true},
		{"123456789012345678", 123456789012345678, true},
		{"1700000000000", 1700000000000, true},
		{".5", 0.5, true},
		{"+.5", 0.5, true},
		{"1.", 1, true},
		{"01", 1, true},
		{"001.5", 1.5, true},
		{"1e5", 1e5, true},
		{"1E5", 1e5, true},
		{"1e+05", 1e5, true},
		{"1e0005", 1e5, true},
		{"0", 0, true},
		{"0.0", 0, true},
		{"0e10", 0, true},
		{"0e-400", 0, true},
		{"-0", math.Copysign(0, -1), true},
		// Infinities, in any case, signed or not.
		{"inf", math.Inf(1), true},
		{"+inf", math.Inf(1), true},
		{"-inf", math.Inf(-1), true},
		{"INF", math.Inf(1), true},
		{"inF", math.Inf(1), true},
		{"infinity", math.Inf(1), true},
		{"+infinity", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true},
		{"-INFINITY", math.Inf(-1), true},
		{"InFiNiTy", math.Inf(1), true},
		{"infINITY", math.Inf(1), true},
		// Hex floats, with or without a binary exponent.
		{"0x10", 16, true},
		{"0X1P4", 16, true},
		{"0x1p4", 16, true},
		{"0x1p+4", 16, true},
		{"0x1p-4", 0.0625, true},
		{"0x1p1", 2, true},
		{"0x1.8p1", 3, true},
		{"0x1e", 30, true},
		{"0xABCDEF", 11259375, true},
		{"0x.8", 0.5, true},
		{"0x1.", 1, true},
		{"-0x10", -16, true},
		{"+0x10", 16, true},
		{"0x1p-1022", minNorm, true},
		// Subnormals are accepted although strtod sets ERANGE for them.
		{"0x1P-1074", minSub, true},
		{"0x0.0000000000001p-1022", minSub, true},
		{"0x1.0000000001p-1075", minSub, true},
		{"0x0.00000000000008000001p-1022", minSub, true},
		{"1e-310", 9.9999999999999694e-311, true},
		{"1e-320", 9.9998886718268301e-321, true},
		{"-1e-320", -9.9998886718268301e-321, true},
		{"4.9e-324", minSub, true},
		{"-4.9e-324", -minSub, true},
		{"2.5e-324", minSub, true},
		{"2.4703282292062328e-324", minSub, true},
		// The largest finite value and what still rounds down to it.
		{"0x1.fffffffffffffp1023", maxF, true},
		{"1.7976931348623157e308", maxF, true},
		{"1.7976931348623158e308", maxF, true},
		{"1.797693134862315807e308", maxF, true},
		// Long mantissas.
		{"100000000000000000000000000000000000000000000000000000e-360", 9.9999999999999991e-308, true},
		{"1" + zeros(400) + "e-400", 1, true},
		{"0." + zeros(400) + "1e400", 0.1, true},

		// Underflow to zero and overflow are refused.
		{"1e-400", 0, false},
		{"-1e-400", 0, false},
		{"0.000000000000000000000000000000000000000000001e-280", 0, false},
		{"2.4e-324", 0, false},
		{"-2.4e-324", 0, false},
		{"2.4703282292062327e-324", 0, false}, // a tie rounds to even: 0
		{"0x1p-1075", 0, false},
		{"0x1p-1076", 0, false},
		{"0x0.00000000000008p-1022", 0, false},
		{"1e400", 0, false},
		{"-1e400", 0, false},
		{"1.7976931348623159e308", 0, false},
		{"0x1p1024", 0, false},
		{"0x1.fffffffffffff8p1023", 0, false},
		// NaN in every spelling.
		{"nan", 0, false},
		{"NaN", 0, false},
		{"-nan", 0, false},
		{"nan(123)", 0, false},
		// Whitespace, anywhere.
		{"", 0, false},
		{" ", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"\t1", 0, false},
		{"1\t", 0, false},
		{"\n1", 0, false},
		{"\v1", 0, false},
		{"\f1", 0, false},
		{"\r1", 0, false},
		{"\xa01", 0, false},
		{"inf ", 0, false},
		{"infinity ", 0, false},
		// Incomplete or trailing text: strtod stops early.
		{"1\x00", 0, false},
		{"1\x002", 0, false},
		{"1_000", 0, false},
		{"1e", 0, false},
		{"1e+", 0, false},
		{"1e-", 0, false},
		{"1e5.5", 0, false},
		{"1..5", 0, false},
		{".", 0, false},
		{"-.", 0, false},
		{"+", 0, false},
		{"-", 0, false},
		{"+-1", 0, false},
		{"--1", 0, false},
		{"++1", 0, false},
		{"e5", 0, false},
		{"1d", 0, false},
		{"1f", 0, false},
		{"1L", 0, false},
		{"(1", 0, false},
		{"infinit", 0, false},
		{"infinityx", 0, false},
		{"0x", 0, false},
		{"0x.", 0, false},
		{"0x.p1", 0, false},
		{"0x1p", 0, false},
		{"0x1p4.5", 0, false},
		{"0xg", 0, false},
		{"00x10", 0, false},
	} {
		got, ok := ParseFloat([]byte(tc.in))
		if ok != tc.ok || math.Float64bits(got) != math.Float64bits(tc.want) {
			t.Errorf("ParseFloat(%.40q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func zeros(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
	}
	return string(b)
}

func TestAppendDouble(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		// Section 1.3 of the spec, read off the wire (ZSCORE).
		{1, "1"},
		{1.5, "1.5"},
		{2.5, "2.5"},
		{0.1, "0.10000000000000001"},
		{1e-5, "1.0000000000000001e-05"},
		{1e20, "1e+20"},
		{123456789012345678, "1.2345678901234568e+17"},
		{1700000000000, "1700000000000"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		// EVAL "return {double=...}" 0.
		{math.Copysign(0, -1), "-0"},
		{math.Copysign(math.NaN(), -1), "-nan"}, // Lua's 0/0
		{math.NaN(), "nan"},                     // Lua's -(0/0)
		// ZSCORE after the ZADDs of TestParseFloat.
		{4.9406564584124654e-324, "4.9406564584124654e-324"},
		{9.9998886718268301e-321, "9.9998886718268301e-321"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{0.0625, "0.0625"},
		{100000, "100000"},
		{11259375, "11259375"},
	} {
		if got := string(AppendDouble([]byte("x"), tc.in)); got != "x"+tc.want {
			t.Errorf("AppendDouble(%v) = %q, want %q", tc.in, got, "x"+tc.want)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	inputs := [][]byte{[]byte("1700000000000"), []byte("-9223372036854775808")}
	floats := [][]byte{[]byte("1.5"), []byte("0.10000000000000001"), []byte("1.7976931348623157e308"), []byte("0x1.8"), []byte("-inf")}
	n := testing.AllocsPerRun(100, func() {
		for _, b := range inputs {
			ParseInt(b)
		}
		for _, b := range floats {
			ParseFloat(b)
		}
		ParseScoreRange([]byte("(1.5"), []byte("+inf"))
		ParseLexRange([]byte("[a"), []byte("+"))
	})
	if n != 0 {
		t.Errorf("parsing allocates %v times per run", n)
	}
}

var (
	benchInt   int64
	benchFloat float64
	benchBuf   []byte
)

func BenchmarkParseInt(b *testing.B) {
	for _, in := range []string{"7", "1700000000000", "-9223372036854775808"} {
		buf := []byte(in)
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				benchInt, _ = ParseInt(buf)
			}
		})
	}
}

func BenchmarkParseFloat(b *testing.B) {
	for _, in := range []string{"1", "1.5", "1700000000000", "0.10000000000000001", "-inf"} {
		buf := []byte(in)
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				benchFloat, _ = ParseFloat(buf)
			}
		})
	}
}

// BenchmarkStrconvParseFloat is the floor ParseFloat's syntax check adds to.
func BenchmarkStrconvParseFloat(b *testing.B) {
	for _, in := range []string{"1.5", "1700000000000"} {
		b.Run(in, func(b *testing.B) {
			for b.Loop() {
				benchFloat, _ = strconv.ParseFloat(in, 64)
			}
		})
	}
}

func BenchmarkAppendDouble(b *testing.B) {
	var buf [32]byte
	for _, f := range []float64{1.5, 1700000000000, 0.1} {
		b.Run(strconv.FormatFloat(f, 'g', -1, 64), func(b *testing.B) {
			for b.Loop() {
				benchBuf = AppendDouble(buf[:0], f)
			}
		})
	}
}

func TestParseStrtod(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"", 0, true}, {"1", 1, true}, {" 7", 7, true}, {"\t-2.5", -2.5, true}, {"0x10", 16, true},
		{"1e2", 100, true}, {"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
		{"1\x00x", 1, true}, {"\x00abc", 0, true},
		{"  ", 0, false}, {"7 ", 0, false}, {"abc", 0, false}, {"nan", 0, false}, {"1e400", 0, false},
		{"1e-400", 0, false}, {"1x", 0, false}, {"+", 0, false},
	} {
		got, ok := ParseStrtod([]byte(tt.in))
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("ParseStrtod(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
