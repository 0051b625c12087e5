package integration_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster mode: the replies a cluster client sees, against a real Redis
// 7.0 cluster of the same shape (3 masters, the slots split as redis-cli
// --cluster create splits them), and real cluster clients driving a
// cellserver cluster.

func TestClusterRepliesLikeRedis(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	rc := sharedRedisCluster(t)
	cc := startCellCluster(t, evenRanges(3))
	p := newClusterPair(t, rc, cc, 0)
	defer func() {
		for _, k := range []string{"b", "{b}x", "aa", "cc"} {
			p.Replies("DEL", k)
		}
	}()
	// Slots, hash tags, redirection of single keys.
	for _, k := range []string{"foo", "{user1000}.following", "{user1000}.followers", "123456789", "", "{}a", "{a", "a{b}c{d}", "{{b}}", "x{}{b}"} {
		p.Do("CLUSTER", "KEYSLOT", k)
	}
	p.Do("SET", "foo", "1")             // slot 12182: node 2
	p.Do("GET", "a")                    // 15495: node 2
	p.Do("GET", "{user1000}.following") // 3443: here
	p.Do("INCR", "key1")                // 9189: node 1
	p.Do("MSET", "a", "1", "b", "2")    // CROSSSLOT
	p.Do("MSET", "{b}x", "1", "b", "2") // one slot, here
	p.Do("MGET", "b", "{b}x")           // one slot
	p.Do("DEL", "b", "foo")             // CROSSSLOT
	p.Do("EXISTS", "b", "b")            // same key twice
	p.Do("CLUSTER", "COUNTKEYSINSLOT", "3300")
	p.Do("CLUSTER", "GETKEYSINSLOT", "3300", "0")
	p.Do("CLUSTER", "COUNTKEYSINSLOT", "16383")
	p.Do("CLUSTER", "COUNTKEYSINSLOT", "16384")
	p.Do("CLUSTER", "COUNTKEYSINSLOT", "-1")
	p.Do("CLUSTER", "COUNTKEYSINSLOT", "x")
	p.Do("CLUSTER", "GETKEYSINSLOT", "3300", "-1")
	p.Do("CLUSTER", "GETKEYSINSLOT", "16384", "1")
	p.Do("CLUSTER", "GETKEYSINSLOT", "x", "1")
	p.Do("CLUSTER", "GETKEYSINSLOT", "1", "x")
	p.Do("DEL", "{b}x")
	p.Do("CLUSTER", "GETKEYSINSLOT", "3300", "5")
	// SORT: patterns are refused, STORE's key is a key.
	p.Do("RPUSH", "{b}l", "2", "1")
	p.Do("SORT", "{b}l")
	p.Do("SORT", "{b}l", "BY", "w_*")
	p.Do("SORT", "{b}l", "BY", "nosort", "DESC")
	p.Do("SORT_RO", "{b}l", "GET", "#")
	p.Do("SORT", "{b}l", "STORE", "{b}d")
	p.Do("SORT", "{b}l", "STORE", "foo")
	p.Do("DEL", "{b}l", "{b}d")
	// SELECT.
	p.Do("SELECT", "0")
	p.Do("SELECT", "1")
	p.Do("SELECT", "99")
	p.Do("SELECT", "x")
	// Transactions: each command is checked when queued, EXEC checks the
	// queue as one request.
	for _, seq := range [][][]string{
		{{"MULTI"}, {"SET", "b", "1"}, {"SET", "foo", "1"}, {"EXEC"}},
		{{"MULTI"}, {"SET", "aa", "1"}, {"SET", "cc", "1"}, {"EXEC"}},
		{{"MULTI"}, {"SET", "aa", "1"}, {"SET", "cc", "1"}, {"GET", "foo"}, {"EXEC"}},
		{{"MULTI"}, {"SET", "b", "1"}, {"INCR", "{b}y"}, {"GET", "b"}, {"EXEC"}},
		{{"MULTI"}, {"SET", "b", "1"}, {"MSET", "a", "1", "b", "2"}, {"EXEC"}},
		{{"MULTI"}, {"PING"}, {"EXEC"}},
		{{"WATCH", "foo"}},
		{{"WATCH", "aa", "cc"}},
		{{"WATCH", "b", "{b}y"}, {"MULTI"}, {"INCR", "b"}, {"EXEC"}},
		{{"EXEC"}},
	} {
		for _, cmd := range seq {
			p.Do(cmd...)
		}
	}
	p.Do("DEL", "{b}y")
	// Connection commands of cluster clients.
	p.Do("READONLY")
	p.Do("READWRITE")
	p.Do("ASKING")
	p.Do("GET", "foo") // ASKING does not help a slot that is not importing
	p.Do("READONLY", "x")
	p.Do("ASKING", "x")
	p.Do("CLUSTER")
	p.Do("CLUSTER", "nosuch")
	p.Do("CLUSTER", "KEYSLOT")
	p.Do("CLUSTER", "KEYSLOT", "a", "b")
	p.Do("CLUSTER", "MYID", "x")
	p.Do("CLUSTER", "SETSLOT", "1")
	p.Do("CLUSTER", "SETSLOT", "99999", "STABLE")
	p.Do("CLUSTER", "SETSLOT", "1", "foo")
	p.Do("CLUSTER", "SETSLOT", "1", "STABLE", "x")
	p.Do("CLUSTER", "SETSLOT", "1", "MIGRATING", "abc")
	p.Do("CLUSTER", "SETSLOT", "1", "NODE", "abc")
	p.DoEach([]string{"CLUSTER", "SETSLOT", "6000", "MIGRATING", rc.ids[1]}, []string{"CLUSTER", "SETSLOT", "6000", "MIGRATING", cc.ids[1]})
	p.DoEach([]string{"CLUSTER", "SETSLOT", "1", "IMPORTING", rc.ids[1]}, []string{"CLUSTER", "SETSLOT", "1", "IMPORTING", cc.ids[1]})
	p.Do("INFO", "cluster")
	p.Do("CONFIG", "GET", "cluster-enabled")
	// DUMP and RESTORE: the payloads and their checks.
	p.Do("DUMP", "nokey")
	p.Do("DUMP", "foo")
	p.Do("RESTORE", "b", "0", "garbage")
	p.Do("RESTORE", "b", "-1", "garbage")
	p.Do("RESTORE", "b", "x", "garbage")
	p.Do("RESTORE", "b", "0", "garbage", "foo")
	p.Do("RESTORE", "b", "0", "garbage", "IDLETIME", "-1")
	p.Do("RESTORE", "b", "0", "garbage", "FREQ", "256")
	p.Do("RESTORE", "b", "0", "garbage", "IDLETIME", "1", "FREQ", "2")
	p.Do("RESTORE", "b", "0", "garbage", "REPLACE", "ABSTTL")
	p.Do("SET", "b", "v")
	p.Do("RESTORE", "b", "0", "garbage")
	p.Do("RESTORE", "b", "-1", "garbage")
	p.Do("RESTORE", "foo", "0", "garbage")

	// Scripts: declared keys are routed like any command's keys; a key of
	// another node reached inside the script is Redis's non-local error.
	p.Do("EVAL", "return 1", "1", "foo")
	p.Do("EVAL", "return 1", "2", "b", "aa")
	p.Do("EVAL", "return redis.call('get', 'foo')", "0")
	p.Do("EVAL", "return redis.call('get', 'foo')", "1", "b")
	p.Do("EVAL", "return redis.call('mget', 'aa', 'cc')", "0")
	p.Do("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "b", "from a script")
	p.Do("EVAL", "return redis.call('get', KEYS[1])", "1", "b")
	p.Do("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "foo")
	p.Do("EVALSHA", "0000000000000000000000000000000000000000", "1", "foo")
	p.Do("MULTI")
	p.Do("EVAL", "return 1", "1", "foo")
	p.Do("EVAL", "return redis.call('incr', KEYS[1])", "1", "{b}n")
	p.Do("EXEC")
	p.Do("DEL", "b", "{b}n")

	// Replies whose ids, times or order differ: compared by structure.
	r, c := p.Replies("CLUSTER", "INFO")
	stats := regexp.MustCompile(`(?m)^(cluster_stats_messages|total_cluster_links)[a-z_]*:\d+\r\n`)
	if r, c := stats.ReplaceAll(r, nil), stats.ReplaceAll(c, nil); !bytes.Equal(bytes.SplitN(r, []byte("\r\n"), 2)[1], bytes.SplitN(c, []byte("\r\n"), 2)[1]) {
		t.Errorf("CLUSTER INFO without the bus counters:\n%s", describeDiff("redis-server", r, "cellserver", c))
	}
	r, c = p.Replies("CLUSTER", "MYID")
	if len(r) != len(c) {
		t.Errorf("CLUSTER MYID: redis %q, cellserver %q", r, c)
	}
	ids := func(b []byte, cl *cluster) []byte {
		for i, id := range cl.ids {
			b = bytes.ReplaceAll(b, []byte(id), []byte(fmt.Sprintf("%040d", i)))
		}
		return b
	}
	r, c = p.Replies("CLUSTER", "SLOTS")
	if r, c := ids(r, rc), ids(c, cc); !bytes.Equal(r, c) {
		t.Errorf("CLUSTER SLOTS:\n%s", describeDiff("redis-server", r, "cellserver", c))
	}
	nodes := func(b []byte, cl *cluster) []string {
		var out []string
		for _, l := range strings.Split(string(ids(b, cl)), "\n") {
			if f := strings.Fields(l); len(f) > 8 {
				f[1] = regexp.MustCompile(`@\d+`).ReplaceAllString(f[1], "@bus")
				f[5] = "pong"
				out = append(out, strings.Join(f, " "))
			}
		}
		return out
	}
	r, c = p.Replies("CLUSTER", "NODES")
	if r, c := strings.Join(sortedStrings(nodes(r, rc)), "\n"), strings.Join(sortedStrings(nodes(c, cc)), "\n"); r != c {
		t.Errorf("CLUSTER NODES:\nredis-server:\n%s\ncellserver:\n%s", r, c)
	}

	// RESP3: the same errors; CLUSTER SLOTS's metadata is a map, CLUSTER
	// INFO and NODES are verbatim strings, HELLO says mode cluster.
	r, c = p.Replies("HELLO", "3")
	if !bytes.Contains(r, []byte("$4\r\nmode\r\n$7\r\ncluster\r\n")) || !bytes.Contains(c, []byte("$4\r\nmode\r\n$7\r\ncluster\r\n")) {
		t.Errorf("HELLO 3:\nredis %q\ncell  %q", r, c)
	}
	p.Do("GET", "foo")
	p.Do("MSET", "a", "1", "b", "2")
	p.Do("CLUSTER", "KEYSLOT", "foo")
	p.Do("INFO", "cluster")
	r, c = p.Replies("CLUSTER", "SLOTS")
	if r, c := ids(r, rc), ids(c, cc); !bytes.Equal(r, c) {
		t.Errorf("CLUSTER SLOTS (RESP3):\n%s", describeDiff("redis-server", r, "cellserver", c))
	}
	for _, sub := range []string{"INFO", "NODES"} {
		r, c = p.Replies("CLUSTER", sub)
		if !bytes.HasPrefix(r, []byte("=")) || !bytes.HasPrefix(c, []byte("=")) || !bytes.Contains(c, []byte("\r\ntxt:")) {
			t.Errorf("CLUSTER %s (RESP3) is not verbatim text:\nredis %q\ncell  %q", sub, r, c)
		}
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestClusterDownLikeRedis: a single node serving part of the slots. The
// cluster is down (full coverage is required), keys of unserved slots say
// so first.
func TestClusterDownLikeRedis(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	requirePeer(t, "redis-cli")
	rp, err := startProcess("redis-server partial cluster", "redis-server", func(port int, dir string) []string {
		return append(redisArgs(port, dir, serverOptions{}), "--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Stop()
	if out, err := exec.Command("redis-cli", "-p", portOf(rp.addr), "CLUSTER", "ADDSLOTSRANGE", "0", "8000").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("OK")) {
		t.Fatalf("ADDSLOTSRANGE: %v %s", err, out)
	}
	cc := startCellCluster(t, [][]string{{"0-8000"}})
	rcl := &cluster{addrs: []string{rp.addr}}
	p := newClusterPair(t, rcl, cc, 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, _ := p.rc.Do("CLUSTER", "INFO")
		if bytes.Contains(r, []byte("cluster_slots_assigned:8001")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis never assigned the slots: %q", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Do("SET", "b", "1") // slot 3300: served, but the cluster is down
	p.Do("GET", "foo")    // 12182: not served
	p.Do("MSET", "a", "1", "b", "2")
	p.Do("PING")
	p.Do("CLUSTER", "KEYSLOT", "foo")
	r, c := p.Replies("CLUSTER", "INFO")
	for _, f := range []string{"cluster_state:fail", "cluster_slots_assigned:8001", "cluster_size:1"} {
		if !bytes.Contains(r, []byte(f)) || !bytes.Contains(c, []byte(f)) {
			t.Errorf("CLUSTER INFO lacks %s:\nredis %q\ncell %q", f, r, c)
		}
	}
	// Reads only, while down.
	p.Do("CONFIG", "SET", "cluster-allow-reads-when-down", "yes")
	p.Do("GET", "b")
	p.Do("SET", "b", "1")
	p.Do("GET", "foo")
	p.Do("CONFIG", "SET", "cluster-allow-reads-when-down", "no")
	// Without full coverage the served slots work (Redis updates its state
	// in its cron, and not in its first 2 s).
	p.Do("CONFIG", "SET", "cluster-require-full-coverage", "no")
	p.Do("CONFIG", "GET", "cluster-require-full-coverage")
	for {
		r, _ := p.rc.Do("CLUSTER", "INFO")
		if bytes.Contains(r, []byte("cluster_state:ok")) {
			break
		}
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("redis never left the fail state: %q", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Do("SET", "b", "1")
	p.Do("GET", "b")
	p.Do("GET", "foo")
	p.Do("MSET", "b", "1", "{b}x", "2")
	p.Do("DEL", "b", "{b}x")
	r, c = p.Replies("CLUSTER", "INFO")
	if !bytes.Contains(r, []byte("cluster_state:ok")) || !bytes.Contains(c, []byte("cluster_state:ok")) {
		t.Errorf("CLUSTER INFO without full coverage:\nredis %q\ncell %q", r, c)
	}
}

// TestClusterClients drives a 3-node cellserver cluster with go-redis's
// ClusterClient (strings, hash tags, CROSSSLOT, the topology commands) and
// redis-cli -c, and checks that keys spread over
// every node. The rate-limiting workloads through each client are in
// cluster_workloads_test.go.
func TestClusterClients(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	cc := startCellCluster(t, evenRanges(3))
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cc.addrs[0]}})
	defer cl.Close()

	// The workloads through ClusterClient: TestClusterGoRedis.
	// Strings, and multi-key commands within one hash tag.
	for i := 0; i < 100; i++ {
		if err := cl.Set(ctx, fmt.Sprintf("s:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100; i++ {
		if v, err := cl.Get(ctx, fmt.Sprintf("s:%d", i)).Int(); err != nil || v != i {
			t.Fatalf("GET s:%d: %v %v", i, v, err)
		}
	}
	if err := cl.MSet(ctx, "{t}a", "1", "{t}b", "2").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := cl.MGet(ctx, "{t}a", "{t}b").Result(); err != nil || fmt.Sprint(v) != "[1 2]" {
		t.Errorf("MGET {t}a {t}b: %v %v", v, err)
	}
	if err := cl.MSet(ctx, "x1", "1", "x2", "2").Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Errorf("MSET across slots: %v", err)
	}
	// Every node holds a share of the keys.
	total := int64(0)
	for i, addr := range cc.addrs {
		n, err := redis.NewClient(&redis.Options{Addr: addr}).DBSize(ctx).Result()
		if err != nil || n < 20 {
			t.Errorf("node %d holds %d keys (%v): the keys did not spread", i, n, err)
		}
		total += n
	}
	if total != 100+2 {
		t.Errorf("the cluster holds %d keys, want %d", total, 100+2)
	}

	// go-redis parses the topology replies (RESP3, its default).
	n0 := redis.NewClient(&redis.Options{Addr: cc.addrs[0]})
	defer n0.Close()
	shards, err := n0.ClusterShards(ctx).Result()
	if err != nil || len(shards) != 3 || shards[1].Slots[0].Start != 5461 || shards[1].Nodes[0].Port != int64(mustAtoi(portOf(cc.addrs[1]))) || shards[1].Nodes[0].Role != "master" {
		t.Errorf("CLUSTER SHARDS through go-redis: %v %+v", err, shards)
	}
	slots, err := n0.ClusterSlots(ctx).Result()
	if err != nil || len(slots) != 3 || slots[2].End != 16383 || slots[2].Nodes[0].ID != cc.ids[2] {
		t.Errorf("CLUSTER SLOTS through go-redis: %v %+v", err, slots)
	}
	if info, err := n0.ClusterInfo(ctx).Result(); err != nil || !strings.Contains(info, "cluster_state:ok") {
		t.Errorf("CLUSTER INFO through go-redis: %v %q", err, info)
	}
	if slot, err := n0.ClusterKeySlot(ctx, "{user1000}.following").Result(); err != nil || slot != 3443 {
		t.Errorf("CLUSTER KEYSLOT through go-redis: %v %v", slot, err)
	}

	t.Run("redis-cli", func(t *testing.T) {
		requirePeer(t, "redis-cli")
		host, port := "127.0.0.1", portOf(cc.addrs[0])
		out := cli(t, cc.addrs[0], "SET foo bar\nGET foo\nCL.THROTTLE {u}rl 1 1 60\nCL.THROTTLE {u}rl 1 1 60\nCL.THROTTLE {u}rl 1 1 60\nGET s:42\nINCR n\nINCR n\n", "-c")
		redirects := regexp.MustCompile(`-> Redirected to slot \[\d+\] located at 127.0.0.1:\d+\n`)
		if n := len(redirects.FindAllString(out, -1)); n < 1 {
			t.Errorf("redis-cli -c was never redirected:\n%s", out)
		}
		out = redirects.ReplaceAllString(out, "")
		if want := "OK\nbar\n0\n2\n1\n-1\n60\n0\n2\n0\n-1\n120\n1\n2\n0\n60\n120\n42\n1\n2\n"; out != want {
			t.Errorf("redis-cli -c -h %s -p %s:\n%q\nwant\n%q", host, port, out, want)
		}
		out = cli(t, cc.addrs[1], "", "--cluster", "check", cc.addrs[1])
		if !strings.Contains(out, "[OK] All 16384 slots covered.") {
			t.Errorf("redis-cli --cluster check:\n%s", out)
		}
	})
}

// TestClusterMigrate moves a slot holding counters, TTLs and CL.THROTTLE
// state from node 0 to node 1 with cellserver migrate while a go-redis
// ClusterClient keeps incrementing one of its keys, then reloads a topology
// file with SIGHUP. After the move, the ClusterClient (whose slot map still
// names node 0) and redis-cli -c follow the MOVED and find the keys, TTLs
// and limiter state where they were.
func TestClusterMigrate(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	cc := startCellCluster(t, evenRanges(3))
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{cc.addrs[2]}, MaxRedirects: 16})
	defer cl.Close()
	// Keys of slot 3443 ({user1000}), on node 0.
	const tag = "{user1000}"
	for i := 0; i < 300; i++ {
		if err := cl.Set(ctx, fmt.Sprintf("%s:k%d", tag, i), i, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Set(ctx, tag+":forever", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.HSet(ctx, tag+":h", "f", "v", "g", "w").Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.RPush(ctx, tag+":l", "a", "b", "c").Err(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ZAdd(ctx, tag+":z", redis.Z{Score: 1.5, Member: "m1"}, redis.Z{Score: -2, Member: "m2"}).Err(); err != nil {
		t.Fatal(err)
	}
	throttle := func() []any {
		v, err := cl.Do(ctx, "CL.THROTTLE", tag+":rl", 9, 1, 3600).Slice()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for i := 0; i < 4; i++ {
		throttle()
	}
	if got := fmt.Sprint(throttle()[:3]); got != "[0 10 5]" {
		t.Fatalf("CL.THROTTLE before the move: %s", got)
	}
	// A writer that keeps incrementing during the move.
	stop := make(chan struct{})
	var incrs int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := cl.Incr(ctx, tag+":ctr").Err(); err != nil {
				t.Errorf("INCR during the move: %v", err)
				return
			}
			incrs++
		}
	}()
	time.Sleep(50 * time.Millisecond)
	out, err := exec.Command(cellserverBinary(t), "migrate", "--from", cc.addrs[0], "--to", cc.addrs[1], "--slots", "3443", "--batch", "7").CombinedOutput()
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("cellserver migrate: %v\n%s", err, out)
	}
	t.Logf("%d INCRs during the move; %s", incrs, out)
	if !strings.Contains(string(out), "moved 1 slots and 306 keys") {
		t.Errorf("cellserver migrate said:\n%s", out)
	}
	// Running it again finds the slot moved and only tells the nodes again.
	if out, err := exec.Command(cellserverBinary(t), "migrate", "--from", cc.addrs[0], "--to", cc.addrs[1], "--slots", "3443").CombinedOutput(); err != nil || !strings.Contains(string(out), "moved 1 slots and 0 keys") {
		t.Errorf("cellserver migrate again: %v\n%s", err, out)
	}
	// Every node now sends the slot to node 1.
	for i, addr := range cc.addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		err := c.Get(ctx, tag+":k1").Err()
		c.Close()
		if want := "MOVED 3443 " + cc.addrs[1]; i != 1 && (err == nil || err.Error() != want) {
			t.Errorf("node %d: GET after the move: %v, want %s", i, err, want)
		}
	}
	// redis-cli -c, sent to the old owner, follows the MOVED to the new.
	if out := cli(t, cc.addrs[0], "GET "+tag+":k7\nTTL "+tag+":k7\n", "-c"); out != "-> Redirected to slot [3443] located at "+cc.addrs[1]+"\n7\n3600\n" && out != "-> Redirected to slot [3443] located at "+cc.addrs[1]+"\n7\n3599\n" {
		t.Errorf("redis-cli -c after the move:\n%s", out)
	}
	n1 := redis.NewClient(&redis.Options{Addr: cc.addrs[1]})
	defer n1.Close()
	if n, err := n1.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", "3443").Int(); err != nil || n != 306 {
		t.Errorf("node 1 holds %d keys of the slot (%v), want 306", n, err)
	}
	n0 := redis.NewClient(&redis.Options{Addr: cc.addrs[0]})
	defer n0.Close()
	if n, _ := n0.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", "3443").Int(); n != 0 {
		t.Errorf("node 0 still holds %d keys of the slot", n)
	}
	// Values and TTLs survived, and the counter lost no increment.
	if v, err := cl.Get(ctx, tag+":ctr").Int64(); err != nil || v != incrs {
		t.Errorf("counter after the move: %d (%v), %d INCRs succeeded", v, err, incrs)
	}
	for _, i := range []int{0, 150, 299} {
		k := fmt.Sprintf("%s:k%d", tag, i)
		if v, err := cl.Get(ctx, k).Int(); err != nil || v != i {
			t.Errorf("GET %s: %d %v", k, v, err)
		}
		if ttl, err := cl.PTTL(ctx, k).Result(); err != nil || ttl < 59*time.Minute || ttl > time.Hour {
			t.Errorf("PTTL %s: %v %v", k, ttl, err)
		}
	}
	if ttl, _ := cl.TTL(ctx, tag+":forever").Result(); ttl != -1 {
		t.Errorf("TTL of a key without one: %v", ttl)
	}
	if h, _ := cl.HGetAll(ctx, tag+":h").Result(); fmt.Sprint(h) != "map[f:v g:w]" {
		t.Errorf("hash after the move: %v", h)
	}
	if l, _ := cl.LRange(ctx, tag+":l", 0, -1).Result(); fmt.Sprint(l) != "[a b c]" {
		t.Errorf("list after the move: %v", l)
	}
	if z, _ := cl.ZRangeWithScores(ctx, tag+":z", 0, -1).Result(); fmt.Sprint(z) != "[{-2 m2} {1.5 m1}]" {
		t.Errorf("sorted set after the move: %v", z)
	}
	// The limiter continues where it was: one token left, then limited.
	if got := fmt.Sprint(throttle()[:3]); got != "[0 10 4]" {
		t.Errorf("CL.THROTTLE after the move: %s, want [0 10 4]", got)
	}
	for i := 0; i < 4; i++ {
		throttle()
	}
	if got := fmt.Sprint(throttle()[:3]); got != "[1 10 0]" {
		t.Errorf("CL.THROTTLE past the burst after the move: %s", got)
	}

	// SIGHUP: a file that gives slot 5 (no keys) from node 0 to node 2.
	ports := make([]int, 3)
	for i, a := range cc.addrs {
		ports[i], _ = strconv.Atoi(portOf(a))
	}
	text := topologyText(ports, [][]string{{"0-4", "6-3442", "3444-5460"}, {"3443", "5461-10922"}, {"5", "10923-16383"}})
	if err := os.WriteFile(cc.file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range cc.procs {
		p.Cmd.Process.Signal(syscall.SIGHUP)
	}
	key := "{" + slot5Key + "}x"
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := n0.Set(ctx, key, "v", 0).Err()
		if err != nil && err.Error() == "MOVED 5 "+cc.addrs[2] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 0 after SIGHUP: SET %s: %v", key, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Node 2 may take its SIGHUP a little after node 0 (until then the
	// two send the key to each other).
	for {
		err := cl.Set(ctx, key, "v", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("go-redis after the reload: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A broken file is refused and the running topology stays.
	os.WriteFile(cc.file, []byte("garbage\n"), 0o644)
	cc.procs[0].Cmd.Process.Signal(syscall.SIGHUP)
	time.Sleep(100 * time.Millisecond)
	if err := n0.Set(ctx, key, "v", 0).Err(); err == nil || err.Error() != "MOVED 5 "+cc.addrs[2] {
		t.Errorf("node 0 after a bad file: %v", err)
	}
	if !cc.procs[0].Alive() || !strings.Contains(cc.procs[0].LogTail(5), "topology not reloaded") {
		t.Errorf("node 0 after a bad file:\n%s", cc.procs[0].LogTail(5))
	}
}

// slot5Key hashes to slot 5 (found by search; checked by the test).
var slot5Key = func() string {
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		if crc16Slot(k) == 5 {
			return k
		}
	}
}()

// crc16Slot is the slot of a tag-free key, computed here independently of
// the server's code.
func crc16Slot(k string) int {
	var crc uint16
	for i := 0; i < len(k); i++ {
		crc ^= uint16(k[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// TestClusterReshardWithRedisCli: redis-cli --cluster reshard, Redis's own
// re-sharding tool, moves slots between cellserver nodes (SETSLOT,
// GETKEYSINSLOT, MIGRATE ... KEYS), and --cluster check agrees afterwards.
func TestClusterReshardWithRedisCli(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	requirePeer(t, "redis-cli")
	cc := startCellCluster(t, evenRanges(3))
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cc.addrs})
	defer cl.Close()
	for i := 0; i < 500; i++ {
		if err := cl.Set(ctx, fmt.Sprintf("r:%d", i), i, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("redis-cli", "--cluster", "reshard", cc.addrs[0], "--cluster-from", cc.ids[0],
		"--cluster-to", cc.ids[1], "--cluster-slots", "300", "--cluster-yes").CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster reshard: %v\n%s", err, out)
	}
	if check := cli(t, cc.addrs[2], "", "--cluster", "check", cc.addrs[2]); !strings.Contains(check, "[OK] All nodes agree about slots configuration.") ||
		!strings.Contains(check, "[OK] All 16384 slots covered.") || !strings.Contains(check, "slots:[300-5460] (5161 slots) master") {
		t.Errorf("redis-cli --cluster check after the reshard:\n%s", check)
	}
	for i := 0; i < 500; i++ {
		if v, err := cl.Get(ctx, fmt.Sprintf("r:%d", i)).Int(); err != nil || v != i {
			t.Fatalf("GET r:%d after the reshard: %v %v", i, v, err)
		}
	}
	n1 := redis.NewClient(&redis.Options{Addr: cc.addrs[1]})
	defer n1.Close()
	moved := 0
	for s := 0; s < 300; s++ {
		n, _ := n1.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", s).Int()
		moved += n
	}
	if moved == 0 {
		t.Error("no key of slots 0-299 is on node 1")
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}
