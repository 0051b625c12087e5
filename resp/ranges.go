package resp

import (
	"bytes"
	"cmp"
	"math"
)

// ScoreRange is a score interval of ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE
// and ZRANGE BYSCORE, parsed as Redis's zslParseRange does.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool // the bound was written with '(' and is excluded
}

// ParseScoreRange parses the min and max arguments of a score range. A
// leading '(' makes a bound exclusive; the rest goes to strtod as a C
// string, which is much looser than ParseFloat (all probed on 7.0.15):
//   - leading whitespace is skipped: " 1" and "( 1" are accepted;
//   - nothing at all is 0: "" is 0 and "(" is exclusive 0;
//   - the string ends at the first NUL byte: "1\x00abc" is 1;
//   - range errors are not checked: "1e400" is +inf and "1e-400" is 0.
//
// Only NaN and text left over after the number ("1 ", "[1", "abc") are
// refused, with ErrMinMaxNotFloat. min > max is not an error but an empty
// range; see Empty.
func ParseScoreRange(min, max []byte) (ScoreRange, bool) {
	var r ScoreRange
	var okMin, okMax bool
	r.Min, r.MinEx, okMin = parseScoreBound(min)
	r.Max, r.MaxEx, okMax = parseScoreBound(max)
	if !okMin || !okMax {
		return ScoreRange{}, false
	}
	return r, true
}

func parseScoreBound(b []byte) (v float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	// Redis checks only that strtod stopped at a NUL, so the argument
	// effectively ends at its first NUL byte.
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	i := 0
	for i < len(b) && strtodSpace(b[i]) {
		i++
	}
	v, n, _ := strtod(b[i:])
	if n == 0 {
		// No conversion: strtod returns 0 and points back at the start,
		// including any whitespace, so only an empty rest is accepted.
		return 0, ex, len(b) == 0
	}
	if i+n != len(b) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, ex, true
}

// ValueGteMin reports whether v is not below the range's minimum.
func (r ScoreRange) ValueGteMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

// ValueLteMax reports whether v is not above the range's maximum.
func (r ScoreRange) ValueLteMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// Contains reports whether v lies in the range.
func (r ScoreRange) Contains(v float64) bool {
	return r.ValueGteMin(v) && r.ValueLteMax(v)
}

// Empty reports whether no score can lie in the range, as Redis tests
// before it walks a sorted set: min > max, or min == max with either end
// exclusive.
func (r ScoreRange) Empty() bool {
	return r.Min > r.Max || r.Min == r.Max && (r.MinEx || r.MaxEx)
}

// LexRange is a member interval of ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX
// and ZRANGE BYLEX, parsed as Redis's zslParseLexRange does. Members
// compare as bytes (memcmp, then length), like bytes.Compare.
type LexRange struct {
	// Min and Max are the bound strings without their '[' or '('. They
	// alias the parsed arguments and are nil for an infinite bound.
	Min, Max []byte
	// MinEx and MaxEx mark an exclusive bound. Infinite bounds are
	// exclusive too, as in Redis, which makes "- -" and "+ +" Empty.
	MinEx, MaxEx bool
	// MinInf and MaxInf are -1 for "-", +1 for "+" and 0 for a string.
	MinInf, MaxInf int8
}

// ParseLexRange parses the min and max arguments of a lex range: "-" and
// "+" are the infinities, "[x" includes x and "(x" excludes it; anything
// else, "" included, is refused with ErrMinMaxNotLex.
func ParseLexRange(min, max []byte) (LexRange, bool) {
	var r LexRange
	var okMin, okMax bool
	r.Min, r.MinEx, r.MinInf, okMin = parseLexBound(min)
	r.Max, r.MaxEx, r.MaxInf, okMax = parseLexBound(max)
	if !okMin || !okMax {
		return LexRange{}, false
	}
	return r, true
}

func parseLexBound(b []byte) (s []byte, ex bool, inf int8, ok bool) {
	if len(b) == 0 {
		return nil, false, 0, false
	}
	switch b[0] {
	case '-', '+':
		// Redis tests the next byte as a C string's end, so "+\x00junk"
		// is +inf too (probed).
		if len(b) > 1 && b[1] != 0 {
			return nil, false, 0, false
		}
		if b[0] == '-' {
			return nil, true, -1, true
		}
		return nil, true, 1, true
	case '(':
		return b[1:], true, 0, true
	case '[':
		return b[1:], false, 0, true
	}
	return nil, false, 0, false
}

// compareLex orders two lex bounds as Redis's sdscmplex: an infinity
// equals only itself and lies beyond every string.
func compareLex(aInf int8, a []byte, bInf int8, b []byte) int {
	if aInf != 0 || bInf != 0 {
		return cmp.Compare(aInf, bInf)
	}
	return bytes.Compare(a, b)
}

// ValueGteMin reports whether member v is not below the range's minimum.
func (r LexRange) ValueGteMin(v []byte) bool {
	c := compareLex(0, v, r.MinInf, r.Min)
	if r.MinEx {
		return c > 0
	}
	return c >= 0
}

// ValueLteMax reports whether member v is not above the range's maximum.
func (r LexRange) ValueLteMax(v []byte) bool {
	c := compareLex(0, v, r.MaxInf, r.Max)
	if r.MaxEx {
		return c < 0
	}
	return c <= 0
}

// Contains reports whether member v lies in the range.
func (r LexRange) Contains(v []byte) bool {
	return r.ValueGteMin(v) && r.ValueLteMax(v)
}

// Empty reports whether no member can lie in the range, as Redis tests
// before it walks a sorted set: min > max, or min == max with either end
// exclusive.
func (r LexRange) Empty() bool {
	c := compareLex(r.MinInf, r.Min, r.MaxInf, r.Max)
	return c > 0 || c == 0 && (r.MinEx || r.MaxEx)
}
