package gcra

import (
	"errors"
	"math"
	"testing"
	"time"
)

// Every expected value in this file comes from /work/shared/spec/cl-throttle.md
// (the replies captured from redis-cell v0.5), or, where a comment says
// "derived", from working the spec's Algorithm section by hand for inputs
// the spec has no captured row for. None comes from running this package.

// base is the injected clock's t=0: a whole second of 2023, so that instants
// look like today's and millisecond boundaries fall where the rows expect.
const base = int64(1_700_000_000) * int64(time.Second)

// key is the string key that the cell layer keeps for one limiter, reduced
// to what Throttle sees: the TAT, whether the key exists, and its absolute
// expiry in ms (0: none), applied as Redis does (expired once now > expiry).
type key struct {
	tat    uint64
	exists bool
	expMs  int64
}

// call runs one CL.THROTTLE at now and applies the Result the way
// cell/cmd_throttle.go does: write NewTAT with a TTL of TTLms when Store.
func (k *key) call(now int64, p Params) (Result, error) {
	if k.exists && k.expMs != 0 && now/1e6 > k.expMs {
		*k = key{}
	}
	r, err := Throttle(k.tat, k.exists, now, p)
	if r.Store {
		k.tat, k.exists, k.expMs = r.NewTAT, true, 0
		if r.TTLms >= 0 {
			k.expMs = now/1e6 + r.TTLms
		}
	}
	return r, err
}

// step is one call of a row: its time relative to the row's first call, its
// arguments, the five integers of the reply, and on the allowed path the
// exact TTL in ns (from which NewTAT = now+ttl and TTLms = trunc_ms(ttl)).
type step struct {
	at   time.Duration
	p    Params
	want [5]int64
	ttl  time.Duration
}

// check runs steps on one fresh key and compares every Result field.
func check(t *testing.T, name string, steps []step) *key {
	t.Helper()
	var k key
	for i, s := range steps {
		now := base + int64(s.at)
		r, err := k.call(now, s.p)
		if err != nil {
			t.Errorf("%s step %d %+v: error %v", name, i, s.p, err)
			continue
		}
		if got := r.Reply(); got != s.want {
			t.Errorf("%s step %d %+v at %v: reply %v, want %v", name, i, s.p, s.at, got, s.want)
		}
		if r.Limited {
			if r.Store {
				t.Errorf("%s step %d: limited but Store", name, i)
			}
			continue
		}
		if !r.Store || r.NewTAT != uint64(now+int64(s.ttl)) || r.TTLms != int64(s.ttl/time.Millisecond) {
			t.Errorf("%s step %d: Store %v NewTAT now%+d TTLms %d, want true now%+d %d",
				name, i, r.Store, int64(r.NewTAT)-now, r.TTLms, int64(s.ttl), int64(s.ttl/time.Millisecond))
		}
	}
	return &k
}

func p4(burst, count, period, qty int64) Params {
	return Params{MaxBurst: burst, Count: count, Period: period, Quantity: qty}
}

