package integration_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SWAPDB compared byte for byte: its checks, the swapped keys with their
// TTLs, the WATCHes it breaks, and the blocked clients its swap serves;
// then on a replica, with the pops blocked clients were served.

func TestSwapdb(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("SWAPDB", "a", "1")
		c.Error("SWAPDB", "0", "b")
		c.Error("SWAPDB", "x", "y")
		c.Error("SWAPDB", "0", "16")
		c.Error("SWAPDB", "-1", "0")
		c.Error("SWAPDB", "0", "4294967296")
		c.Error("SWAPDB", "1.5", "0")
		c.Error("SWAPDB", "0")
		c.Do("SWAPDB", "3", "3")
		c.Do("SET", "a", "db0")
		c.Do("SET", "only0", "x", "EX", "100")
		c.Do("RPUSH", "l", "1", "2")
		c.Do("SELECT", "1")
		c.Do("SET", "a", "db1")
		c.Do("ZADD", "z", "1", "m")
		c.Do("SWAPDB", "0", "1")
		c.Do("GET", "a")
		c.Do("TTL", "only0")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("EXISTS", "z")
		c.Do("DBSIZE")
		c.Do("SELECT", "0")
		c.Do("GET", "a")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Do("DBSIZE")
		c.Do("SWAPDB", "1", "0")
		c.Do("GET", "a")
		c.Do("SWAPDB", "0", "9")
		c.Do("DBSIZE")
		c.Do("SELECT", "9")
		c.Do("DBSIZE")
		c.Do("SWAPDB", "0", "9")
	})
}

func TestSwapdbWatch(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		o.Do("SELECT", "1")
		o.Do("SET", "in1", "v")
		// A key that exists only in the other database: broken.
		c.Do("WATCH", "in1")
		o.Do("SWAPDB", "0", "1")
		c.Do("MULTI")
		c.Do("PING")
		c.Do("EXEC")
		// A key in neither: intact.
		c.Do("WATCH", "nowhere")
		o.Do("SWAPDB", "0", "1")
		c.Do("MULTI")
		c.Do("PING")
		c.Do("EXEC")
		// A key of a database not swapped: intact.
		c.Do("SET", "k", "v")
		c.Do("WATCH", "k")
		o.Do("SWAPDB", "1", "2")
		c.Do("MULTI")
		c.Do("GET", "k")
		c.Do("EXEC")
	})
}

func TestSwapdbServesBlocked(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		o.Do("SELECT", "1")
		o.Do("RPUSH", "q", "from-db1")
		o.Do("ZADD", "zq", "5", "m")
		c.Send("BLPOP", "q", "0")
		c.Silent()
		o.Do("SWAPDB", "0", "1")
		c.Receive()
		o.Do("EXISTS", "q")
		// A blocked BZPOPMIN and a list brought under its key: still blocked.
		c.Send("BZPOPMIN", "q2", "zq", "0")
		c.Receive()
		o.Do("RPUSH", "q2", "a")
		c.Send("BZPOPMIN", "q2", "0")
		c.Silent()
		o.Do("SWAPDB", "0", "1")
		c.Silent()
		o.Do("SWAPDB", "0", "1")
		o.Do("SELECT", "0")
		o.Do("DEL", "q2")
		o.Do("ZADD", "q2", "1", "x")
		c.Receive()
	})
}

// TestReplBlockingAndSwapdb: a redis-server replica of cellserver holds
// what blocked clients were served (the pops the master made for them)
// and what SWAPDB swapped.
func TestReplBlockingAndSwapdb(t *testing.T) {
	ctx := context.Background()
	master := startReplNode(t, "cellserver")
	replica := startReplNode(t, "redis-server")
	if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitLinkUp(t, replica)
	popped := make(chan []string, 4)
	for i := 0; i < 2; i++ {
		go func() {
			r, _ := master.rdb.BLPop(ctx, 10*time.Second, "jobs").Result()
			popped <- r
		}()
	}
	waitBlocked(t, master.rdb, 2)
	master.rdb.RPush(ctx, "jobs", "j1", "j2", "j3")
	for i := 0; i < 2; i++ {
		if r := <-popped; len(r) != 2 || r[0] != "jobs" {
			t.Fatalf("BLPOP served %v", r)
		}
	}
	go func() {
		r, _ := master.rdb.BLMove(ctx, "src", "dst", "LEFT", "RIGHT", 10*time.Second).Result()
		popped <- []string{r}
	}()
	go func() {
		r, _ := master.rdb.BZPopMin(ctx, 10*time.Second, "z").Result()
		if r != nil {
			popped <- []string{r.Member.(string)}
		} else {
			popped <- nil
		}
	}()
	waitBlocked(t, master.rdb, 2)
	master.rdb.RPush(ctx, "src", "s1", "s2")
	master.rdb.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"})
	<-popped
	<-popped
	master.rdb.Set(ctx, "in0", "x", 0)
	c1 := newGoRedis(t, master.p.addr, 2, nil)
	c1.Do(ctx, "SELECT", "1")
	c1.Set(ctx, "in1", "y", time.Minute)
	if err := master.rdb.Do(ctx, "SWAPDB", 0, 1).Err(); err != nil {
		t.Fatalf("SWAPDB: %v", err)
	}
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT = %d, %v", n, err)
	}
	if n := compareKeyspaces(t, master, replica); n == 0 {
		t.Fatal("no keys compared")
	}
	master.rdb.Do(ctx, "SWAPDB", 0, 1)
	master.rdb.Wait(ctx, 1, 5*time.Second)
	if n := compareKeyspaces(t, master, replica); n < 4 {
		t.Fatalf("only %d keys compared", n)
	}
}

// waitBlocked waits until INFO shows n blocked clients.
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if info := c.Info(context.Background(), "clients").Val(); strings.Contains(info, want) {
			return
		}
	}
	t.Fatalf("never saw %q", want)
}
