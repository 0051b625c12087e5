package cell

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestHashListThroughGoRedis drives hashes and lists through go-redis,
// which speaks RESP3 by default: the map of HGETALL, the pairs of
// HRANDFIELD WITHVALUES and the nulls of LPOP and LPOS must all decode.
func TestHashListThroughGoRedis(t *testing.T) {
	srv := startServer(t, nil)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), Protocol: proto})
			defer rdb.Close()
			rdb.FlushAll(ctx)
			if n, err := rdb.HSet(ctx, "h", "a", "1", "b", "2").Result(); err != nil || n != 2 {
				t.Fatalf("HSET: %d %v", n, err)
			}
			if m, err := rdb.HGetAll(ctx, "h").Result(); err != nil || len(m) != 2 || m["a"] != "1" || m["b"] != "2" {
				t.Fatalf("HGETALL: %v %v", m, err)
			}
			if f, err := rdb.HIncrByFloat(ctx, "h", "a", 0.5).Result(); err != nil || f != 1.5 {
				t.Fatalf("HINCRBYFLOAT: %v %v", f, err)
			}
			kv, err := rdb.HRandFieldWithValues(ctx, "h", -3).Result()
			if err != nil || len(kv) != 3 {
				t.Fatalf("HRANDFIELD WITHVALUES: %v %v", kv, err)
			}
			if _, err := rdb.HGet(ctx, "h", "nosuch").Result(); err != redis.Nil {
				t.Fatalf("HGET of a missing field: %v", err)
			}
			if n, err := rdb.RPush(ctx, "l", "a", "b", "c", "b").Result(); err != nil || n != 4 {
				t.Fatalf("RPUSH: %d %v", n, err)
			}
			if v, err := rdb.LPopCount(ctx, "l", 2).Result(); err != nil || !slices.Equal(v, []string{"a", "b"}) {
				t.Fatalf("LPOP 2: %v %v", v, err)
			}
			if _, err := rdb.LPopCount(ctx, "nokey", 2).Result(); err != redis.Nil {
				t.Fatalf("LPOP of a missing key with a count: %v", err)
			}
			if p, err := rdb.LPos(ctx, "l", "b", redis.LPosArgs{Rank: -1}).Result(); err != nil || p != 1 {
				t.Fatalf("LPOS: %d %v", p, err)
			}
			if _, err := rdb.LPos(ctx, "l", "zz", redis.LPosArgs{}).Result(); err != redis.Nil {
				t.Fatalf("LPOS of a missing element: %v", err)
			}
			if err := rdb.HSet(ctx, "l", "f", "v").Err(); err == nil || err.Error() != ErrWrongType {
				t.Fatalf("HSET on a list: %v", err)
			}
		})
	}
}

// TestListConcurrentPushPop: producers RPUSH and consumers LPOP one list
// concurrently; every element comes out exactly once.
func TestListConcurrentPushPop(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 16})
	defer rdb.Close()
	ctx := context.Background()
	const producers, per = 8, 250
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := rdb.RPush(ctx, "q", fmt.Sprintf("%d:%d", p, i)).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	var consumers sync.WaitGroup
	for range 4 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for {
				v, err := rdb.LPop(ctx, "q").Result()
				if err == redis.Nil {
					select {
					case <-done:
						return
					default:
						continue
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[v]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	consumers.Wait()
	// A consumer may have seen the list empty just before the last pushes.
	for {
		v, err := rdb.LPop(ctx, "q").Result()
		if err == redis.Nil {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[v]++
	}
	if len(seen) != producers*per {
		t.Fatalf("%d distinct elements popped, want %d", len(seen), producers*per)
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("%s popped %d times", v, n)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("DBSIZE = %d after popping everything", n)
	}
}