// TestTimedTable replays the spec's "timed run with an injected clock":
// foo 4 1 1 (limit 5, T = 1 s), fifteen calls on one key.
func TestTimedTable(t *testing.T) {
	const s = time.Second
	ms := time.Millisecond
	q := func(n int64) Params { return p4(4, 1, 1, n) }
	k := check(t, "foo", []step{
		{0, q(6), [5]int64{1, 5, 5, -1, 0}, 0}, // t=0 qty 6: can never fit
	})
	if k.exists {
		t.Fatalf("foo: the call that can never fit left state (spec: no state left)")
	}
	check(t, "foo", []step{
		{0, q(1), [5]int64{0, 5, 4, -1, 1}, 1 * s}, // t=0 qty 1, five times
		{0, q(1), [5]int64{0, 5, 3, -1, 2}, 2 * s},
		{0, q(1), [5]int64{0, 5, 2, -1, 3}, 3 * s},
		{0, q(1), [5]int64{0, 5, 1, -1, 4}, 4 * s},
		{0, q(1), [5]int64{0, 5, 0, -1, 5}, 5 * s},
		{0, q(1), [5]int64{1, 5, 0, 1, 5}, 0},                            // t=0: limited
		{3000 * ms, q(1), [5]int64{0, 5, 2, -1, 3}, 3 * s},               // 3.0 s
		{3100 * ms, q(1), [5]int64{0, 5, 1, -1, 4}, 3900 * ms},           // 3.1 s
		{4000 * ms, q(1), [5]int64{0, 5, 1, -1, 4}, 4 * s},               // 4.0 s
		{8000 * ms, q(1), [5]int64{0, 5, 4, -1, 1}, 1 * s},               // 8.0 s
		{9500 * ms, q(1), [5]int64{0, 5, 4, -1, 1}, 1 * s},               // 9.5 s: stored TAT in the past counts as now
		{9500 * ms, q(0), [5]int64{0, 5, 4, -1, 1}, 1 * s},               // 9.5 s qty 0
		{9500 * ms, q(2), [5]int64{0, 5, 2, -1, 3}, 3 * s},               // 9.5 s qty 2
		{9500 * ms, q(5), [5]int64{1, 5, 2, 3, 3}, 0},                    // 9.5 s qty 5: limited
		{9500 * ms, q(0), [5]int64{0, 5, 2, -1, 3}, 3 * s},               // derived: the limited call changed nothing
		{9500*ms + 3*s, q(1), [5]int64{0, 5, 4, -1, 1}, 1 * s},           // derived: 12.5 s, the TAT just reached
		{9500*ms + 3*s + 1*ms, q(0), [5]int64{0, 5, 4, -1, 1}, 999 * ms}, // derived: 999 ms rounds up to 1
	})
}

// TestTimedTableT10: "the same algorithm with 4 1 10 (T = 10 s)": resets
// 10..50 for five allowed calls at t=0, then [1,5,0,10,50].
func TestTimedTableT10(t *testing.T) {
	const s = time.Second
	p := p4(4, 1, 10, 1)
	check(t, "4 1 10", []step{
		{0, p, [5]int64{0, 5, 4, -1, 10}, 10 * s},
		{0, p, [5]int64{0, 5, 3, -1, 20}, 20 * s},
		{0, p, [5]int64{0, 5, 2, -1, 30}, 30 * s},
		{0, p, [5]int64{0, 5, 1, -1, 40}, 40 * s},
		{0, p, [5]int64{0, 5, 0, -1, 50}, 50 * s},
		{0, p, [5]int64{1, 5, 0, 10, 50}, 0},
	})
}

