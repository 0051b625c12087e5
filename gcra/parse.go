package gcra

import (
	"bytes"
	"errors"
	"math"
)

// The texts of the CL.THROTTLE errors, as a client reads them after the
// RESP '-'. Each is defined here once; ErrZeroRate, ErrExpire and
// ErrInvalidDigit carry the same texts.
const (
	MsgUsage        = "Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	MsgParsePrefix  = "Cell error: Store error: Couldn't parse as integer: "
	MsgZeroRate     = "Cell error: Store error: Zero rates are not supported"
	MsgExpire       = "Cell error: Store error: Error while setting key expire"
	MsgInvalidDigit = "Cell error: invalid digit found in string"
)

// ErrInvalidDigit is returned by ParseTAT for a stored value that is not a
// base-10 u64. Its text is the wire error without the leading '-'.
var ErrInvalidDigit = errors.New(MsgInvalidDigit)

// ParseFailure returns the error text for an argument that ParseInt refused.
func ParseFailure(arg []byte) string {
	return MsgParsePrefix + SanitizeArg(arg)
}

// SanitizeArg returns arg as redis-cell echoes it in an error: the text stops
// at the first NUL byte (redis-cell hands Redis a C string) and each \r or \n
// becomes a space (Redis does that to every error reply). Other bytes,
// including invalid UTF-8, are kept as they are.
func SanitizeArg(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if bytes.IndexAny(b, "\r\n") < 0 {
		return string(b)
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c == '\r' || c == '\n' {
			c = ' '
		}
		out[i] = c
	}
	return string(out)
}

// ParseInt parses a number by redis-cell's rules: optional single '+' or '-', ASCII digits only, int64 range, leading zeros ok.
// These are the rules of Rust's i64::from_str: no spaces, no "0x", no
// exponent, no fraction, not empty, and not a sign alone.
func ParseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	mag, ok := parseDigits(b, limit)
	if !ok {
		return 0, false
	}
	if neg {
		return -int64(mag), true // -(2^63) wraps to MinInt64, which is right
	}
	return int64(mag), true
}

// ParseTAT parses a stored TAT by the rules of Rust's u64::from_str: an
// optional single '+' (Rust accepts it for unsigned types too), then one or
// more ASCII digits, at most MaxUint64; no '-', not even "-0". Anything else
// (the empty string, spaces, "++5", "5.0", a value above MaxUint64) is
// ErrInvalidDigit: the spec has one reply for every string that is not a u64,
// where Rust would word the empty and the overflowing cases differently.
//
// The whole u64 range is kept: a TAT above MaxInt64 (past the year 2262) is
// a valid state, written by periods of centuries, and Throttle takes it as
// the exact instant it names.
func ParseTAT(b []byte) (uint64, error) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	mag, ok := parseDigits(b, math.MaxUint64)
	if !ok {
		return 0, ErrInvalidDigit
	}
	return mag, nil
}

// parseDigits parses one or more ASCII digits into a value at most limit.
//
// Up to 19 digits cannot overflow a uint64 (10^19-1 < MaxUint64), so they
// are parsed without the per-digit overflow check and compared with limit
// once at the end: a stored TAT is 19 digits, and CL.THROTTLE parses it on
// every call.
func parseDigits(b []byte, limit uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	if len(b) <= 19 {
		for _, c := range b {
			d := uint64(c - '0')
			if d > 9 {
				return 0, false
			}
			n = n*10 + d
		}
		return n, n <= limit
	}
	for _, c := range b {
		d := uint64(c - '0')
		if d > 9 || n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
