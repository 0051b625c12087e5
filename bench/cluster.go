package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/cell/hashslot"
	"github.com/cellserver/cellserver/internal/serverproc"
)

// Cluster mode (-cluster-nodes 1,2,3): cellserver only, as clusters of N
// nodes on this machine, each node started with --cluster-enabled and
// formed on the cluster bus with the 16384 slots split evenly. The load generator
// routes like a cluster client that keeps connections per node: every
// connection belongs to one node and draws its keys only among the keys of
// that node's slots (placed by cell/hashslot, the server's own code), so
// no operation is redirected. The connections are spread over the nodes in
// turn; a node that owns none of a workload's keys (a hot key lives on one
// node) gets none. Server CPU and RSS are the sums over the nodes.

// clusterNode is one node of a bench cluster.
type clusterNode struct {
	s     *server // nil until started
	port  int
	first int // slots first..last
	last  int
	id    string
}

// benchCluster is N cellserver nodes forming one cluster.
type benchCluster struct {
	nodes []*clusterNode
}

func (c *benchCluster) pids() []int {
	var out []int
	for _, n := range c.nodes {
		out = append(out, n.s.Pid())
	}
	return out
}

// owner is the index of the node serving slot.
func (c *benchCluster) owner(slot int) int {
	for i, n := range c.nodes {
		if slot >= n.first && slot <= n.last {
			return i
		}
	}
	return -1
}

// evenSlots splits the slots into n contiguous ranges, as redis-cli
// --cluster create does.
func evenSlots(n int) [][2]int {
	var out [][2]int
	per := float64(hashslot.Count) / float64(n)
	first := 0
	for i := range n {
		last := int(per*float64(i+1)+0.5) - 1
		if i == n-1 {
			last = hashslot.Count - 1
		}
		out = append(out, [2]int{first, last})
		first = last + 1
	}
	return out
}

