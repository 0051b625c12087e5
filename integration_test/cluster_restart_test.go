package integration_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestClusterNodeDies: what README's "Running 100 nodes" says of a node
// that dies. Node 1 of 3 is SIGKILLed: the other nodes keep serving their
// keys while node 1's keys fail; restarted with the same id, address and
// --dir, it serves its keys from its own persistence, a limiter resuming
// where it was, and the go-redis ClusterClient carries on.
func TestClusterNodeDies(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	cc := startCellCluster(t, evenRanges(3), "--appendfsync", "always")
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cc.addrs[0]}, MaxRedirects: 3,
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	defer cl.Close()
	// {key1} is slot 9189 (node 1); {user1000} is slot 3443 (node 0).
	const dying, living = "{key1}", "{user1000}"
	throttle := func(key string) (string, error) {
		v, err := cl.Do(ctx, "CL.THROTTLE", key, 9, 1, 3600).Slice()
		if err != nil {
			return "", err
		}
		return fmt.Sprint(v[:3]), nil
	}
	for _, tag := range []string{dying, living} {
		for range 4 {
			if _, err := throttle(tag + ":rl"); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.Set(ctx, tag+":v", "kept", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := redis.NewClient(&redis.Options{Addr: cc.addrs[1]}).DBSize(ctx).Result(); err != nil || n != 2 {
		t.Fatalf("node 1 holds %d keys (%v), want the 2 of %s", n, err, dying)
	}

	cc.procs[1].Cmd.Process.Signal(syscall.SIGKILL)
	<-cc.procs[1].Exited()
	if got, err := throttle(living + ":rl"); err != nil || got != "[0 10 5]" {
		t.Errorf("a living node's limiter while node 1 is down: %s %v, want [0 10 5]", got, err)
	}
	if err := cl.Get(ctx, dying+":v").Err(); err == nil || errors.Is(err, redis.Nil) {
		t.Errorf("GET of a dead node's key: %v, want a connection error", err)
	}

	p, err := cc.relaunch[1]()
	if err != nil {
		t.Fatal(err)
	}
	cc.procs[1] = p
	t.Cleanup(p.Stop)
	// The client reconnects on its next command to the node.
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := cl.Get(ctx, dying+":v").Result()
		if err == nil && v == "kept" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET after the restart: %q %v", v, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ttl := cl.TTL(ctx, dying+":v").Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("TTL after the restart: %v", ttl)
	}
	if got, err := throttle(dying + ":rl"); err != nil || got != "[0 10 5]" {
		t.Errorf("the dead node's limiter after the restart: %s %v, want [0 10 5] (resumed, not reset)", got, err)
	}
}