// TestObservedVectors replays the spec's "Observed vectors" table. Rows the
// spec marks pipelined land their second call 100 us after the first, in
// the same millisecond (base is a whole second).
func TestObservedVectors(t *testing.T) {
	const s = time.Second
	ms, us := time.Millisecond, time.Microsecond
	rows := []struct {
		name  string
		steps []step
	}{
		// user123 15 30 60 twice: [0,16,15,-1,2], [0,16,14,-1,4]; TTL 4, PTTL 3999
		// (the 3999 is the real clock moving on; at the same instant it is 4000).
		{"user123", []step{
			{0, p4(15, 30, 60, 1), [5]int64{0, 16, 15, -1, 2}, 2 * s},
			{0, p4(15, 30, 60, 1), [5]int64{0, 16, 14, -1, 4}, 4 * s},
		}},
		// user123 0 1 2 1, again, then after 2 s.
		{"u2", []step{
			{0, p4(0, 1, 2, 1), [5]int64{0, 1, 0, -1, 2}, 2 * s},
			{0, p4(0, 1, 2, 1), [5]int64{1, 1, 0, 2, 2}, 0},
			{2 * s, p4(0, 1, 2, 1), [5]int64{0, 1, 0, -1, 2}, 2 * s},
		}},
		// eq 4 1 1 5 then eq 4 1 1 1: [0,5,0,-1,5] (PTTL 5000), [1,5,0,1,5].
		{"eq", []step{
			{0, p4(4, 1, 1, 5), [5]int64{0, 5, 0, -1, 5}, 5 * s},
			{0, p4(4, 1, 1, 1), [5]int64{1, 5, 0, 1, 5}, 0},
		}},
		// big 4 1 1 6: [1,5,5,-1,0], no key created (Store false, checked by check).
		{"big", []step{{0, p4(4, 1, 1, 6), [5]int64{1, 5, 5, -1, 0}, 0}}},
		// z0 0 1 1 twice.
		{"z0", []step{
			{0, p4(0, 1, 1, 1), [5]int64{0, 1, 0, -1, 1}, 1 * s},
			{0, p4(0, 1, 1, 1), [5]int64{1, 1, 0, 1, 1}, 0},
		}},
		// t3 2 3 1 four times (T = 333333333 ns).
		{"t3", []step{
			{0, p4(2, 3, 1, 1), [5]int64{0, 3, 2, -1, 1}, 333333333},
			{0, p4(2, 3, 1, 1), [5]int64{0, 3, 1, -1, 1}, 666666666},
			{0, p4(2, 3, 1, 1), [5]int64{0, 3, 0, -1, 1}, 999999999},
			{0, p4(2, 3, 1, 1), [5]int64{1, 3, 0, 1, 1}, 0},
		}},
		// ms 0 1000 1 twice, pipelined (same ms).
		{"ms", []step{
			{0, p4(0, 1000, 1, 1), [5]int64{0, 1, 0, -1, 1}, 1 * ms},
			{100 * us, p4(0, 1000, 1, 1), [5]int64{1, 1, 0, 0, 0}, 0},
		}},
		// ms2 1 1000 1 2 then ms2 1 1000 1 1, pipelined.
		{"ms2", []step{
			{0, p4(1, 1000, 1, 2), [5]int64{0, 2, 0, -1, 1}, 2 * ms},
			{100 * us, p4(1, 1000, 1, 1), [5]int64{1, 2, 0, 0, 1}, 0},
		}},
		// hr 20 1500 1 1: [0,21,20,-1,0] (T = 666666 ns; 13333 us / 666 us).
		{"hr", []step{{0, p4(20, 1500, 1, 1), [5]int64{0, 21, 20, -1, 0}, 666666}}},
		// hr2 0 2000 1 twice, back to back: [0,1,0,-1,0], [1,1,0,0,0]. The
		// first TTL is 0 ms: the key lives for the rest of that millisecond.
		{"hr2", []step{
			{0, p4(0, 2000, 1, 1), [5]int64{0, 1, 0, -1, 0}, 500 * us},
			{100 * us, p4(0, 2000, 1, 1), [5]int64{1, 1, 0, 0, 0}, 0},
		}},
		// big6 0 1 31536000 twice: a one-year period.
		{"big6", []step{
			{0, p4(0, 1, 31536000, 1), [5]int64{0, 1, 0, -1, 31536000}, 31536000 * s},
			{0, p4(0, 1, 31536000, 1), [5]int64{1, 1, 0, 31536000, 31536000}, 0},
		}},
		// peek 4 1 1 0: [0,5,5,-1,0]. Quantity 0 on a missing key is the
		// allowed path: it creates the key with a TTL of 0 ms.
		{"peek", []step{{0, p4(4, 1, 1, 0), [5]int64{0, 5, 5, -1, 0}, 0}}},
		// us 10 2000000 1: remaining 9223372036854775807 (T = 500 ns < 1 us).
		{"us", []step{{0, p4(10, 2000000, 1, 1), [5]int64{0, 11, math.MaxInt64, -1, 0}, 500}}},
		// x 6000 6000 1: remaining "about 6024" (> limit: T = 166666 ns
		// truncated to 166 us); derived exactly: 999996 us / 166 us = 6024.07.
		{"x", []step{{0, p4(6000, 6000, 1, 1), [5]int64{0, 6001, 6024, -1, 0}, 166666}}},
		// m1 -1 1 1: [1,0,0,-1,0]; with quantity 0: [0,0,0,-1,0].
		{"m1", []step{{0, p4(-1, 1, 1, 1), [5]int64{1, 0, 0, -1, 0}, 0}}},
		{"m1q0", []step{{0, p4(-1, 1, 1, 0), [5]int64{0, 0, 0, -1, 0}, 0}}},
		// m2 -2 1 1: [1,-1,0,-1,0].
		{"m2", []step{{0, p4(-2, 1, 1, 1), [5]int64{1, -1, 0, -1, 0}, 0}}},
		// m3 4 -1 1: [1,5,0,-1,0] (negative count: T = -1 s).
		{"m3", []step{{0, p4(4, -1, 1, 1), [5]int64{1, 5, 0, -1, 0}, 0}}},
		// mx 9223372036854775807 1 1: limit -9223372036854775808. Derived for
		// the rest: tau = 1e9 * 2^63 wraps to 0, I = 1 s > tau, so limited
		// with retry -1, ttl 0 and remaining 0.
		{"mx", []step{{0, p4(math.MaxInt64, 1, 1, 1), [5]int64{1, math.MinInt64, 0, -1, 0}, 0}}},
	}
	for _, row := range rows {
		check(t, row.name, row.steps)
	}
}

