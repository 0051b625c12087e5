package cell

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

type redisRateClient struct{ lim *redis_rate.Limiter }

func redisRateLimiter(srv *Server) redisRateClient {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String()})
	return redisRateClient{redis_rate.NewLimiter(rdb)}
}

func (c redisRateClient) allowN(ctx context.Context) error {
	_, err := c.lim.AllowN(ctx, "capture", redis_rate.PerSecond(10), 1)
	return err
}

func (c redisRateClient) allowAtMost(ctx context.Context) error {
	_, err := c.lim.AllowAtMost(ctx, "capture", redis_rate.PerSecond(10), 1)
	return err
}

// redisRateCase builds a call of one of redis_rate's scripts from the
// fuzzer's choices.
func redisRateCase(f *fuzzBytes, bodies []string) nativeCase {
	var c nativeCase
	c.setupNs, c.runNs = f.fuzzClock()
	nowSince2017 := c.runNs/int64(time.Second) - redisRateEpoch
	tat := func() string {
		v := float64(nowSince2017) + float64(int64(f.u32()%400000)-200000)/1000
		if f.intn(2) == 0 {
			return strconv.FormatFloat(v, 'g', 17, 64) // as the script's SET writes it
		}
		return f.number(nowSince2017-100, 300)
	}
	c.setup = f.keyState(nil, "k", tat, func() []string { return []string{"1", "a"} })
	body := bodies[f.intn(len(bodies))]
	argv := []string{f.number(0, 100), f.number(1, 1000), f.number(1, 3600), f.number(0, 10)}
	keys := f.fuzzKeys()
	c.call = f.callOf(body, len(keys), keys, f.fuzzArgs(argv))
	c.resp3 = f.intn(4) == 0
	c.keys = []string{"k", "k2"}
	return c
}

// TestNativeRedisRate: redis_rate's usual calls run natively and give the
// Lua run's reply, effects and statistics; odd ones are left to Lua.
func TestNativeRedisRate(t *testing.T) {
	bodies := redisRateBodies(t)
	h := newNativeHarness(t)
	run := int64(1900000000123456789)
	since := strconv.FormatInt(run/1e9-redisRateEpoch, 10)
	for _, tt := range []struct {
		name   string
		setup  [][]string
		argv   []string
		native bool
	}{
		{"fresh key", nil, []string{"10", "10", "1", "1"}, true},
		{"some allowed", [][]string{{"SET", "k", since + ".5"}}, []string{"10", "10", "1", "3"}, true},
		{"denied", [][]string{{"SET", "k", since + "9"}}, []string{"10", "10", "1", "1"}, true},
		{"cost 0", nil, []string{"5", "5", "60", "0"}, true},
		{"fractional rate", nil, []string{"2", "0.5", "1", "1"}, true},
		{"rate 0", nil, []string{"1", "0", "1", "1"}, false},
		{"non-numeric burst", nil, []string{"x", "10", "1", "1"}, false},
		{"missing cost", nil, []string{"10", "10", "1"}, false},
		{"wrong type", [][]string{{"RPUSH", "k", "a"}}, []string{"10", "10", "1", "1"}, false},
		{"non-numeric state", [][]string{{"SET", "k", "abc"}}, []string{"10", "10", "1", "1"}, false},
		{"expired state", [][]string{{"SET", "k", since + "9", "PX", "1"}}, []string{"10", "10", "1", "1"}, true},
		{"huge period", nil, []string{"1", "1", "999999999999999", "1"}, true},
	} {
		for i, body := range bodies {
			c := nativeCase{setup: tt.setup, setupNs: run - 5e9, runNs: run, keys: []string{"k"},
				call: append([]string{"EVAL", body, "1", "k"}, tt.argv...)}
			if ran := h.check(c); ran != tt.native {
				t.Errorf("%s (script %d): ran natively %v, want %v", tt.name, i, ran, tt.native)
			}
		}
	}
}

// FuzzNativeRedisRate compares redis_rate's scripts run natively and in
// Lua, from random states, arguments and clocks.
func FuzzNativeRedisRate(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\xff\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0", "\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03\x03"} {
		f.Add([]byte(s))
	}
	bodies := redisRateBodies(f)
	h := newNativeHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.t = t
		h.check(redisRateCase(&fuzzBytes{data}, bodies))
	})
}
