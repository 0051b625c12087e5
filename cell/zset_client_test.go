package cell

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisZset runs W1 as go-redis users write it (TxPipelined: MULTI,
// ZADD, ZREMRANGEBYSCORE, ZCARD, EXPIRE, EXEC in one write) and the other
// sorted-set calls through go-redis's typed API, in RESP3 (its default,
// where WITHSCORES pairs and pops come back nested and scores as doubles)
// and in RESP2.
func TestGoRedisZset(t *testing.T) {
	srv := startServer(t, nil)
	ctx := context.Background()
	for _, proto := range []int{3, 2} {
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), Protocol: proto})
		rdb.FlushAll(ctx)
		const limit, window = 3, 1000
		now := int64(1700000000000)
		var allowed []bool
		for i := range 6 {
			now += 100
			key := "limit:u:a"
			member := strconv.FormatInt(now, 10)
			if i%2 == 1 {
				member = "uuid-" + strconv.Itoa(i)
			}
			var card *redis.IntCmd
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZAdd(ctx, key, redis.Z{Score: float64(now), Member: member})
				p.ZRemRangeByScore(ctx, key, "0", strconv.FormatInt(now-window, 10))
				card = p.ZCard(ctx, key)
				p.Expire(ctx, key, 2e9)
				return nil
			})
			if err != nil {
				t.Fatalf("RESP%d W1: %v", proto, err)
			}
			allowed = append(allowed, card.Val() <= limit)
		}
		if want := []bool{true, true, true, false, false, false}; !slices.Equal(allowed, want) {
			t.Errorf("RESP%d W1 decisions %v, want %v", proto, allowed, want)
		}

		rdb.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: math.Inf(-1), Member: "b"}, redis.Z{Score: 2, Member: "c"})
		if zs, err := rdb.ZRangeWithScores(ctx, "z", 0, -1).Result(); err != nil || len(zs) != 3 ||
			zs[0].Member != "b" || !math.IsInf(zs[0].Score, -1) || zs[1].Score != 1.5 {
			t.Errorf("RESP%d ZRANGE WITHSCORES: %v %v", proto, err, zs)
		}
		if s, err := rdb.ZScore(ctx, "z", "a").Result(); err != nil || s != 1.5 {
			t.Errorf("RESP%d ZSCORE: %v %v", proto, err, s)
		}
		if _, err := rdb.ZScore(ctx, "z", "nosuch").Result(); err != redis.Nil {
			t.Errorf("RESP%d ZSCORE of a missing member: %v", proto, err)
		}
		if ss, err := rdb.ZMScore(ctx, "z", "c", "nosuch").Result(); err != nil || len(ss) != 2 || ss[0] != 2 || ss[1] != 0 {
			t.Errorf("RESP%d ZMSCORE: %v %v", proto, err, ss)
		}
		if n, err := rdb.ZAddArgs(ctx, "z", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{{Score: 1, Member: "a"}, {Score: 3, Member: "c"}}}).Result(); err != nil || n != 1 {
			t.Errorf("RESP%d ZADD GT CH: %v %d", proto, err, n)
		}
		if s, err := rdb.ZIncrBy(ctx, "z", 0.25, "a").Result(); err != nil || s != 1.75 {
			t.Errorf("RESP%d ZINCRBY: %v %v", proto, err, s)
		}
		if zs, err := rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: "z", Start: "(1", Stop: "+inf", ByScore: true, Rev: true, Count: 1}).Result(); err != nil || len(zs) != 1 || zs[0].Member != "c" {
			t.Errorf("RESP%d ZRANGE BYSCORE REV LIMIT: %v %v", proto, err, zs)
		}
		if zs, err := rdb.ZRandMemberWithScores(ctx, "z", 10).Result(); err != nil || len(zs) != 3 {
			t.Errorf("RESP%d ZRANDMEMBER WITHSCORES: %v %v", proto, err, zs)
		}
		if zs, err := rdb.ZPopMin(ctx, "z").Result(); err != nil || len(zs) != 1 || zs[0].Member != "b" {
			t.Errorf("RESP%d ZPOPMIN: %v %v", proto, err, zs)
		}
		if zs, err := rdb.ZPopMax(ctx, "z", 5).Result(); err != nil || len(zs) != 2 || zs[0].Member != "c" || zs[0].Score != 3 {
			t.Errorf("RESP%d ZPOPMAX 5: %v %v", proto, err, zs)
		}
		if n, err := rdb.Exists(ctx, "z").Result(); err != nil || n != 0 {
			t.Errorf("RESP%d the emptied set still exists: %v %d", proto, err, n)
		}
		rdb.ZAdd(ctx, "x", redis.Z{Score: 1, Member: "m"}, redis.Z{Score: 2, Member: "n"})
		rdb.ZAdd(ctx, "y", redis.Z{Score: 10, Member: "n"})
		if n, err := rdb.ZUnionStore(ctx, "u", &redis.ZStore{Keys: []string{"x", "y"}, Weights: []float64{2, 1}}).Result(); err != nil || n != 2 {
			t.Errorf("RESP%d ZUNIONSTORE: %v %d", proto, err, n)
		}
		if s, _ := rdb.ZScore(ctx, "u", "n").Result(); s != 14 {
			t.Errorf("RESP%d ZUNIONSTORE score: %v", proto, s)
		}
		if n, err := rdb.ZRangeStore(ctx, "r", redis.ZRangeArgs{Key: "x", Start: 0, Stop: 0}).Result(); err != nil || n != 1 {
			t.Errorf("RESP%d ZRANGESTORE: %v %d", proto, err, n)
		}
		if r, err := rdb.ZRank(ctx, "x", "n").Result(); err != nil || r != 1 {
			t.Errorf("RESP%d ZRANK: %v %d", proto, err, r)
		}
		rdb.Close()
	}
}
