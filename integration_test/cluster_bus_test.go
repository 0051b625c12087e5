package integration_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cellserver/cellserver/cell/hashslot"
	"github.com/cellserver/cellserver/internal/serverproc"
)

// Cluster mode on the cluster bus: cellserver nodes started with
// --cluster-enabled yes and no topology file, formed, checked and
// resharded by redis-cli --cluster as Redis Cluster is, and joined by a
// redis-server node. Node timeouts are 500 ms so failures show quickly.

const busNodeTimeout = "500"

// busNode starts one bus-mode node of kind "cellserver" or "redis-server"
// on a port whose port+10000 is free as well.
func busNode(t *testing.T, kind string, i int) *process {
	t.Helper()
	return busNodeWith(t, kind, i, nil)
}

// busNodeWith is busNode with more arguments, given the port chosen.
func busNodeWith(t *testing.T, kind string, i int, extra func(port int) []string) *process {
	t.Helper()
	bin := requirePeer(t, "redis-server")
	if kind == "cellserver" {
		bin = cellserverBinary(t)
	}
	var lastErr error
	for range 3 {
		port, err := serverproc.FreeClusterPort()
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(harness.tmp, fmt.Sprintf("bus-%s-%d-%d", kind, processSeq.Add(1), port))
		os.MkdirAll(dir, 0o755)
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-node-timeout", busNodeTimeout}
		if kind == "redis-server" {
			args = append(args, "--save", "", "--appendonly", "no")
		}
		if extra != nil {
			args = append(args, extra(port)...)
		}
		p, err := launch(fmt.Sprintf("%s bus node %d", kind, i), bin, args, dir, port)
		if err == nil {
			t.Cleanup(p.Stop)
			// Before the stop: what the node logged (state changes, FAIL
			// marks, elections) tells why a test failed.
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("--- %s %s (%s), last lines:\n%s", p.name, p.addr, nodeIDOrNone(p), p.LogTail(30))
				}
			})
			return p
		}
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil
}

// nodeIDOrNone is CLUSTER MYID of a node still up, for logs.
func nodeIDOrNone(p *process) string {
	out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(p.addr), "CLUSTER", "MYID").Output()
	if err != nil || len(out) == 0 {
		return "down"
	}
	return strings.TrimSpace(string(out))
}

// busCluster is what redis-cli --cluster create made of n cellserver
// nodes: masters ordered by their first slot, replicas after them.
type busCluster struct {
	*cluster
	masters  int
	replicas []*process
}

func createBusCluster(t *testing.T, n, replicas int) *busCluster {
	t.Helper()
	requirePeer(t, "redis-cli")
	var procs []*process
	args := []string{"--cluster", "create"}
	for i := range n {
		p := busNode(t, "cellserver", i)
		procs = append(procs, p)
		args = append(args, p.addr)
	}
	if replicas > 0 {
		args = append(args, "--cluster-replicas", strconv.Itoa(replicas))
	}
	args = append(args, "--cluster-yes")
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	bc := &busCluster{cluster: &cluster{}}
	type master struct {
		p     *process
		id    string
		first int
	}
	var ms []master
	for _, p := range procs {
		waitClusterOK(t, p.addr, n)
		nodes := cli(t, p.addr, "", "CLUSTER", "NODES")
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || !strings.Contains(f[2], "myself") {
				continue
			}
			if strings.Contains(f[2], "slave") {
				bc.replicas = append(bc.replicas, p)
			} else if len(f) > 8 {
				lo, _, _ := strings.Cut(f[8], "-")
				first, _ := strconv.Atoi(lo)
				ms = append(ms, master{p, f[0], first})
			}
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].first < ms[j].first })
	for _, m := range ms {
		bc.procs = append(bc.procs, m.p)
		bc.addrs = append(bc.addrs, m.p.addr)
		bc.ids = append(bc.ids, m.id)
	}
	bc.masters = len(ms)
	if len(ms)+len(bc.replicas) != n {
		t.Fatalf("%d masters and %d replicas of %d nodes", len(ms), len(bc.replicas), n)
	}
	return bc
}

