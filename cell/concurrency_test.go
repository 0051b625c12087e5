package cell

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestConcurrentIncr: 50 goroutines INCR one shared key and one key each,
// through go-redis's connection pool (RESP3 handshake, pipelined set-up).
// Every increment must count: no update is lost between shards or clients.
func TestConcurrentIncr(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 50})
	defer rdb.Close()
	ctx := context.Background()
	const workers, per = 50, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			own := fmt.Sprintf("own:%d", g)
			for i := 0; i < per; i++ {
				if err := rdb.Incr(ctx, "shared").Err(); err != nil {
					errs <- err
					return
				}
				if err := rdb.IncrBy(ctx, own, 2).Err(); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := rdb.Get(ctx, "shared").Int(); err != nil || got != workers*per {
		t.Errorf("shared = %d (%v), want %d", got, err, workers*per)
	}
	for g := 0; g < workers; g++ {
		if got, err := rdb.Get(ctx, fmt.Sprintf("own:%d", g)).Int(); err != nil || got != 2*per {
			t.Errorf("own:%d = %d (%v), want %d", g, got, err, 2*per)
		}
	}
	if got := rdb.DBSize(ctx).Val(); got != workers+1 {
		t.Errorf("DBSIZE = %d, want %d", got, workers+1)
	}
}

// TestTransactionsAcrossShards: concurrent MULTI/EXEC transfers between
// keys in different shards keep the sum constant, and WATCH-based
// check-and-set retries never lose an update.
func TestTransactionsAcrossShards(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 20})
	defer rdb.Close()
	ctx := context.Background()
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	for _, k := range keys {
		rdb.Set(ctx, k, 1000, 0)
	}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				from, to := keys[(g+i)%len(keys)], keys[(g+2*i+1)%len(keys)]
				_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.DecrBy(ctx, from, 3)
					p.IncrBy(ctx, to, 3)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	// Optimistic increments with WATCH, retried on conflict.
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						n, err := tx.Get(ctx, "cas").Int()
						if err != nil && err != redis.Nil {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "cas", n+1, 0)
							return nil
						})
						return err
					}, "cas")
					if err == nil {
						break
					}
					if err != redis.TxFailedErr {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	sum := 0
	for _, k := range keys {
		n, _ := rdb.Get(ctx, k).Int()
		sum += n
	}
	if sum != 1000*len(keys) {
		t.Errorf("sum after transfers = %d, want %d", sum, 1000*len(keys))
	}
	if n, _ := rdb.Get(ctx, "cas").Int(); n != 200 {
		t.Errorf("cas = %d, want 200", n)
	}
}

// TestWindowTransactionsConcurrent is W1 from 50 connections on five
// overlapping keys (MULTI ZADD ZREMRANGEBYSCORE ZCARD EXPIRE EXEC, unique
// members, a window nothing falls out of) while other clients move units
// between two counters in MULTI/EXEC. Every EXEC is all-or-nothing and
// serialised: the ZCARD replies for one key are exactly 1..n with no
// repeat or gap, each set ends with every member added, and the transfers
// conserve their total.
func TestWindowTransactionsConcurrent(t *testing.T) {
	srv := startServer(t, nil)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addrs()[0].String(), PoolSize: 60})
	defer rdb.Close()
	ctx := context.Background()
	rdb.Set(ctx, "acct:a", 10000, 0)
	rdb.Set(ctx, "acct:b", 10000, 0)
	const workers, perWorker, nkeys = 50, 40, 5
	var mu sync.Mutex
	seen := map[string][]int64{}
	var wg sync.WaitGroup
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				key := fmt.Sprintf("limit:u%d:a", (g+i)%nkeys)
				now := time.Now().UnixMilli()
				var card *redis.IntCmd
				_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.ZAdd(ctx, key, redis.Z{Score: float64(now), Member: fmt.Sprintf("%d-%d-%d", now, g, i)})
					p.ZRemRangeByScore(ctx, key, "0", strconv.FormatInt(now-3600_000, 10))
					card = p.ZCard(ctx, key)
					p.Expire(ctx, key, time.Hour)
					return nil
				})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[key] = append(seen[key], card.Val())
				mu.Unlock()
			}
		}(g)
	}
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			from, to := "acct:a", "acct:b"
			if g%2 == 1 {
				from, to = to, from
			}
			for i := 0; i < 200; i++ {
				if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.DecrBy(ctx, from, 7)
					p.IncrBy(ctx, to, 7)
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	total := 0
	for key, cards := range seen {
		slices.Sort(cards)
		for i, c := range cards {
			if c != int64(i+1) {
				t.Fatalf("%s: ZCARD replies %v are not 1..%d: an EXEC was not atomic", key, cards, len(cards))
			}
		}
		if n := rdb.ZCard(ctx, key).Val(); n != int64(len(cards)) {
			t.Errorf("%s holds %d members, %d were added", key, n, len(cards))
		}
		total += len(cards)
	}
	if total != workers*perWorker {
		t.Errorf("%d windows updated, want %d", total, workers*perWorker)
	}
	a, _ := rdb.Get(ctx, "acct:a").Int()
	b, _ := rdb.Get(ctx, "acct:b").Int()
	if a+b != 20000 {
		t.Errorf("transfers: a+b = %d, want 20000", a+b)
	}
}
