package resp

import (
	"math"
	"math/big"
	"strconv"
)

// Redis computes HINCRBYFLOAT (and INCRBYFLOAT) in C long double, which on
// x86-64 is the x87 80-bit format: a 64-bit mantissa and a 15-bit exponent.
// float64 cannot reproduce its bytes (10.6 + 5.0e3 prints
// 5010.60000000000000009), so these helpers carry such numbers as
// big.Float values rounded to 64 bits after every operation, which is what
// the FPU does, and check the exponent range by hand. Subnormal long
// doubles (below 2^-16382) keep 64 bits here where the FPU keeps fewer;
// nothing a rate limiter stores comes near them.

// LongDoublePrec is the mantissa width of an x87 long double.
const LongDoublePrec = 64

const (
	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS: longer input is
	// refused before parsing.
	maxLongDoubleChars = 5 * 1024
	// A long double is finite below 2^16384 (MantExp exponent 16384) and
	// its smallest subnormal is 2^-16445: strtold returns zero below half
	// of that.
	ldMaxExp = 16384
	ldMinExp = -16445
	// parsePrec is the working precision of parsing.
	parsePrec = 1024
)

// NewLongDouble returns a zero that computes with long double precision.
func NewLongDouble() *big.Float {
	return new(big.Float).SetPrec(LongDoublePrec).SetMode(big.ToNearestEven)
}

// ParseLongDouble parses b as Redis's string2ld does: strtold (C locale)
// must consume the whole string (so a NUL inside is refused), which must be
// non-empty, shorter than 5 KiB and not start with whitespace; NaN, overflow and underflow to zero are refused. Infinity is
// accepted ("inf", "-Infinity"), as string2ld accepts it; callers decide
// what it means.
func ParseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	if strtodSpace(b[0]) {
		return nil, false
	}
	v, n, _ := strtod(b)
	if n != len(b) || v != v { // v != v: NaN
		return nil, false
	}
	f := NewLongDouble()
	if math.IsInf(v, 0) && isInfText(b) {
		return f.SetInf(v < 0), true
	}
	// Parse with many more bits than a long double and round once at the
	// end: big.Float rounds the digits and the power of ten separately, so
	// parsing straight at 64 bits could round twice, where strtold rounds
	// the exact value once.
	f.SetPrec(parsePrec)
	if _, _, err := f.Parse(clampExponent(b), 0); err != nil {
		return nil, false
	}
	f.SetPrec(LongDoublePrec)
	if f.Sign() == 0 {
		return f, true
	}
	exp := f.MantExp(nil)
	if exp > ldMaxExp || exp <= ldMinExp {
		return nil, false // ERANGE with ±HUGE_VALL or zero
	}
	return f, true
}

// isInfText reports whether b spells an infinity rather than overflowing.
func isInfText(b []byte) bool {
	if b[0] == '+' || b[0] == '-' {
		b = b[1:]
	}
	return len(b) > 0 && b[0]|0x20 == 'i'
}

// clampExponent bounds an explicit exponent to ±100000, which keeps
// big.Float's work small and changes nothing: with at most 5 KiB of digits
// such a value is far outside the long double range either way, and zero
// stays zero.
func clampExponent(b []byte) string {
	s := string(b)
	hex := false
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '0' && s[i+1]|0x20 == 'x' {
			hex = true
			break
		}
	}
	mark := byte('e')
	if hex {
		mark = 'p'
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != mark {
			continue
		}
		e, err := strconv.ParseInt(s[i+1:], 10, 64)
		switch {
		case err == nil && e > 100000, err != nil && s[i+1] != '-':
			return s[:i+1] + "100000"
		case err == nil && e < -100000, err != nil:
			return s[:i+1] + "-100000"
		}
		return s
	}
	return s
}

// LongDoubleInRange reports whether f is a finite long double, as the FPU
// would leave it after an operation (isinf fails for it).
func LongDoubleInRange(f *big.Float) bool {
	if f.IsInf() {
		return false
	}
	return f.Sign() == 0 || f.MantExp(nil) <= ldMaxExp
}

// AppendLongDouble appends f as Redis's ld2string in LD_STR_HUMAN mode
// writes it: printf "%.17Lf", then trailing zeros and a trailing '.'
// dropped, and "-0" written as "0". Large values come out in full
// (1e300 takes 301 digits), never in exponent form.
func AppendLongDouble(dst []byte, f *big.Float) []byte {
	if f.IsInf() {
		if f.Sign() < 0 {
			return append(dst, "-inf"...)
		}
		return append(dst, "inf"...)
	}
	start := len(dst)
	dst = f.Append(dst, 'f', 17)
	end := len(dst)
	for end > start && dst[end-1] == '0' {
		end--
	}
	if end > start && dst[end-1] == '.' {
		end--
	}
	dst = dst[:end]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