// startCluster starts n cellserver nodes and forms them into a cluster.
// Another program may take a port between our probe and a node's bind, so
// it tries three sets of ports.
func (b *bench) startCluster(n int) (*benchCluster, error) {
	var lastErr error
	for try := range 3 {
		c, err := b.launchCluster(n, try)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// launchCluster starts n nodes in cluster mode on the cluster bus and
// forms them as redis-cli --cluster create does: each node takes its
// range (ADDSLOTSRANGE) and a config epoch of its own, then meets the
// first, and the cluster is used once every node says cluster_state:ok
// and knows all n.
func (b *bench) launchCluster(n, try int) (*benchCluster, error) {
	dir := filepath.Join(b.tmp, fmt.Sprintf("cluster-%d-%d", n, try))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &benchCluster{}
	stop := func() {
		for _, nd := range c.nodes {
			if nd.s != nil {
				nd.s.Stop()
			}
		}
	}
	for i, r := range evenSlots(n) {
		port, err := serverproc.FreeClusterPort()
		if err != nil {
			stop()
			return nil, err
		}
		nd := &clusterNode{port: port, first: r[0], last: r[1]}
		c.nodes = append(c.nodes, nd)
		nodeDir := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(nodeDir, 0o755); err != nil {
			stop()
			return nil, err
		}
		args, _ := cellArgs(nd.port, nodeDir, b.o.persist, b.cellFlag)
		args = append(args, "--cluster-enabled", "yes")
		if nd.s, err = launch(kindCell, b.cellBin, args, nodeDir, nd.port); err != nil {
			stop()
			return nil, err
		}
	}
	if err := formCluster(c); err != nil {
		stop()
		return nil, err
	}
	return c, nil
}

// formCluster assigns each node its slots and epoch, has every node meet
// the first, and waits up to a minute for all to agree.
func formCluster(c *benchCluster) error {
	for i, nd := range c.nodes {
		cn, err := dial(nd.s.addr)
		if err != nil {
			return err
		}
		steps := [][]string{
			{"CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(nd.first), strconv.Itoa(nd.last)},
			{"CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i + 1)},
		}
		if i > 0 {
			steps = append(steps, []string{"CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(c.nodes[0].port)})
		}
		for _, args := range steps {
			r, err := cn.do(args...)
			if err == nil && r.err != "" {
				err = fmt.Errorf("%s: %s", strings.Join(args, " "), r.err)
			}
			if err != nil {
				cn.close()
				return fmt.Errorf("%s: %w", nd.s.addr, err)
			}
		}
		r, err := cn.do("CLUSTER", "MYID")
		cn.close()
		if err != nil {
			return err
		}
		nd.id = string(r.bulk)
	}
	deadline := time.Now().Add(time.Minute)
	for _, nd := range c.nodes {
		for {
			info, err := clusterInfo(nd.s.addr)
			if err != nil {
				return err
			}
			if strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d\r", len(c.nodes))) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: the cluster did not form within a minute:\n%s", nd.s.addr, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// clusterInfo is CLUSTER INFO's text.
func clusterInfo(addr string) (string, error) {
	cn, err := dial(addr)
	if err != nil {
		return "", err
	}
	defer cn.close()
	r, err := cn.do("CLUSTER", "INFO")
	return string(r.bulk), err
}

// clusterName is the server column of a cluster row.
func clusterName(n int) string {
	if n == 1 {
		return "cellserver, 1 node"
	}
	return fmt.Sprintf("cellserver, %d nodes", n)
}

// routable says why w cannot run in cluster mode, or "".
func routable(w *workload) string {
	if w.name == "w3" {
		return "its key names the current window, so a key's slot changes as time passes"
	}
	return ""
}

// runCluster runs every selected workload at every depth on clusters of
// each size of -cluster-nodes, all started up front and driven one at a
// time, alternating for -rounds.
func (b *bench) runCluster() (report, error) {
	rep := report{Env: b.env, Mode: "cluster"}
	var clusters []*benchCluster
	for _, n := range b.o.clusterNodes {
		c, err := b.startCluster(n)
		if err != nil {
			return rep, err
		}
		clusters = append(clusters, c)
		var pids []string
		for _, nd := range c.nodes {
			pids = append(pids, fmt.Sprintf("%d on %s", nd.s.Pid(), nd.s.addr))
		}
		fmt.Fprintf(b.log, "bench: %s: pids %s\n", clusterName(n), strings.Join(pids, ", "))
	}
	for _, w := range b.o.workloads {
		keys, sha := b.workloadKeys(w)
		// Per cluster: each node's keys, its generator, and the skip
		// reason if a node refuses the probe.
		targets := make([][]target, len(clusters))
		skips := make([]string, len(clusters))
		for ci, c := range clusters {
			parts := splitKeys(keys, func(name string) int { return c.owner(hashslot.Of([]byte(name))) }, len(c.nodes))
			for i, nd := range c.nodes {
				if parts[i] == nil {
					continue
				}
				reason, err := b.prepare(nd.s, w, parts[i])
				if err != nil {
					reason = "failed: " + oneLine(err.Error())
				}
				if reason != "" && skips[ci] == "" {
					skips[ci] = reason
				}
				targets[ci] = append(targets[ci], target{nd.s.addr, w.newGen(parts[i], sha)})
			}
		}
		for _, d := range b.o.depths {
			rows := make([]row, len(clusters))
			for ci, n := range b.o.clusterNodes {
				rows[ci] = row{Workload: w.name, About: w.about, Depth: d, Server: clusterName(n), Skipped: skips[ci]}
			}
			for round := range b.o.rounds {
				for _, ci := range roundOrder(len(clusters), round) {
					c := clusters[ci]
					if skips[ci] != "" {
						continue
					}
					fmt.Fprintf(b.log, "bench: %s depth %d on %s (round %d/%d)\n", w.name, d, rows[ci].Server, round+1, b.o.rounds)
					r := rows[ci]
					m, err := runLoad(targets[ci], c.pids(), w, b.loadConfig(d))
					if err == nil {
						err = r.record(m, b.o.duration)
					}
					if err != nil {
						rows[ci].Skipped = "failed: " + oneLine(err.Error())
						skips[ci] = rows[ci].Skipped
						continue
					}
					if round == 0 || r.OpsPerSec > rows[ci].OpsPerSec {
						rows[ci] = r
					}
					rows[ci].Rounds = round + 1
				}
			}
			setNodeRatios(rows)
			rep.Rows = append(rep.Rows, rows...)
		}
	}
	rep.Notes = append(rep.Notes, clusterNotes(b.o)...)
	return rep, nil
}

// splitKeys divides keys among n parts by owner; a part with no key is nil.
func splitKeys(keys *keyTable, owner func(name string) int, n int) []*keyTable {
	parts := make([]*keyTable, n)
	for i := range keys.len() {
		o := owner(keys.name(i))
		if parts[o] == nil {
			parts[o] = &keyTable{}
		}
		p := parts[o]
		p.off = append(p.off, int32(len(p.buf)))
		p.buf = append(p.buf, keys.buf[keys.off[i]:keys.off[i+1]]...)
	}
	for _, p := range parts {
		if p != nil {
			p.off = append(p.off, int32(len(p.buf)))
		}
	}
	return parts
}

// setNodeRatios compares each row with the first (fewest nodes).
func setNodeRatios(rows []row) {
	base := rows[0]
	if base.Skipped != "" || base.OpsPerSec == 0 {
		return
	}
	for i := 1; i < len(rows); i++ {
		r := &rows[i]
		if r.Skipped != "" {
			continue
		}
		r.OpsRatio = r.OpsPerSec / base.OpsPerSec
		if base.ServerCPUus > 0 {
			r.CPURatio = r.ServerCPUus / base.ServerCPUus
		}
		r.RatioBasis = base.Server
	}
}

// clusterNotes explains the table's terms.
func clusterNotes(o *options) []string {
	return []string{
		"Cluster rows: every node is a cellserver with --cluster-enabled yes on the cluster bus, formed as redis-cli --cluster create does (slots split evenly, one MEET each). " +
			"Each connection belongs to one node and sends only keys of that node's slots (routed by cell/hashslot, as a cluster client does), " +
			fmt.Sprintf("so nothing is redirected; the %d connections are spread over the nodes in turn. ", o.conns) +
			"Server CPU µs/op and RSS are summed over the nodes.",
	}
}

// parseClusterNodes reads -cluster-nodes: cluster sizes, comma-separated.
func parseClusterNodes(spec string) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("-cluster-nodes: %q is not a node count 1..64", f)
		}
		out = append(out, n)
	}
	return out, nil
}
