package integration_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// CL.WINDOW keys between cellserver nodes: a window travels as a module
// value (RDB_TYPE_MODULE_2), in the full resync's snapshot and as
// RESTORE ... REPLACE ABSTTL in the stream, so a promoted replica limits
// as its master did.

// windowCalls charges each key cost events (limit 5 in a minute).
func windowCalls(t *testing.T, n *replNode, cost int, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := n.rdb.Do(context.Background(), "CL.WINDOW", k, 5, 60000, cost).Err(); err != nil {
			t.Fatalf("CL.WINDOW %s: %v", k, err)
		}
	}
}

// windowCounts is each key's [limited, limit, remaining] for a call of
// cost (0: asks without recording), and its DUMP payload.
func windowCounts(t *testing.T, n *replNode, cost int, keys ...string) string {
	t.Helper()
	ctx := context.Background()
	out := ""
	for _, k := range keys {
		r, err := n.rdb.Do(ctx, "CL.WINDOW", k, 5, 60000, cost).Slice()
		if err != nil || len(r) != 5 {
			t.Fatalf("CL.WINDOW %s: %v %v", k, r, err)
		}
		out += fmt.Sprintf("%s=%v ", k, r[:3])
	}
	return out
}

func TestReplWindowFailover(t *testing.T) {
	ctx := context.Background()
	master := startReplNode(t, "cellserver")
	keys := []string{"win:a", "win:b", "win:c", "win:d"}
	// Before the replica: by the full resync.
	windowCalls(t, master, 1, "win:a", "win:b", "win:b")
	windowCalls(t, master, 3, "win:c")
	replica := startReplNode(t, "cellserver")
	if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitLinkUp(t, replica)
	// After: by the stream, a refused call (win:c) and a new key too.
	windowCalls(t, master, 1, "win:a", "win:c", "win:d")
	windowCalls(t, master, 4, "win:c")
	windowCalls(t, master, 2, "win:b", "win:d")
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 = %d, %v; want 1", n, err)
	}
	if n := compareKeyspaces(t, master, replica); n != len(keys) {
		t.Fatalf("%d keys compared, want %d", n, len(keys))
	}
	for _, k := range keys {
		if typ := replica.rdb.Type(ctx, k).Val(); typ != "window" {
			t.Errorf("TYPE %s on the replica = %q, want window", k, typ)
		}
		a, b := master.rdb.Dump(ctx, k).Val(), replica.rdb.Dump(ctx, k).Val()
		if a == "" || a != b {
			t.Errorf("DUMP %s: master %q, replica %q", k, a, b)
		}
	}
	// A redis-server refuses the value as a module's it lacks.
	redis := startReplNode(t, "redis-server")
	p := master.rdb.Dump(ctx, "win:a").Val()
	if err := redis.rdb.Do(ctx, "RESTORE", "win:a", 0, p).Err(); err == nil || err.Error() != "ERR Bad data format" {
		t.Errorf("redis-server RESTORE of a window: %v, want ERR Bad data format", err)
	}

	want := windowCounts(t, master, 0, keys...)
	if err := replica.rdb.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatalf("REPLICAOF NO ONE: %v", err)
	}
	if got := windowCounts(t, replica, 0, keys...); got != want {
		t.Errorf("promoted replica answers %s, master %s", got, want)
	}
	if got, want := windowCounts(t, replica, 1, keys...), windowCounts(t, master, 1, keys...); got != want {
		t.Errorf("promoted replica charges %s, master %s", got, want)
	}

	// SAVE, then a restart: the windows are kept.
	want = windowCounts(t, replica, 0, keys...)
	if err := replica.rdb.Do(ctx, "SAVE").Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	replica.p.Stop()
	replica.restart(t)
	if got := windowCounts(t, replica, 0, keys...); got != want {
		t.Errorf("after SAVE and restart %s, before %s", got, want)
	}
}

