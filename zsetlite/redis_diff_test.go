//go:build redisdiff

// Differential tests against a real redis-server 7.0 (run with
// `go test -tags redisdiff ./zsetlite`; they skip without redis-server).
// Random ZADD (NX/XX/GT/INCR), ZREM, ZREMRANGEBYSCORE/RANK, ZPOPMIN,
// ZRANGEBYSCORE/ZREVRANGEBYSCORE with LIMIT, ZCOUNT, ZRANK/ZREVRANK and, on
// equal scores, ZRANGEBYLEX/ZREVRANGEBYLEX/ZLEXCOUNT/ZREMRANGEBYLEX go to
// both; replies, the full contents with Redis's score text (so -0 is
// checked), and OBJECT ENCODING must agree after every step. The package
// itself stays pure: only this tagged test imports a client.
package zsetlite_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/zsetlite"
	"github.com/redis/go-redis/v9"
)

func fmtScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func TestDiffRedis(t *testing.T) {
	c := startRedis(t)
	ctx := context.Background()
	cfg := zsetlite.Config{MaxListpackEntries: 8, MaxListpackValue: 8}
	c.ConfigSet(ctx, "zset-max-listpack-entries", "8")
	c.ConfigSet(ctx, "zset-max-listpack-value", "8")
	members := []string{"0", "1", "2", "3", "5", "7", "10", "-1", "-0", "01", "a", "b", "A", "", "abcdefgh", "abcdefghi", "x\x00y", "1700000000000", "99"}
	scores := []float64{0, math.Copysign(0, -1), 1, 2, 3, 5, 7, 10, -1, 1.5, math.Inf(1), math.Inf(-1), 99, 1700000000000}
	mismatches := 0
	for seed := 0; seed < 60; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		c.Del(ctx, "z")
		s := zsetlite.New(cfg)
		for step := 0; step < 300; step++ {
			var desc, got, want string
			switch r.IntN(10) {
			case 7, 8:
				a, b := scores[r.IntN(len(scores))], scores[r.IntN(len(scores))]
				ex := r.IntN(2) == 0
				min := fmtScore(a)
				if ex {
					min = "(" + min
				}
				off, cnt := r.IntN(4)-1, r.IntN(5)-2
				rev := r.IntN(2) == 0
				cmdName := "ZRANGEBYSCORE"
				lo, hi := min, fmtScore(b)
				if rev {
					cmdName, lo, hi = "ZREVRANGEBYSCORE", hi, lo
				}
				desc = fmt.Sprint(cmdName, " ", lo, " ", hi, " LIMIT ", off, cnt)
				raw, _ := c.Do(ctx, cmdName, "z", lo, hi, "WITHSCORES", "LIMIT", off, cnt).StringSlice()
				want = strings.Join(raw, "|")
				var g []string
				// With REV the command's first bound is the max.
				sr := zsetlite.ScoreRange{Min: a, Max: b, MinEx: ex}
				s.RangeByScore(sr, rev, off, cnt, func(m []byte, sc float64) bool { g = append(g, string(m), fmtScore(sc)); return true })
				got = strings.Join(g, "|")
				cw := c.ZCount(ctx, "z", min, fmtScore(b)).Val()
				if int64(s.CountByScore(sr)) != cw {
					t.Errorf("ZCOUNT %s %s: %d vs %d", min, fmtScore(b), s.CountByScore(sr), cw)
				}
			case 9:
				m := members[r.IntN(len(members))]
				desc = "ZRANK/ZREVRANK " + m
				w1, e1 := c.ZRank(ctx, "z", m).Result()
				w2, _ := c.ZRevRank(ctx, "z", m).Result()
				want = fmt.Sprint(w1, w2, e1 == nil)
				g1, ok := s.Rank([]byte(m), false)
				g2, _ := s.Rank([]byte(m), true)
				got = fmt.Sprint(g1, g2, ok)
				if !ok {
					got = fmt.Sprint(0, 0, false)
				}
			case 0, 1, 2:
				m := members[r.IntN(len(members))]
				sc := scores[r.IntN(len(scores))]
				if r.IntN(2) == 0 {
					if v, err := strconv.Atoi(m); err == nil && m == strconv.Itoa(v) {
						sc = float64(v)
					}
				}
				var f zsetlite.AddFlags
				args := []any{"ZADD", "z"}
				switch r.IntN(6) {
				case 0:
					f, args = zsetlite.AddNX, append(args, "NX")
				case 1:
					f, args = zsetlite.AddXX, append(args, "XX")
				case 2:
					f, args = zsetlite.AddGT, append(args, "GT")
				case 3:
					f, args = zsetlite.AddIncr, append(args, "INCR")
				}
				args = append(args, fmtScore(sc), m)
				desc = fmt.Sprint(args)
				res, err := c.Do(ctx, args...).Result()
				want = fmt.Sprintf("%v %v", res, err)
				ar, ns := s.Add([]byte(m), sc, f)
				if f == zsetlite.AddIncr {
					switch ar {
					case zsetlite.Skipped:
						got = "<nil> redis: nil"
					case zsetlite.NotANumber:
						got = "<nil> ERR resulting score is not a number (NaN)"
					default:
						got = fmtScore(ns) + " <nil>"
					}
				} else {
					n := 0
					if ar == zsetlite.Added {
						n = 1
					}
					got = fmt.Sprintf("%d <nil>", n)
				}
			case 3:
				m := members[r.IntN(len(members))]
				desc = "ZREM " + m
				want = fmt.Sprint(c.ZRem(ctx, "z", m).Val())
				got = fmt.Sprint(btoi(s.Delete([]byte(m))))
			case 4:
				a, b := scores[r.IntN(len(scores))], scores[r.IntN(len(scores))]
				ex := r.IntN(2) == 0
				min := fmtScore(a)
				if ex {
					min = "(" + min
				}
				desc = "ZREMRANGEBYSCORE " + min + " " + fmtScore(b)
				want = fmt.Sprint(c.ZRemRangeByScore(ctx, "z", min, fmtScore(b)).Val())
				got = fmt.Sprint(s.DeleteRangeByScore(zsetlite.ScoreRange{Min: a, Max: b, MinEx: ex}))
			case 5:
				a, b := r.IntN(12)-6, r.IntN(12)-6
				desc = fmt.Sprint("ZREMRANGEBYRANK ", a, b)
				want = fmt.Sprint(c.ZRemRangeByRank(ctx, "z", int64(a), int64(b)).Val())
				got = fmt.Sprint(s.DeleteRangeByRank(a, b))
			case 6:
				n := r.IntN(3)
				desc = fmt.Sprint("ZPOPMIN ", n)
				res := c.ZPopMin(ctx, "z", int64(n)).Val()
				var w []string
				for _, z := range res {
					w = append(w, fmt.Sprint(z.Member, ":", fmtScore(z.Score)))
				}
				want = strings.Join(w, " ")
				var g []string
				s.PopMin(n, func(m []byte, sc float64) bool { g = append(g, string(m)+":"+fmtScore(sc)); return true })
				got = strings.Join(g, " ")
			}
			if got != want {
				t.Errorf("seed %d step %d %q: got %q want %q", seed, step, desc, got, want)
				mismatches++
			}
			// Whole state: contents with raw score text, and encoding.
			raw, _ := c.Do(ctx, "ZRANGE", "z", 0, -1, "WITHSCORES").StringSlice()
			var g []string
			s.Range(0, -1, false, func(m []byte, sc float64) bool { g = append(g, string(m), fmtScore(sc)); return true })
			if strings.Join(raw, "|") != strings.Join(g, "|") {
				t.Errorf("seed %d step %d after %q: redis %q ours %q", seed, step, desc, raw, g)
				mismatches++
			}
			enc, _ := c.ObjectEncoding(ctx, "z").Result()
			if s.Len() == 0 {
				s = zsetlite.New(cfg) // the key is gone
			} else if enc != s.Encoding() {
				t.Errorf("seed %d step %d after %q: encoding redis %s ours %s", seed, step, desc, enc, s.Encoding())
				mismatches++
			}
			if mismatches > 10 {
				t.FailNow()
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestDiffRedisLex(t *testing.T) {
	c := startRedis(t)
	ctx := context.Background()
	c.ConfigSet(ctx, "zset-max-listpack-entries", "8")
	cfg := zsetlite.Config{MaxListpackEntries: 8, MaxListpackValue: 64}
	members := []string{"", "a", "b", "A", "ab", "abc", "b\x00", "c", "0", "1", "10", "2", "z", "\xff", "zz"}
	bound := func(r *rand.Rand) (string, []byte, bool, int8) {
		switch r.IntN(6) {
		case 0:
			return "-", nil, true, -1
		case 1:
			return "+", nil, true, 1
		}
		m := members[r.IntN(len(members))]
		if r.IntN(2) == 0 {
			return "(" + m, []byte(m), true, 0
		}
		return "[" + m, []byte(m), false, 0
	}
	for seed := 0; seed < 40; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		c.Del(ctx, "z")
		s := zsetlite.New(cfg)
		for step := 0; step < 200; step++ {
			if r.IntN(2) == 0 {
				m := members[r.IntN(len(members))]
				c.ZAdd(ctx, "z", redis.Z{Score: 0, Member: m})
				s.Put([]byte(m), 0)
				continue
			}
			var lr zsetlite.LexRange
			var minS, maxS string
			minS, lr.Min, lr.MinEx, lr.MinInf = bound(r)
			maxS, lr.Max, lr.MaxEx, lr.MaxInf = bound(r)
			off, cnt := r.IntN(3), r.IntN(5)-2
			rev := r.IntN(2) == 0
			var want []string
			if rev {
				want, _ = c.Do(ctx, "ZREVRANGEBYLEX", "z", maxS, minS, "LIMIT", off, cnt).StringSlice()
			} else {
				want, _ = c.Do(ctx, "ZRANGEBYLEX", "z", minS, maxS, "LIMIT", off, cnt).StringSlice()
			}
			var got []string
			s.RangeByLex(lr, rev, off, cnt, func(m []byte, _ float64) bool { got = append(got, string(m)); return true })
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("seed %d step %d %s %s rev=%v limit %d %d: got %q want %q", seed, step, minS, maxS, rev, off, cnt, got, want)
			}
			if wc := c.ZLexCount(ctx, "z", minS, maxS).Val(); int64(s.CountByLex(lr)) != wc {
				t.Fatalf("ZLEXCOUNT %s %s: got %d want %d", minS, maxS, s.CountByLex(lr), wc)
			}
			if r.IntN(4) == 0 {
				wd := c.ZRemRangeByLex(ctx, "z", minS, maxS).Val()
				if gd := s.DeleteRangeByLex(lr); int64(gd) != wd {
					t.Fatalf("ZREMRANGEBYLEX %s %s: got %d want %d", minS, maxS, gd, wd)
				}
				if s.Len() == 0 {
					s = zsetlite.New(cfg)
				}
			}
			enc, _ := c.ObjectEncoding(ctx, "z").Result()
			if s.Len() > 0 && enc != s.Encoding() {
				t.Fatalf("encoding %s vs %s", s.Encoding(), enc)
			}
		}
	}
}

// startRedis runs a throwaway redis-server on a free port.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Protocol: 2})
	t.Cleanup(func() { c.Close() })
	for i := 0; i < 100; i++ {
		if c.Ping(context.Background()).Err() == nil {
			return c
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return nil
}
