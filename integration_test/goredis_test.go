package integration_test

// go-redis v9, the most used Go client, as applications use it: RESP3 by
// default (HELLO 3 on connect, falling back when refused), RESP2 on request,
// pipelines, TxPipelined, WATCH retry loops, Script.Run, and one pool shared
// by many goroutines. Each session runs against both servers and the
// transcripts of what go-redis returned must be equal.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// goRedisTimeout bounds one session, so a hung server fails the test.
const goRedisTimeout = 20 * time.Second

// newGoRedis opens a go-redis client with the protocol asked for (2 or 3),
// closed when t ends.
func newGoRedis(t testing.TB, addr string, proto int, tune func(*redis.Options)) *redis.Client {
	opt := &redis.Options{Addr: addr, Protocol: proto, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	if tune != nil {
		tune(opt)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// cmd records what go-redis returned for c: its arguments, its value with
// its Go type (so a RESP3 double and a bulk string differ), and its error.
func (tr *transcript) cmd(c redis.Cmder) {
	val := reflect.ValueOf(c).MethodByName("Val").Call(nil)[0].Interface()
	line := fmt.Sprintf("%v -> %#v", c.Args(), val)
	if err := c.Err(); err != nil {
		line += " err=" + errText(err)
	}
	tr.add("%s", line)
}

// errText is an error as a caller sees it, with redis.Nil named.
func errText(err error) string {
	if errors.Is(err, redis.Nil) {
		return "redis.Nil"
	}
	return err.Error()
}

// forGoRedisProtocols runs session against both servers with go-redis
// clients of each protocol, as subtests RESP3 (go-redis's default) and RESP2.
func forGoRedisProtocols(t *testing.T, session func(t *testing.T, rdb *redis.Client, tr *transcript)) {
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			bothServers(t, "go-redis", func(addr string, tr *transcript) {
				session(t, newGoRedis(t, addr, proto, nil), tr)
			})
		})
	}
}

