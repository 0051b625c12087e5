package cell

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// The scripts of ulule/limiter and throttled, as the pinned modules send
// them, taken from a server they ran against.

const (
	ululeIncrSHA     = "f74233f556d3f99c50b61169cf8aa8d5deb63fb2"
	ululePeekSHA     = "566f5c6a17e5fddb9a10bf389f754edd0d899c61"
	throttledCASSHA  = "ebd682e30de074a6919bde872b507734c7c3ebe5"
	captureKeyPrefix = "capture"
)

// capturedBodies runs use against a fresh server and returns the bodies
// of the scripts shas it must have sent.
func capturedBodies(t testing.TB, use func(ctx context.Context, rdb *redis.Client) error, shas ...string) []string {
	t.Helper()
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String()})
	defer rdb.Close()
	if err := use(context.Background(), rdb); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sha := range shas {
		s := srv.scripts.Lookup([]byte(sha))
		if s == nil {
			t.Fatalf("the library did not send the script %s: has the pinned module changed?", sha)
		}
		out = append(out, string(s.Body))
	}
	return out
}

// ululeBodies are ulule/limiter's increment and peek scripts.
func ululeBodies(t testing.TB) []string {
	return capturedBodies(t, func(ctx context.Context, rdb *redis.Client) error {
		store, err := ulredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: captureKeyPrefix})
		if err != nil {
			return err
		}
		lim := limiter.New(store, limiter.Rate{Period: 60e9, Limit: 5})
		if _, err := lim.Get(ctx, "a"); err != nil {
			return err
		}
		_, err = lim.Peek(ctx, "a")
		return err
	}, ululeIncrSHA, ululePeekSHA)
}

// throttledBodies is throttled's compare-and-swap script.
func throttledBodies(t testing.TB) []string {
	return capturedBodies(t, func(ctx context.Context, rdb *redis.Client) error {
		store, err := goredisstore.NewCtx(rdb, captureKeyPrefix)
		if err != nil {
			return err
		}
		rl, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: throttled.PerMin(6), MaxBurst: 2})
		if err != nil {
			return err
		}
		for range 2 { // the first call creates the key, the second swaps
			if _, _, err := rl.RateLimitCtx(ctx, "a", 1); err != nil {
				return err
			}
		}
		return nil
	}, throttledCASSHA)
}

// ululeCase builds a call of one of ulule's scripts.
func ululeCase(f *fuzzBytes, bodies []string) nativeCase {
	var c nativeCase
	c.setupNs, c.runNs = f.fuzzClock()
	c.setup = f.keyState(nil, "k", func() string { return f.number(0, 10) }, func() []string { return []string{"1", "a"} })
	argv := []string{f.number(1, 5), f.number(0, 60000)}
	keys := f.fuzzKeys()
	c.call = f.callOf(bodies[f.intn(len(bodies))], len(keys), keys, f.fuzzArgs(argv))
	c.resp3 = f.intn(4) == 0
	c.keys = []string{"k", "k2"}
	return c
}

// throttledCase builds a call of throttled's CAS, expecting the key's
// value most of the time.
func throttledCase(f *fuzzBytes, bodies []string) nativeCase {
	var c nativeCase
	c.setupNs, c.runNs = f.fuzzClock()
	old := strconv.FormatInt(c.setupNs, 10)
	c.setup = f.keyState(nil, "k", func() string { return old }, func() []string { return []string{"1", "a"} })
	expect := old
	if f.intn(4) == 0 {
		expect = f.number(0, 10)
	}
	argv := []string{expect, strconv.FormatInt(c.runNs, 10), f.number(1, 60)}
	keys := f.fuzzKeys()
	c.call = f.callOf(bodies[0], len(keys), keys, f.fuzzArgs(argv))
	c.resp3 = f.intn(4) == 0
	c.keys = []string{"k", "k2"}
	return c
}

// TestNativeLibs: ulule's and throttled's usual calls run natively with
// the Lua run's outcome; odd ones are left to Lua.
func TestNativeLibs(t *testing.T) {
	ulule := ululeBodies(t)
	cas := throttledBodies(t)[0]
	h := newNativeHarness(t)
	run := int64(1900000000123456789)
	for _, tt := range []struct {
		name   string
		body   string
		setup  [][]string
		argv   []string
		native bool
	}{
		{"incr first", ulule[0], nil, []string{"1", "60000"}, true},
		{"incr again", ulule[0], [][]string{{"SET", "k", "3", "PX", "30000"}}, []string{"1", "60000"}, true},
		{"incr ttl 0", ulule[0], nil, []string{"1", "0"}, true},
		{"incr bad ttl", ulule[0], nil, []string{"1", "1.5"}, true},
		{"incr wrong type", ulule[0], [][]string{{"RPUSH", "k", "a"}}, []string{"1", "60000"}, true},
		{"incr non-numeric", ulule[0], nil, []string{"x", "60000"}, false},
		{"peek missing", ulule[1], nil, nil, true},
		{"peek", ulule[1], [][]string{{"SET", "k", "3", "PX", "30000"}}, nil, true},
		{"peek non-numeric", ulule[1], [][]string{{"SET", "k", "x"}}, nil, false},
		{"cas swap", cas, [][]string{{"SET", "k", "10"}}, []string{"10", "11", "60"}, true},
		{"cas other", cas, [][]string{{"SET", "k", "9"}}, []string{"10", "11", "60"}, true},
		{"cas missing", cas, nil, []string{"10", "11", "60"}, true},
		{"cas bad ttl", cas, [][]string{{"SET", "k", "10"}}, []string{"10", "11", "0"}, true},
		{"cas wrong type", cas, [][]string{{"HSET", "k", "f", "v"}}, []string{"10", "11", "60"}, true},
		{"cas no ttl", cas, [][]string{{"SET", "k", "10"}}, []string{"10", "11"}, false},
	} {
		c := nativeCase{setup: tt.setup, setupNs: run - 5e9, runNs: run, keys: []string{"k"},
			call: append([]string{"EVAL", tt.body, "1", "k"}, tt.argv...)}
		if ran := h.check(c); ran != tt.native {
			t.Errorf("%s: ran natively %v, want %v", tt.name, ran, tt.native)
		}
	}
}

// FuzzNativeUlule compares ulule's scripts run natively and in Lua.
func FuzzNativeUlule(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x02\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0"} {
		f.Add([]byte(s))
	}
	bodies := ululeBodies(f)
	h := newNativeHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.t = t
		h.check(ululeCase(&fuzzBytes{data}, bodies))
	})
}

// FuzzNativeThrottled compares throttled's CAS run natively and in Lua.
func FuzzNativeThrottled(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x02\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0"} {
		f.Add([]byte(s))
	}
	bodies := throttledBodies(f)
	h := newNativeHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.t = t
		h.check(throttledCase(&fuzzBytes{data}, bodies))
	})
}
