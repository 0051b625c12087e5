package cell

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/gcra"
	"github.com/redis/go-redis/v9"
)

// ints encodes the expected five-integer reply.
func ints(v ...int64) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(v)) + "\r\n")
	for _, n := range v {
		b.WriteString(":" + strconv.FormatInt(n, 10) + "\r\n")
	}
	return b.String()
}

const (
	usage = "-Cell error: Store error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]\r\n"
	parse = "-Cell error: Store error: Couldn't parse as integer: "
	zero  = "-Cell error: Store error: Zero rates are not supported\r\n"
)

func TestThrottleErrors(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"CL.THROTTLE"}, usage},
		{[]string{"cl.throttle", "k"}, usage},
		{[]string{"cl.throttle", "k", "1"}, usage},
		{[]string{"cl.throttle", "k", "1", "1"}, usage},
		{[]string{"cl.throttle", "k", "1", "1", "1", "1", "1"}, usage},
		{[]string{"cl.throttle", "k", "x", "1", "1"}, parse + "x\r\n"},
		{[]string{"cl.throttle", "k", "1", "y", "1"}, parse + "y\r\n"},
		{[]string{"cl.throttle", "k", "1", "1", "z"}, parse + "z\r\n"},
		{[]string{"cl.throttle", "k", "1", "1", "1", "q"}, parse + "q\r\n"},
		{[]string{"cl.throttle", "k", "x", "y", "z"}, parse + "x\r\n"},
		{[]string{"cl.throttle", "k", "", "1", "1"}, parse + "\r\n"},
		{[]string{"cl.throttle", "k", "a\nb", "1", "1"}, parse + "a b\r\n"},
		{[]string{"cl.throttle", "k", "a\r\nb", "1", "1"}, parse + "a  b\r\n"},
		{[]string{"cl.throttle", "k", "12\x0034", "1", "1"}, parse + "12\r\n"},
		{[]string{"cl.throttle", "k", "1.5", "1", "1"}, parse + "1.5\r\n"},
		{[]string{"cl.throttle", "k", " 1", "1", "1"}, parse + " 1\r\n"},
		{[]string{"cl.throttle", "k", "0x1", "1", "1"}, parse + "0x1\r\n"},
		{[]string{"cl.throttle", "k", "1", "1", "9223372036854775808"}, parse + "9223372036854775808\r\n"},
		{[]string{"cl.throttle", "k", "1", "0", "1"}, zero},
		{[]string{"cl.throttle", "k", "1", "1", "0"}, zero},
		{[]string{"cl.throttle", "k", "1", "2000000000", "1"}, zero},
		{[]string{"cl.probe", "k"}, "-" + MsgProbeUsage + "\r\n"},
		{[]string{"cl.probe", "k", "1", "0", "1"}, zero},
	}
	for _, tc := range tests {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := c.do("exists", "k"); got != ":0\r\n" {
		t.Errorf("a failed call created the key: EXISTS %q", got)
	}
	c.do("set", "str", "not a number")
	if got := c.do("cl.throttle", "str", "1", "1", "1"); got != "-Cell error: invalid digit found in string\r\n" {
		t.Errorf("non-u64 state: %q", got)
	}
	putObject(srv, "h", oneFieldHash())
	if got := c.do("cl.throttle", "h", "1", "1", "1"); got != "-"+ErrWrongType+"\r\n" {
		t.Errorf("hash key: %q", got)
	}
}

