package integration_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The rate-limiting workloads through cluster clients: each client runs
// one session against a single cellserver and against a 3-node cellserver
// cluster, and the two transcripts must be equal (the same decisions),
// while the keys spread over every node.

// freshSingle is the shared standalone cellserver, emptied (keys and
// scripts) before and after the test.
func freshSingle(t *testing.T) *process {
	t.Helper()
	s := sharedServers(t)
	flush := func() {
		c, err := dialRESP(s.cell.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if r, err := c.Do("FLUSHALL"); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("FLUSHALL: %q %v", r, err)
		}
	}
	flush()
	t.Cleanup(flush)
	forgetScripts(t, s)
	return s.cell
}

// requireSpread fails t unless every node of c holds at least min keys and
// they hold want keys in all (want < 0: any total).
func requireSpread(t *testing.T, c *cluster, min, want int) {
	t.Helper()
	total := 0
	var counts []string
	for i, addr := range c.addrs {
		rc, err := dialRESP(addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := rc.Do("DBSIZE")
		rc.Close()
		n, perr := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(string(r), ":"), "\r\n"))
		if err != nil || perr != nil {
			t.Fatalf("DBSIZE on node %d: %q %v", i, r, err)
		}
		counts = append(counts, strconv.Itoa(n))
		total += n
	}
	for i, s := range counts {
		if n, _ := strconv.Atoi(s); n < min {
			t.Errorf("node %d holds %d keys, want at least %d: the keys did not spread (per node: %s)", i, n, min, strings.Join(counts, " "))
		}
	}
	if want >= 0 && total != want {
		t.Errorf("the cluster holds %d keys, want %d (per node: %s)", total, want, strings.Join(counts, " "))
	}
}

// compareClusterSession runs a client's session script in mode "single"
// against the standalone cellserver and in mode "cluster" against a
// cluster redis-cli --cluster create formed of 3 masters and 3 replicas on
// the cluster bus, requires the same transcript, and the keys (120: 30 users x
// W1, W2, W3, W4) on every master.
func compareClusterSession(t *testing.T, what string, command func(addr, mode string) *exec.Cmd) {
	t.Helper()
	single := freshSingle(t)
	cc := createBusCluster(t, 6, 1).cluster
	checkClean(t, cc.addrs[0], "after create")
	one, err := runScript(command(single.addr, "single"))
	if err != nil {
		t.Fatal(err)
	}
	many, err := runScript(command(cc.addrs[1], "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Lines) < 120 {
		t.Fatalf("the session against one node recorded %d lines:\n%s", len(one.Lines), strings.Join(one.Lines, "\n"))
	}
	compareLines(t, what, "one node", one.Lines, many.Lines)
	requireSpread(t, cc, 25, 120)
	checkClean(t, cc.addrs[1], "after the session")
}

// TestClusterIoredis: ioredis's Cluster client runs W1, W2, W3, W4 and W8
// (node/ioredis_cluster.js) against a cluster formed by redis-cli
// --cluster create (3 masters, 3 replicas) and gets the transcript of the
// same session against one node.
func TestClusterIoredis(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	node := requireNode(t)
	compareClusterSession(t, "ioredis Cluster", func(addr, mode string) *exec.Cmd {
		return nodeCommand(node, "ioredis_cluster.js", []string{mode})(addr)
	})
}

// goRedisSession is W1-W4 and W8 as a Go service runs them with go-redis,
// the same session as node/ioredis_cluster.js: 30 users, each making 3 to 7
// requests, decisions recorded per user. forEachMaster visits the nodes
// that hold keys (ClusterClient.ForEachMaster, or the one client).
func goRedisSession(t *testing.T, c redis.UniversalClient, forEachMaster func(context.Context, func(context.Context, *redis.Client) error) error) []string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	note := func(label string, v any) { lines = append(lines, fmt.Sprintf("%s -> %v", label, v)) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const users, base = 30, int64(1700000000000)
	requests := func(u int) int { return 3 + u%5 }
	decide := func(n, limit int64) string {
		if n <= limit {
			return "allow"
		}
		return fmt.Sprintf("deny:%d", n)
	}

	note("ping", c.Ping(ctx).Val())
	info, err := c.Info(ctx, "server").Result()
	must(err)
	note("INFO server has redis_version:7.0.15", strings.Contains(info, "redis_version:7.0.15\r\n"))
	note("config get maxclients", c.ConfigGet(ctx, "maxclients").Val())

	// W1: TxPipelined (MULTI ... EXEC in one round trip).
	for u := 0; u < users; u++ {
		key := fmt.Sprintf("limit:u%d:login", u)
		var decisions []string
		for i := 0; i < requests(u); i++ {
			now := base + int64(i)*250
			if i == 2 {
				now -= 250 // the third call shares the second's ms
			}
			var card *redis.IntCmd
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZAdd(ctx, key, redis.Z{Score: float64(now), Member: now})
				p.ZRemRangeByScore(ctx, key, "0", strconv.FormatInt(now-1000, 10))
				card = p.ZCard(ctx, key)
				p.Expire(ctx, key, time.Minute)
				return nil
			})
			must(err)
			decisions = append(decisions, decide(card.Val(), 3))
		}
		note("W1 "+key, decisions)
	}
	// W2: redis.Script runs EVALSHA, and EVAL on NOSCRIPT.
	window := redis.NewScript(testScript(t, "w2_window.lua"))
	for u := 0; u < users; u++ {
		key := fmt.Sprintf("limit:u%d:w2", u)
		var decisions []string
		for i := 0; i < requests(u); i++ {
			now := base + int64(i)*300
			n, err := window.Run(ctx, c, []string{key}, now, now-1000, 60).Int64()
			must(err)
			decisions = append(decisions, decide(n, 3))
		}
		note("W2 "+key, decisions)
	}
	// W3: INCR and EXPIRE NX in MULTI.
	for u := 0; u < users; u++ {
		key := fmt.Sprintf("rl:u%d:1700000000", u)
		var decisions []string
		for i := 0; i < requests(u); i++ {
			var n *redis.IntCmd
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				n = p.Incr(ctx, key)
				p.ExpireNX(ctx, key, time.Minute)
				return nil
			})
			must(err)
			decisions = append(decisions, decide(n.Val(), 4))
		}
		ttl := c.TTL(ctx, key).Val()
		note("W3 "+key, fmt.Sprint(decisions, " ttl59to60:", ttl >= 59*time.Second && ttl <= time.Minute))
	}
	// W4: CL.THROTTLE, burst 3, 10 per minute; the first three fields.
	for u := 0; u < users; u++ {
		key := fmt.Sprintf("throttle:{tenant%d}:api", u)
		var replies []any
		for i := 0; i < requests(u); i++ {
			v, err := c.Do(ctx, "CL.THROTTLE", key, 3, 10, 60).Slice()
			must(err)
			replies = append(replies, v[:3])
		}
		note("W4 "+key, replies)
	}
	// W8: count, list, look at a throttle key, reset a user.
	note("dbsize", c.DBSize(ctx).Val())
	var mu sync.Mutex
	var found []string
	must(forEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		it := m.Scan(ctx, 0, "limit:*", 100).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			found = append(found, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}))
	sort.Strings(found)
	note("scan limit:*", found)
	tk := "throttle:{tenant7}:api"
	v, _ := c.Get(ctx, tk).Result()
	note("get a throttle key is a TAT in ns", regexp.MustCompile(`^[0-9]{19}$`).MatchString(v))
	pttl := c.PTTL(ctx, tk).Val()
	note("pttl of a throttle key is set", pttl > 0 && pttl <= time.Minute)
	note("del (reset a user)", c.Del(ctx, tk).Val())
	note("exists after del", c.Exists(ctx, tk).Val())
	after, err := c.Do(ctx, "CL.THROTTLE", tk, 3, 10, 60).Slice()
	must(err)
	note("CL.THROTTLE after the reset", after[:3])
	note("type of a window", c.Type(ctx, "limit:u3:login").Val())
	note("zcard of a window", c.ZCard(ctx, "limit:u3:login").Val())
	return lines
}