// TestRates: the spec's rate table, as emission intervals. CL.THROTTLE
// takes count per period in whole seconds.
func TestRates(t *testing.T) {
	tests := []struct {
		name          string
		count, period int64
		want          time.Duration
	}{
		{"24/day", 24, 86400, time.Hour},
		{"6/hour", 6, 3600, 10 * time.Minute},
		{"6/min", 6, 60, 10 * time.Second},
		{"6 per 2 min", 6, 120, 20 * time.Second},
		{"5/s", 5, 1, 200 * time.Millisecond},
		// The T of the observed vectors.
		{"t3: 3/s", 3, 1, 333333333},
		{"hr: 1500/s", 1500, 1, 666666},
		{"hr2: 2000/s", 2000, 1, 500 * time.Microsecond},
		{"us: 2e6/s", 2000000, 1, 500},
		{"x: 6000/s", 6000, 1, 166666},
		{"m3: -1/s", -1, 1, -time.Second},
		{"big6: 1/year", 1, 31536000, 31536000 * time.Second},
	}
	for _, tc := range tests {
		if got := EmissionInterval(tc.count, tc.period); got != int64(tc.want) {
			t.Errorf("%s: T = %d ns, want %d", tc.name, got, int64(tc.want))
		}
	}
}

// TestZeroRates: "emission interval is 0 ns (count 0, period 0, or count >
// period*1e9)" is ErrZeroRate, from Validate (before any key is read) and
// from Throttle, whatever the key holds.
func TestZeroRates(t *testing.T) {
	tests := []Params{
		p4(1, 0, 1, 1),          // count 0
		p4(1, 1, 0, 1),          // period 0
		p4(1, 2000000000, 1, 1), // count > period*1e9: T = 0.5 ns truncates to 0
		p4(1, 0, 0, 1),
		p4(1, -2000000000, 1, 1), // derived: T = -0.5 ns truncates to 0
		p4(1, 0, -1, 0),
		p4(1, math.MaxInt64, 1, 1),
	}
	for _, p := range tests {
		if err := p.Validate(); !errors.Is(err, ErrZeroRate) {
			t.Errorf("%+v: Validate = %v, want ErrZeroRate", p, err)
		}
		for _, has := range []bool{false, true} {
			r, err := Throttle(uint64(base), has, base, p)
			if !errors.Is(err, ErrZeroRate) || r != (Result{}) {
				t.Errorf("%+v has %v: Throttle = %+v, %v; want zero Result, ErrZeroRate", p, has, r, err)
			}
		}
	}
	if ErrZeroRate.Error() != "Cell error: Store error: Zero rates are not supported" {
		t.Errorf("ErrZeroRate text %q", ErrZeroRate)
	}
	if err := p4(1, 1, 1, 1).Validate(); err != nil {
		t.Errorf("Validate(1 1 1 1) = %v", err)
	}
}

