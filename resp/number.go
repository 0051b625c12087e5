package resp

import (
	"math"
	"strconv"
)

// Error texts of argument parsing, exactly as Redis 7.0 words them (without
// the leading '-' and the CRLF).
const (
	ErrNotInteger     = "ERR value is not an integer or out of range"
	ErrNotFloat       = "ERR value is not a valid float"
	ErrMinMaxNotFloat = "ERR min or max is not a float"
	ErrMinMaxNotLex   = "ERR min or max not valid string range item"
)

// ParseInt parses an integer argument as Redis's string2ll does: an optional
// '-', then digits without leading zeros, within int64. "0" is the only
// number that starts with 0, so "-0", "05", "+5", " 5" and "" are all
// rejected. Counts, indexes, TTLs and INCRBY deltas all go through here.
func ParseInt(b []byte) (int64, bool) {
	// 20 bytes is "-9223372036854775808"; anything longer is out of range.
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	i := 0
	neg := b[0] == '-'
	limit := uint64(math.MaxInt64)
	if neg {
		if n == 1 {
			return 0, false
		}
		i = 1
		limit++ // |MinInt64| is one more than MaxInt64
	}
	if b[i] == '0' {
		return 0, n == 1
	}
	// No leading zero, so 20 digits is at least 1e19: out of range. 19
	// digits fit in a uint64 and need only the final check.
	if n-i > 19 {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		d := b[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if v > limit {
		return 0, false
	}
	if neg {
		// Two's complement: also right for v == 1<<63 (MinInt64).
		return int64(-v), true
	}
	return int64(v), true
}

// ParseFloat parses a float argument (ZADD and ZINCRBY scores) as Redis's
// string2d does: C strtod must consume the whole non-empty string, which
// must not start with whitespace, and the result must be neither NaN nor out
// of range. That admits what strtod admits and Go's strconv does not:
// "0x10" (16), "infinity", "1." and ".5"; and it refuses what strconv
// admits and strtod does not: "1_000", "nan". Overflow ("1e400") and
// underflow to zero ("1e-400") are refused, but a subnormal result
// ("1e-320") is accepted, because Redis only rejects ERANGE when the value
// came back as ±HUGE_VAL or zero.
func ParseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || strtodSpace(b[0]) {
		return 0, false
	}
	v, n, lost := strtod(b)
	if n != len(b) || lost || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// ParseStrtod parses b as SORT reads a score: C strtod over b as a C
// string (up to a NUL), leading whitespace skipped, which must convert
// all of it; NaN and a value out of range are refused. Unlike ParseFloat
// it accepts the empty string, as 0.
func ParseStrtod(b []byte) (float64, bool) {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	i := 0
	for i < len(b) && strtodSpace(b[i]) {
		i++
	}
	v, n, lost := strtod(b[i:])
	if n == 0 || i+n != len(b) || lost || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// AppendDouble appends f as Redis 7.0's addReplyDouble prints it: C's
// "%.17g", which strconv's 'g' format with 17 digits reproduces for finite
// values, and glibc's spellings for the rest ("inf", "-inf", "nan", "-nan"
// by the sign bit: Lua's 0/0 prints "-nan" on x86).
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(dst, "-nan"...)
		}
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// strtodSpace reports whether strtod skips c as leading whitespace. Redis
// leaves LC_CTYPE at "C", so only the six ASCII spaces count.
func strtodSpace(c byte) bool {
	return c == ' ' || c-'\t' <= '\r'-'\t'
}

// shortDecimal converts b when it is all of [+-]digits with at most 15
// digits, the usual score or bound (a timestamp, a count): every such
// integer is a float64 exactly, so no rounding is involved, and strtod
// would convert all of b to the same value ("-0" to -0).
func shortDecimal(b []byte) (float64, bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	if len(b)-i < 1 || len(b)-i > 15 {
		return 0, false
	}
	var u int64
	for _, c := range b[i:] {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		u = u*10 + int64(d)
	}
	v := float64(u)
	if b[0] == '-' {
		v = -v // -0 for "-0", as strtod
	}
	return v, true
}

// strtod converts the longest prefix of b that glibc's strtod (C locale)
// would, except that it does not skip leading whitespace (callers decide
// what whitespace means). It returns the value, the length of the prefix
// (0 if strtod would convert nothing) and whether strtod would set ERANGE
// with a value that Redis refuses: an overflow to ±HUGE_VAL or an underflow
// to zero. The value of an overflow is ±Inf and of an underflow ±0, as
// strtod returns them.
//
// The syntax is checked here, byte by byte; strconv then does the correctly
// rounded conversion of a prefix that it is known to accept.
func strtod(b []byte) (v float64, n int, lost bool) {
	if v, ok := shortDecimal(b); ok {
		return v, len(b), false
	}
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	neg := i > 0 && b[0] == '-'
	if i == len(b) {
		return 0, 0, false
	}
	switch b[i] | 0x20 { // ASCII lower case
	case 'i':
		switch n = foldPrefix(b[i:], "infinity"); {
		case n < 3:
			return 0, 0, false
		case n < 8:
			n = 3 // "infinit" converts as "inf"
		}
		if neg {
			return math.Inf(-1), i + n, false
		}
		return math.Inf(1), i + n, false
	case 'n':
		// Any NaN is refused by every caller, so the exact extent of
		// "nan(chars)" does not matter.
		if foldPrefix(b[i:], "nan") != 3 {
			return 0, 0, false
		}
		return math.NaN(), len(b), false
	}

	hex := i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x'
	start, base, expChar := i, 10, byte('e')
	if hex {
		start, base, expChar = i+2, 16, 'p'
	}
	end, digits, frac, mant := scanMantissa(b, start, base)
	if digits == 0 {
		if hex {
			// "0x" without hex digits converts just the "0".
			return 0, i + 1, false
		}
		return 0, 0, false
	}
	hasExp := false
	if end < len(b) && b[end]|0x20 == expChar {
		if e := scanExponent(b, end+1); e > 0 {
			end, hasExp = e, true
		}
	}
	if !hex && !hasExp && digits <= maxExactDigits {
		// Fast path for plain scores and timestamps ("1.5", "1700000000000"):
		// the digits and the power of ten are both exact in a float64, so
		// one division rounds correctly (Clinger's fast path).
		v = float64(mant) / exactPow10[frac]
		if neg {
			v = -v
		}
		return v, end, false
	}
	num := b[:end]
	if hex && !hasExp {
		// strconv insists on a binary exponent in hex; "p0" changes nothing.
		var buf [64]byte
		num = append(append(buf[:0], num...), 'p', '0')
	}
	v, err := strconv.ParseFloat(string(num), 64)
	if err != nil && !math.IsInf(v, 0) {
		// Unreachable: the syntax was checked above.
		return 0, 0, false
	}
	// strconv reports overflow as ErrRange with ±Inf, and silently returns
	// zero for an underflow, which strtod flags as ERANGE.
	lost = math.IsInf(v, 0) || v == 0 && mant != 0
	return v, end, lost
}

// maxExactDigits is how many decimal digits always fit in a float64's
// 53-bit mantissa.
const maxExactDigits = 15

// exactPow10 holds the powers of ten that a float64 represents exactly
// and the fast path may divide by.
var exactPow10 = [maxExactDigits + 1]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// scanMantissa scans digits in base 10 or 16 with at most one '.', from
// b[i]. It returns where they end, how many digits there were, how many of
// them followed the '.', and their value as an integer, which is exact up
// to maxExactDigits decimal digits and non-zero beyond that only if some
// digit was not zero.
func scanMantissa(b []byte, i, base int) (end, digits, frac int, mant uint64) {
	dot := false
	for ; i < len(b); i++ {
		c := b[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case base == 16 && (c|0x20 >= 'a' && c|0x20 <= 'f'):
			d = c | 0x20 - 'a' + 10
		case c == '.' && !dot:
			dot = true
			continue
		default:
			return i, digits, frac, mant
		}
		digits++
		if dot {
			frac++
		}
		if digits <= maxExactDigits {
			mant = mant*uint64(base) + uint64(d)
		} else if d != 0 {
			mant |= 1
		}
	}
	return i, digits, frac, mant
}

// scanExponent scans an exponent's optional sign and decimal digits from
// b[i] and returns where they end, or 0 if there are no digits (then strtod
// leaves the 'e' or 'p' unconsumed).
func scanExponent(b []byte, i int) int {
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

// foldPrefix returns how many leading bytes of b match word, ignoring ASCII
// case. word is lower case.
func foldPrefix(b []byte, word string) int {
	n := 0
	for n < len(b) && n < len(word) && b[n]|0x20 == word[n] {
		n++
	}
	return n
}
