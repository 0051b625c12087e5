package integration_test

// Real Go rate-limiting libraries with Redis backends, used unmodified
// through their public APIs: the same requests against redis-server and
// cellserver must give the same decisions and the same remaining counts,
// and reset / retry times that agree to the second.
//
//   - github.com/go-redis/redis_rate/v10: GCRA in a Lua script (EVALSHA,
//     falling back to EVAL), reading the server's TIME.
//   - github.com/ulule/limiter/v3 with its Redis store: a fixed window in
//     two Lua scripts loaded with SCRIPT LOAD and run by EVALSHA, reloaded
//     on NOSCRIPT.
//   - github.com/throttled/throttled/v2 with its go-redis v9 store: GCRA in
//     the client over a pipeline of TIME and GET, SETNX + EXPIRE for a new
//     key and a compare-and-swap script (EVAL) for an existing one.
//
// All three need scripting; they skip until cellserver answers EVAL.

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// secs rounds a duration to whole seconds for the transcripts: the two
// sessions run at the same time but not at the same microsecond, and the
// limits below keep every time far from a half second.
func secs(d time.Duration) string {
	if d < 0 {
		return d.String()
	}
	return fmt.Sprintf("%.0fs", math.Round(d.Seconds()))
}

// TestRedisRate: github.com/go-redis/redis_rate/v10.
func TestRedisRate(t *testing.T) {
	needScripting(t)
	bothServers(t, "redis_rate", func(addr string, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb := newGoRedis(t, addr, 3, nil)
		lim := redis_rate.NewLimiter(rdb)
		record := func(what string, res *redis_rate.Result, err error) {
			if err != nil {
				tr.add("%s: err=%v", what, err)
				return
			}
			tr.add("%s: limit=%v allowed=%d remaining=%d retry_after=%s reset_after=%s",
				what, res.Limit, res.Allowed, res.Remaining, secs(res.RetryAfter), secs(res.ResetAfter))
		}
		perMin := redis_rate.PerMinute(5)
		for i := range 7 {
			res, err := lim.Allow(ctx, "user:1", perMin)
			record(fmt.Sprintf("Allow user:1 #%d", i+1), res, err)
		}
		tr.cmd(rdb.TTL(ctx, "rate:user:1"))
		tr.cmd(rdb.Type(ctx, "rate:user:1"))
		res, err := lim.AllowN(ctx, "user:2", redis_rate.PerMinute(10), 4)
		record("AllowN 4", res, err)
		res, err = lim.AllowN(ctx, "user:2", redis_rate.PerMinute(10), 4)
		record("AllowN 4", res, err)
		res, err = lim.AllowN(ctx, "user:2", redis_rate.PerMinute(10), 4)
		record("AllowN 4", res, err)
		res, err = lim.AllowAtMost(ctx, "user:2", redis_rate.PerMinute(10), 5)
		record("AllowAtMost 5", res, err)
		tr.add("Reset: err=%v", lim.Reset(ctx, "user:1"))
		res, err = lim.Allow(ctx, "user:1", perMin)
		record("Allow after Reset", res, err)

		// A refill: 2 per second, burst 2; 750 ms later one more fits.
		fast := redis_rate.Limit{Rate: 2, Burst: 2, Period: time.Second}
		for i := range 3 {
			res, err := lim.Allow(ctx, "user:3", fast)
			tr.add("fast #%d: err=%v allowed=%d remaining=%d", i+1, err, res.Allowed, res.Remaining)
		}
		time.Sleep(750 * time.Millisecond)
		for i := range 2 {
			res, err := lim.Allow(ctx, "user:3", fast)
			tr.add("fast after 750 ms #%d: err=%v allowed=%d remaining=%d", i+1, err, res.Allowed, res.Remaining)
		}
	})
}

