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
// redis-cli --cluster's other commands on the shared cluster.
func TestBusClusterTools(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	bc := createBusCluster(t, 3, 0)
	replica := addBusReplica(t, "cellserver", 3, bc.procs[0], bc.ids[0], 4)
	t.Run("LostSlotKeysDeleted", func(t *testing.T) { busLostSlot(t, bc, replica) })
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
// them back (the effect log has the deletions).
func busLostSlot(t *testing.T, bc *busCluster, replica *process) {
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
	t.Cleanup(q.Stop)
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