// TestPeriodEdges: periods whose period*1e9 leaves int64. The spec has no
// captured row for them; the values are derived from its Algorithm section,
// where period*1e9 is an int64 expression like tau and I, and wraps.
func TestPeriodEdges(t *testing.T) {
	// float64 of a product that is not a multiple of 1024 rounds: T is what
	// the spec's float64 division gives, computed here from the wrapped
	// product written out by hand.
	wrapped := int64(9223372037000000000 - 1<<64)
	tests := []struct {
		name          string
		count, period int64
		want          int64
	}{
		// The largest period whose product is exact: 9223372036 s (292 years).
		{"292 years", 1, 9223372036, 9223372036000000000},
		// One more second wraps past MaxInt64 to a negative product.
		{"wraps negative", 1, 9223372037, int64(float64(wrapped))},
		// 2^55 s * 1e9 = 2^64 * 1953125: wraps to exactly 0, a zero rate.
		{"wraps to 0", 1, 1 << 55, 0},
		// MaxInt64 s * 1e9 = (2^63-1)*1e9 = -1e9 mod 2^64.
		{"MaxInt64 s", 1, math.MaxInt64, -1e9},
		{"MinInt64 s", 1, math.MinInt64, 0}, // 2^63 * 1e9 = 0 mod 2^64
	}
	for _, tc := range tests {
		if got := EmissionInterval(tc.count, tc.period); got != tc.want {
			t.Errorf("%s: T = %d, want %d", tc.name, got, tc.want)
		}
	}
	// A 292-year T on a fresh key (derived): tau = T, I = T, allowed, TTL T.
	// The TAT lands after 2262, above MaxInt64: the state is a u64 and keeps
	// it exactly.
	const tNs = 9223372036000000000
	p := p4(0, 1, 9223372036, 1)
	r, err := Throttle(0, false, base, p)
	if err != nil || r.Limited || !r.Store || r.NewTAT != uint64(base)+tNs || r.TTLms != tNs/1e6 ||
		r.Reply() != [5]int64{0, 1, 0, -1, 9223372036} {
		t.Errorf("292-year period: %+v, %v", r, err)
	}
	// The second call reads that TAT back: limited, retry and reset exactly
	// T (derived: new_tat = now+2T, allow_at = now+T, diff = -T).
	r, err = Throttle(r.NewTAT, true, base, p)
	if err != nil || !r.Limited || r.Store || r.Reply() != [5]int64{1, 1, 0, 9223372036, 9223372036} {
		t.Errorf("292-year period, second call: %+v, %v", r, err)
	}
	// A stored TAT of MaxUint64 (spec: any base-10 u64 is a state) is the
	// instant it names, year 2554 (derived: ttl = MaxUint64 - now).
	r, err = Throttle(math.MaxUint64, true, base, p4(4, 1, 1, 1))
	left := (math.MaxUint64 - uint64(base)) / 1e9 // its sub-second part is >= 1 ms, so +1
	if err != nil || !r.Limited || r.ResetAfter != int64(left)+1 || r.RetryAfter != int64(left)+1-4 {
		t.Errorf("TAT MaxUint64: %+v, %v; want reset %d", r, err, left+1)
	}
}

