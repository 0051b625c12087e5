package script

import (
	"math"
	"strconv"
)

// Number formatting. Redis's Lua is C Lua 5.1, which turns numbers into
// text with printf("%.14g") (tostring, .., cjson), while redis.call passes
// numbers to commands as "%.17g". gopher-lua formats with Go's fmt, which
// differs for non-integral and very large values, so every place where a
// script can observe the text goes through these two functions.

// fmt14 is C's "%.14g": Lua's own number-to-string conversion.
func fmt14(f float64) string { return formatG(f, 14) }

// fmt17 is C's "%.17g": how redis.call passes a number argument.
func fmt17(f float64) string { return formatG(f, 17) }

// formatG is printf("%.<prec>g") as glibc prints it. Go's 'g' format with a
// precision drops trailing zeros and pads the exponent to two digits as C
// does; only the non-finite values are spelled differently. glibc prints
// the NaN that 0/0 produces (sign bit set) as "-nan".
func formatG(f float64, prec int) string {
	var buf [32]byte
	return string(appendG(buf[:0], f, prec))
}

// appendG appends formatG(f, prec) to b.
func appendG(b []byte, f float64, prec int) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		if math.Signbit(f) {
			return append(b, "-nan"...)
		}
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', prec, 64)
}

// toInteger is C's (long long) cast of a Lua number on x86-64: truncation
// toward zero, and the "integer indefinite" value (MinInt64) for NaN and for
// anything outside int64. Redis returns Lua numbers to clients this way.
func toInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}