// waitClusterOK waits until the node at addr says cluster_state:ok and
// knows known nodes.
func waitClusterOK(t *testing.T, addr string, known int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, _ := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(addr), "CLUSTER", "INFO").Output()
		if strings.Contains(string(out), "cluster_state:ok") && strings.Contains(string(out), "cluster_known_nodes:"+strconv.Itoa(known)+"\r") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: cluster not ok with %d nodes after 15 s:\n%s", addr, known, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkClean runs redis-cli --cluster check against addr and requires
// no error or warning.
func checkClean(t *testing.T, addr string, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out, err := exec.Command("redis-cli", "--cluster", "check", addr).CombinedOutput()
		s := string(out)
		if err == nil && strings.Contains(s, "[OK] All nodes agree about slots configuration.") &&
			strings.Contains(s, "[OK] All 16384 slots covered.") && !strings.Contains(s, "[ERR]") && !strings.Contains(s, "[WARNING]") {
			return
		}
		// Right after a change the nodes may still be gossiping it.
		if time.Now().After(deadline) {
			t.Fatalf("%s: redis-cli --cluster check %s: %v\n%s", what, addr, err, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBusClusterCreate: three cellserver nodes formed by redis-cli
// --cluster create; check is clean, and go-redis's ClusterClient and
// redis-cli -c run W1-W4 and W8 with the transcript of one node.
func TestBusClusterCreate(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	checkClean(t, bc.addrs[0], "after create")
	info := cli(t, bc.addrs[1], "", "CLUSTER", "INFO")
	for _, want := range []string{"cluster_state:ok", "cluster_slots_assigned:16384", "cluster_known_nodes:3", "cluster_size:3"} {
		if !strings.Contains(info, want) {
			t.Errorf("CLUSTER INFO lacks %s:\n%s", want, info)
		}
	}
	single := freshSingle(t)
	one := redis.NewClient(&redis.Options{Addr: single.addr})
	defer one.Close()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{bc.addrs[2]}})
	defer cl.Close()
	want := goRedisSession(t, one, func(ctx context.Context, fn func(context.Context, *redis.Client) error) error { return fn(ctx, one) })
	got := goRedisSession(t, cl, cl.ForEachMaster)
	compareLines(t, "go-redis ClusterClient on the bus", "one node", want, got)
	requireSpread(t, bc.cluster, 25, 120)

	// PUBLISH on one node reaches a subscriber of another (the bus carries
	// it), SPUBLISH the subscribers of its shard.
	sub := redis.NewClient(&redis.Options{Addr: bc.addrs[0]})
	defer sub.Close()
	ps := sub.Subscribe(context.Background(), "news")
	defer ps.Close()
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	pub := redis.NewClient(&redis.Options{Addr: bc.addrs[2]})
	defer pub.Close()
	pub.Publish(context.Background(), "news", "hello")
	select {
	case m := <-ps.Channel():
		if m.Payload != "hello" {
			t.Errorf("got %q", m.Payload)
		}
	case <-time.After(5 * time.Second):
		t.Error("PUBLISH on node 2 did not reach node 0's subscriber")
	}

	// redis-cli -c: the same session typed in, after a FLUSHALL on every
	// node.
	for _, a := range bc.addrs {
		cli(t, a, "", "FLUSHALL")
	}
	cli(t, single.addr, "", "FLUSHALL")
	session := redisCliSession(12)
	tat := regexp.MustCompile(`(?m)^1[0-9]{18}$`)
	oneOut := tat.ReplaceAllString(cli(t, single.addr, session), "<tat>")
	out := cli(t, bc.addrs[0], session, "-c")
	redirects := regexp.MustCompile(`-> Redirected to slot \[\d+\] located at 127.0.0.1:\d+\n`)
	many := tat.ReplaceAllString(redirects.ReplaceAllString(out, ""), "<tat>")
	compareLines(t, "redis-cli -c on the bus", "one node", strings.Split(oneOut, "\n"), strings.Split(many, "\n"))
	requireSpread(t, bc.cluster, 10, 48)
}

// TestBusClusterReplicas: six nodes with --cluster-replicas 1; each
// replica follows its master through cellserver's replication, a restart
// keeps the node's id and place (nodes.conf), and a killed master is
// reported failing by the others.
func TestBusClusterReplicas(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 6, 1)
	if bc.masters != 3 || len(bc.replicas) != 3 {
		t.Fatalf("%d masters, %d replicas; want 3 and 3", bc.masters, len(bc.replicas))
	}
	checkClean(t, bc.addrs[0], "after create")
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{bc.replicas[0].addr}})
	defer cl.Close()
	for i := range 300 {
		if err := cl.Set(ctx, fmt.Sprintf("user:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cl.Do(ctx, "WAIT", 1, 5000).Result(); err != nil {
		t.Logf("WAIT through the cluster client: %v", err)
	}
	// Every replica ends up with its master's keys.
	deadline := time.Now().Add(10 * time.Second)
	for _, r := range bc.replicas {
		var master string
		for _, line := range strings.Split(cli(t, r.addr, "", "CLUSTER", "NODES"), "\n") {
			if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "myself") {
				master = f[3]
			}
		}
		mi := -1
		for i, id := range bc.ids {
			if id == master {
				mi = i
			}
		}
		if mi < 0 {
			t.Fatalf("replica %s follows %q, not a master", r.addr, master)
		}
		for {
			a, b := cli(t, bc.addrs[mi], "", "DBSIZE"), cli(t, r.addr, "", "DBSIZE")
			if a == b && a != "0\n" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica %s holds %q keys, its master %q", r.addr, b, a)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A replica redirects a read of its master's slot, unless the client
	// sent READONLY; writes are redirected either way.
	r0 := bc.replicas[0]
	var key string
	for i := range 300 {
		k := fmt.Sprintf("user:%d", i)
		if n, _ := cl.MasterForKey(ctx, k); n != nil && replicaOf(t, r0.addr) == nodeIDAt(t, n.Options().Addr) {
			key = k
			break
		}
	}
	if key == "" {
		t.Fatal("no key of the replica's master")
	}
	rc, err := dialRESP(r0.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"GET", key}, "-MOVED "},
		{[]string{"READONLY"}, "+OK"},
		{[]string{"GET", key}, "$"},
		{[]string{"SET", key, "x"}, "-MOVED "},
		{[]string{"READWRITE"}, "+OK"},
		{[]string{"GET", key}, "-MOVED "},
	} {
		if r, err := rc.Do(step.args...); err != nil || !strings.HasPrefix(string(r), step.want) {
			t.Errorf("%v on a replica: %q %v, want %s...", step.args, r, err, step.want)
		}
	}
	// CLUSTER REPLICAS on a master lists its replica.
	if reps := cli(t, bc.addrs[0], "", "CLUSTER", "REPLICAS", bc.ids[0]); !strings.Contains(reps, "slave "+bc.ids[0]) {
		t.Errorf("CLUSTER REPLICAS %s:\n%s", bc.ids[0], reps)
	}
	busManualFailover(t, bc)
	busFailover(t, bc, cl)
}