// TestGoRedisSession: the commands of a typical service, one by one, and
// the connection set-up go-redis does (HELLO 3 or not, CLIENT SETINFO whose
// error it ignores).
func TestGoRedisSession(t *testing.T) {
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		tr.cmd(rdb.Ping(ctx))
		tr.cmd(rdb.Set(ctx, "greeting", "hello\x00\r\nworld", 0))
		tr.cmd(rdb.Get(ctx, "greeting"))
		tr.cmd(rdb.Get(ctx, "missing"))
		tr.cmd(rdb.SetNX(ctx, "once", 1, 10*time.Second))
		tr.cmd(rdb.SetNX(ctx, "once", 2, 10*time.Second))
		// TTL rounds to the nearest second: read it a few ms later, so a
		// server that truncates answers 9, not 10.
		time.Sleep(5 * time.Millisecond)
		tr.cmd(rdb.TTL(ctx, "once"))
		tr.cmd(rdb.SetArgs(ctx, "args", "v1", redis.SetArgs{Mode: "NX", TTL: time.Minute}))
		tr.cmd(rdb.SetArgs(ctx, "args", "v2", redis.SetArgs{Get: true, KeepTTL: true}))
		tr.cmd(rdb.TTL(ctx, "args"))
		tr.cmd(rdb.GetEx(ctx, "args", 30*time.Second))
		tr.cmd(rdb.TTL(ctx, "args"))
		tr.cmd(rdb.Incr(ctx, "n"))
		tr.cmd(rdb.IncrBy(ctx, "n", 41))
		tr.cmd(rdb.Decr(ctx, "n"))
		tr.cmd(rdb.IncrByFloat(ctx, "f", 0.1))
		tr.cmd(rdb.IncrByFloat(ctx, "f", 0.2))
		tr.cmd(rdb.Incr(ctx, "greeting")) // not an integer
		tr.cmd(rdb.MSet(ctx, "a", 1, "b", "two"))
		tr.cmd(rdb.MGet(ctx, "a", "b", "nope"))
		tr.cmd(rdb.Expire(ctx, "a", 100*time.Second))
		tr.cmd(rdb.ExpireNX(ctx, "a", 5*time.Second))
		tr.cmd(rdb.ExpireGT(ctx, "a", 200*time.Second))
		tr.cmd(rdb.TTL(ctx, "a"))
		tr.cmd(rdb.Persist(ctx, "a"))
		tr.cmd(rdb.TTL(ctx, "a"))
		tr.cmd(rdb.HSet(ctx, "h", "f1", "v1", "f2", 2, "f3", "x"))
		tr.cmd(rdb.HGetAll(ctx, "h"))
		tr.cmd(rdb.HIncrBy(ctx, "h", "f2", 5))
		tr.cmd(rdb.HIncrByFloat(ctx, "h", "f2", 0.5))
		tr.cmd(rdb.HMGet(ctx, "h", "f1", "nope", "f2"))
		tr.cmd(rdb.HDel(ctx, "h", "f3", "nope"))
		tr.cmd(rdb.HLen(ctx, "h"))
		tr.cmd(rdb.HExists(ctx, "h", "f1"))
		tr.cmd(rdb.RPush(ctx, "l", "a", "b", "c", "d"))
		tr.cmd(rdb.LRange(ctx, "l", 0, -1))
		tr.cmd(rdb.LPopCount(ctx, "l", 2))
		tr.cmd(rdb.LIndex(ctx, "l", -1))
		tr.cmd(rdb.LIndex(ctx, "l", 10))
		tr.cmd(rdb.Type(ctx, "l"))
		tr.cmd(rdb.Type(ctx, "h"))
		tr.cmd(rdb.Exists(ctx, "a", "b", "nope"))
		tr.cmd(rdb.Get(ctx, "h")) // WRONGTYPE
		tr.cmd(rdb.HGet(ctx, "greeting", "f"))
		tr.cmd(rdb.Do(ctx, "nosuchcommand", "x"))
		tr.cmd(rdb.Set(ctx, "x", "y", 0))
		tr.cmd(rdb.DBSize(ctx))
		tr.cmd(rdb.Del(ctx, "x", "nope"))
		tr.cmd(rdb.Unlink(ctx, "b"))
		conn := rdb.Conn() // the name belongs to one connection of the pool
		tr.cmd(conn.ClientSetName(ctx, "svc-1"))
		tr.cmd(conn.ClientGetName(ctx))
		conn.Close()
		tr.cmd(rdb.ConfigGet(ctx, "maxclients"))
		tr.cmd(rdb.Echo(ctx, "ok"))
		info := rdb.Info(ctx, "server")
		tr.add("INFO server: err=%v redis_version:7.0.15 %v, redis_mode:standalone %v", info.Err(),
			strings.Contains(info.Val(), "redis_version:7.0.15\r\n"), strings.Contains(info.Val(), "redis_mode:standalone\r\n"))
		var keys []string
		iter := rdb.Scan(ctx, 0, "*", 3).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		slices.Sort(keys)
		tr.add("SCAN iterator: %q err=%v", keys, iter.Err())
		keys = nil
		iter = rdb.Scan(ctx, 0, "[ah]*", 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		slices.Sort(keys)
		tr.add("SCAN MATCH iterator: %q err=%v", keys, iter.Err())
		tr.cmd(rdb.FlushDB(ctx))
		tr.cmd(rdb.DBSize(ctx))
	})
}

// TestGoRedisConnectionSetup: what go-redis sends before the first command
// when a service configures it fully: HELLO 3 with AUTH and SETNAME (or, in
// RESP2, AUTH, CLIENT SETNAME), SELECT of a database, CLIENT SETINFO whose
// error it ignores; and how a wrong or missing password surfaces.
func TestGoRedisConnectionSetup(t *testing.T) {
	s := startServers(t, serverOptions{requirepass: "s3cret"})
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			bothServersOn(t, s, "go-redis set-up", func(addr string, tr *transcript) {
				ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
				defer cancel()
				rdb := newGoRedis(t, addr, proto, func(o *redis.Options) {
					o.Password = "s3cret"
					o.DB = 5
					o.ClientName = "checkout-svc"
				})
				tr.cmd(rdb.Ping(ctx))
				tr.cmd(rdb.ClientGetName(ctx))
				tr.cmd(rdb.Set(ctx, fmt.Sprintf("in-db-5:%d", proto), "x", 0))
				tr.cmd(rdb.DBSize(ctx))
				info := rdb.Info(ctx, "keyspace").Val()
				tr.add("INFO keyspace lists db5: %v", strings.Contains(info, "db5:keys=1,"))

				wrong := newGoRedis(t, addr, proto, func(o *redis.Options) { o.Password = "nope" })
				tr.cmd(wrong.Ping(ctx))
				none := newGoRedis(t, addr, proto, nil)
				tr.cmd(none.Get(ctx, "x"))
				named := newGoRedis(t, addr, proto, func(o *redis.Options) { o.Username = "default"; o.Password = "s3cret" })
				tr.cmd(named.Ping(ctx))
				tr.cmd(rdb.FlushDB(ctx))
			})
		})
	}
}