// TestThrottleVectors replays the spec's observed vectors that do not depend
// on sub-millisecond timing.
func TestThrottleVectors(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct {
		args string
		want string
	}{
		{"user123 15 30 60", ints(0, 16, 15, -1, 2)},
		{"user123 15 30 60", ints(0, 16, 14, -1, 4)},
		{"u2 0 1 2 1", ints(0, 1, 0, -1, 2)},
		{"u2 0 1 2 1", ints(1, 1, 0, 2, 2)},
		{"eq 4 1 1 5", ints(0, 5, 0, -1, 5)},
		{"eq 4 1 1 1", ints(1, 5, 0, 1, 5)},
		{"big 4 1 1 6", ints(1, 5, 5, -1, 0)},
		{"z0 0 1 1", ints(0, 1, 0, -1, 1)},
		{"z0 0 1 1", ints(1, 1, 0, 1, 1)},
		{"t3 2 3 1", ints(0, 3, 2, -1, 1)},
		{"t3 2 3 1", ints(0, 3, 1, -1, 1)},
		{"t3 2 3 1", ints(0, 3, 0, -1, 1)},
		{"t3 2 3 1", ints(1, 3, 0, 1, 1)},
		{"big6 0 1 31536000", ints(0, 1, 0, -1, 31536000)},
		{"big6 0 1 31536000", ints(1, 1, 0, 31536000, 31536000)},
		{"peek 4 1 1 0", ints(0, 5, 5, -1, 0)},
		{"us 10 2000000 1", ints(0, 11, 9223372036854775807, -1, 0)},
		{"m1 -1 1 1", ints(1, 0, 0, -1, 0)},
		{"m1q -1 1 1 0", ints(0, 0, 0, -1, 0)},
		{"m2 -2 1 1", ints(1, -1, 0, -1, 0)},
		{"m3 4 -1 1", ints(1, 5, 0, -1, 0)},
		{"hr 20 1500 1 1", ints(0, 21, 20, -1, 0)},
		{"+p +4 +1 +1 +1", ints(0, 5, 4, -1, 1)},
		{"lz 004 01 01", ints(0, 5, 4, -1, 1)},
	}
	for _, s := range steps {
		args := append([]string{"CL.THROTTLE"}, strings.Fields(s.args)...)
		if got := c.do(args...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
	// mx: limit wraps to MinInt64 (and tau to 0, so the call is limited).
	if got := c.do("cl.throttle", "mx", "9223372036854775807", "1", "1"); !strings.HasPrefix(got, "*5\r\n:1\r\n:-9223372036854775808\r\n") {
		t.Errorf("mx: %q", got)
	}
	if got := c.do("ttl", "user123"); got != ":4\r\n" {
		t.Errorf("TTL user123 = %q, want :4", got)
	}
	if got := c.do("pttl", "user123"); got < ":3990\r\n" || got > ":4000\r\n" {
		t.Errorf("PTTL user123 = %q, want about 3999", got)
	}
	if got := c.do("exists", "big"); got != ":0\r\n" {
		t.Errorf("a call that can never fit created its key: %q", got)
	}
	if got := c.do("type", "user123"); got != "+string\r\n" {
		t.Errorf("TYPE = %q", got)
	}
	// The state is the TAT in ns: 19 digits, a little ahead of now.
	tat := c.do("get", "user123")
	if !strings.HasPrefix(tat, "$19\r\n") {
		t.Fatalf("GET = %q", tat)
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(tat[5:]), 10, 64)
	if ahead := time.Duration(n - time.Now().UnixNano()); ahead < 3*time.Second || ahead > 4*time.Second {
		t.Errorf("TAT is %v ahead of now, want about 4s", ahead)
	}
	// DEL resets the limiter.
	c.do("del", "z0")
	if got := c.do("cl.throttle", "z0", "0", "1", "1"); got != ints(0, 1, 0, -1, 1) {
		t.Errorf("after DEL: %q", got)
	}
	// A TAT set far in the future limits.
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10)
	c.do("set", "fut", future)
	if got := c.do("cl.throttle", "fut", "4", "1", "1"); !strings.HasPrefix(got, "*5\r\n:1\r\n:5\r\n:0\r\n") {
		t.Errorf("future TAT: %q", got)
	}
	if got := c.do("get", "fut"); got != "$19\r\n"+future+"\r\n" {
		t.Errorf("a limited call rewrote the state: %q", got)
	}
	if got := c.do("ttl", "fut"); got != ":-1\r\n" {
		t.Errorf("a limited call touched the TTL: %q", got)
	}
}

// TestThrottleExpireError: negative inputs whose TTL would be below -1 ms
// write the value without a TTL and reply the expire error.
func TestThrottleExpireError(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	got := c.do("cl.throttle", "neg", "1", "1", "1", "-5")
	if got != "-Cell error: Store error: Error while setting key expire\r\n" {
		t.Fatalf("negative quantity on a missing key: %q", got)
	}
	if got := c.do("ttl", "neg"); got != ":-1\r\n" {
		t.Errorf("TTL after the expire error = %q, want -1", got)
	}
	if got := c.do("exists", "neg"); got != ":1\r\n" {
		t.Errorf("the value was not written: %q", got)
	}
}

func TestThrottleInTransactions(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	other := dial(t, srv)
	steps := []struct {
		conn *testConn
		args string
		want string
	}{
		// One bad call inside MULTI is an error element; the others run.
		{c, "multi", "+OK\r\n"},
		{c, "cl.throttle tx 1 1 60", "+QUEUED\r\n"},
		{c, "cl.throttle tx 1 x 60", "+QUEUED\r\n"},
		{c, "cl.throttle tx 1 1 60", "+QUEUED\r\n"},
		{c, "exec", "*3\r\n" + ints(0, 2, 1, -1, 60) + parse + "x\r\n" + ints(0, 2, 0, -1, 120)},
		// A limited call writes nothing: it does not break a WATCH.
		{c, "watch tx", "+OK\r\n"},
		{other, "cl.throttle tx 1 1 60", ints(1, 2, 0, 60, 120)},
		{c, "multi", "+OK\r\n"},
		{c, "ping", "+QUEUED\r\n"},
		{c, "exec", "*1\r\n+PONG\r\n"},
		// An allowed call is a write: it does.
		{c, "watch w", "+OK\r\n"},
		{other, "cl.throttle w 1 1 60", ints(0, 2, 1, -1, 60)},
		{c, "multi", "+OK\r\n"},
		{c, "ping", "+QUEUED\r\n"},
		{c, "exec", "*-1\r\n"},
		// CL.PROBE does not either.
		{c, "watch w", "+OK\r\n"},
		{other, "cl.probe w 1 1 60", ints(0, 2, 0, -1, 120)},
		{c, "multi", "+OK\r\n"},
		{c, "ping", "+QUEUED\r\n"},
		{c, "exec", "*1\r\n+PONG\r\n"},
	}
	for _, s := range steps {
		if got := s.conn.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

func TestProbeChangesNothing(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	if got := c.do("cl.probe", "p", "4", "1", "60"); got != ints(0, 5, 4, -1, 60) {
		t.Errorf("probe of a missing key: %q", got)
	}
	if got := c.do("exists", "p"); got != ":0\r\n" {
		t.Errorf("probe created the key: %q", got)
	}
	c.do("cl.throttle", "p", "4", "1", "60", "2")
	before := []string{c.do("get", "p"), c.do("pttl", "p")}
	if got := c.do("cl.probe", "p", "4", "1", "60", "3"); got != ints(0, 5, 0, -1, 300) {
		t.Errorf("probe of 3: %q", got)
	}
	if got := c.do("cl.probe", "p", "4", "1", "60", "4"); got != ints(1, 5, 3, 60, 120) {
		t.Errorf("probe of 4: %q", got)
	}
	after := []string{c.do("get", "p"), c.do("pttl", "p")}
	if before[0] != after[0] {
		t.Errorf("probe changed the value: %q -> %q", before[0], after[0])
	}
	if pb, pa := atoiReply(before[1]), atoiReply(after[1]); pa > pb || pb-pa > 50 {
		t.Errorf("probe changed the TTL: %d -> %d", pb, pa)
	}
	// The probe and the next real call agree.
	if got := c.do("cl.throttle", "p", "4", "1", "60", "3"); got != ints(0, 5, 0, -1, 300) {
		t.Errorf("throttle after probe: %q", got)
	}
}

func atoiReply(r string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(r, ":")), 10, 64)
	return n
}

// hammer runs CL.THROTTLE with args from 64 connections until stop says
// so, and returns how many calls were allowed.
func hammer(t *testing.T, rdb *redis.Client, stop func() bool, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop() {
				r, err := rdb.Do(ctx, append([]any{"CL.THROTTLE"}, args...)...).Int64Slice()
				if err != nil {
					t.Error(err)
					return
				}
				if r[0] == 0 {
					allowed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return allowed.Load()
}

// TestThrottleConcurrentBurst: 64 connections race for a burst of 1000 at
// one unit per hour. Exactly 1000 calls win, whatever the scheduling: a
// lost update between connections or shards would let more through.
func TestThrottleConcurrentBurst(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 64})
	defer rdb.Close()
	var calls atomic.Int64
	a := hammer(t, rdb, func() bool { return calls.Add(1) > 3000 }, "burst", 999, 1, 3600)
	if a != 1000 {
		t.Errorf("allowed %d of 3000 calls, want exactly 1000", a)
	}
}

// TestThrottleConcurrent: 64 goroutines hammer one key at 100/s with a
// burst of 10 for 2 s. GCRA never admits more than the burst plus the rate
// times the elapsed time, which a lost update would break. Fewer is
// possible when the machine stalls the clients for longer than the burst
// lasts (capacity unused is gone), so the lower bound is loose.
func TestThrottleConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s run")
	}
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 64})
	defer rdb.Close()
	const T = 10 * time.Millisecond
	start := time.Now()
	deadline := start.Add(2 * time.Second)
	a := hammer(t, rdb, func() bool { return !time.Now().Before(deadline) }, "k", 9, 100, 1)
	end := time.Now()
	hi := 10 + int64(end.Sub(start)/T) + 1
	if a > hi {
		t.Errorf("allowed %d in %v, GCRA admits at most %d", a, end.Sub(start), hi)
	}
	if lo := int64(deadline.Sub(start)/T) / 2; a < lo {
		t.Errorf("allowed %d in %v, want at least %d", a, end.Sub(start), lo)
	}
}

