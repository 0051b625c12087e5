package integration_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Replication's guards, compared with redis-server 7.0.15:
// min-replicas-to-write/-max-lag, the replica class of
// client-output-buffer-limit, writes from scripts on a read-only replica,
// and replica-serve-stale-data.

// replPair is a master and a replica of each program, the replica not
// attached yet.
type replPair struct{ redisM, redisR, cellM, cellR *replNode }

func startReplPairs(t *testing.T, replicaArgs ...string) replPair {
	t.Helper()
	return replPair{
		redisM: startReplNode(t, "redis-server"), redisR: startReplNode(t, "redis-server", replicaArgs...),
		cellM: startReplNode(t, "cellserver"), cellR: startReplNode(t, "cellserver", replicaArgs...),
	}
}

func (p replPair) attach(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, mr := range [][2]*replNode{{p.redisM, p.redisR}, {p.cellM, p.cellR}} {
		if err := mr[1].rdb.Do(ctx, "REPLICAOF", "127.0.0.1", mr[0].port).Err(); err != nil {
			t.Fatal(err)
		}
		waitLinkUp(t, mr[1])
	}
}

// waitUntil polls cond on both nodes until it holds on both.
func waitUntil(t *testing.T, what string, cond func(n *replNode) bool, nodes ...*replNode) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, n := range nodes {
		for !cond(n) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: never %s", n.p.name, what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestReplMinReplicas: with min-replicas-to-write 1 a master without a
// good replica refuses writes, in MULTI and from scripts too, and takes
// them again once a replica is attached; a replica gone stops them again.
func TestReplMinReplicas(t *testing.T) {
	ctx := context.Background()
	p := startReplPairs(t)
	c := newPairOn(t, &servers{redis: p.redisM.p, cell: p.cellM.p})
	info := maskInfoValues(append([]string{"min_slaves_good_slaves"}, sentinelExactFields...))
	c.Do("CONFIG", "SET", "min-replicas-to-write", "1")
	c.DoSorted("CONFIG", "GET", "min-*")
	c.DoMasked(info, "INFO", "replication")
	c.Error("SET", "k", "v")
	c.Do("GET", "k")
	c.Do("MULTI")
	c.Error("SET", "k", "v")
	c.Do("GET", "k")
	c.Error("EXEC")
	c.Error("EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Error("EVAL", "#!lua\nreturn redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Do("EVAL", "return redis.pcall('SET', KEYS[1], 'v')", "1", "k")
	c.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", "1", "k")
	c.Do("CONFIG", "SET", "min-replicas-max-lag", "0") // off
	c.Do("SET", "k", "v")
	c.DoMasked(info, "INFO", "replication")
	c.Do("CONFIG", "SET", "min-replicas-max-lag", "2")

	p.attach(t)
	// Redis counts its good replicas once a second.
	waitUntil(t, "takes writes with a replica", func(n *replNode) bool {
		return n.rdb.Set(ctx, "probe", "1", 0).Err() == nil
	}, p.redisM, p.cellM)
	c.Do("SET", "k", "v2")
	c.Do("EVAL", "return redis.call('SET', KEYS[1], 'v3')", "1", "k")
	c.DoMasked(info, "INFO", "replication")

	p.redisR.p.Stop()
	p.cellR.p.Stop()
	waitUntil(t, "refuses writes once its replica is gone", func(n *replNode) bool {
		err := n.rdb.Set(ctx, "probe", "1", 0).Err()
		return err != nil && err.Error() == "NOREPLICAS Not enough good replicas to write."
	}, p.redisM, p.cellM)
	c.Error("SET", "k", "v4")
	c.Do("GET", "k")
}

// TestReplScriptsOnReplica: a script's writes on a read-only replica get
// -READONLY as Redis gives them; reads run.
func TestReplScriptsOnReplica(t *testing.T) {
	p := startReplPairs(t)
	p.attach(t)
	c := newPairOn(t, &servers{redis: p.redisR.p, cell: p.cellR.p})
	c.Error("EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Error("EVAL", "#!lua\nreturn redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Do("EVAL", "return redis.pcall('SET', KEYS[1], 'v')", "1", "k")
	c.Do("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])", "1", "k")
	c.Do("EVAL", "return redis.call('GET', KEYS[1])", "1", "k")
	c.Error("EVAL_RO", "return redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Do("EXISTS", "k")
	// A writable replica takes them, locally.
	c.Do("CONFIG", "SET", "replica-read-only", "no")
	c.Do("EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "k")
	c.Do("GET", "k")
}

// TestReplServeStaleData: a replica whose master is gone answers, or
// not, as replica-serve-stale-data says.
func TestReplServeStaleData(t *testing.T) {
	ctx := context.Background()
	p := startReplPairs(t)
	p.attach(t)
	p.redisM.rdb.Set(ctx, "k", "v", 0)
	p.cellM.rdb.Set(ctx, "k", "v", 0)
	// Functions too, by the stream: their flags stand for FCALL's.
	for _, m := range []*replNode{p.redisM, p.cellM} {
		if err := m.rdb.Do(ctx, "FUNCTION", "LOAD", staleLib).Err(); err != nil {
			t.Fatal(err)
		}
	}
	p.redisM.rdb.Wait(ctx, 1, 5000)
	p.cellM.rdb.Wait(ctx, 1, 5000)
	p.redisM.p.Stop()
	p.cellM.p.Stop()
	waitUntil(t, "sees its master down", func(n *replNode) bool {
		return replInfoField(t, n.rdb, "replication", "master_link_status") == "down"
	}, p.redisR, p.cellR)
	c := newPairOn(t, &servers{redis: p.redisR.p, cell: p.cellR.p})
	cmds := [][]string{
		{"GET", "k"}, {"EXISTS", "k"}, {"DBSIZE"}, {"KEYS", "*"}, {"SET", "k", "x"},
		{"PING"}, {"ECHO", "e"}, {"CONFIG", "GET", "replica-serve-stale-data"},
		{"EVAL", "return 1", "0"}, {"EVAL", "#!lua flags=no-writes\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn 1", "0"},
		{"EVAL", "#!lua flags=allow-stale\nreturn 1", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('GET', 'k')", "0"},
		{"EVAL", "#!lua flags=no-writes,allow-stale\nreturn redis.call('PING')", "0"},
		{"EVALSHA", "0123456789012345678901234567890123456789", "0"}, {"EVAL_RO", "return 1", "0"},
		{"FCALL", "stale_w", "0"}, {"FCALL", "stale_ro", "1", "k"}, {"FCALL", "stale_ok", "1", "k"},
		{"FCALL_RO", "stale_ok", "1", "k"}, {"FCALL", "stale_okw", "0"}, {"FCALL", "nosuch", "0"},
		{"MULTI"}, {"EXEC"}, {"CLIENT", "GETNAME"}, {"SELECT", "1"}, {"SELECT", "0"},
	}
	run := func() {
		for _, cmd := range cmds {
			r, cl := c.Replies(cmd...)
			if string(r) != string(cl) {
				c.mismatch(strings.Join(cmd, " "), r, cl)
			}
		}
	}
	run() // stale data served
	c.Do("CONFIG", "SET", "replica-serve-stale-data", "no")
	run()
	c.DoMasked(maskInfoValues(sentinelExactFields), "INFO", "replication")
}

// staleLib's functions: one that writes, one no-writes, one no-writes
// and allow-stale, one allow-stale that writes.
const staleLib = `#!lua name=stale
redis.register_function('stale_w', function() return 1 end)
redis.register_function{function_name='stale_ro', callback=function(k) return redis.call('GET', k[1]) end, flags={'no-writes'}}
redis.register_function{function_name='stale_ok', callback=function(k) return redis.call('GET', k[1]) end, flags={'no-writes', 'allow-stale'}}
redis.register_function{function_name='stale_okw', callback=function() return 2 end, flags={'allow-stale'}}`

// TestReplReplicaOutputLimit: a replica that stops reading is cut once
// the stream queued for it passes client-output-buffer-limit's replica
// class.
func TestReplReplicaOutputLimit(t *testing.T) {
	ctx := context.Background()
	for _, prog := range []string{"redis-server", "cellserver"} {
		m := startReplNode(t, prog)
		if err := m.rdb.ConfigSet(ctx, "client-output-buffer-limit", "replica 1mb 0 0").Err(); err != nil {
			t.Fatal(err)
		}
		r, err := dialRESP(m.p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Do("REPLCONF", "listening-port", "1"); err != nil {
			t.Fatal(err)
		}
		// PSYNC, then never read: the snapshot and stream pile up.
		if err := r.Send("PSYNC", "?", "-1"); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "lists the replica", func(n *replNode) bool {
			return replInfoField(t, n.rdb, "replication", "connected_slaves") == "1"
		}, m)
		big := strings.Repeat("x", 1<<20)
		for i := range 48 {
			if err := m.rdb.Set(ctx, "big", big[:len(big)-i], 0).Err(); err != nil {
				t.Fatal(err)
			}
			if replInfoField(t, m.rdb, "replication", "connected_slaves") == "0" {
				break
			}
		}
		waitUntil(t, "cuts the replica over its output limit", func(n *replNode) bool {
			return replInfoField(t, n.rdb, "replication", "connected_slaves") == "0"
		}, m)
		if !strings.Contains(m.p.LogTail(50), "scheduled to be closed ASAP for overcoming of output buffer limits") {
			t.Errorf("%s: no log line for the replica over its limit:\n%s", prog, m.p.LogTail(20))
		}
	}
}

// TestReplIgnoreMaxmemory: under replica-ignore-maxmemory yes (the
// default) a replica far over its maxmemory applies its master's writes
// and refuses its own clients nothing; with no it applies maxmemory as a
// master does: its own writes and its master's are refused, or it evicts.
func TestReplIgnoreMaxmemory(t *testing.T) {
	ctx := context.Background()
	p := startReplPairs(t, "--replica-read-only", "no")
	p.attach(t)
	c := newPairOn(t, &servers{redis: p.redisR.p, cell: p.cellR.p})
	masterSet := func(key string) {
		t.Helper()
		for _, m := range []*replNode{p.redisM, p.cellM} {
			if err := m.rdb.Set(ctx, key, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if n, err := m.rdb.Wait(ctx, 1, 5000).Result(); err != nil || n != 1 {
				t.Fatalf("%s: WAIT 1 = %d, %v", m.p.name, n, err)
			}
		}
	}
	c.DoSorted("CONFIG", "GET", "*ignore-maxmemory*")
	c.Do("CONFIG", "SET", "maxmemory", "1")
	masterSet("a")
	c.Do("DBSIZE")
	c.Do("SET", "own", "v")
	c.Do("EVAL", "return redis.call('SET', KEYS[1], 'v')", "1", "own1")
	c.Do("DBSIZE")
	c.Do("CONFIG", "SET", "slave-ignore-maxmemory", "no")
	c.Do("CONFIG", "GET", "replica-ignore-maxmemory")
	c.Error("SET", "own2", "v")
	masterSet("b") // refused on the replica, though it acknowledges
	c.Do("GET", "b")
	c.Do("DBSIZE")
	c.Do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	c.Error("SET", "own3", "v") // evicts every key, and is still over
	c.Do("DBSIZE")
	c.Do("CONFIG", "SET", "replica-ignore-maxmemory", "yes")
	c.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
	masterSet("c")
	c.Do("GET", "c")
	c.Do("SET", "own4", "v")
	c.Do("DBSIZE")
}
