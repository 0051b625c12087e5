package resp

import (
	"bytes"
	"math"
	"strconv"
	"testing"
)

func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{
		"1", "-1.5", ".5", "1e20", "+inf", "-Infinity", "0x10", "0x1p4",
		"0x1.8p1", "", " 1", "1 ", "1e", "1_000", "nan", "1e400", "1e-400",
		"1e-320", "2.5e-324", "0x1P-1074", "0x", "0x1p", "infinit", "(1",
		"( 1", "1\x00a", "1.7976931348623158e308", "0x1.fffffffffffff8p1023",
		"-0", "+0", "007", "+12", "-", "999999999999999", "9999999999999999", "1700000000000",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseFloat(b)
		bv, _, bok := parseScoreBound(b)
		if !ok {
			return
		}
		if math.IsNaN(v) {
			t.Fatalf("ParseFloat(%q) accepted NaN", b)
		}
		if bytes.ContainsAny(b, " \t\n\v\f\r_\x00") {
			t.Fatalf("ParseFloat(%q) accepted whitespace, '_' or NUL", b)
		}
		// What ZADD accepts, ZRANGEBYSCORE accepts as the same bound.
		if !bok || math.Float64bits(bv) != math.Float64bits(v) {
			t.Fatalf("ParseFloat(%q) = %v but as a bound: %v, %v", b, v, bv, bok)
		}
		// A stored score prints and parses back to itself (%.17g round-trips).
		txt := AppendDouble(nil, v)
		if w, ok := ParseFloat(txt); !ok || math.Float64bits(w) != math.Float64bits(v) {
			t.Fatalf("ParseFloat(%q) = %v, printed %q, which parses as %v, %v", b, v, txt, w, ok)
		}
		// Where strconv understands the syntax too, it agrees on the value.
		if w, err := strconv.ParseFloat(string(b), 64); err == nil && math.Float64bits(w) != math.Float64bits(v) {
			t.Fatalf("ParseFloat(%q) = %v, strconv says %v", b, v, w)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{
		"0", "1", "-1", "+5", "05", "00", "-0", " 5", "5 ", "1.0", "1e3", "",
		"9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551616",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseInt(b)
		// strconv accepts the same numbers in more spellings ("+5", "05",
		// "-0"); string2ll accepts only the canonical one.
		w, err := strconv.ParseInt(string(b), 10, 64)
		want := err == nil && strconv.FormatInt(w, 10) == string(b)
		if ok != want || ok && v != w {
			t.Fatalf("ParseInt(%q) = %d, %v; strconv: %d, %v", b, v, ok, w, err)
		}
	})
}
