package rdb

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
	"github.com/redis/go-redis/v9"
)

// A real redis-server is this package's oracle: it writes the files the
// reader must read and loads the files the writer writes. Without one the
// tests that need it skip, or fail under CELLSERVER_REQUIRE_PEERS=1.

func requireRedis(t *testing.T) string {
	t.Helper()
	return serverproc.RequirePeer(t, "redis-server", "apt-get install redis-server redis-tools")
}

// redisServer is a redis-server this test started, stopped by its pid.
type redisServer struct {
	proc *serverproc.Proc
	dir  string
	c    *redis.Client
}

// startRedis starts redis-server in dir on a free loopback port; with
// dbfilename set, it loads dir/dbfilename at start if present.
func startRedis(t *testing.T, dir, dbfilename string) *redisServer {
	t.Helper()
	bin := requireRedis(t)
	for try := 0; ; try++ {
		port, err := serverproc.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--dbfilename", dbfilename, "--save", "", "--appendonly", "no", "--enable-debug-command", "yes"}
		p, err := serverproc.Start(bin, args, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		c := redis.NewClient(&redis.Options{Addr: addr, DB: 0})
		ping := func(string) error { return c.Ping(context.Background()).Err() }
		if err := p.WaitReady(addr, 10*time.Second, ping); err != nil {
			c.Close()
			p.Stop()
			if try < 3 {
				continue // the port was taken under us
			}
			t.Fatalf("redis-server: %v\n%s", err, p.LogTail(20))
		}
		r := &redisServer{proc: p, dir: dir, c: c}
		t.Cleanup(func() { c.Close(); p.Stop() })
		return r
	}
}

// db is a client of database n.
func (r *redisServer) db(t *testing.T, n int) *redis.Client {
	opt := *r.c.Options()
	opt.DB = n
	c := redis.NewClient(&opt)
	t.Cleanup(func() { c.Close() })
	return c
}