// TestQuantityEdges: quantity 0 and quantity above the limit.
func TestQuantityEdges(t *testing.T) {
	const s = time.Second
	// Spec: quantity 0 "on the allowed path rewrites the value and resets the
	// TTL; on a missing key it creates one that expires at once".
	k := check(t, "q0", []step{{0, p4(4, 1, 1, 0), [5]int64{0, 5, 5, -1, 0}, 0}})
	if !k.exists || k.expMs != base/1e6 {
		t.Errorf("quantity 0 on a missing key: %+v, want a key expiring at now", *k)
	}
	// Quantity == limit fits, limit+1 never does (eq and big rows), even on
	// a key far in the past.
	check(t, "q=limit", []step{{0, p4(4, 1, 1, 5), [5]int64{0, 5, 0, -1, 5}, 5 * s}})
	// Derived: on a stale key (a TAT 1 h in the past, possible with SET),
	// new_tat starts from now, but the limited path's ttl is the OLD tat -
	// now = -1 h: reset -3600, remaining (5 s + 1 h) / 1 s.
	r, _ := Throttle(uint64(base-int64(time.Hour)), true, base, p4(4, 1, 1, 6))
	if r.Reply() != [5]int64{1, 5, 3605, -1, -3600} || r.Store {
		t.Errorf("quantity 6 on a stale key: %+v", r)
	}
	// Negative quantity refunds on an existing key (spec: "Negative quantity
	// works as a refund"); derived: after 3 at t=0, -2 leaves a TAT of 1 s.
	check(t, "refund", []step{
		{0, p4(4, 1, 1, 3), [5]int64{0, 5, 2, -1, 3}, 3 * s},
		{0, p4(4, 1, 1, -2), [5]int64{0, 5, 4, -1, 1}, 1 * s},
	})
}

// TestExpireError: "the allowed path would set a TTL below -1 ms (only with
// negative inputs)": the value IS written, without TTL, then ErrExpire.
// TTL -1 ms is "no TTL" and not an error; the ms are truncated toward zero,
// so -1.5 ms is -1 ms (derived from trunc_ms).
func TestExpireError(t *testing.T) {
	tests := []struct {
		name    string
		p       Params
		ttl     time.Duration
		wantErr bool
	}{
		{"qty -5 on a missing key", p4(1, 1, 1, -5), -5 * time.Second, true},
		{"ttl -2 ms", p4(0, 2000, 1, -4), -2 * time.Millisecond, true},
		{"ttl -1.5 ms", p4(0, 2000, 1, -3), -1500 * time.Microsecond, false},
		{"ttl -1 ms", p4(0, 1000, 1, -1), -time.Millisecond, false},
		{"ttl -0.5 ms", p4(0, 2000, 1, -1), -500 * time.Microsecond, false},
	}
	for _, tc := range tests {
		r, err := Throttle(0, false, base, tc.p)
		if tc.wantErr != errors.Is(err, ErrExpire) || (err != nil && !tc.wantErr) {
			t.Errorf("%s: err %v, want ErrExpire %v", tc.name, err, tc.wantErr)
		}
		wantMs := int64(tc.ttl / time.Millisecond)
		if tc.wantErr {
			wantMs = -1
		}
		if r.Limited || !r.Store || r.NewTAT != uint64(base+int64(tc.ttl)) || r.TTLms != wantMs {
			t.Errorf("%s: %+v, want stored TAT now%+d with TTLms %d", tc.name, r, int64(tc.ttl), wantMs)
		}
	}
	if ErrExpire.Error() != "Cell error: Store error: Error while setting key expire" {
		t.Errorf("ErrExpire text %q", ErrExpire)
	}
	// A TAT before the epoch is stored as 0 (a valid u64 that still counts as
	// "now"), while the reply and TTL come from the exact instant.
	r, err := Throttle(0, false, 5, p4(1, 1, 1, -5))
	if !errors.Is(err, ErrExpire) || r.NewTAT != 0 || r.TTLms != -1 {
		t.Errorf("pre-epoch TAT: %+v, %v", r, err)
	}
}

