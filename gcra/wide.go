package gcra

import (
	"math"
	"math/bits"
)

// wide is a signed 128-bit integer in two's complement, just large enough
// for the instants and spans of one Throttle call. Those are sums of at most
// four int64 or uint64 values, so their magnitude stays below 2^67 and every
// operation here is exact.
type wide struct {
	hi int64
	lo uint64
}

func wideOf(x int64) wide {
	return wide{hi: x >> 63, lo: uint64(x)}
}

func wideOfUint(x uint64) wide {
	return wide{lo: x}
}

func (a wide) add(b wide) wide {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	return wide{hi: a.hi + b.hi + int64(carry), lo: lo}
}

func (a wide) sub(b wide) wide {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	return wide{hi: a.hi - b.hi - int64(borrow), lo: lo}
}

func (a wide) neg() wide {
	return wide{}.sub(a)
}

func (a wide) isNeg() bool {
	return a.hi < 0
}

// less reports a < b.
func (a wide) less(b wide) bool {
	return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo)
}

// quoRem divides by d (0 < d <= 1e9) truncating toward zero, as Rust's
// Duration::whole_* and subsec_* do: the remainder takes the sign of a.
// In Throttle's range the quotient always fits an int64; beyond it the
// quotient saturates rather than wraps.
func (a wide) quoRem(d uint64) (q, r int64) {
	if x, ok := a.int64(); ok {
		// The common case: Go's / and % on int64 truncate toward zero
		// too, and Throttle's divisors are constants the compiler turns
		// into multiplications, where the general path below needs two
		// hardware divisions.
		switch d {
		case 1_000:
			return x / 1_000, x % 1_000
		case 1_000_000:
			return x / 1_000_000, x % 1_000_000
		case 1_000_000_000:
			return x / 1_000_000_000, x % 1_000_000_000
		default:
			return x / int64(d), x % int64(d)
		}
	}
	neg := a.isNeg()
	if neg {
		a = a.neg()
	}
	uhi := uint64(a.hi)
	qhi, rem := uhi/d, uhi%d
	qlo, rlo := bits.Div64(rem, a.lo, d)
	switch {
	case qhi != 0 || qlo > math.MaxInt64+1 || (qlo == math.MaxInt64+1 && !neg):
		if neg {
			return math.MinInt64, -int64(rlo)
		}
		return math.MaxInt64, int64(rlo)
	case neg:
		return -int64(qlo), -int64(rlo)
	default:
		return int64(qlo), int64(rlo)
	}
}

// int64 returns a as an int64, and whether it fits.
func (a wide) int64() (int64, bool) {
	x := int64(a.lo)
	return x, a.hi == x>>63
}

// clampUint returns a limited to [0, MaxUint64].
func (a wide) clampUint() uint64 {
	switch {
	case a.hi < 0:
		return 0
	case a.hi > 0:
		return math.MaxUint64
	default:
		return a.lo
	}
}