// TestWindowMigrate: MIGRATE moves a window between cellserver nodes, its
// counts and expiry intact; to a redis-server, which lacks the module
// type, the move is refused and the key stays.
func TestWindowMigrate(t *testing.T) {
	ctx := context.Background()
	src := startReplNode(t, "cellserver")
	dst := startReplNode(t, "cellserver")
	redis := startReplNode(t, "redis-server")
	windowCalls(t, src, 2, "win:m", "win:m")
	windowCalls(t, src, 3, "win:m") // refused: 4 of 5 spent
	want := windowCounts(t, src, 0, "win:m")
	exp := src.rdb.Do(ctx, "PEXPIRETIME", "win:m").Val()
	err := src.rdb.Do(ctx, "MIGRATE", "127.0.0.1", redis.port, "win:m", 0, 5000).Err()
	if err == nil || err.Error() != "ERR Target instance replied with error: ERR Bad data format" {
		t.Errorf("MIGRATE to redis-server: %v", err)
	}
	if got := windowCounts(t, src, 0, "win:m"); got != want {
		t.Errorf("after the refused MIGRATE %s, before %s", got, want)
	}
	if err := src.rdb.Do(ctx, "MIGRATE", "127.0.0.1", dst.port, "win:m", 0, 5000).Err(); err != nil {
		t.Fatalf("MIGRATE to cellserver: %v", err)
	}
	if n := src.rdb.Exists(ctx, "win:m").Val(); n != 0 {
		t.Errorf("win:m still on the source")
	}
	// MIGRATE sends the time left, as Redis's does: the target's expiry is
	// the source's plus the time the move took, never earlier.
	got, _ := dst.rdb.Do(ctx, "PEXPIRETIME", "win:m").Int64()
	before, _ := strconv.ParseInt(fmt.Sprint(exp), 10, 64)
	if got < before || got > before+5000 {
		t.Errorf("PEXPIRETIME after MIGRATE %d, before %d", got, before)
	}
	if got := windowCounts(t, dst, 0, "win:m"); got != want {
		t.Errorf("after MIGRATE %s, before %s", got, want)
	}
}

// TestReplWindowOverKey: a key that becomes a window by COPY, RENAME or
// RESTORE over a key of another type, or after a DEL of it in the same
// transaction, is deleted on a redis-server replica (which refuses the
// window's RESTORE) rather than left with its old value, and is the
// window on a cellserver replica.
func TestReplWindowOverKey(t *testing.T) {
	ctx := context.Background()
	master := startReplNode(t, "cellserver")
	cell, redis := startReplNode(t, "cellserver"), startReplNode(t, "redis-server")
	for _, r := range []*replNode{cell, redis} {
		if err := r.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
			t.Fatalf("REPLICAOF: %v", err)
		}
		waitLinkUp(t, r)
	}
	do := func(args ...any) {
		t.Helper()
		if err := master.rdb.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	do("SET", "copied", "old")
	do("HSET", "renamed", "f", "old")
	do("SET", "restored", "old")
	do("ZADD", "deleted", "1", "old")
	do("SET", "kept", "v")
	windowCalls(t, master, 1, "w1", "w2", "w3")
	do("COPY", "w1", "copied", "REPLACE")
	do("RENAME", "w2", "renamed")
	do("RESTORE", "restored", "0", master.rdb.Dump(ctx, "w1").Val(), "REPLACE")
	pipe := master.rdb.TxPipeline()
	pipe.Del(ctx, "deleted")
	pipe.Copy(ctx, "w3", "deleted", 0, false)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatalf("MULTI DEL COPY EXEC: %v", err)
	}
	if n, err := master.rdb.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 5000 = %d, %v; want 2", n, err)
	}
	for _, k := range []string{"copied", "renamed", "restored", "deleted"} {
		if typ := master.rdb.Type(ctx, k).Val(); typ != "window" {
			t.Fatalf("TYPE %s on the master = %q, want window", k, typ)
		}
		if typ := redis.rdb.Type(ctx, k).Val(); typ != "none" {
			t.Errorf("TYPE %s on the redis-server replica = %q, want none", k, typ)
		}
		a, b := master.rdb.Dump(ctx, k).Val(), cell.rdb.Dump(ctx, k).Val()
		if a != b {
			t.Errorf("DUMP %s: master %q, cellserver replica %q", k, a, b)
		}
	}
	if v := redis.rdb.Get(ctx, "kept").Val(); v != "v" {
		t.Errorf("GET kept on the redis-server replica = %q", v)
	}
}
