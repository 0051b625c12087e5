package integration_test

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/hashslot"
)

// One bus cluster of cellserver nodes (three masters, a replica of the
// first added by redis-cli --cluster add-node --cluster-slave) shared by
// the subtests below, each leaving it whole (check clean) for the next.

// TestBusClusterTools: a master that lost a slot to a newer epoch deletes
// its keys there (and its replica with it, and for good), then
// redis-cli --cluster's rebalance, del-node (with a cellserver, then a
// redis-server 7.0.15 joining and leaving) and fix on the shared cluster.
func TestBusClusterTools(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	replica := addBusReplica(t, "cellserver", 3, bc.procs[0], bc.ids[0], 4)
	bc.replicas = append(bc.replicas, replica)
	t.Run("LostSlotKeysDeleted", func(st *testing.T) { busLostSlot(st, t, bc, replica) })
	verify := fillAndVerify(t, bc.addrs[1], 1000)
	t.Run("RebalanceDelNode", func(t *testing.T) { busRebalanceDelNode(t, bc, "cellserver", verify) })
	t.Run("RebalanceDelNodeRedis", func(t *testing.T) { busRebalanceDelNode(t, bc, "redis-server", verify) })
	t.Run("Fix", func(t *testing.T) { busFix(t, bc, verify) })
}

// clusterTool runs redis-cli --cluster args, answering yes to its
// questions, and fails t on an error or an [ERR] in its output (but for
// fix, whose output lists what it finds wrong before fixing it).
func clusterTool(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("redis-cli", append([]string{"--cluster"}, args...)...)
	cmd.Stdin = strings.NewReader(strings.Repeat("yes\n", 20))
	out, err := cmd.CombinedOutput()
	if err != nil || args[0] != "fix" && strings.Contains(string(out), "[ERR]") {
		t.Fatalf("redis-cli --cluster %s: %v\n%s", strings.Join(args, " "), err, lastLines(string(out), 30))
	}
	return string(out)
}

// busRebalanceDelNode: a node of kind joins empty (add-node), rebalance
// --cluster-use-empty-masters gives it its share of slots with their
// keys, rebalance with its weight 0 takes them back, and del-node removes
// it; check is clean and every key reads back at each step.
func busRebalanceDelNode(t *testing.T, bc *busCluster, kind string, verify func(string)) {
	n := busNode(t, kind, 9)
	clusterTool(t, "add-node", n.addr, bc.addrs[0])
	known := len(bc.addrs) + len(bc.replicas) + 1
	for _, a := range append([]string{n.addr}, bc.addrs...) {
		waitClusterOK(t, a, known)
	}
	// A small weight: its share is some 270 slots, not a quarter, which
	// is as good a test and four times quicker.
	clusterTool(t, "rebalance", bc.addrs[0], "--cluster-use-empty-masters", "--cluster-weight", nodeIDAt(t, n.addr)+"=0.05")
	checkClean(t, n.addr, "after rebalance onto the new "+kind)
	if got := strings.TrimSpace(cli(t, n.addr, "", "DBSIZE")); got == "0" {
		t.Errorf("the new %s holds no keys after the rebalance", kind)
	}
	verify("after rebalance onto the new " + kind)
	id := nodeIDAt(t, n.addr)
	clusterTool(t, "rebalance", bc.addrs[0], "--cluster-weight", id+"=0")
	checkClean(t, bc.addrs[1], "after rebalance off the new "+kind)
	if got := strings.TrimSpace(cli(t, n.addr, "", "DBSIZE")); got != "0" {
		t.Errorf("the %s holds %s keys after a rebalance with weight 0", kind, got)
	}
	clusterTool(t, "del-node", bc.addrs[0], id)
	for _, a := range bc.addrs {
		waitFor(t, 10*time.Second, func() string {
			if nodes := cli(t, a, "", "CLUSTER", "NODES"); strings.Contains(nodes, id) {
				return a + " still knows the deleted node:\n" + nodes
			}
			return ""
		})
	}
	checkClean(t, bc.addrs[2], "after del-node")
	verify("after del-node of the " + kind)
}