// oneFieldHash is an aggregate value for type checks.
func oneFieldHash() *keyspace.Hash {
	h := keyspace.NewHash()
	h.Set([]byte("f"), []byte("v"))
	return h
}

// putObject stores a non-string value directly, for type checks.
func putObject(srv *Server, key string, obj any) {
	v := &keyspace.Entry{}
	v.SetObj(obj)
	srv.ks.Put(0, []byte(key), v)
}

// entryOf returns a copy of key's entry in db 0, read straight from its
// shard without lazy expiry, or nil: what a command left, whether or not a
// reader would still see it.
func entryOf(srv *Server, key string) *keyspace.Entry {
	e := srv.ks.Peek(0, []byte(key))
	if e == nil {
		return nil
	}
	c := *e // the header only: c has no key
	if c.HasBytes() {
		c.SetStr(append([]byte(nil), e.StrBytes()...))
	}
	return &c
}

// putString stores a string value with absolute expiry exp (ms, 0: none)
// directly, as SET would.
func putString(srv *Server, key, val string, exp int64) {
	v := &keyspace.Entry{Exp: exp}
	v.SetStr([]byte(val))
	srv.ks.Put(0, []byte(key), v)
}

// TestThrottleState checks what CL.THROTTLE and CL.PROBE leave in the
// keyspace, read straight from the shard (the spec's Storage section and
// the expire-error row), so it needs no GET/TTL/EXISTS.
func TestThrottleState(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	nowMs := func() int64 { return time.Now().UnixMilli() }

	// user123 15 30 60: the TAT in decimal ns, 19 digits, 2 s ahead, and an
	// expiry of trunc_ms(ttl) = 2000 ms after the call.
	before := nowMs()
	if got := c.do("cl.throttle", "user123", "15", "30", "60"); got != ints(0, 16, 15, -1, 2) {
		t.Fatalf("user123: %q", got)
	}
	after := nowMs()
	e := entryOf(srv, "user123")
	if e == nil || len(e.Str()) != 19 || e.Exp < before+2000 || e.Exp > after+2000 {
		t.Fatalf("user123 entry %+v, want 19 digits expiring 2000 ms after [%d, %d]", e, before, after)
	}

	// The expire error: the value IS written and left without TTL.
	if got := c.do("cl.throttle", "neg", "1", "1", "1", "-5"); got != "-"+gcra.MsgExpire+"\r\n" {
		t.Fatalf("neg: %q", got)
	}
	if e := entryOf(srv, "neg"); e == nil || e.Exp != 0 || len(e.Str()) != 19 {
		t.Errorf("neg entry %+v, want a TAT without expiry", e)
	}

	// Quantity 0 on a missing key creates a key that expires at once: its
	// expiry is the millisecond of the call.
	before = nowMs()
	if got := c.do("cl.throttle", "peek", "4", "1", "1", "0"); got != ints(0, 5, 5, -1, 0) {
		t.Fatalf("peek: %q", got)
	}
	if e := entryOf(srv, "peek"); e == nil || e.Exp < before || e.Exp > nowMs() {
		t.Errorf("peek entry %+v, want expiry at the call's ms", e)
	}

	// A limited call writes nothing and leaves the TTL alone.
	future := strconv.FormatInt(time.Now().Add(time.Hour).UnixNano(), 10)
	exp := nowMs() + 7_200_000
	putString(srv, "fut", future, exp)
	if got := c.do("cl.throttle", "fut", "4", "1", "1"); !strings.HasPrefix(got, "*5\r\n:1\r\n:5\r\n:0\r\n") {
		t.Errorf("future TAT: %q", got)
	}
	if e := entryOf(srv, "fut"); e == nil || string(e.Str()) != future || e.Exp != exp {
		t.Errorf("a limited call changed the entry: %+v", e)
	}

	// CL.PROBE writes nothing: not on a live key, not on a missing one (any
	// quantity, including 0 and the expire error's negative one).
	for _, q := range []string{"0", "1", "9"} {
		c.do("cl.probe", "fut", "4", "1", "1", q)
		c.do("cl.probe", "nothing", "4", "1", "1", q)
	}
	if got := c.do("cl.probe", "nothing", "1", "1", "1", "-5"); got != "-"+gcra.MsgExpire+"\r\n" {
		t.Errorf("probe of the expire error: %q", got)
	}
	if e := entryOf(srv, "fut"); e == nil || string(e.Str()) != future || e.Exp != exp {
		t.Errorf("CL.PROBE changed the entry: %+v", e)
	}
	if e := entryOf(srv, "nothing"); e != nil {
		t.Errorf("CL.PROBE created a key: %+v", e)
	}

	// Spec: "key holds a string that is not a base-10 uint64" is the
	// invalid-digit error, for both commands, and leaves the value.
	for _, v := range []string{"not a number", "", "-1", "1.5", "18446744073709551616"} {
		putString(srv, "str", v, 0)
		for _, cmd := range []string{"cl.throttle", "cl.probe"} {
			if got := c.do(cmd, "str", "1", "1", "1"); got != "-"+gcra.MsgInvalidDigit+"\r\n" {
				t.Errorf("%s on %q: %q", cmd, v, got)
			}
		}
		if e := entryOf(srv, "str"); e == nil || string(e.Str()) != v {
			t.Errorf("the bad state %q was changed: %+v", v, e)
		}
	}

	// The state is a u64: a 292-year period stores a TAT past 2262 (above
	// MaxInt64, 20 digits) and the next call reads it back exactly (derived
	// from the Algorithm: limited, retry and reset T = 9223372036 s, minus
	// the microseconds between the calls, which round up again).
	if got := c.do("cl.throttle", "y", "0", "1", "9223372036"); got != ints(0, 1, 0, -1, 9223372036) {
		t.Fatalf("y: %q", got)
	}
	e = entryOf(srv, "y")
	if tat, err := strconv.ParseUint(string(e.Str()), 10, 64); err != nil || tat <= math.MaxInt64 {
		t.Errorf("y state %q: want a u64 above MaxInt64", e.Str())
	}
	if got := c.do("cl.probe", "y", "0", "1", "9223372036"); got != ints(1, 1, 0, 9223372036, 9223372036) {
		t.Errorf("y read back: %q", got)
	}
	// A stored MaxUint64 is the instant it names (year 2554), not MaxInt64.
	putString(srv, "u64", "18446744073709551615", 0)
	got := c.do("cl.probe", "u64", "4", "1", "1")
	want := int64((math.MaxUint64 - uint64(time.Now().UnixNano())) / 1e9)
	fields := strings.Split(got, "\r\n")
	if len(fields) != 7 || fields[1] != ":1" || fields[2] != ":5" {
		t.Fatalf("TAT MaxUint64: %q", got)
	}
	if reset := atoiReply(fields[5]); reset < want-2 || reset > want+2 {
		t.Errorf("TAT MaxUint64: reset %d, want about %d s", reset, want)
	}
}