// TestGoRedisPipelines: Pipelined sends everything before reading; replies
// and per-command errors come back in order. TxPipelined wraps the batch in
// MULTI/EXEC; a command refused while queueing aborts the whole EXEC.
func TestGoRedisPipelines(t *testing.T) {
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 20 {
				p.Set(ctx, fmt.Sprintf("p:%d", i), i, 0)
			}
			p.Incr(ctx, "p:3")
			p.HSet(ctx, "p:3", "f", "v") // WRONGTYPE inside a pipeline
			p.MGet(ctx, "p:0", "p:3", "p:19", "nope")
			p.Get(ctx, "nope")
			return nil
		})
		tr.add("Pipelined: %d commands, err=%v", len(cmds), err)
		for _, c := range cmds {
			tr.cmd(c)
		}

		// W3, the fixed-window counter: INCR then EXPIRE NX in one transaction.
		for range 3 {
			var incr *redis.IntCmd
			var expire *redis.BoolCmd
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				incr = p.Incr(ctx, "rl:user7:1700000000")
				expire = p.ExpireNX(ctx, "rl:user7:1700000000", 60*time.Second)
				return nil
			})
			tr.add("W3 TxPipelined err=%v", err)
			tr.cmd(incr)
			tr.cmd(expire)
			tr.add("W3 allowed=%v", incr.Val() <= 2)
		}
		tr.cmd(rdb.TTL(ctx, "rl:user7:1700000000"))

		// An error at run time is one element of EXEC; the others are done.
		cmds, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "tx:s", "text", 0)
			p.Incr(ctx, "tx:s")
			p.Incr(ctx, "tx:n")
			return nil
		})
		tr.add("TxPipelined with a failing INCR: err=%v", err)
		for _, c := range cmds {
			tr.cmd(c)
		}
		// A command refused while queued (wrong arity): EXECABORT, nothing done.
		cmds, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "tx:never", 1, 0)
			p.Do(ctx, "INCR")
			return nil
		})
		tr.add("TxPipelined with a wrong arity: err=%v", err)
		for _, c := range cmds {
			tr.cmd(c)
		}
		tr.cmd(rdb.Exists(ctx, "tx:never"))

		// W6: the ring of 121 slots, read back with a pipeline of 60 LINDEX.
		zeros := make([]any, 121)
		for i := range zeros {
			zeros[i] = "0"
		}
		tr.cmd(rdb.RPush(ctx, "SLIDE_WINDOW", zeros...))
		tr.cmd(rdb.LLen(ctx, "SLIDE_WINDOW"))
		tr.cmd(rdb.Get(ctx, "SLIDE_WINDOW:last"))
		for i, slot := range []int64{5, 5, 6, 9, 9, 9} {
			tr.cmd(rdb.LSet(ctx, "SLIDE_WINDOW", slot, strconv.Itoa(i+1)))
			tr.cmd(rdb.Set(ctx, "SLIDE_WINDOW:last", slot, 0))
		}
		cmds, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 60 {
				p.LIndex(ctx, "SLIDE_WINDOW", int64(i))
			}
			return nil
		})
		sum := 0
		for _, c := range cmds {
			n, _ := strconv.Atoi(c.(*redis.StringCmd).Val())
			sum += n
		}
		tr.add("W6 window sum over 60 LINDEX: %d (%d replies, err=%v)", sum, len(cmds), err)
	})
}

