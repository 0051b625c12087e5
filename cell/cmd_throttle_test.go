package cell

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	putObject(srv, "h", fakeObject{})
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

// TestThrottleConcurrent: 64 goroutines hammer one key at 100/s with a
// burst of 10 for 2 s. The number allowed is what GCRA admits (10 plus
// 100 per second elapsed, within 1), and it matches the final TAT exactly,
// which a lost update between connections would break.
func TestThrottleConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s run")
	}
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 64})
	defer rdb.Close()
	ctx := context.Background()
	const T = 10 * time.Millisecond
	var allowed atomic.Int64
	start := time.Now()
	deadline := start.Add(2 * time.Second)
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				r, err := rdb.Do(ctx, "CL.THROTTLE", "k", 9, 100, 1).Int64Slice()
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
	end := time.Now()
	a := allowed.Load()
	tat, err := rdb.Get(ctx, "k").Int64()
	if err != nil {
		t.Fatal(err)
	}
	// Saturated from its first call at t0, the TAT is t0 + a*T.
	t0 := time.Unix(0, tat-a*int64(T))
	if t0.Before(start) || t0.After(start.Add(50*time.Millisecond)) {
		t.Errorf("allowed %d, final TAT implies a first call at %v after start: lost or extra updates", a, t0.Sub(start))
	}
	lo := 10 + int64(deadline.Sub(start)/T) - 1
	hi := 10 + int64(end.Sub(start)/T) + 1
	if a < lo || a > hi {
		t.Errorf("allowed %d, want %d..%d", a, lo, hi)
	}
}

// fakeObject stands for an aggregate value (hash, list, zset).
type fakeObject struct{}

func (fakeObject) TypeName() string { return "hash" }

// putObject stores a non-string value directly, for type checks.
func putObject(srv *Server, key string, obj any) {
	sh := srv.ks.shardOf(0, []byte(key))
	sh.mu.Lock()
	sh.keys[key] = &Entry{Obj: obj}
	sh.mu.Unlock()
}