// TestThrottleCheckOrder: parse errors, then the zero rate, then the key.
// The zero-rate error comes "before any key is touched": not even an
// expired key is reaped by it.
func TestThrottleCheckOrder(t *testing.T) {
	srv := startServer(t, nil)
	srv.activeExpiryOff.Store(true) // "old" must wait for a lookup to reap it
	c := dial(t, srv)
	putObject(srv, "h", oneFieldHash())
	putString(srv, "old", "1", 1) // expired since 1970, still in the map
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"cl.throttle", "h", "x", "0", "1"}, parse + "x\r\n"},
		{[]string{"cl.throttle", "h", "1", "0", "y"}, parse + "y\r\n"},
		{[]string{"cl.throttle", "h", "1", "0", "1", "z"}, parse + "z\r\n"},
		{[]string{"cl.throttle", "h", "1", "0", "1"}, zero},
		{[]string{"cl.probe", "h", "1", "0", "1"}, zero},
		{[]string{"cl.throttle", "h", "1", "1", "1"}, "-" + ErrWrongType + "\r\n"},
		{[]string{"cl.probe", "h", "1", "1", "1"}, "-" + ErrWrongType + "\r\n"},
		{[]string{"cl.throttle", "old", "1", "0", "1"}, zero},
		{[]string{"cl.throttle", "old", "1", "1", "1", "q"}, parse + "q\r\n"},
		{[]string{"cl.throttle", "old", "1", "1"}, usage},
	}
	for _, tc := range tests {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
	if e := entryOf(srv, "old"); e == nil {
		t.Errorf("a call refused before touching the key reaped it")
	}
	if e := entryOf(srv, "h"); e == nil || e.IsString() {
		t.Errorf("the hash was changed: %+v", e)
	}
}