// TestClusterGoRedis: go-redis's ClusterClient runs goRedisSession against
// a cluster formed by redis-cli --cluster create (3 masters, 3 replicas)
// and records what a Client records against one node.
func TestClusterGoRedis(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	single := freshSingle(t)
	cc := createBusCluster(t, 6, 1).cluster
	checkClean(t, cc.addrs[0], "after create")
	one := redis.NewClient(&redis.Options{Addr: single.addr})
	defer one.Close()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cc.addrs[2]}})
	defer cl.Close()
	want := goRedisSession(t, one, func(ctx context.Context, fn func(context.Context, *redis.Client) error) error { return fn(ctx, one) })
	got := goRedisSession(t, cl, cl.ForEachMaster)
	compareLines(t, "go-redis ClusterClient", "one node", want, got)
	requireSpread(t, cc, 25, 120)
	checkClean(t, cc.addrs[1], "after the session")
}

// TestClusterRedisPy: redis-py's RedisCluster runs python/redis_py_cluster.py
// (W1-W4, W8) against 3 nodes and prints what redis.Redis prints against
// one node.
func TestClusterRedisPy(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	python := debianPython(t)
	compareClusterSession(t, "redis-py RedisCluster", func(addr, mode string) *exec.Cmd {
		return exec.Command(python, "python/redis_py_cluster.py", "127.0.0.1", portOf(addr), mode)
	})
}