// busManualFailover runs CLUSTER FAILOVER on the first master's replica:
// the two swap roles with every key in place.
func busManualFailover(t *testing.T, bc *busCluster) {
	var replica *process
	var replicaID string
	for _, r := range bc.replicas {
		for _, line := range strings.Split(cli(t, r.addr, "", "CLUSTER", "NODES"), "\n") {
			if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "myself") && f[3] == bc.ids[0] {
				replica, replicaID = r, f[0]
			}
		}
	}
	if replica == nil {
		t.Fatalf("no replica follows %s", bc.ids[0])
	}
	keys := cli(t, bc.addrs[0], "", "DBSIZE")
	if out := cli(t, replica.addr, "", "CLUSTER", "FAILOVER"); out != "OK\n" {
		t.Fatalf("CLUSTER FAILOVER: %q", out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		swapped := regexp.MustCompile(bc.ids[0] + ` \S+ myself,slave ` + replicaID).MatchString(cli(t, bc.addrs[0], "", "CLUSTER", "NODES"))
		if swapped && strings.Contains(cli(t, bc.addrs[0], "", "INFO", "replication"), "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CLUSTER FAILOVER: no swap within 15 s:\n%s", cli(t, bc.addrs[0], "", "CLUSTER", "NODES"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := cli(t, replica.addr, "", "DBSIZE"); got != keys {
		t.Errorf("new master holds %q keys, the old one held %q", got, keys)
	}
	checkClean(t, replica.addr, "after CLUSTER FAILOVER")
}

// busFailover kills -9 the master of the last slots after writing keys to
// it acknowledged by WAIT 1: its replica wins the election within a few
// node timeouts, the cluster is ok again, the cluster client reads every
// key and writes on, and the old master, restarted, rejoins as a replica
// of the new one.
func busFailover(t *testing.T, bc *busCluster, cl *redis.ClusterClient) {
	ctx := context.Background()
	victim, victimID := bc.procs[2], bc.ids[2]
	var replica *process
	var replicaID string
	for _, r := range bc.replicas {
		for _, line := range strings.Split(cli(t, r.addr, "", "CLUSTER", "NODES"), "\n") {
			if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "myself") && f[3] == victimID {
				replica, replicaID = r, f[0]
			}
		}
	}
	if replica == nil {
		t.Fatalf("no replica follows %s", victimID)
	}
	// Keys of the victim's slots, written on one connection and
	// acknowledged by its replica.
	direct := redis.NewClient(&redis.Options{Addr: victim.addr, PoolSize: 1})
	defer direct.Close()
	var acked []string
	for i := 0; len(acked) < 500; i++ {
		k := fmt.Sprintf("acked:%d", i)
		if hashslot.Of([]byte(k)) >= 10923 {
			acked = append(acked, k)
		}
	}
	pipe := direct.Pipeline()
	for _, k := range acked {
		pipe.Set(ctx, k, k, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := direct.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 on the master: %d, %v", n, err)
	}
	// A client of its own writes to the victim's slots all along: its
	// writes fail while the slots have no master, then carry on.
	writes := carryOn(t, bc.addrs[0], acked)
	victim.kill()
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		nodes := cli(t, bc.addrs[0], "", "CLUSTER", "NODES")
		info := cli(t, bc.addrs[0], "", "CLUSTER", "INFO")
		if regexp.MustCompile(replicaID+` \S+ master `).MatchString(nodes) && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failover 20 s after the kill:\n%s\n%s", nodes, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("failover: replica %s serves the killed master's slots %v after the kill (node timeout %s ms)", replicaID, time.Since(start).Round(time.Millisecond), busNodeTimeout)
	// Every key: the acknowledged ones on the new master, the earlier
	// ones through the cluster client, which follows the new map.
	for _, k := range acked {
		if v := cli(t, replica.addr, "", "GET", k); v != k+"\n" {
			t.Fatalf("GET %s on the new master: %q", k, v)
		}
	}
	deadline = time.Now().Add(10 * time.Second)
	for i := 0; i < 300; {
		v, err := cl.Get(ctx, fmt.Sprintf("user:%d", i)).Result()
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("GET user:%d through the cluster client after the failover: %v", i, err)
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if v != strconv.Itoa(i) {
			t.Fatalf("user:%d = %q after the failover", i, v)
		}
		i++
	}
	for _, k := range acked[:50] {
		if err := cl.Set(ctx, k, "after", 0).Err(); err != nil {
			t.Fatalf("SET %s through the cluster client after the failover: %v", k, err)
		}
	}
	w := writes()
	outage := "none"
	if w.failed > 0 {
		outage = fmt.Sprintf("the last %v after the kill (%v)", w.lastFail.Sub(start).Round(time.Millisecond), w.lastErr)
	}
	t.Logf("a client writing all along: %d writes, %d failed, %s; then %d in a row succeeded", w.writes, w.failed, outage, w.okAfter)
	// The old master comes back with its nodes.conf: told of the newer
	// epoch, it turns into a replica of the new master and syncs.
	q, err := launch("cellserver bus node restarted after failover", cellserverBinary(t), victim.Cmd.Args[1:], victim.Cmd.Dir, mustAtoi(portOf(victim.addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Stop)
	deadline = time.Now().Add(20 * time.Second)
	for {
		nodes := cli(t, q.addr, "", "CLUSTER", "NODES")
		synced := strings.Contains(cli(t, q.addr, "", "INFO", "replication"), "master_link_status:up") &&
			cli(t, q.addr, "", "DBSIZE") == cli(t, replica.addr, "", "DBSIZE")
		if regexp.MustCompile(victimID+` \S+ myself,slave `+replicaID).MatchString(nodes) && synced {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old master did not rejoin as a replica of %s with its data:\n%s", replicaID, nodes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkClean(t, bc.addrs[0], "after the failover and the old master's return")
}

// writeLog is what carryOn's client saw.
type writeLog struct {
	writes, failed int
	lastFail       time.Time
	lastErr        error
	okAfter        int // writes that succeeded since the last failure
}

// carryOn starts a cluster client that SETs keys tagged like keys, one
// at a time. It returns once the client has written 50 keys, and a
// function that waits until the last 50 writes all succeeded (failing t
// after 30 s: the client did not carry on), stops the client and tells
// how it went. go-redis's ClusterClient sends a slot's writes to the
// master of its slot map, which it reloads on a MOVED or when 10 s old:
// writes to a killed master's slots fail until then, whichever server
// runs the cluster.
func carryOn(t *testing.T, addr string, keys []string) func() writeLog {
	t.Helper()
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	var mu sync.Mutex
	var w writeLog
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer cl.Close()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := cl.Set(ctx, "{"+keys[i%len(keys)]+"}:w", i, 0).Err()
			mu.Lock()
			w.writes++
			if err != nil {
				w.failed, w.lastFail, w.lastErr, w.okAfter = w.failed+1, time.Now(), err, 0
			} else {
				w.okAfter++
			}
			mu.Unlock()
			if err != nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	var once sync.Once
	stopIt := func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(stopIt)
	carried := func() string {
		mu.Lock()
		defer mu.Unlock()
		if w.okAfter < 50 {
			return fmt.Sprintf("the writing client: %d writes, %d failed, %d in a row since the last failure (%v)", w.writes, w.failed, w.okAfter, w.lastErr)
		}
		return ""
	}
	waitFor(t, 10*time.Second, carried)
	return func() writeLog {
		t.Helper()
		waitFor(t, 30*time.Second, carried)
		stopIt()
		return w
	}
}

// TestBusClusterRestart: a node restarted with its --dir keeps its id and
// slots (nodes.conf) and rejoins; the cluster is whole again.
func TestBusClusterRestart(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	p := bc.procs[1]
	before := cli(t, p.addr, "", "CLUSTER", "MYID")
	p.Stop()
	args := p.Cmd.Args[1:]
	q, err := launch("cellserver bus node restarted", cellserverBinary(t), args, p.Cmd.Dir, mustAtoi(portOf(p.addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Stop)
	if after := cli(t, q.addr, "", "CLUSTER", "MYID"); after != before {
		t.Errorf("id after restart %q, before %q", after, before)
	}
	waitClusterOK(t, q.addr, 3)
	checkClean(t, bc.addrs[0], "after a restart")
	conf, err := os.ReadFile(filepath.Join(p.Cmd.Dir, "nodes.conf"))
	if err != nil || !strings.Contains(string(conf), "vars currentEpoch ") {
		t.Errorf("nodes.conf: %v\n%s", err, conf)
	}
}

// fillAndVerify writes n keys through a cluster client and returns a
// function that reads every one back.
func fillAndVerify(t *testing.T, addr string, n int) func(what string) {
	t.Helper()
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	t.Cleanup(func() { cl.Close() })
	pipe := cl.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("key:%d", i), fmt.Sprintf("value-%d", i), 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return func(what string) {
		t.Helper()
		// A client of its own each time: a reused one may refresh its
		// slot map from a node just deleted (CLUSTER RESET: no slots).
		cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
		defer cl.Close()
		missing := 0
		for i := range n {
			v, err := cl.Get(ctx, fmt.Sprintf("key:%d", i)).Result()
			if err != nil || v != fmt.Sprintf("value-%d", i) {
				if missing < 5 {
					t.Errorf("%s: key:%d = %q, %v", what, i, v, err)
				}
				missing++
			}
		}
		if missing > 0 {
			t.Fatalf("%s: %d of %d keys do not read back", what, missing, n)
		}
	}
}

// reshard runs redis-cli --cluster reshard of count slots from one node
// id to another.
func reshard(t *testing.T, via, from, to string, count int) {
	t.Helper()
	args := []string{"--cluster", "reshard", via, "--cluster-from", from, "--cluster-to", to,
		"--cluster-slots", strconv.Itoa(count), "--cluster-yes"}
	out, err := exec.Command("redis-cli", args...).CombinedOutput()
	if err != nil || strings.Contains(string(out), "[ERR]") {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(out), 30))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestBusClusterReshard: redis-cli --cluster reshard moves 1000 slots with
// their keys from one cellserver to another; every key reads back and
// check is clean.
func TestBusClusterReshard(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	verify := fillAndVerify(t, bc.addrs[0], 3000)
	before := cli(t, bc.addrs[0], "", "DBSIZE")
	start := time.Now()
	reshard(t, bc.addrs[0], bc.ids[0], bc.ids[1], 1000)
	took := time.Since(start)
	checkClean(t, bc.addrs[2], "after the reshard")
	verify("after the reshard")
	after := cli(t, bc.addrs[0], "", "DBSIZE")
	if after == before {
		t.Errorf("node 0 still holds %s keys after giving away 1000 slots", after)
	}
	t.Logf("reshard: 1000 slots with %d of the 3000 keys moved in %v; every key reads back",
		mustAtoi(strings.TrimSpace(before))-mustAtoi(strings.TrimSpace(after)), took.Round(time.Millisecond))
	nodes := cli(t, bc.addrs[2], "", "CLUSTER", "NODES")
	if !regexp.MustCompile(bc.ids[1] + ` .* 0-999 `).MatchString(nodes) {
		t.Errorf("node 1 does not serve slots 0-999 seen from node 2:\n%s", nodes)
	}
}

// TestBusClusterMixed: a redis-server 7.0.15 node joins three cellserver
// nodes with redis-cli --cluster add-node; slots with keys move to it and
// back, check is clean throughout and every key reads back.
func TestBusClusterMixed(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	verify := fillAndVerify(t, bc.addrs[0], 2000)
	r := busNode(t, "redis-server", 3)
	out, err := exec.Command("redis-cli", "--cluster", "add-node", r.addr, bc.addrs[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] New node added correctly.") {
		t.Fatalf("add-node: %v\n%s", err, out)
	}
	waitClusterOK(t, r.addr, 4)
	for _, a := range bc.addrs {
		waitClusterOK(t, a, 4)
	}
	checkClean(t, bc.addrs[1], "after add-node")
	rid := strings.TrimSpace(cli(t, r.addr, "", "CLUSTER", "MYID"))
	start := time.Now()
	reshard(t, bc.addrs[0], bc.ids[0], rid, 300)
	took := time.Since(start)
	checkClean(t, r.addr, "after moving slots to redis-server")
	checkClean(t, bc.addrs[0], "after moving slots to redis-server")
	moved := strings.TrimSpace(cli(t, r.addr, "", "DBSIZE"))
	if moved == "0" {
		t.Errorf("redis-server holds no keys after taking 300 slots")
	}
	verify("with slots on redis-server")
	start = time.Now()
	reshard(t, bc.addrs[0], rid, bc.ids[0], 300)
	back := time.Since(start)
	checkClean(t, bc.addrs[2], "after moving the slots back")
	if n := strings.TrimSpace(cli(t, r.addr, "", "DBSIZE")); n != "0" {
		t.Errorf("redis-server holds %s keys after giving its slots back", n)
	}
	verify("after moving the slots back")
	t.Logf("mixed: 300 slots with %s of the 2000 keys to redis-server in %v and back in %v; every key reads back",
		moved, took.Round(time.Millisecond), back.Round(time.Millisecond))
}

// TestBusClusterErrors: the CLUSTER subcommands' replies and refusals on a
// lone bus-mode cellserver, byte for byte as a lone redis-server 7.0.15
// with cluster-enabled answers them (node ids normalized).
func TestBusClusterErrors(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	rp := busNode(t, "redis-server", 0)
	cp := busNode(t, "cellserver", 0)
	rid := strings.TrimSpace(cli(t, rp.addr, "", "CLUSTER", "MYID"))
	cid := strings.TrimSpace(cli(t, cp.addr, "", "CLUSTER", "MYID"))
	rc, err := dialRESP(rp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	cc, err := dialRESP(cp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	unknown := strings.Repeat("ab", 20)
	for _, cmd := range [][]string{
		{"CONFIG", "SET", "cluster-announce-hostname", "bad_host!"},
		{"CONFIG", "SET", "cluster-announce-hostname", strings.Repeat("a", 256)},
		{"CONFIG", "SET", "cluster-announce-hostname", "node.example"},
		{"CONFIG", "GET", "cluster-announce-hostname"},
		{"CONFIG", "SET", "cluster-announce-hostname", ""},
		{"CONFIG", "SET", "cluster-announce-port", "65536"},
		{"CONFIG", "SET", "cluster-announce-bus-port", "-1"},
		{"CONFIG", "SET", "cluster-announce-tls-port", "x"},
		{"CONFIG", "GET", "cluster-announce-ip"},
		{"CONFIG", "GET", "cluster-announce-tls-port"},
		{"CONFIG", "SET", "cluster-preferred-endpoint-type", "foo"},
		{"CONFIG", "SET", "cluster-preferred-endpoint-type", "HOSTNAME"},
		{"CONFIG", "GET", "cluster-preferred-endpoint-type"},
		{"CONFIG", "SET", "cluster-preferred-endpoint-type", "ip"},
		{"CLUSTER", "ADDSLOTS", "1", "2"},
		{"CLUSTER", "ADDSLOTS", "1"},
		{"CLUSTER", "ADDSLOTS", "9", "9"},
		{"CLUSTER", "ADDSLOTS", "99999"},
		{"CLUSTER", "ADDSLOTS", "x"},
		{"CLUSTER", "ADDSLOTSRANGE", "5", "3"},
		{"CLUSTER", "ADDSLOTSRANGE", "1"},
		{"CLUSTER", "ADDSLOTSRANGE", "10", "20"},
		{"CLUSTER", "DELSLOTS", "7"},
		{"CLUSTER", "DELSLOTSRANGE", "15", "20"},
		{"CLUSTER", "DELSLOTSRANGE", "15", "20"},
		{"CLUSTER", "MEET", "127.0.0.1", "x"},
		{"CLUSTER", "MEET", "127.0.0.1", "1", "99999"},
		{"CLUSTER", "MEET", "nonsense", "7000"},
		{"CLUSTER", "MEET", "127.0.0.1", "7000", "1", "2"},
		{"CLUSTER", "SETSLOT", "1", "MIGRATING", "x"},
		{"CLUSTER", "SETSLOT", "3", "MIGRATING", "ID"},
		{"CLUSTER", "SETSLOT", "1", "IMPORTING", "ID"},
		{"CLUSTER", "SETSLOT", "1", "NODE", unknown},
		{"CLUSTER", "SETSLOT", "1", "foo"},
		{"CLUSTER", "SETSLOT", "1", "STABLE"},
		{"CLUSTER", "FORGET", unknown},
		{"CLUSTER", "FORGET", "ID"},
		{"CLUSTER", "REPLICATE", unknown},
		{"CLUSTER", "REPLICATE", "ID"},
		{"CLUSTER", "REPLICAS", unknown},
		{"CLUSTER", "REPLICAS", "ID"},
		{"CLUSTER", "SLAVES", "ID"},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", unknown},
		{"CLUSTER", "COUNT-FAILURE-REPORTS", "ID"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "-1"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "x"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "5"},
		{"CLUSTER", "SET-CONFIG-EPOCH", "6"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "BUMPEPOCH"},
		{"CLUSTER", "RESET", "foo"},
		{"CLUSTER", "COUNTKEYSINSLOT", "1"},
		{"CLUSTER", "KEYSLOT", "foo"},
		{"CLUSTER", "LINKS"},
		{"CLUSTER", "FAILOVER"},
		{"CLUSTER", "FAILOVER", "FORCE"},
		{"CLUSTER", "FAILOVER", "TAKEOVER"},
		{"CLUSTER", "FAILOVER", "foo"},
		{"CLUSTER", "FAILOVER", "FORCE", "x"},
		{"GET", "foo"},
		{"SET", "{a}x", "1"},
		{"CLUSTER", "SETSLOT", "15495", "NODE", "ID"},
		{"SET", "a", "1"},
		{"CLUSTER", "RESET"},
		{"CLUSTER", "DELSLOTS", "15495"},
		{"DEL", "a"},
		{"CLUSTER", "RESET", "SOFT"},
		{"CLUSTER", "SAVECONFIG"},
	} {
		rargs := append([]string(nil), cmd...)
		cargs := append([]string(nil), cmd...)
		for i := range cmd {
			if cmd[i] == "ID" {
				rargs[i], cargs[i] = rid, cid
			}
		}
		r, err1 := rc.Do(rargs...)
		c, err2 := cc.Do(cargs...)
		if err1 != nil || err2 != nil {
			t.Fatalf("%v: %v %v", cmd, err1, err2)
		}
		c = []byte(strings.ReplaceAll(string(c), cid, "<myid>"))
		r = []byte(strings.ReplaceAll(string(r), rid, "<myid>"))
		if string(r) != string(c) {
			t.Errorf("%s:\n%s", formatCommand(cmd), describeDiff("redis-server", r, "cellserver", c))
		}
	}
}

// replicaOf is the master id a node's CLUSTER NODES gives for itself.
func replicaOf(t *testing.T, addr string) string {
	t.Helper()
	for _, line := range strings.Split(cli(t, addr, "", "CLUSTER", "NODES"), "\n") {
		if f := strings.Fields(line); len(f) > 3 && strings.Contains(f[2], "myself") {
			return f[3]
		}
	}
	return ""
}

// nodeIDAt is CLUSTER MYID of the node at addr.
func nodeIDAt(t *testing.T, addr string) string {
	t.Helper()
	return strings.TrimSpace(cli(t, addr, "", "CLUSTER", "MYID"))
}

// TestBusClusterMixedFailover: failover elections across kinds. Masters
// redis-server, redis-server and cellserver; a cellserver replica of the
// first redis-server master wins after it is killed, which takes the
// votes of both the surviving redis-server and cellserver masters; then a
// redis-server replica of the cellserver master wins after that one is
// killed, voted in by redis-server and the promoted cellserver.
func TestBusClusterMixedFailover(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	requirePeer(t, "redis-cli")
	masters := []*process{busNode(t, "redis-server", 0), busNode(t, "redis-server", 1), busNode(t, "cellserver", 2)}
	args := []string{"--cluster", "create"}
	for _, p := range masters {
		args = append(args, p.addr)
	}
	if out, err := exec.Command("redis-cli", append(args, "--cluster-yes")...).CombinedOutput(); err != nil || !strings.Contains(string(out), "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, p := range masters {
		waitClusterOK(t, p.addr, 3)
	}
	id := func(p *process) string { return strings.TrimSpace(cli(t, p.addr, "", "CLUSTER", "MYID")) }
	addReplica := func(kind string, i int, master *process, known int) *process {
		return addBusReplica(t, kind, i, master, id(master), known)
	}
	// Keys on every master, then a replica for the first.
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{masters[2].addr}})
	defer cl.Close()
	ctx := context.Background()
	for i := range 300 {
		if err := cl.Set(ctx, fmt.Sprintf("k:%d", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	failover := func(victim, replica *process, witness *process) {
		t.Helper()
		rid := id(replica)
		victim.kill()
		start := time.Now()
		deadline := start.Add(20 * time.Second)
		for {
			nodes := cli(t, witness.addr, "", "CLUSTER", "NODES")
			if regexp.MustCompile(rid+` \S+ master `).MatchString(nodes) && strings.Contains(cli(t, witness.addr, "", "CLUSTER", "INFO"), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no failover to %s 20 s after the kill:\n%s", replica.name, nodes)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("%s took over %v after the kill", replica.name, time.Since(start).Round(time.Millisecond))
		deadline = time.Now().Add(10 * time.Second)
		for i := 0; i < 300; {
			v, err := cl.Get(ctx, fmt.Sprintf("k:%d", i)).Result()
			if err != nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			if err != nil || v != strconv.Itoa(i) {
				t.Fatalf("k:%d after the failover to %s: %q, %v", i, replica.name, v, err)
			}
			i++
		}
	}
	c3 := addReplica("cellserver", 3, masters[0], 4)
	failover(masters[0], c3, masters[1])
	r4 := addReplica("redis-server", 4, masters[2], 5)
	failover(masters[2], r4, masters[1])
	checkClean(t, masters[1].addr, "after two failovers")
}