// TestGoRedisWatch: the optimistic transaction loop of go-redis's own
// documentation. A write by another client between WATCH and EXEC makes EXEC
// fail with redis.TxFailedErr; the loop retries and the second try commits.
// W7 (a leaky bucket in a hash) runs the same way, read and written back by
// the client under WATCH.
func TestGoRedisWatch(t *testing.T) {
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		other := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr, Protocol: rdb.Options().Protocol})
		defer other.Close()
		tr.cmd(rdb.Set(ctx, "balance", 100, 0))
		attempts := 0
		for {
			attempts++
			err := rdb.Watch(ctx, func(tx *redis.Tx) error {
				n, err := tx.Get(ctx, "balance").Int()
				if err != nil {
					return err
				}
				if attempts == 1 { // someone else spends meanwhile
					tr.cmd(other.DecrBy(ctx, "balance", 30))
				}
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Set(ctx, "balance", n-10, 0)
					return nil
				})
				return err
			}, "balance")
			tr.add("attempt %d: err=%v", attempts, err)
			if !errors.Is(err, redis.TxFailedErr) || attempts == 5 {
				break
			}
		}
		tr.cmd(rdb.Get(ctx, "balance"))

		// W7: the funnel, read with HGETALL and written back in a transaction.
		funnel := func(now int64, want int) {
			err := rdb.Watch(ctx, func(tx *redis.Tx) error {
				state, err := tx.HGetAll(ctx, "funnel:u1").Result()
				if err != nil {
					return err
				}
				left, since := int64(5), now
				if len(state) > 0 {
					left, _ = strconv.ParseInt(state["left_quota"], 10, 64)
					since, _ = strconv.ParseInt(state["leaking_ts"], 10, 64)
				}
				if leaked := (now - since) / 1000; leaked > 0 { // 1 per second
					left, since = min(5, left+leaked), now
				}
				allowed := left >= int64(want)
				if allowed {
					left -= int64(want)
				}
				tr.add("W7 funnel at %d want %d: allowed=%v left=%d", now, want, allowed, left)
				_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.HSet(ctx, "funnel:u1", "capacity", 5, "rate", 1, "left_quota", left, "leaking_ts", since)
					p.Expire(ctx, "funnel:u1", 60*time.Second)
					return nil
				})
				return err
			}, "funnel:u1")
			tr.add("W7 err=%v", err)
		}
		base := int64(1_700_000_000_000)
		for i, want := range []int{2, 2, 2, 1, 3} {
			funnel(base+int64(i)*400, want)
		}
		funnel(base+5000, 4)
		tr.cmd(rdb.HGetAll(ctx, "funnel:u1"))
		tr.cmd(rdb.TTL(ctx, "funnel:u1"))
	})
}

// TestGoRedisPoolConcurrency: one client (one pool of 10 connections)
// shared by 50 goroutines, with WATCH retry loops racing on one counter. The
// totals must be exact on both servers and no pool call may time out.
func TestGoRedisPoolConcurrency(t *testing.T) {
	const workers, rounds = 50, 20
	bothServers(t, "go-redis pool", func(addr string, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb := newGoRedis(t, addr, 3, func(o *redis.Options) { o.PoolSize = 10 })
		var failures atomic.Int64
		var firstErr sync.Once
		fail := func(err error) {
			failures.Add(1)
			firstErr.Do(func() { tr.add("first failure: %v", err) })
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				own := fmt.Sprintf("worker:%d", w)
				for i := range rounds {
					if err := rdb.Incr(ctx, "hits").Err(); err != nil {
						fail(err)
					}
					if err := rdb.HIncrBy(ctx, "per-worker", own, 1).Err(); err != nil {
						fail(err)
					}
					want := fmt.Sprintf("%s:%d", own, i)
					if err := rdb.Set(ctx, own, want, time.Minute).Err(); err != nil {
						fail(err)
					}
					if got, err := rdb.Get(ctx, own).Result(); err != nil || got != want {
						fail(fmt.Errorf("GET %s = %q, %v; want %q", own, got, err, want))
					}
					// An optimistic increment that retries until it commits.
					for try := 0; ; try++ {
						err := rdb.Watch(ctx, func(tx *redis.Tx) error {
							n, err := tx.Get(ctx, "watched").Int()
							if err != nil && !errors.Is(err, redis.Nil) {
								return err
							}
							_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
								p.Set(ctx, "watched", n+1, 0)
								return nil
							})
							return err
						}, "watched")
						if err == nil {
							break
						}
						if !errors.Is(err, redis.TxFailedErr) || try == 1000 {
							fail(err)
							break
						}
					}
				}
			}()
		}
		wg.Wait()
		tr.add("failures: %d", failures.Load())
		tr.cmd(rdb.Get(ctx, "hits"))
		tr.cmd(rdb.Get(ctx, "watched"))
		tr.cmd(rdb.HLen(ctx, "per-worker"))
		vals, _ := rdb.HVals(ctx, "per-worker").Result()
		tr.add("per-worker counts all %d: %v", rounds, !slices.ContainsFunc(vals, func(v string) bool { return v != strconv.Itoa(rounds) }))
		st := rdb.PoolStats()
		tr.add("pool: timeouts=%d, at most 10 connections: %v", st.Timeouts, st.TotalConns <= 10)
	})
}