// TestRemainingDivision: remaining divides whole us by whole us in float64,
// saturating: "a positive numerator gives 9223372036854775807, 0/0 gives 0".
func TestRemainingDivision(t *testing.T) {
	// Positive numerator over T < 1 us: the us row.
	r, _ := Throttle(0, false, base, p4(10, 2000000, 1, 1))
	if r.Remaining != math.MaxInt64 {
		t.Errorf("us row: remaining %d", r.Remaining)
	}
	// 0/0, derived: T = 500 ns, burst 0, so tau = T = ttl and next = 0.
	r, _ = Throttle(0, false, base, p4(0, 2000000, 1, 1))
	if r.Remaining != 0 || r.Limited {
		t.Errorf("0/0: %+v", r)
	}
	// Derived: remaining can be -1. T = 333333333 ns is not a whole us
	// (T_us = 333333); a stored TAT 666666400 ns ahead with burst 0 is
	// limited with ttl = 666666400, so next = T - ttl = -333333067 > -T and
	// next_us = -333333: -333333 / 333333 = -1. Retry and reset: 0.666 s -> 1.
	r, _ = Throttle(uint64(base+666666400), true, base, p4(0, 3, 1, 1))
	if r.Reply() != [5]int64{1, 1, -1, 1, 1} {
		t.Errorf("next in (-T, -T_us]: %v", r.Reply())
	}
	// Derived: next <= -T gives 0 without dividing (m2: tau = -1 s, ttl 0).
	r, _ = Throttle(0, false, base, p4(-2, 1, 1, 1))
	if r.Remaining != 0 {
		t.Errorf("next <= -T: remaining %d", r.Remaining)
	}
}

// TestReplySeconds: the spec's seconds rounding: "2.000 s gives 2, 2.0009 s
// gives 2, 2.001 s gives 3, 0.5 ms gives 0, -1 s gives -1".
func TestReplySeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{
		{2 * time.Second, 2},
		{2000900 * time.Microsecond, 2},
		{2001 * time.Millisecond, 3},
		{500 * time.Microsecond, 0},
		{-time.Second, -1},
		// Derived from the same rule: seconds and nanos carry d's sign, so a
		// negative span never rounds up.
		{0, 0},
		{time.Millisecond, 1},
		{999999 * time.Nanosecond, 0},
		{-1500 * time.Millisecond, -1},
		{-2 * time.Millisecond, 0},
	}
	for _, tc := range tests {
		if got := replySeconds(wideOf(int64(tc.d))); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestSatTrunc: "NaN gives 0, values beyond the range give MaxInt64 /
// MinInt64", toward zero inside it.
func TestSatTrunc(t *testing.T) {
	tests := []struct {
		f    float64
		want int64
	}{
		{math.NaN(), 0},
		{math.Inf(1), math.MaxInt64},
		{math.Inf(-1), math.MinInt64},
		{0x1p63, math.MaxInt64},
		{-0x1p63, math.MinInt64},
		{-0x1p64, math.MinInt64},
		{1e300, math.MaxInt64},
		{2.9, 2},
		{-2.9, -2},
		{-0.5, 0},
	}
	for _, tc := range tests {
		if got := satTrunc(tc.f); got != tc.want {
			t.Errorf("satTrunc(%v) = %d, want %d", tc.f, got, tc.want)
		}
	}
}

// TestLimitedWritesNothing: "LIMITED: nothing is written, TTL untouched",
// and the reply of the limited path uses the OLD tat for reset_after.
func TestLimitedWritesNothing(t *testing.T) {
	tat := uint64(base + int64(time.Hour))
	r, err := Throttle(tat, true, base, p4(4, 1, 1, 1))
	// Derived: new_tat = now+1h+1s, allow_at = now+1h-4s, diff = -(1h-4s).
	if err != nil || !r.Limited || r.Store || r.NewTAT != 0 || r.TTLms != 0 ||
		r.Reply() != [5]int64{1, 5, 0, 3596, 3600} {
		t.Errorf("%+v, %v", r, err)
	}
}
