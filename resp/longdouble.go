package resp

import (
	"math/big"
	"strings"
)

// INCRBYFLOAT computes in C's long double, which on x86-64 is the x87
// 80-bit extended format: a 64-bit mantissa, exponents down to 2^-16382
// (subnormals to 2^-16445) and up to 2^16384. Its replies show the extra
// precision ("10.6 + 5.0e3" is "5010.60000000000000009"), and it accepts
// values far beyond float64 ("1e400"), so float64 cannot reproduce Redis's
// bytes. The functions below model the format with math/big: every value
// is a *big.Float of precision 64 (less for subnormals), produced by one
// correctly rounded step from an exact rational, as strtold and the FPU do.

const (
	ldPrec    = 64
	ldMaxExp  = 16384  // big.Float exponent of the largest finite value
	ldMinExp  = -16381 // big.Float exponent of the smallest normal value
	ldSubBits = 16445  // the smallest subnormal is 2^-16445

	// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS: longer strings
	// are refused before parsing.
	maxLongDoubleChars = 5 * 1024
)

// ParseLongDouble parses a number as Redis's string2ld does: strtold must
// consume the whole string (so a NUL byte fails), refusing an empty
// or over-long string, leading whitespace, trailing garbage, NaN, overflow
// to infinity and underflow to zero. "inf" itself is accepted. The result
// is finite or ±Inf.
func ParseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars || strtodSpace(b[0]) {
		return nil, false
	}
	if indexNUL(b) >= 0 {
		return nil, false // strtold stops there, short of the whole string
	}
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i++
	}
	if i == len(b) {
		return nil, false
	}
	switch b[i] | 0x20 {
	case 'i':
		n := foldPrefix(b[i:], "infinity")
		if n != 3 && n != 8 || i+n != len(b) {
			return nil, false
		}
		return new(big.Float).SetInf(neg), true
	case 'n':
		return nil, false
	}
	hex := i+1 < len(b) && b[i] == '0' && b[i+1]|0x20 == 'x'
	start, base, expChar := i, 10, byte('e')
	if hex {
		start, base, expChar = i+2, 16, 'p'
	}
	end, digits, frac, _ := scanMantissa(b, start, base)
	mantText := b[start:end]
	if digits == 0 {
		return nil, false // "0x" stops after the 0; "-", "." convert nothing
	}
	var exp int64
	if end < len(b) && b[end]|0x20 == expChar {
		if e := scanExponent(b, end+1); e > 0 {
			exp = parseExpSaturated(b[end+1 : e])
			end = e
		}
	}
	if end != len(b) {
		return nil, false
	}
	mant := new(big.Int)
	digitText := strings.Replace(string(mantText), ".", "", 1)
	mant.SetString(digitText, base)
	var v *big.Float
	var ok bool
	if hex {
		v, ok = ldFromBinary(mant, exp-4*int64(frac))
	} else {
		v, ok = ldFromDecimal(mant, len(strings.TrimLeft(digitText, "0")), exp-int64(frac))
	}
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// dotLen is 1 if the scanned mantissa b contains a '.', else 0.
func dotLen(b []byte) int {
	for _, c := range b {
		if c == '.' {
			return 1
		}
	}
	return 0
}

// parseExpSaturated reads a signed decimal exponent, saturating far
// beyond any exponent that matters.
func parseExpSaturated(b []byte) int64 {
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
	}
	var e int64
	for _, c := range b {
		if e < 1e9 {
			e = e*10 + int64(c-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}

// ldFromDecimal rounds mant * 10^k (mant has n significant digits) to a
// long double. ok is false on overflow or underflow to zero.
func ldFromDecimal(mant *big.Int, n int, k int64) (*big.Float, bool) {
	if mant.Sign() == 0 {
		return new(big.Float).SetPrec(ldPrec), true
	}
	mag := int64(n) + k // the value is in [10^(mag-1), 10^mag)
	switch {
	case mag > 4934: // above 1.19e4932
		return nil, false
	case mag < -4960: // far below half the smallest subnormal (3.6e-4951)
		return nil, false
	}
	num := new(big.Int).Set(mant)
	den := big.NewInt(1)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(k)), nil)
	if k >= 0 {
		num.Mul(num, p)
	} else {
		den = p
	}
	return ldRound(num, den, 0)
}

// ldFromBinary rounds mant * 2^e to a long double.
func ldFromBinary(mant *big.Int, e int64) (*big.Float, bool) {
	if mant.Sign() == 0 {
		return new(big.Float).SetPrec(ldPrec), true
	}
	top := int64(mant.BitLen()) + e // the value is in [2^(top-1), 2^top)
	switch {
	case top > ldMaxExp+1:
		return nil, false
	case top < -ldSubBits-2:
		return nil, false
	}
	return ldRound(mant, big.NewInt(1), e)
}

// ldRound returns num/den * 2^e rounded once, to nearest even, to the
// long double grid: 64 bits for normal values, the fixed 2^-16445 step
// for subnormals. ok is false if the result overflows or is zero.
func ldRound(num, den *big.Int, e int64) (*big.Float, bool) {
	exact := func(x *big.Int) *big.Float {
		return new(big.Float).SetPrec(uint(max(x.BitLen(), 1))).SetInt(x)
	}
	n, d := exact(num), exact(den)
	quo := func(prec uint) *big.Float {
		q := new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven)
		// Scale the exact numerator first so that one division rounds.
		nn := new(big.Float).SetPrec(n.Prec()).SetMantExp(n, int(e))
		return q.Quo(nn, d)
	}
	v := quo(ldPrec)
	exp := int64(v.MantExp(nil))
	if exp < ldMinExp {
		// A subnormal: fewer mantissa bits, so round again from the exact
		// operands at that precision.
		prec := exp + ldSubBits
		if prec <= 0 {
			// Below the smallest subnormal: it rounds up to it only from
			// above half of it.
			half := new(big.Float).SetMantExp(big.NewFloat(1), -ldSubBits-1)
			if quo(ldPrec).Cmp(half) <= 0 {
				return nil, false
			}
			return new(big.Float).SetPrec(ldPrec).SetMantExp(big.NewFloat(1), -ldSubBits), true
		}
		v = quo(uint(prec))
		v.SetPrec(ldPrec)
	}
	if v.Sign() == 0 {
		return nil, false
	}
	if v.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return v, true
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// AddLongDouble is long double addition. ok is false when the sum is
// infinite or NaN, which INCRBYFLOAT refuses.
func AddLongDouble(a, b *big.Float) (*big.Float, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	s := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(a, b)
	if s.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return s, true
}

// AppendLongDouble appends v as Redis's ld2string in "human" mode prints
// it (INCRBYFLOAT's reply and stored value): printf's "%.17Lf" (exact
// decimal expansion, rounded half to even), then trailing zeros and a
// trailing '.' dropped, and "-0" written as "0". Infinities are "inf" and
// "-inf".
func AppendLongDouble(dst []byte, v *big.Float) []byte {
	if v.IsInf() {
		if v.Signbit() {
			return append(dst, "-inf"...)
		}
		return append(dst, "inf"...)
	}
	start := len(dst)
	dst = v.Append(dst, 'f', 17)
	if dotLen(dst[start:]) == 1 {
		for dst[len(dst)-1] == '0' {
			dst = dst[:len(dst)-1]
		}
		if dst[len(dst)-1] == '.' {
			dst = dst[:len(dst)-1]
		}
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