// TestGoRedisSlidingWindowTx is W1 as go-redis users write it: ZADD,
// ZREMRANGEBYSCORE, ZCARD and EXPIRE in one TxPipelined. Timestamps are
// made up (the server only stores them), so both servers see the same
// requests: twelve in 1.1 s for a limit of 10 per second, two of them in
// the same millisecond, which collapse into one entry.
func TestGoRedisSlidingWindowTx(t *testing.T) {
	needSortedSets(t)
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		const limit, period = 10, 1000
		base := int64(1_700_000_000_000)
		stamps := []int64{0, 50, 100, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 1150, 1160, 2500}
		for _, off := range stamps {
			now := base + off
			var card *redis.IntCmd
			cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZAdd(ctx, "limit:u:a", redis.Z{Score: float64(now), Member: now})
				p.ZRemRangeByScore(ctx, "limit:u:a", "0", strconv.FormatInt(now-period, 10))
				card = p.ZCard(ctx, "limit:u:a")
				p.Expire(ctx, "limit:u:a", 2*time.Second)
				return nil
			})
			tr.add("W1 at +%d: err=%v allowed=%v", off, err, card.Val() <= limit)
			for _, c := range cmds {
				tr.cmd(c)
			}
		}
		tr.cmd(rdb.ZRangeWithScores(ctx, "limit:u:a", 0, -1))
		tr.cmd(rdb.TTL(ctx, "limit:u:a"))
	})
}

// TestGoRedisThrottle is W4 through go-redis: CL.THROTTLE by Do, in a
// pipeline and in a transaction. redis-server has no redis-cell here, so
// cellserver's replies are checked against the vectors captured from the
// real module (spec/cl-throttle.md), and redis-server must refuse the
// command with an error that go-redis surfaces.
func TestGoRedisThrottle(t *testing.T) {
	s := sharedServers(t)
	newPair(t)
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
			defer cancel()
			ref := newGoRedis(t, s.redis.addr, proto, nil)
			if err := ref.Do(ctx, "CL.THROTTLE", "k", 1, 1, 1).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR unknown command") {
				t.Errorf("redis-server without the module: CL.THROTTLE gave err=%v", err)
			}
			if selfTest() {
				t.Skip("redis-server has no CL.THROTTLE")
			}
			rdb := newGoRedis(t, s.cell.addr, proto, nil)
			rdb.FlushAll(ctx)
			throttle := func(args ...any) string {
				v, err := rdb.Do(ctx, append([]any{"CL.THROTTLE"}, args...)...).Int64Slice()
				if err != nil {
					return "err=" + err.Error()
				}
				return fmt.Sprint(v)
			}
			check := func(what, got, want string) {
				t.Helper()
				if got != want {
					t.Errorf("%s: got %s, want %s", what, got, want)
				}
			}
			check("user123 15 30 60, first", throttle("user123", 15, 30, 60), "[0 16 15 -1 2]")
			check("user123 15 30 60, second", throttle("user123", 15, 30, 60), "[0 16 14 -1 4]")
			check("TTL", fmt.Sprint(rdb.TTL(ctx, "user123").Val()), "4s")
			check("TYPE", rdb.Type(ctx, "user123").Val(), "string")
			check("GET is a TAT in ns", strconv.Itoa(len(rdb.Get(ctx, "user123").Val())), "19")
			check("z0, first", throttle("z0", 0, 1, 1), "[0 1 0 -1 1]")
			check("z0, second", throttle("z0", 0, 1, 1), "[1 1 0 1 1]")
			check("big", throttle("big", 4, 1, 1, 6), "[1 5 5 -1 0]")
			check("big leaves no key", fmt.Sprint(rdb.Exists(ctx, "big").Val()), "0")
			check("bad number", throttle("bad", "x", 1, 1), "err=Cell error: Store error: Couldn't parse as integer: x")

			// t3 2 3 1 four times, pipelined and in a transaction.
			want := []string{"[0 3 2 -1 1]", "[0 3 1 -1 1]", "[0 3 0 -1 1]", "[1 3 0 1 1]"}
			for _, tx := range []bool{false, true} {
				key := fmt.Sprintf("t3:%v", tx)
				run := rdb.Pipelined
				if tx {
					run = rdb.TxPipelined
				}
				cmds, err := run(ctx, func(p redis.Pipeliner) error {
					for range 4 {
						p.Do(ctx, "CL.THROTTLE", key, 2, 3, 1)
					}
					return nil
				})
				if err != nil {
					t.Errorf("tx=%v: %v", tx, err)
					continue
				}
				for i, c := range cmds {
					v, err := c.(*redis.Cmd).Int64Slice()
					check(fmt.Sprintf("%s call %d", key, i+1), fmt.Sprint(v, err), want[i]+" <nil>")
				}
			}
		})
	}
}

