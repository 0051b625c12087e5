package integration_test

import (
	"strconv"
	"strings"
	"testing"
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

// TestClusterIoredis: ioredis's Cluster client runs W1, W2, W3, W4 and W8
// (node/ioredis_cluster.js) against 3 nodes and gets the transcript of the
// same session against one node.
func TestClusterIoredis(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	node := requireNode(t)
	single := freshSingle(t)
	cc := startCellCluster(t, evenRanges(3))
	one, err := runScript(nodeCommand(node, "ioredis_cluster.js", []string{"single"})(single.addr))
	if err != nil {
		t.Fatal(err)
	}
	many, err := runScript(nodeCommand(node, "ioredis_cluster.js", []string{"cluster"})(cc.addrs[1]))
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Lines) < 120 {
		t.Fatalf("the session against one node recorded %d lines:\n%s", len(one.Lines), strings.Join(one.Lines, "\n"))
	}
	compareLines(t, "ioredis Cluster", "one node", one.Lines, many.Lines)
	// 30 users x (W1, W2, W3, W4) keys, less the throttle key DEL'd and
	// made again: 120.
	requireSpread(t, cc, 25, 120)
}
