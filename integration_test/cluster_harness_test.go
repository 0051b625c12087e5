package integration_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// Clusters for the cluster-mode tests: cellserver nodes sharing one topology
// file, and one real Redis 7.0 cluster (redis-server --cluster-enabled yes
// x3 + redis-cli --cluster create) started once per run, lazily, and
// stopped by pid with every other process at the end of the run.

// cluster is n nodes, ordered by the slots they serve (node 0 has slot 0).
type cluster struct {
	procs []*process
	addrs []string
	ids   []string
	file  string // the topology file (cellserver only)
	// relaunch starts node i again with its arguments, port and --dir
	// (cellserver only).
	relaunch []func() (*process, error)
}

// splitSlots divides the 16384 slots among n nodes as redis-cli --cluster
// create does, so both kinds of cluster give a key to the same node index.
func splitSlots(n int) [][2]int {
	per := float64(16384) / float64(n)
	var out [][2]int
	first, cursor := 0, 0.0
	for i := 0; i < n; i++ {
		last := int(math.Round(cursor + per - 1))
		if last > 16383 || i == n-1 {
			last = 16383
		}
		out = append(out, [2]int{first, last})
		first = last + 1
		cursor += per
	}
	return out
}

// nodeID makes a fixed 40-hex id for node i of a test cluster.
func nodeID(i int) string {
	return fmt.Sprintf("%040x", 0xce11000+i)
}

// topologyText is a topology file giving node i the ranges of ranges[i].
func topologyText(ports []int, ranges [][]string) string {
	var b strings.Builder
	b.WriteString("# cellserver test cluster\n")
	for i, p := range ports {
		fmt.Fprintf(&b, "%s 127.0.0.1:%d@%d master - 0 0 %d connected %s\n", nodeID(i), p, busPort(p), i+1, strings.Join(ranges[i], " "))
	}
	return b.String()
}

// busPort is the bus port a topology line prints for port: Redis's
// port+10000 while that is a port, else port-10000 (free ports come from
// the ephemeral range, up to 60999, and a node refuses a bus port above
// 65535).
func busPort(port int) int {
	if port+10000 > 65535 {
		return port - 10000
	}
	return port + 10000
}

// evenRanges is splitSlots as topology file ranges.
func evenRanges(n int) [][]string {
	var out [][]string
	for _, r := range splitSlots(n) {
		out = append(out, []string{fmt.Sprintf("%d-%d", r[0], r[1])})
	}
	return out
}

var clusterSeq int

// startCellCluster starts one cellserver per entry of ranges, all reading
// one topology file, each told its id with --cluster-node-id. Another
// program may take a port between our probe and the bind, so it tries
// three sets of ports.
func startCellCluster(t testing.TB, ranges [][]string, extra ...string) *cluster {
	t.Helper()
	bin := cellserverBinary(t)
	var err error
	for range 3 {
		var c *cluster
		if c, err = launchCellCluster(bin, ranges, extra...); err == nil {
			t.Cleanup(c.stop)
			return c
		}
	}
	t.Fatal(err)
	return nil
}

func launchCellCluster(bin string, ranges [][]string, extra ...string) (*cluster, error) {
	clusterSeq++
	dir := filepath.Join(harness.tmp, fmt.Sprintf("cell-cluster-%d", clusterSeq))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports := make([]int, len(ranges))
	for i := range ports {
		p, err := serverproc.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	c := &cluster{file: filepath.Join(dir, "topology.conf")}
	if err := os.WriteFile(c.file, []byte(topologyText(ports, ranges)), 0o644); err != nil {
		return nil, err
	}
	for i, port := range ports {
		nd := filepath.Join(dir, strconv.Itoa(i))
		os.MkdirAll(nd, 0o755)
		args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", nd,
			"--cluster-enabled", "yes", "--cluster-config-file", c.file, "--cluster-node-id", nodeID(i)}, extra...)
		start := func() (*process, error) { return launch(fmt.Sprintf("cellserver node %d", i), bin, args, nd, port) }
		p, err := start()
		if err != nil {
			c.stop()
			return nil, err
		}
		c.relaunch = append(c.relaunch, start)
		c.procs = append(c.procs, p)
		c.addrs = append(c.addrs, p.addr)
		c.ids = append(c.ids, nodeID(i))
	}
	return c, nil
}

func (c *cluster) stop() {
	for _, p := range c.procs {
		p.Stop()
	}
}

var redisCluster struct {
	once sync.Once
	c    *cluster
	err  error
}

// sharedRedisCluster is a 3-master Redis 7.0 cluster on loopback, made by
// redis-cli --cluster create, shared by the whole run.
func sharedRedisCluster(t testing.TB) *cluster {
	t.Helper()
	requirePeer(t, "redis-server")
	requirePeer(t, "redis-cli")
	redisCluster.once.Do(func() { redisCluster.c, redisCluster.err = launchRedisCluster(3) })
	if redisCluster.err != nil {
		t.Fatal(redisCluster.err)
	}
	return redisCluster.c
}