// busFix: redis-cli --cluster fix closes a slot left open by a migration
// that stopped half way (moving its keys), and covers slots every node
// dropped (CLUSTER DELSLOTS): one without keys with some node, one with
// keys with the node holding them.
func busFix(t *testing.T, bc *busCluster, verify func(string)) {
	// A slot of node 0 with keys, and one without.
	withKeys, empty := -1, -1
	for s := 0; s <= 5460 && (withKeys < 0 || empty < 0); s++ {
		if slotOwner(t, bc.addrs[0], s) != bc.ids[0] {
			continue
		}
		if countKeysInSlot(t, bc.addrs[0], s) != "0" {
			if withKeys < 0 {
				withKeys = s
			}
		} else if empty < 0 {
			empty = s
		}
	}
	if withKeys < 0 || empty < 0 {
		t.Fatalf("node 0 has no slot with keys (%d) or none without (%d)", withKeys, empty)
	}
	// Open: importing on node 1, migrating on node 0, then stopped.
	ws := strconv.Itoa(withKeys)
	cli(t, bc.addrs[1], "", "CLUSTER", "SETSLOT", ws, "IMPORTING", bc.ids[0])
	cli(t, bc.addrs[0], "", "CLUSTER", "SETSLOT", ws, "MIGRATING", bc.ids[1])
	out := clusterTool(t, "fix", bc.addrs[2])
	if !strings.Contains(out, ">>> Fixing open slot "+ws) {
		t.Errorf("fix did not see slot %s open:\n%s", ws, lastLines(out, 20))
	}
	checkClean(t, bc.addrs[0], "after fixing an open slot")
	verify("after fixing an open slot")
	// Uncovered.
	owner := slotOwner(t, bc.addrs[2], withKeys)
	for _, a := range bc.addrs {
		cli(t, a, "", "CLUSTER", "DELSLOTS", ws, strconv.Itoa(empty))
	}
	out = clusterTool(t, "fix", bc.addrs[2])
	if !strings.Contains(out, "have keys in just one node") || !strings.Contains(out, "have no keys across the cluster") {
		t.Errorf("fix did not cover both kinds of uncovered slot:\n%s", lastLines(out, 20))
	}
	checkClean(t, bc.addrs[1], "after fixing uncovered slots")
	if got := slotOwner(t, bc.addrs[1], withKeys); got != owner {
		t.Errorf("slot %s with keys went to %s, not to %s which holds them", ws, got, owner)
	}
	verify("after fixing uncovered slots")
}

// addBusReplica starts a node of kind and adds it with redis-cli --cluster
// add-node --cluster-slave as a replica of master, then waits for its
// replication link and for a cluster of known nodes.
func addBusReplica(t *testing.T, kind string, i int, master *process, masterID string, known int) *process {
	t.Helper()
	r := busNode(t, kind, i)
	out, err := exec.Command("redis-cli", "--cluster", "add-node", r.addr, master.addr, "--cluster-slave", "--cluster-master-id", masterID).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "[OK] New node added correctly.") {
		t.Fatalf("add-node %s as a replica: %v\n%s", kind, err, out)
	}
	waitFor(t, 20*time.Second, func() string {
		if strings.Contains(cli(t, r.addr, "", "INFO", "replication"), "master_link_status:up") {
			return ""
		}
		return "replica of " + master.addr + ": link not up\n" + cli(t, r.addr, "", "CLUSTER", "NODES")
	})
	waitClusterOK(t, r.addr, known)
	return r
}

