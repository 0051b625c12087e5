package gcra

import (
	"errors"
	"math"
	"testing"
)

// TestParseInt: the spec's Grammar: "optional single + or -, then ASCII
// digits, nothing else (no spaces, no 0x, no 1e3, no 1.5, not empty), in
// int64 range. Leading zeros are fine. Negative values are ACCEPTED."
func TestParseInt(t *testing.T) {
	ok := []struct {
		in   string
		want int64
	}{
		{"1", 1},
		{"+1", 1}, // the +p row of the command tests: `+4 +1 +1 +1`
		{"-1", -1},
		{"-2", -2},
		{"004", 4}, // leading zeros
		{"01", 1},
		{"-007", -7},
		{"0", 0},
		{"-0", 0},
		{"+0", 0},
		{"9223372036854775807", math.MaxInt64},
		{"-9223372036854775808", math.MinInt64},
		{"00000000000000000000009223372036854775807", math.MaxInt64},
		{"31536000", 31536000},
	}
	for _, tc := range ok {
		got, good := ParseInt([]byte(tc.in))
		if !good || got != tc.want {
			t.Errorf("ParseInt(%q) = %d, %v; want %d", tc.in, got, good, tc.want)
		}
	}
	bad := []string{
		"",    // empty
		"+",   // a sign alone
		"-",   //
		"++1", // one sign only
		"+-1",
		"--1",
		" 1", // spaces
		"1 ",
		"1 2",
		"0x1", // no hex
		"0x10",
		"1e3", // no exponent
		"1.5", // no fraction
		"1.0",
		"9223372036854775808",  // int64 overflow
		"-9223372036854775809", //
		"18446744073709551616",
		"99999999999999999999999",
		"1_000",
		"x", "y", "z", "q",
		"\x001",
		"1\x00",
		"\u0661", // ARABIC-INDIC DIGIT ONE: ASCII digits only
		"１",      // FULLWIDTH DIGIT ONE
	}
	for _, in := range bad {
		if got, good := ParseInt([]byte(in)); good {
			t.Errorf("ParseInt(%q) = %d, accepted", in, got)
		}
	}
}

// TestParseFailure: the error for a number that does not parse: "<arg> is
// echoed verbatim, except that each \r or \n becomes a space and the text
// stops at the first NUL byte (an empty arg leaves a trailing space after
// the colon)".
func TestParseFailure(t *testing.T) {
	const prefix = "Cell error: Store error: Couldn't parse as integer: "
	tests := []struct{ in, want string }{
		{"x", prefix + "x"},
		{"", prefix}, // trailing space after the colon
		{"a\nb", prefix + "a b"},
		{"a\r\nb", prefix + "a  b"},
		{"\r", prefix + " "},
		{"12\x0034", prefix + "12"},
		{"\x00abc", prefix},
		{"a\x00\r\n", prefix + "a"},
		{"1.5", prefix + "1.5"},
		{" 1", prefix + " 1"},
		{"0x1", prefix + "0x1"},
		{"1e3", prefix + "1e3"},
		{"9223372036854775808", prefix + "9223372036854775808"},
		{"\xff\xfe", prefix + "\xff\xfe"}, // other bytes kept, even invalid UTF-8
		{"tab\there", prefix + "tab\there"},
	}
	for _, tc := range tests {
		if got := ParseFailure([]byte(tc.in)); got != tc.want {
			t.Errorf("ParseFailure(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if MsgParsePrefix != prefix {
		t.Errorf("MsgParsePrefix = %q", MsgParsePrefix)
	}
	// The other texts of the spec's Errors table.
	if MsgUsage != "Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]" {
		t.Errorf("MsgUsage = %q", MsgUsage)
	}
	if MsgInvalidDigit != "Cell error: invalid digit found in string" || ErrInvalidDigit.Error() != MsgInvalidDigit {
		t.Errorf("MsgInvalidDigit = %q, ErrInvalidDigit = %q", MsgInvalidDigit, ErrInvalidDigit)
	}
}

// TestParseTAT: the state is "the TAT as decimal uint64 nanoseconds"; a
// string that is not a base-10 uint64 is "-Cell error: invalid digit found
// in string". The whole u64 range is a valid state.
func TestParseTAT(t *testing.T) {
	ok := []struct {
		in   string
		want uint64
	}{
		{"1700000000000000000", 1700000000000000000}, // 19 digits today
		{"0", 0},
		{"5", 5},
		{"0005", 5},
		{"9223372036854775807", math.MaxInt64},
		{"9223372036854775808", math.MaxInt64 + 1}, // past 2262: kept exactly
		{"18446744073709551615", math.MaxUint64},
		{"+5", 5}, // Rust's u64::from_str takes a '+', as redis-cell reads it
	}
	for _, tc := range ok {
		got, err := ParseTAT([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("ParseTAT(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"not a number", // the cell test's SET str "not a number"
		"",
		"-1",
		"-0",
		"+",
		"++5",
		" 5",
		"5 ",
		"5.0",
		"1e3",
		"0x10",
		"18446744073709551616", // above MaxUint64
		"99999999999999999999",
		"5\x00",
	}
	for _, in := range bad {
		if got, err := ParseTAT([]byte(in)); !errors.Is(err, ErrInvalidDigit) {
			t.Errorf("ParseTAT(%q) = %d, %v; want ErrInvalidDigit", in, got, err)
		}
	}
}

// BenchmarkParseTAT is the stored TAT CL.THROTTLE parses on every call:
// 19 digits, nanoseconds since the epoch.
func BenchmarkParseTAT(b *testing.B) {
	tat := []byte("1763861234567890123")
	for b.Loop() {
		if _, err := ParseTAT(tat); err != nil {
			b.Fatal(err)
		}
	}
}
