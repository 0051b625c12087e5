package gcra

import (
	"errors"
	"math"
)

// Params are the parsed CL.THROTTLE arguments. Negative values are accepted:
// redis-cell does no range checks and neither do we.
type Params struct {
	MaxBurst, Count, Period, Quantity int64
}

// Result is the reply and the state change of one call.
type Result struct {
	Limited    bool
	Limit      int64 // max_burst+1, wrapping
	Remaining  int64
	RetryAfter int64 // seconds, -1 unless limited (and -1 when the quantity can never fit)
	ResetAfter int64 // seconds
	// Store is true on the allowed path: the caller writes NewTAT (decimal ns) as a string key
	// with a TTL of TTLms milliseconds (TTLms == -1: no TTL; TTLms == 0: expires at once).
	// NewTAT is a u64 like the stored state: a TAT past 2262 (periods of
	// centuries) is above MaxInt64 and must round-trip exactly.
	Store  bool
	NewTAT uint64
	TTLms  int64
}

// Reply returns the five integers of the CL.THROTTLE reply, in wire order.
func (r Result) Reply() [5]int64 {
	limited := int64(0)
	if r.Limited {
		limited = 1
	}
	return [5]int64{limited, r.Limit, r.Remaining, r.RetryAfter, r.ResetAfter}
}

var (
	// ErrZeroRate is returned when the emission interval is 0 ns. Its text is
	// the wire error without the leading '-'.
	ErrZeroRate = errors.New(MsgZeroRate)
	// ErrExpire is returned when an allowed call would set a TTL below -1 ms.
	// The Result is still valid: write NewTAT with no TTL (TTLms is -1), then
	// reply with this error. Its text is the wire error without the '-'.
	ErrExpire = errors.New(MsgExpire)
)

// EmissionInterval returns T, the nanoseconds between two units at the
// nominal rate, or 0 when redis-cell refuses the rate.
//
// period*1e9 wraps in int64 on purpose: redis-cell computes
// Duration::seconds(period).whole_nanoseconds() (an exact i128) and casts it
// to i64, which keeps the low 64 bits, i.e. the wrapped product. So a period
// of 2^55 s is a zero rate and a period of MaxInt64 s gives -1e9 ns per
// count. For every period below 292 years (9223372036 s, which includes
// big6's one year) the product is exact.
func EmissionInterval(count, period int64) int64 {
	ns := period * 1_000_000_000
	if count == 0 || ns == 0 {
		// Checked before dividing: ns/0 would saturate to a huge interval.
		return 0
	}
	return satTrunc(float64(ns) / float64(count))
}

// Validate reports ErrZeroRate when the rate is refused. The caller checks it
// before reading the key: the zero-rate error wins over any key error.
func (p Params) Validate() error {
	if EmissionInterval(p.Count, p.Period) == 0 {
		return ErrZeroRate
	}
	return nil
}

// Throttle computes one call. tat is the stored TAT in ns (as ParseTAT
// read it) and hasTAT whether a key existed; now is the wall clock in ns.
func Throttle(tat uint64, hasTAT bool, now int64, p Params) (Result, error) {
	t := EmissionInterval(p.Count, p.Period)
	if t == 0 {
		return Result{}, ErrZeroRate
	}
	tau := t * (p.MaxBurst + 1) // wraps, as in redis-cell
	inc := t * p.Quantity       // wraps, as in redis-cell
	wnow := wideOf(now)
	wtat := wnow
	if hasTAT {
		wtat = wideOfUint(tat)
	}
	start := wtat // "now > tat ? now : tat"
	if wtat.less(wnow) {
		start = wnow
	}
	newTAT := start.add(wideOf(inc))
	allowAt := newTAT.sub(wideOf(tau))
	diff := wnow.sub(allowAt)

	r := Result{Limit: p.MaxBurst + 1, RetryAfter: -1}
	var ttl wide
	var err error
	if diff.isNeg() {
		r.Limited = true
		if inc <= tau {
			r.RetryAfter = replySeconds(diff.neg())
		}
		ttl = wtat.sub(wnow)
	} else {
		ttl = newTAT.sub(wnow)
		r.Store = true
		r.NewTAT = newTAT.clampUint()
		r.TTLms, _ = ttl.quoRem(1_000_000)
		if r.TTLms < -1 {
			r.TTLms = -1
			err = ErrExpire
		}
	}

	next := wideOf(tau).sub(ttl)
	if wideOf(t).neg().less(next) {
		nextUs, _ := next.quoRem(1_000)
		r.Remaining = satTrunc(float64(nextUs) / float64(t/1_000))
	}
	r.ResetAfter = replySeconds(ttl)
	return r, err
}

// replySeconds turns a span of nanoseconds into reply seconds the way
// redis-cell does: trunc(secs + nanos/1e9) in float64, plus one when the
// sub-second part holds at least one whole millisecond. secs and nanos carry
// the sign of d, so a negative span never rounds up.
func replySeconds(d wide) int64 {
	secs, nanos := d.quoRem(1_000_000_000)
	s := satTrunc(float64(secs) + float64(nanos)/1e9)
	if nanos/1_000_000 > 0 {
		s++
	}
	return s
}

// satTrunc converts like Rust's `f as i64`: toward zero, NaN to 0, and
// values beyond the range to MaxInt64 or MinInt64. Go's int64(f) is
// implementation-defined there, so the edges are handled first.
func satTrunc(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= 0x1p63:
		return math.MaxInt64
	case f <= -0x1p63:
		return math.MinInt64
	default:
		return int64(f)
	}
}
