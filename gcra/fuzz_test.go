package gcra

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"testing"
)

// FuzzThrottle checks, for any stored state, clock and arguments, that
// Throttle does not panic, agrees with spec, a transcription of the spec's
// Algorithm section in math/big (so the 128-bit arithmetic of wide.go is
// checked against arbitrary precision), and keeps the invariants the spec
// promises: the error set, limited calls writing nothing, the limit, the
// retry of a quantity that can never fit, remaining bounds, a missing key
// counting as a TAT of now, and quantity 0 re-reading an allowed call.
func FuzzThrottle(f *testing.F) {
	seeds := []struct {
		tat                       uint64
		has                       bool
		now                       int64
		burst, count, period, qty int64
	}{
		{0, false, base, 4, 1, 1, 1},
		{uint64(base) + 5e9, true, base, 4, 1, 1, 1},
		{0, false, base, 15, 30, 60, 1},
		{0, false, base, 4, 1, 1, 6},
		{0, false, base, 0, 1000, 1, 1},
		{uint64(base) + 1e6, true, base + 1e5, 0, 1000, 1, 1},
		{0, false, base, 20, 1500, 1, 1},
		{0, false, base, 10, 2000000, 1, 1},
		{0, false, base, 6000, 6000, 1, 1},
		{0, false, base, -1, 1, 1, 0},
		{0, false, base, 4, -1, 1, 1},
		{0, false, base, math.MaxInt64, 1, 1, 1},
		{0, false, base, 0, 1, 31536000, 1},
		{0, false, base, 0, 1, 9223372036, 1},
		{math.MaxUint64, true, base, 4, 1, 1, 1},
		{0, false, base, 1, 1, 1, -5},
		{0, false, 5, 1, 1, 1, -5},
		{0, false, base, 1, 0, 1, 1},
		{0, false, math.MinInt64, math.MinInt64, -1, math.MaxInt64, math.MinInt64},
		{math.MaxUint64, true, math.MaxInt64, math.MaxInt64, 1, 1 << 33, math.MaxInt64},
	}
	for _, s := range seeds {
		f.Add(s.tat, s.has, s.now, s.burst, s.count, s.period, s.qty)
	}
	f.Fuzz(func(t *testing.T, tat uint64, has bool, now, burst, count, period, qty int64) {
		p := Params{MaxBurst: burst, Count: count, Period: period, Quantity: qty}
		r, err := Throttle(tat, has, now, p)

		want, wantErr := spec(tat, has, now, p)
		if r != want || err != wantErr {
			t.Fatalf("Throttle(%d, %v, %d, %+v) = %+v, %v; the spec gives %+v, %v", tat, has, now, p, r, err, want, wantErr)
		}
		if r2, err2 := Throttle(tat, has, now, p); r2 != r || err2 != err {
			t.Fatalf("not deterministic: %+v, %v then %+v, %v", r, err, r2, err2)
		}

		T := EmissionInterval(count, period)
		switch {
		case errors.Is(err, ErrZeroRate):
			if T != 0 || !errors.Is(p.Validate(), ErrZeroRate) || r != (Result{}) {
				t.Fatalf("%+v: ErrZeroRate with T %d, Validate %v, %+v", p, T, p.Validate(), r)
			}
			return
		case err == nil, errors.Is(err, ErrExpire):
		default:
			t.Fatalf("%+v: unexpected error %v", p, err)
		}
		if T == 0 || p.Validate() != nil {
			t.Fatalf("%+v: T %d, Validate %v, but no ErrZeroRate", p, T, p.Validate())
		}

		if r.Limit != burst+1 {
			t.Fatalf("limit %d, want max_burst+1 = %d", r.Limit, burst+1)
		}
		if rep := r.Reply(); rep[1] != r.Limit || rep[2] != r.Remaining || rep[3] != r.RetryAfter || rep[4] != r.ResetAfter ||
			(rep[0] == 1) != r.Limited || (rep[0] != 0 && rep[0] != 1) {
			t.Fatalf("Reply %v of %+v", rep, r)
		}
		tau, inc := T*(burst+1), T*qty
		if r.Limited {
			// "LIMITED: nothing is written, TTL untouched".
			if r.Store || r.NewTAT != 0 || r.TTLms != 0 || err != nil {
				t.Fatalf("limited call writes: %+v, %v", r, err)
			}
			// "-1 when limited because the quantity can never fit".
			if (inc > tau) != (r.RetryAfter == -1) || r.RetryAfter < -1 {
				t.Fatalf("limited with I %d tau %d: retry %d", inc, tau, r.RetryAfter)
			}
			// ttl is the OLD tat - now: 0 on a missing key (the big row).
			if !has && r.ResetAfter != 0 {
				t.Fatalf("limited on a missing key: reset %d", r.ResetAfter)
			}
		} else {
			if !r.Store || r.RetryAfter != -1 || r.TTLms < -1 {
				t.Fatalf("allowed call: %+v", r)
			}
			if errors.Is(err, ErrExpire) && r.TTLms != -1 {
				t.Fatalf("ErrExpire with TTLms %d", r.TTLms)
			}
			// What the caller writes reads back as the same state.
			back, perr := ParseTAT(strconv.AppendUint(nil, r.NewTAT, 10))
			if perr != nil || back != r.NewTAT {
				t.Fatalf("NewTAT %d reads back as %d, %v", r.NewTAT, back, perr)
			}
		}

		// "remaining = next > -T ? trunc(next_us / T_us) : 0". With T > 0 it
		// is at least -1, and -1 is reachable: when T is not a whole number
		// of us, a next in (-T, -1000*T_us] truncates to next_us = -T_us
		// (a stored TAT more than tau ahead, e.g. after the arguments
		// changed). With T a whole number of us, next_us > -T_us and it is
		// never negative. With T a whole number of us,
		// tau and I exact, and no stored TAT in the past, ttl lies in
		// [0, tau] on the allowed path and >= 0 on the limited one, so
		// remaining is at most the limit.
		if T > 0 && (r.Remaining < -1 || (T%1000 == 0 && r.Remaining < 0)) {
			t.Fatalf("T %d: remaining %d", T, r.Remaining)
		}
		// (The limit stays below 2^52, where the float64 division is exact
		// enough that rounding cannot lift the quotient past it.)
		if T > 0 && T%1000 == 0 && burst >= 0 && burst < 1<<52 && qty >= 0 &&
			fits(T, burst+1) && fits(T, qty) && (!has || now < 0 || tat >= uint64(now)) {
			if r.Remaining > r.Limit {
				t.Fatalf("remaining %d > limit %d", r.Remaining, r.Limit)
			}
		}

		// "tat = stored TAT, or now if the key does not exist".
		if now >= 0 {
			withNow, errNow := Throttle(uint64(now), true, now, p)
			if !has && (withNow != r || errNow != err) {
				t.Fatalf("missing key %+v, %v; TAT=now %+v, %v", r, err, withNow, errNow)
			}
			// "A stored TAT in the past counts as now", for new_tat: the same
			// decision, and on the allowed path the same everything.
			if has && tat < uint64(now) && (withNow.Limited != r.Limited || (!r.Limited && (withNow != r || errNow != err))) {
				t.Fatalf("stale TAT %+v, %v; TAT=now %+v, %v", r, err, withNow, errNow)
			}
		}

		// Quantity 0 right after an allowed call that stored a TAT at or
		// after now (so not clamped up from a negative instant, nor down to
		// MaxUint64) rewrites it as it is and replies the
		// same remaining and reset (the 9.5 s rows of the timed table).
		if !r.Limited && err == nil && now > 0 && r.NewTAT >= uint64(now) && r.NewTAT != math.MaxUint64 {
			peek, perr := Throttle(r.NewTAT, true, now, Params{MaxBurst: burst, Count: count, Period: period})
			if perr != nil || peek.Limited || peek.NewTAT != r.NewTAT || peek.TTLms != r.TTLms ||
				peek.Remaining != r.Remaining || peek.ResetAfter != r.ResetAfter {
				t.Fatalf("after %+v, quantity 0 gives %+v, %v", r, peek, perr)
			}
		}
	})
}

