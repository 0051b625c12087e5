package resp

import (
	"strings"
	"testing"
)

// TestLongDoubleSums checks x + x and then + 0.1 in long double arithmetic
// against what Redis 7.0.15's HINCRBYFLOAT replied for the same steps
// (read off the wire).
func TestLongDoubleSums(t *testing.T) {
	for _, tc := range []struct{ in, twice, plusTenth string }{
		{"0.1", "0.2", "0.3"},
		{"10.5", "21", "21.1"},
		{"1e20", "200000000000000000000", "200000000000000000000"}, // 0.1 is below the ulp
		{"-1e-20", "0", "0.1"},
		{"3.0000000000000001", "6.0000000000000002", "6.1000000000000002"},
		{"0x1p-3", "0.25", "0.35"},
		{"1e-17", "0.00000000000000002", "0.10000000000000002"},
		{"5e-18", "0.00000000000000001", "0.10000000000000001"},
		{"-0", "0", "0.1"},
	} {
		x, ok := ParseLongDouble([]byte(tc.in))
		if !ok {
			t.Fatalf("%s: not parsed", tc.in)
		}
		sum := NewLongDouble().Add(x, x)
		if got := string(AppendLongDouble(nil, sum)); got != tc.twice {
			t.Errorf("%s + %s = %s, want %s", tc.in, tc.in, got, tc.twice)
		}
		tenth, _ := ParseLongDouble([]byte("0.1"))
		sum.Add(sum, tenth)
		if got := string(AppendLongDouble(nil, sum)); got != tc.plusTenth {
			t.Errorf("%s * 2 + 0.1 = %s, want %s", tc.in, got, tc.plusTenth)
		}
	}
}

// TestLongDoubleRedisValues are single HINCRBYFLOAT results from Redis.
func TestLongDoubleRedisValues(t *testing.T) {
	add := func(a, b string) string {
		x, _ := ParseLongDouble([]byte(a))
		y, _ := ParseLongDouble([]byte(b))
		return string(AppendLongDouble(nil, NewLongDouble().Add(x, y)))
	}
	for _, tc := range []struct{ a, b, want string }{
		{"10.5", "0.1", "10.6"},
		{"10.6", "5.0e3", "5010.60000000000000009"},
		{"0.1", "0.1", "0.2"},
		{"0", "123456789012345678901234567890", "123456789012345678899921813504"},
		{"0", "1e-17", "0.00000000000000001"},
		{"0", "5e-18", "0"},
		{"0", "1.5e-20", "0"},
	} {
		if got := add(tc.a, tc.b); got != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	if got := add("10.6", "1e300"); !strings.HasPrefix(got, "1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144") || len(got) != 301 {
		t.Errorf("10.6 + 1e300 = %s", got)
	}
}

func TestParseLongDouble(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"1", true}, {"-1.5", true}, {".5", true}, {"1.", true}, {"0x10", true}, {"0X1.8P1", true},
		{"inf", true}, {"-Infinity", true}, {"1e400", true}, {"1e4932", true}, {"1e-4940", true},
		{"0e-99999999999999999999", true},
		{"", false}, {" 1", false}, {"1 ", false}, {"1e", false}, {"nan", false}, {"-nan", false},
		{"1_000", false}, {"1e5000", false}, {"-1e5000", false}, {"1e-5000", false}, {"0x", false},
		{".", false}, {"1e99999999999999999999", false}, {"\x001", false}, {"1\x00junk", false}, {"1\x00", false},
		{"1" + strings.Repeat("0", 5119), false}, {"1" + strings.Repeat("0", 5118), false},
		{"0." + strings.Repeat("0", 5000) + "1", false}, {"0." + strings.Repeat("0", 4900) + "1", true},
	} {
		if _, ok := ParseLongDouble([]byte(tc.in)); ok != tc.ok {
			t.Errorf("ParseLongDouble(%.40q) ok=%v, want %v", tc.in, ok, tc.ok)
		}
	}
}

func TestLongDoubleRange(t *testing.T) {
	x, _ := ParseLongDouble([]byte("1e4932"))
	if !LongDoubleInRange(x) {
		t.Fatal("1e4932 out of range")
	}
	if LongDoubleInRange(NewLongDouble().Add(x, x)) {
		t.Fatal("2e4932 in range")
	}
	inf, _ := ParseLongDouble([]byte("-inf"))
	if LongDoubleInRange(inf) || string(AppendLongDouble(nil, inf)) != "-inf" {
		t.Fatal("-inf")
	}
}
