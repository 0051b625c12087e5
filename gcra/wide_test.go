package gcra

import (
	"math"
	"math/big"
	"testing"
)

// TestQuoRem checks quoRem against exact big.Int arithmetic (truncated
// division, the remainder taking the dividend's sign), on both sides of
// the int64 range where its fast path ends, for every divisor Throttle
// uses and an odd one.
func TestQuoRem(t *testing.T) {
	vals := []wide{
		wideOf(0), wideOf(1), wideOf(-1), wideOf(999), wideOf(-999), wideOf(1_000), wideOf(-1_000),
		wideOf(1_700_000_000_123_456_789), wideOf(-1_700_000_000_123_456_789),
		wideOf(math.MaxInt64), wideOf(math.MinInt64), wideOf(math.MinInt64 + 1),
		wideOfUint(math.MaxInt64 + 1), wideOfUint(math.MaxUint64),
		wideOf(math.MinInt64).sub(wideOf(1)), wideOf(math.MinInt64).sub(wideOf(999_999_999)),
		wideOfUint(math.MaxUint64).add(wideOfUint(math.MaxUint64)),
		wideOfUint(math.MaxUint64).add(wideOfUint(math.MaxUint64)).neg(),
	}
	for _, d := range []uint64{1, 7, 1_000, 1_000_000, 1_000_000_000} {
		for _, a := range vals {
			q, r := a.quoRem(d)
			n := new(big.Int).Lsh(big.NewInt(a.hi), 64)
			n.Add(n, new(big.Int).SetUint64(a.lo))
			wq, wr := new(big.Int).QuoRem(n, new(big.Int).SetUint64(d), new(big.Int))
			if !wq.IsInt64() { // beyond int64 the quotient saturates
				if wq.Sign() > 0 {
					wq.SetInt64(math.MaxInt64)
				} else {
					wq.SetInt64(math.MinInt64)
				}
			}
			if q != wq.Int64() || r != wr.Int64() {
				t.Errorf("%s / %d = %d rem %d, want %s rem %s", n, d, q, r, wq, wr)
			}
		}
	}
}

// BenchmarkThrottle is one allowed call on an existing TAT: the maths of
// CL.THROTTLE without parsing or the keyspace.
func BenchmarkThrottle(b *testing.B) {
	p := Params{MaxBurst: 15, Count: 30, Period: 60, Quantity: 1}
	now := int64(1_700_000_000_000_000_000)
	for b.Loop() {
		now += 3_000_000_000
		if _, err := Throttle(uint64(now), true, now, p); err != nil {
			b.Fatal(err)
		}
	}
}