func launchRedisCluster(n int) (*cluster, error) {
	var procs []*process
	for i := 0; i < n; i++ {
		p, err := startProcess(fmt.Sprintf("redis-server cluster node %d", i), "redis-server", func(port int, dir string) []string {
			return append(redisArgs(port, dir, serverOptions{}), "--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(dir, "nodes.conf"))
		})
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	args := []string{"--cluster", "create"}
	for _, p := range procs {
		args = append(args, p.addr)
	}
	args = append(args, "--cluster-yes")
	if out, err := exec.Command("redis-cli", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// Wait until every node sees the whole cluster, then order the nodes
	// by the first slot they serve.
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range procs {
		for {
			out, _ := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(p.addr), "CLUSTER", "INFO").Output()
			if bytes.Contains(out, []byte("cluster_state:ok")) && bytes.Contains(out, []byte("cluster_known_nodes:"+strconv.Itoa(n))) {
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("redis cluster not ok after 10 s: %s", out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	type node struct {
		p     *process
		id    string
		first int
	}
	var nodes []node
	for _, p := range procs {
		id, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(p.addr), "CLUSTER", "MYID").Output()
		if err != nil {
			return nil, err
		}
		out, err := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", portOf(p.addr), "CLUSTER", "NODES").Output()
		if err != nil {
			return nil, err
		}
		first := -1
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) > 8 && strings.Contains(f[2], "myself") {
				lo, _, _ := strings.Cut(f[8], "-")
				first, _ = strconv.Atoi(lo)
			}
		}
		nodes = append(nodes, node{p, strings.TrimSpace(string(id)), first})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].first < nodes[j].first })
	c := &cluster{}
	for _, nd := range nodes {
		c.procs = append(c.procs, nd.p)
		c.addrs = append(c.addrs, nd.p.addr)
		c.ids = append(c.ids, nd.id)
	}
	return c, nil
}

func portOf(addr string) string {
	_, port, _ := strings.Cut(addr, ":")
	return port
}

// normalize replaces node addresses and ids in a reply with their index,
// so replies of two clusters compare byte for byte.
func (c *cluster) normalize(b []byte) []byte {
	for i := range c.addrs {
		b = bytes.ReplaceAll(b, []byte(c.addrs[i]), []byte("node"+strconv.Itoa(i)+":port"))
		// CLUSTER SLOTS gives the port as an integer.
		b = bytes.ReplaceAll(b, []byte(":"+portOf(c.addrs[i])+"\r\n"), []byte(":port"+strconv.Itoa(i)+"\r\n"))
	}
	return b
}

// clusterPair drives node i of the Redis cluster and of a cellserver
// cluster in step, comparing normalized raw replies.
type clusterPair struct {
	t           testing.TB
	redis, cell *cluster
	rc, cc      *respConn
}

func newClusterPair(t testing.TB, redis, cell *cluster, node int) *clusterPair {
	t.Helper()
	rc, err := dialRESP(redis.addrs[node])
	if err != nil {
		t.Fatal(err)
	}
	cc, err := dialRESP(cell.addrs[node])
	if err != nil {
		rc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close(); cc.Close() })
	return &clusterPair{t: t, redis: redis, cell: cell, rc: rc, cc: cc}
}

// Replies sends args to both and returns the normalized replies.
func (p *clusterPair) Replies(args ...string) (redis, cell []byte) {
	p.t.Helper()
	r, err := p.rc.Do(args...)
	if err != nil {
		p.t.Fatalf("%s: redis: %v", formatCommand(args), err)
	}
	c, err := p.cc.Do(args...)
	if err != nil {
		p.t.Fatalf("%s: cellserver: %v", formatCommand(args), err)
	}
	return p.redis.normalize(r), p.cell.normalize(c)
}

// Do requires the same normalized bytes from both clusters.
func (p *clusterPair) Do(args ...string) {
	p.t.Helper()
	r, c := p.Replies(args...)
	if !bytes.Equal(r, c) {
		p.t.Errorf("%s:\n%s", formatCommand(args), describeDiff("redis-server", r, "cellserver", c))
	}
}

// DoEach sends each cluster its own arguments (node ids differ) and
// requires the same normalized reply.
func (p *clusterPair) DoEach(redisArgs, cellArgs []string) {
	p.t.Helper()
	r, err := p.rc.Do(redisArgs...)
	if err != nil {
		p.t.Fatalf("%s: redis: %v", formatCommand(redisArgs), err)
	}
	c, err := p.cc.Do(cellArgs...)
	if err != nil {
		p.t.Fatalf("%s: cellserver: %v", formatCommand(cellArgs), err)
	}
	if r, c := p.redis.normalize(r), p.cell.normalize(c); !bytes.Equal(r, c) {
		p.t.Errorf("%s:\n%s", formatCommand(cellArgs), describeDiff("redis-server", r, "cellserver", c))
	}
}