// TestGoRedisThrottleConcurrency: 50 goroutines on one pool take from one
// limiter with a burst of 100 and no refill within the test: exactly 100
// calls are allowed, as redis-cell's single-threaded module guarantees.
func TestGoRedisThrottleConcurrency(t *testing.T) {
	s := sharedServers(t)
	if selfTest() {
		t.Skip("redis-server has no CL.THROTTLE")
	}
	newPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
	defer cancel()
	rdb := newGoRedis(t, s.cell.addr, 3, func(o *redis.Options) { o.PoolSize = 16 })
	var allowed, limited, failed atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				v, err := rdb.Do(ctx, "CL.THROTTLE", "shared", 99, 1, 3600).Int64Slice()
				switch {
				case err != nil || len(v) != 5:
					failed.Add(1)
				case v[0] == 0:
					allowed.Add(1)
				default:
					limited.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if allowed.Load() != 100 || limited.Load() != 200 || failed.Load() != 0 {
		t.Errorf("300 calls on a burst of 100: allowed %d, limited %d, failed %d", allowed.Load(), limited.Load(), failed.Load())
	}
}

// TestGoRedisScripts: Script.Run sends EVALSHA and falls back to EVAL on
// NOSCRIPT (a hook records what went on the wire, which must be the same
// for both servers); script replies and errors; then the workload scripts
// on strings, lists and hashes run by Script.Run, also inside a pipeline:
// W4 (GCRA in Lua), W6 and W7.
func TestGoRedisScripts(t *testing.T) {
	needScripting(t)
	w4 := redis.NewScript(testScript(t, "w4_gcra.lua"))
	w6 := redis.NewScript(testScript(t, "w6_ring.lua"))
	w7 := redis.NewScript(testScript(t, "w7_funnel.lua"))
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb.AddHook(wireLog{tr})
		base := int64(1_700_000_000_000)

		// W7, the funnel in a script. EVALSHA misses, EVAL loads; then
		// EVALSHA hits; SCRIPT FLUSH forgets.
		for i, want := range []int{2, 2, 2, 1, 1} {
			if i == 3 {
				tr.cmd(rdb.ScriptFlush(ctx))
			}
			tr.cmd(w7.Run(ctx, rdb, []string{"funnel:s"}, 5, 1, base+int64(i)*700, want, 60))
		}
		tr.cmd(rdb.HGetAll(ctx, "funnel:s"))
		tr.cmd(rdb.TTL(ctx, "funnel:s"))
		tr.cmd(w7.Exists(ctx, rdb))
		tr.cmd(w7.Load(ctx, rdb))
		tr.cmd(rdb.EvalSha(ctx, "ffffffffffffffffffffffffffffffffffffffff", nil))
		tr.cmd(rdb.EvalRO(ctx, "return redis.call('GET', KEYS[1])", []string{"nope"}))
		tr.cmd(rdb.EvalRO(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{"nope"}))
		tr.cmd(rdb.Eval(ctx, "return redis.call('INCR', KEYS[1])", []string{"funnel:s"})) // WRONGTYPE from a script
		tr.cmd(rdb.Eval(ctx, "return {1, 'two', 3.5, false, {4}}", nil))
		tr.cmd(rdb.Eval(ctx, "return redis.error_reply('custom failure')", nil))
		tr.cmd(rdb.Eval(ctx, "return redis.status_reply('FINE')", nil))
		tr.cmd(rdb.Eval(ctx, "return redis.call('nosuch')", nil))
		tr.cmd(rdb.Eval(ctx, "return", nil))
		// A script that does not compile: the client sees an error with
		// Redis's prefix. The parser's own words are the scripting tests'
		// business (cell/script), not a client's.
		compileErr := rdb.Eval(ctx, "syntax error here", nil).Err()
		prefix, _, _ := strings.Cut(fmt.Sprint(compileErr), "user_script:1:")
		tr.add("EVAL of a syntax error: %s", prefix)

		// W4 in Lua: a fresh burst within one second gives stable replies.
		for range 5 {
			tr.cmd(w4.Run(ctx, rdb, []string{"gcra:u"}, 3, 30, 60, 1))
		}
		tr.cmd(rdb.TTL(ctx, "gcra:u"))

		// W6: the ring as a script, in a pipeline of script calls.
		zeros := make([]any, 121)
		for i := range zeros {
			zeros[i] = "0"
		}
		tr.cmd(rdb.RPush(ctx, "ring", zeros...))
		// Script.Run cannot fall back inside a pipeline: the script must be
		// loaded first, or the pipeline gets NOSCRIPT.
		tr.cmd(w6.EvalSha(ctx, rdb, []string{"ring", "ring:last"}, 0, 0, 121))
		tr.cmd(w6.Load(ctx, rdb))
		cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			last := 0
			for _, cur := range []int{0, 0, 1, 4, 4, 120, 2} {
				w6.Run(ctx, p, []string{"ring", "ring:last"}, last, cur, 121)
				last = cur
			}
			return nil
		})
		tr.add("W6 pipeline err=%v", err)
		for _, c := range cmds {
			tr.cmd(c)
		}
		tr.cmd(rdb.LRange(ctx, "ring", 0, 5))
		tr.cmd(rdb.Get(ctx, "ring:last"))
	})
}