// redisCliSession is W1-W4 and W8 typed into redis-cli, for users 0..n-1.
// Each user's first command is one that names the user's key, so that
// redis-cli -c, which follows MOVED and stays on the node it was sent to,
// runs the user's MULTI on the key's node (a MOVED inside MULTI would
// abort the transaction, as in Redis Cluster).
func redisCliSession(n int) string {
	var b strings.Builder
	const base = 1700000000000
	b.WriteString("PING\nCONFIG GET maxclients\n")
	for u := 0; u < n; u++ {
		key := fmt.Sprintf("limit:u%d:login", u)
		fmt.Fprintf(&b, "ZCARD %s\n", key)
		for i := 0; i < 3+u%5; i++ {
			now := base + i*250
			fmt.Fprintf(&b, "MULTI\nZADD %s %d %d\nZREMRANGEBYSCORE %s 0 %d\nZCARD %s\nEXPIRE %s 60\nEXEC\n", key, now, now, key, now-1000, key, key)
		}
		w2 := fmt.Sprintf("limit:u%d:w2", u)
		for i := 0; i < 3+u%5; i++ {
			now := base + i*300
			fmt.Fprintf(&b, "EVAL \"%s\" 1 %s %d %d 60\n", w2Inline, w2, now, now-1000)
		}
		w3 := fmt.Sprintf("rl:u%d:1700000000", u)
		fmt.Fprintf(&b, "GET %s\n", w3)
		for i := 0; i < 3+u%5; i++ {
			fmt.Fprintf(&b, "MULTI\nINCR %s\nEXPIRE %s 60 NX\nEXEC\n", w3, w3)
		}
		fmt.Fprintf(&b, "TTL %s\n", w3)
		w4 := fmt.Sprintf("throttle:{tenant%d}:api", u)
		for i := 0; i < 3+u%5; i++ {
			fmt.Fprintf(&b, "CL.THROTTLE %s 3 10 60\n", w4)
		}
		// W8: look at a limiter's keys, reset a user.
		fmt.Fprintf(&b, "TYPE %s\nTTL %s\nGET %s\nDEL %s\nEXISTS %s\nCL.THROTTLE %s 3 10 60\n", key, w4, w4, w4, w4, w4)
	}
	return b.String()
}

// w2Inline is W2's window script on one line, as typed at redis-cli.
const w2Inline = "redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[1]) " +
	"local c = redis.call('ZCARD', KEYS[1]) " +
	"redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, tonumber(ARGV[2])) " +
	"redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3])) return c"

// TestClusterRedisCli: redis-cli -c types W1-W4 and W8 at a cluster,
// following MOVED, and prints what plain redis-cli prints against one node;
// redis-cli --cluster call counts the keys of every master. The cluster is
// six nodes on the bus (3 masters, 3 replicas, check clean before and
// after), then three of the simple mode's topology file.
func TestClusterRedisCli(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	requirePeer(t, "redis-cli")
	t.Run("Bus", func(t *testing.T) {
		bc := createBusCluster(t, 6, 1)
		checkClean(t, bc.addrs[0], "after create")
		redisCliWorkloads(t, bc.cluster)
		checkClean(t, bc.addrs[1], "after the session")
	})
	t.Run("TopologyFile", func(t *testing.T) { redisCliWorkloads(t, startCellCluster(t, evenRanges(3))) })
}

// redisCliWorkloads runs redisCliSession with redis-cli -c against the
// masters of cc and compares it with the same session on one node.
func redisCliWorkloads(t *testing.T, cc *cluster) {
	single := freshSingle(t)
	session := redisCliSession(12)
	// The TATs (ns) differ between the two runs; their shape does not.
	tat := regexp.MustCompile(`(?m)^1[0-9]{18}$`)
	one := tat.ReplaceAllString(cli(t, single.addr, session), "<tat>")
	out := cli(t, cc.addrs[0], session, "-c")
	redirects := regexp.MustCompile(`-> Redirected to slot \[\d+\] located at 127.0.0.1:\d+\n`)
	if n := len(redirects.FindAllString(out, -1)); n < 10 {
		t.Errorf("redis-cli -c was redirected %d times, want 10 or more:\n%s", n, out)
	}
	many := tat.ReplaceAllString(redirects.ReplaceAllString(out, ""), "<tat>")
	if !strings.Contains(one, "<tat>") || !strings.Contains(one, "QUEUED") || strings.Contains(one, "ERR") {
		t.Fatalf("the session against one node:\n%s", one)
	}
	compareLines(t, "redis-cli -c", "one node", strings.Split(one, "\n"), strings.Split(many, "\n"))
	// 12 users x (W1, W2, W3, W4) keys.
	requireSpread(t, cc, 10, 48)

	// W8 over the whole cluster: redis-cli --cluster call runs a command on
	// every master; the DBSIZEs add up to the one node's.
	calls := cli(t, cc.addrs[0], "", "--cluster", "call", cc.addrs[0], "DBSIZE", "--cluster-only-masters")
	sizes := regexp.MustCompile(`(?m)^127\.0\.0\.1:\d+: (\d+)$`).FindAllStringSubmatch(calls, -1)
	total := 0
	for _, m := range sizes {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	if single := strings.TrimSpace(cli(t, single.addr, "DBSIZE\n")); len(sizes) != len(cc.addrs) || strconv.Itoa(total) != single {
		t.Errorf("redis-cli --cluster call DBSIZE (sum %d, one node %s):\n%s", total, single, calls)
	}
}
