// Package gcra computes one CL.THROTTLE call of redis-cell: a step of the
// generic cell rate algorithm (GCRA), exactly as redis-cell v0.5 computes it,
// down to its overflow and rounding quirks. It is pure: it reads no clock,
// touches no key and knows nothing of RESP. The caller parses the arguments
// (ParseInt), checks Params.Validate before touching the key, reads the
// stored TAT (ParseTAT) and the wall clock once, calls Throttle, then applies
// the Result: when Store is set it writes NewTAT as a decimal string with a
// TTL of TTLms, and it replies with Result.Reply or with the error's text.
//
// # The algorithm
//
// The whole state of a limiter is one instant, the theoretical arrival time
// (TAT), in nanoseconds since the Unix epoch: the moment at which the limiter
// would be empty again. A TAT in the past, or a missing key, counts as "now".
// A call of quantity q pushes the TAT forward by the increment I = q*T, where
// T = period/count is the emission interval. The call is allowed when the
// pushed TAT lies at most tau = T*(max_burst+1) ahead of now; an allowed call
// stores it with a TTL of the time left until it, a limited call changes
// nothing. Zero and negative quantities are not special: 0 rewrites the TAT
// unchanged, a negative quantity refunds.
//
// # Arithmetic
//
// redis-cell mixes three kinds of numbers and this package mirrors each one,
// because the replies for extreme arguments depend on it:
//
//   - T is period*1e9 computed as an int64 that wraps (redis-cell builds a
//     time::Duration from the period in seconds and casts its i128 nanosecond
//     count to i64, which keeps the low 64 bits), divided by count in float64
//     and truncated toward zero with saturation (Rust's `as`: NaN gives 0,
//     out-of-range values give MaxInt64 or MinInt64). T == 0, which includes
//     count == 0, is ErrZeroRate.
//   - tau, I and the limit max_burst+1 are int64 products and sums that wrap
//     (Rust release builds do not check overflow).
//   - Every instant and span built from them (the new TAT, allow_at, diff, the
//     TTL, next) is exact: redis-cell holds them in time::OffsetDateTime and
//     time::Duration, which do not overflow at these magnitudes. They can
//     exceed int64 nanoseconds, by less than a factor of 8, so they are
//     computed in a 128-bit integer (type wide).
//
// remaining divides whole microseconds by whole microseconds in float64, so
// with T < 1us it is MaxInt64 (positive numerator) or 0 (0/0), and when T
// is not a whole number of microseconds it can exceed the limit (the spec's
// x row) or be -1 (a stored TAT more than tau ahead, as after the arguments
// changed). Callers must not assume 0 <= remaining <= limit. Seconds in the
// reply are trunc(secs + nanos/1e9) in float64, plus one when the sub-second
// part holds at least one whole millisecond; negative spans never round up.
//
// # Storage
//
// The stored TAT is a base-10 u64 read by Rust's u64 FromStr rules
// (ParseTAT), and Throttle takes it and returns NewTAT as a uint64: the
// spec's state is "decimal uint64 nanoseconds", and a TAT past the year 2262
// (above MaxInt64, written by periods of centuries or by SET) must come back
// as the instant it names, not saturated or wrapped, or the reset and retry
// times of such a key would be wrong. NewTAT is clamped to [0, MaxUint64] so
// that what the caller writes is always a valid u64; an instant before the
// epoch becomes 0, which counts as "now" exactly as the negative instant
// would. Only the stored value is clamped: the reply and the TTL come from
// the exact instant.
//
// # Invariants
//
// For every Result that Throttle returns with a nil error or ErrExpire:
//
//   - Limited implies !Store; !Limited implies Store and RetryAfter == -1.
//   - Limit == MaxBurst+1, wrapping.
//   - Store implies TTLms >= -1.
//   - ErrExpire comes only with Store and TTLms == -1: the value is written
//     without a TTL, then the error is the reply.
//
// ErrZeroRate comes with a zero Result, before anything else is computed.
package gcra