// TestGoRedisScriptsOnSortedSets: W2 (the sliding window in one script)
// and W5 (the token bucket with a permits log of binary members built by
// struct.pack) run by Script.Run.
func TestGoRedisScriptsOnSortedSets(t *testing.T) {
	needScripting(t)
	needSortedSets(t)
	w2 := redis.NewScript(testScript(t, "w2_window.lua"))
	w5 := redis.NewScript(testScript(t, "w5_acquire.lua"))
	forGoRedisProtocols(t, func(t *testing.T, rdb *redis.Client, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), goRedisTimeout)
		defer cancel()
		rdb.AddHook(wireLog{tr})
		base := int64(1_700_000_000_000)
		for i := range 15 {
			now := base + int64(i)*80
			tr.cmd(w2.Run(ctx, rdb, []string{"limit:u:w2"}, now, now-1000, 2))
		}
		tr.cmd(rdb.ZCard(ctx, "limit:u:w2"))
		tr.cmd(rdb.TTL(ctx, "limit:u:w2"))

		// W5: trySetRate with HSETNX, then tryAcquire; binary ids.
		tr.cmd(rdb.HSetNX(ctx, "L", "rate", 3))
		tr.cmd(rdb.HSetNX(ctx, "L", "interval", 1000))
		tr.cmd(rdb.HSetNX(ctx, "L", "type", 0))
		tr.cmd(rdb.Expire(ctx, "L", time.Hour))
		keys := []string{"L", "{L}:value", "{L}:permits"}
		for i, off := range []int64{0, 10, 20, 30, 500, 1005, 1015, 1020, 1030} {
			id := fmt.Sprintf("\x00id\xff%04d", i)
			tr.cmd(w5.Run(ctx, rdb, keys, 1, base+off, id))
		}
		tr.cmd(w5.Run(ctx, rdb, keys, 4, base+2000, "toomany"))
		tr.cmd(w5.Run(ctx, rdb, []string{"uninit", "{uninit}:value", "{uninit}:permits"}, 1, base, "x"))
		tr.cmd(rdb.ZRangeWithScores(ctx, "{L}:permits", 0, -1))
		tr.cmd(rdb.Get(ctx, "{L}:value"))
		tr.cmd(rdb.TTL(ctx, "{L}:permits"))
	})
}

// wireLog is a go-redis hook that records the name of each command as it
// goes to the server, so the EVALSHA / EVAL fallback is compared too.
type wireLog struct{ tr *transcript }

func (w wireLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w wireLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		w.tr.add("  wire: %s", c.Name())
		return next(ctx, c)
	}
}

func (w wireLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		names := make([]string, len(cmds))
		for i, c := range cmds {
			names[i] = c.Name()
		}
		w.tr.add("  wire pipeline: %s", strings.Join(names, " "))
		return next(ctx, cmds)
	}
}