// TestUluleLimiter: github.com/ulule/limiter/v3 with its Redis store.
func TestUluleLimiter(t *testing.T) {
	needScripting(t)
	bothServers(t, "ulule/limiter", func(addr string, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb := newGoRedis(t, addr, 3, nil)
		store, err := ulredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: "limiter"})
		if err != nil {
			tr.add("NewStoreWithOptions: %v", err)
			return
		}
		rate, err := limiter.NewRateFromFormatted("5-M")
		if err != nil {
			tr.add("rate: %v", err)
			return
		}
		lim := limiter.New(store, rate)
		record := func(what string, start time.Time, c limiter.Context, err error) {
			// Reset is the Unix second in which the window ends, from the
			// key's PTTL: the time left from our start is within a second
			// below the minute (a little more for a slow machine).
			left := time.Unix(c.Reset, 0).Sub(start)
			tr.add("%s: err=%v limit=%d remaining=%d reached=%v reset in 59-60 s: %v",
				what, err, c.Limit, c.Remaining, c.Reached, left > 58500*time.Millisecond && left <= 60500*time.Millisecond)
		}
		for i := range 7 {
			start := time.Now()
			c, err := lim.Get(ctx, "203.0.113.9")
			record(fmt.Sprintf("Get #%d", i+1), start, c, err)
		}
		start := time.Now()
		c, err := lim.Peek(ctx, "203.0.113.9")
		record("Peek", start, c, err)
		start = time.Now()
		c, err = lim.Peek(ctx, "198.51.100.1")
		tr.add("Peek unknown: err=%v limit=%d remaining=%d reached=%v", err, c.Limit, c.Remaining, c.Reached)
		start = time.Now()
		c, err = lim.Increment(ctx, "198.51.100.1", 3)
		record("Increment 3", start, c, err)
		tr.cmd(rdb.Get(ctx, "limiter:198.51.100.1"))
		tr.cmd(rdb.TTL(ctx, "limiter:198.51.100.1"))
		c, err = lim.Reset(ctx, "203.0.113.9")
		tr.add("Reset: err=%v limit=%d remaining=%d reached=%v", err, c.Limit, c.Remaining, c.Reached)
		tr.cmd(rdb.Exists(ctx, "limiter:203.0.113.9"))

		// The scripts vanish (a restart, a SCRIPT FLUSH): the store reloads
		// them on NOSCRIPT and carries on.
		tr.cmd(rdb.ScriptFlush(ctx))
		start = time.Now()
		c, err = lim.Get(ctx, "198.51.100.1")
		record("Get after SCRIPT FLUSH", start, c, err)
	})
}

// TestThrottled: github.com/throttled/throttled/v2 with its go-redis store.
func TestThrottled(t *testing.T) {
	needScripting(t)
	bothServers(t, "throttled", func(addr string, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb := newGoRedis(t, addr, 3, nil)
		store, err := goredisstore.NewCtx(rdb, "throttled:")
		if err != nil {
			tr.add("NewCtx: %v", err)
			return
		}
		quota := throttled.RateQuota{MaxRate: throttled.PerMin(6), MaxBurst: 2}
		rl, err := throttled.NewGCRARateLimiterCtx(store, quota)
		if err != nil {
			tr.add("NewGCRARateLimiterCtx: %v", err)
			return
		}
		call := func(key string, quantity int) {
			limited, res, err := rl.RateLimitCtx(ctx, key, quantity)
			tr.add("RateLimitCtx %s %d: err=%v limited=%v limit=%d remaining=%d reset_after=%s retry_after=%s",
				key, quantity, err, limited, res.Limit, res.Remaining, secs(res.ResetAfter), secs(res.RetryAfter))
		}
		for range 5 {
			call("client-a", 1)
		}
		call("client-b", 2)
		call("client-b", 2)
		call("client-b", 1)
		call("client-c", 4) // more than the burst can ever hold
		tr.cmd(rdb.TTL(ctx, "throttled:client-a"))
		tr.cmd(rdb.Type(ctx, "throttled:client-a"))
		tr.cmd(rdb.Exists(ctx, "throttled:client-c"))
	})
}
