package cell

import (
	"math"

	"github.com/cellserver/cellserver/cell/script"
)

// go-redis/redis_rate v10's two scripts (GCRA, after rwz/redis-gcra): the
// limiter's state is one string key holding the theoretical arrival time
// (TAT) in seconds since 2017-01-01, as a Lua number; the clock is TIME.
// allowN takes cost units or none; allowAtMost takes as many as it can.
// Both read ARGV as burst, rate, period (seconds), cost.

func init() {
	registerNative("f52a5b566060d79fd321d695df55bc918339c4aa", "redis_rate allowN", nativeRedisRate(false), 23, 26, 55)
	registerNative("054143318f521948424aa25df61d7f7ba835a9d7", "redis_rate allowAtMost", nativeRedisRate(true), 22, 25, 61)
}

// redisRateEpoch is the scripts' jan_1_2017.
const redisRateEpoch = 1483228800

var (
	cmdTIME = nativeCommand("TIME")
	cmdGET  = nativeCommand("GET")
	cmdSET  = nativeCommand("SET")
	argEX   = []byte("EX")
)

// nativeRedisRate is allowN, or allowAtMost with atMost. Its calls: 0
// TIME, 1 GET, 2 SET.
func nativeRedisRate(atMost bool) nativeImpl {
	return func(n *nativeRun) bool {
		if len(n.keys) < 1 || len(n.argv) < 4 {
			return false
		}
		burst, ok1 := plainNumber(n.argv[0])
		rate, ok2 := plainNumber(n.argv[1])
		period, ok3 := plainNumber(n.argv[2])
		cost, ok4 := plainNumber(n.argv[3])
		if !(ok1 && ok2 && ok3 && ok4) {
			return false
		}
		// Separate roundings, as Lua's one operation at a time (a
		// conversion stops the compiler fusing a multiply and an add).
		interval := float64(period / rate)
		increment := float64(interval * cost)
		burstOffset := float64(interval * burst)
		if !finite(interval) || interval == 0 || !finite(increment) || !finite(burstOffset) {
			return false
		}
		key := n.keys[0]
		stored, present, ok := n.peekNumber(key)
		if !ok {
			return false
		}
		n.cmd(cmdTIME)
		b := n.call(0)
		if b == nil {
			return true
		}
		sec, usec, ok := replyTime(b)
		if !ok {
			return n.internal()
		}
		// (now[1] - jan_1_2017) + (now[2] / 1000000)
		now := float64(float64(sec)-redisRateEpoch) + float64(usec)/1000000
		n.cmd(cmdGET, key)
		if b = n.call(1); b == nil {
			return true
		}
		stored, found, ok := getPeeked(b, stored, present)
		if !ok {
			return n.internal()
		}
		tat := now
		if found {
			tat = stored
		}
		if now > tat { // math.max(tat, now)
			tat = now
		}
		var resetAfter, remaining float64
		if !atMost {
			newTat := tat + increment
			diff := now - (newTat - burstOffset)
			remaining = diff / interval
			if remaining < 0 {
				n.redisRateDenied(float64(diff*-1), tat-now)
				return true
			}
			resetAfter = newTat - now
			if resetAfter > 0 && !n.redisRateSet(key, newTat, resetAfter) {
				return true
			}
		} else {
			diff := now - (tat - burstOffset)
			remaining = diff / interval
			if remaining < 1 {
				n.redisRateDenied(interval-diff, tat-now)
				return true
			}
			if remaining < cost {
				cost, remaining = remaining, 0
			} else {
				remaining -= cost
			}
			newTat := tat + float64(interval*cost)
			resetAfter = newTat - now
			if resetAfter > 0 && !n.redisRateSet(key, newTat, resetAfter) {
				return true
			}
		}
		n.w.Array(4)
		n.w.Int(script.ToInteger(cost))
		n.w.Int(script.ToInteger(remaining))
		n.w.BulkString("-1")
		n.w.Bulk(n.text(resetAfter))
		return true
	}
}

// redisRateDenied is the scripts' reply when no unit is allowed.
func (n *nativeRun) redisRateDenied(retryAfter, resetAfter float64) {
	n.w.Array(4)
	n.w.Int(0)
	n.w.Int(0)
	n.w.Bulk(n.text(retryAfter))
	n.w.Bulk(n.text(resetAfter))
}

// redisRateSet is SET key new_tat EX math.ceil(reset_after). false: it
// failed, and the script's error is the reply.
func (n *nativeRun) redisRateSet(key []byte, newTat, resetAfter float64) bool {
	n.cmd(cmdSET, key)
	n.num(newTat)
	n.arg(argEX)
	n.num(math.Ceil(resetAfter))
	return n.call(2) != nil
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