// waitFor polls cond every 20 ms until it returns "" and fails t with its
// last answer after d.
func waitFor(t *testing.T, d time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tagInRange finds a hash tag whose slot lies in [lo, hi].
func tagInRange(t *testing.T, prefix string, lo, hi int) (string, int) {
	t.Helper()
	for i := range 100000 {
		tag := prefix + strconv.Itoa(i)
		if s := hashslot.Of([]byte(tag)); s >= lo && s <= hi {
			return tag, s
		}
	}
	t.Fatalf("no tag of %s in slots %d-%d", prefix, lo, hi)
	return "", 0
}

func countKeysInSlot(t *testing.T, addr string, slot int) string {
	t.Helper()
	return strings.TrimSpace(cli(t, addr, "", "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot)))
}

// busLostSlot: the first master is stopped (SIGSTOP) while the second
// takes one of its slots (CLUSTER SETSLOT NODE, then BUMPEPOCH for a newer
// config epoch than the first's). Resumed, the first master learns of the
// claim and deletes its keys of that slot, as Redis's
// clusterUpdateSlotsConfigWith does; its replica loses them too (DELs in
// the stream), its other keys stay, and a kill -9 and restart do not bring
// them back (the effect log has the deletions). The restarted node is
// stopped when parent ends.
func busLostSlot(t, parent *testing.T, bc *busCluster, replica *process) {
	owner, taker, witness := bc.procs[0], bc.procs[1], bc.procs[2]
	// The replica must not take over while its master is stopped.
	cli(t, replica.addr, "", "CONFIG", "SET", "cluster-replica-no-failover", "yes")
	defer cli(t, replica.addr, "", "CONFIG", "SET", "cluster-replica-no-failover", "no")
	lostTag, lost := tagInRange(t, "lost", 0, 5460)
	keptTag, kept := tagInRange(t, "kept", 0, 5460)
	if lost == kept {
		t.Fatalf("tags %s and %s share slot %d", lostTag, keptTag, lost)
	}
	rc := mustDial(t, owner)
	for i := range 40 {
		for _, tag := range []string{lostTag, keptTag} {
			if r, err := rc.Do("SET", fmt.Sprintf("{%s}:%d", tag, i), "v"); err != nil || string(r) != "+OK\r\n" {
				t.Fatalf("SET on the owner: %q %v", r, err)
			}
		}
	}
	rc.Do("HSET", "{"+lostTag+"}:hash", "f", "v")
	rc.Do("SET", "{"+lostTag+"}:ttl", "v", "EX", "1000")
	if r, err := rc.Do("WAIT", "1", "5000"); err != nil || string(r) != ":1\r\n" {
		t.Fatalf("WAIT 1: %q %v", r, err)
	}
	for _, p := range []*process{owner, replica} {
		if n := countKeysInSlot(t, p.addr, lost); n != "42" {
			t.Fatalf("%s holds %s keys of slot %d before, want 42", p.addr, n, lost)
		}
	}

	if err := owner.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			owner.Cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	takerID := bc.ids[1]
	if out := cli(t, taker.addr, "", "CLUSTER", "SETSLOT", strconv.Itoa(lost), "NODE", takerID); out != "OK\n" {
		t.Fatalf("CLUSTER SETSLOT %d NODE on the taker: %q", lost, out)
	}
	if out := cli(t, taker.addr, "", "CLUSTER", "BUMPEPOCH"); !strings.HasPrefix(out, "BUMPED ") && !strings.HasPrefix(out, "STILL ") {
		t.Fatalf("CLUSTER BUMPEPOCH: %q", out)
	}
	key := "{" + lostTag + "}:0"
	movedTo := func(p *process) string {
		return cli(t, p.addr, "", "GET", key)
	}
	wantMoved := fmt.Sprintf("MOVED %d %s", lost, taker.addr)
	waitFor(t, 10*time.Second, func() string {
		if got := movedTo(witness); !strings.Contains(got, wantMoved) {
			return "the third master answers " + got
		}
		return ""
	})

	owner.Cmd.Process.Signal(syscall.SIGCONT)
	stopped = false
	waitFor(t, 10*time.Second, func() string {
		if got := movedTo(owner); !strings.Contains(got, wantMoved) {
			return "the old owner answers " + got
		}
		for _, p := range []*process{owner, replica} {
			if n := countKeysInSlot(t, p.addr, lost); n != "0" {
				return fmt.Sprintf("%s still holds %s keys of slot %d", p.addr, n, lost)
			}
		}
		return ""
	})
	for _, p := range []*process{owner, replica} {
		if n := countKeysInSlot(t, p.addr, kept); n != "40" {
			t.Errorf("%s holds %s keys of its slot %d, want 40", p.addr, n, kept)
		}
	}
	checkClean(t, witness.addr, "after the slot changed hands")

	// kill -9: no final save, the log alone must hold the deletions.
	owner.kill()
	q, err := launch("cellserver bus node restarted after losing a slot", cellserverBinary(t), owner.Cmd.Args[1:], owner.Cmd.Dir, mustAtoi(portOf(owner.addr)))
	if err != nil {
		t.Fatal(err)
	}
	parent.Cleanup(q.Stop) // the cluster outlives this subtest
	bc.procs[0] = q
	waitClusterOK(t, q.addr, 4)
	if n := countKeysInSlot(t, q.addr, lost); n != "0" {
		t.Errorf("after a restart the old owner holds %s keys of slot %d again", n, lost)
	}
	if n := countKeysInSlot(t, q.addr, kept); n != "40" {
		t.Errorf("after a restart the old owner holds %s keys of its slot %d, want 40", n, kept)
	}
	checkClean(t, q.addr, "after the old owner's restart")
}