// fits reports whether a*b does not overflow int64 (a, b >= 0).
func fits(a, b int64) bool {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return hi == 0 && lo <= math.MaxInt64
}

// spec is the spec's Algorithm section written out in math/big, line by
// line, as the oracle of FuzzThrottle. T, tau and I are int64 expressions
// there (T from the saturating float conversion, tau and I wrapping); every
// instant and span after them is exact.
func spec(tat uint64, has bool, now int64, p Params) (Result, error) {
	T := EmissionInterval(p.Count, p.Period)
	if T == 0 {
		return Result{}, ErrZeroRate
	}
	tau := T * (p.MaxBurst + 1)
	I := T * p.Quantity
	bi := big.NewInt
	bNow := bi(now)
	bTat := new(big.Int).Set(bNow)
	if has {
		bTat.SetUint64(tat)
	}
	newTat := new(big.Int).Set(bTat)
	if bNow.Cmp(bTat) > 0 {
		newTat.Set(bNow)
	}
	newTat.Add(newTat, bi(I))
	allowAt := new(big.Int).Sub(newTat, bi(tau))
	diff := new(big.Int).Sub(bNow, allowAt)

	r := Result{Limit: p.MaxBurst + 1, RetryAfter: -1}
	var err error
	ttl := new(big.Int)
	if diff.Sign() < 0 {
		r.Limited = true
		if I <= tau {
			r.RetryAfter = specSeconds(new(big.Int).Neg(diff))
		}
		ttl.Sub(bTat, bNow)
	} else {
		ttl.Sub(newTat, bNow)
		r.Store = true
		switch {
		case newTat.Sign() < 0:
			r.NewTAT = 0
		case !newTat.IsUint64():
			r.NewTAT = math.MaxUint64
		default:
			r.NewTAT = newTat.Uint64()
		}
		r.TTLms = new(big.Int).Quo(ttl, bi(1e6)).Int64()
		if r.TTLms < -1 {
			r.TTLms, err = -1, ErrExpire
		}
	}
	next := new(big.Int).Sub(bi(tau), ttl)
	if next.Cmp(bi(-T)) > 0 {
		nextUs := new(big.Int).Quo(next, bi(1000))
		r.Remaining = satTrunc(toFloat(nextUs) / float64(T/1000))
	}
	r.ResetAfter = specSeconds(ttl)
	return r, err
}

// specSeconds is the spec's "Duration to reply seconds", in math/big.
func specSeconds(d *big.Int) int64 {
	secs, nanos := new(big.Int).QuoRem(d, big.NewInt(1e9), new(big.Int))
	s := satTrunc(toFloat(secs) + toFloat(nanos)/1e9)
	if new(big.Int).Quo(nanos, big.NewInt(1e6)).Sign() > 0 {
		s++
	}
	return s
}

// toFloat rounds x to the nearest float64, as Rust's `as f64` does.
func toFloat(x *big.Int) float64 {
	f, _ := new(big.Float).SetInt(x).Float64()
	return f
}

// FuzzParseInt checks ParseInt against the grammar of the spec, which is
// exactly strconv.ParseInt's base-10 grammar (one optional sign, ASCII
// digits, int64 range), and the error text's sanitising.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"1", "+1", "-1", "004", "", "+", "-", " 1", "0x1", "1e3", "1.5",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"a\r\nb", "12\x0034", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := ParseInt(b)
		want, err := strconv.ParseInt(string(b), 10, 64)
		if ok != (err == nil) || (ok && got != want) {
			t.Fatalf("ParseInt(%q) = %d, %v; strconv gives %d, %v", b, got, ok, want, err)
		}
		msg := ParseFailure(b)
		rest, found := bytes.CutPrefix([]byte(msg), []byte(MsgParsePrefix))
		if !found || bytes.ContainsAny(rest, "\r\n\x00") {
			t.Fatalf("ParseFailure(%q) = %q", b, msg)
		}
		// The echo is the argument up to its first NUL, byte for byte but
		// for CR and LF, which become spaces.
		head, _, _ := bytes.Cut(b, []byte{0})
		if len(rest) != len(head) {
			t.Fatalf("ParseFailure(%q) = %q: length", b, msg)
		}
		for i, c := range head {
			if c == '\r' || c == '\n' {
				c = ' '
			}
			if rest[i] != c {
				t.Fatalf("ParseFailure(%q) = %q: byte %d", b, msg, i)
			}
		}
	})
}

// FuzzParseTAT checks ParseTAT against strconv.ParseUint: a stored state is
// a base-10 u64 (with the optional '+' of Rust's u64::from_str), anything
// else is ErrInvalidDigit.
func FuzzParseTAT(f *testing.F) {
	for _, s := range []string{"1700000000000000000", "0", "+5", "-0", "", "18446744073709551615",
		"18446744073709551616", "not a number", "5.0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseTAT(b)
		digits := b
		if len(digits) > 0 && digits[0] == '+' {
			digits = digits[1:]
		}
		want, werr := strconv.ParseUint(string(digits), 10, 64)
		if len(digits) > 0 && (digits[0] == '+' || digits[0] == '-') {
			werr = strconv.ErrSyntax // one sign at most, and never '-'
		}
		if (err == nil) != (werr == nil) || (err == nil && got != want) || (err != nil && !errors.Is(err, ErrInvalidDigit)) {
			t.Fatalf("ParseTAT(%q) = %d, %v; want %d, %v", b, got, err, want, werr)
		}
	})
}
