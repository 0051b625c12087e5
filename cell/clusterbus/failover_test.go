package clusterbus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// formWithReplica forms three masters (slots split in three) and one
// replica of the first, and waits until all four agree.
func formWithReplica(t *testing.T) (masters []*testNode, replica *testNode) {
	t.Helper()
	masters = []*testNode{startNode(t, ""), startNode(t, ""), startNode(t, "")}
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, n := range masters {
		var slots []int
		for s := ranges[i][0]; s <= ranges[i][1]; s++ {
			slots = append(slots, s)
		}
		if err := n.c.AddSlots(slots); err != nil {
			t.Fatal(err)
		}
		if err := n.c.SetConfigEpoch(int64(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	// redis-cli --cluster create gives every node an epoch of its own,
	// replicas included.
	replica = startNode(t, "")
	if err := replica.c.SetConfigEpoch(4); err != nil {
		t.Fatal(err)
	}
	for _, n := range append(masters[1:], replica) {
		if err := n.c.Meet("127.0.0.1", int64(masters[0].port), 0); err != nil {
			t.Fatal(err)
		}
	}
	all := append(append([]*testNode{}, masters...), replica)
	eventually(t, "four nodes agree", seesAll(all))
	if err := replica.c.Replicate(masters[0].c.MyID()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "every node sees the replica", func() bool {
		for _, n := range all {
			if !strings.Contains(lineOf(n.c.Nodes(), replica.c.MyID()), "slave "+masters[0].c.MyID()) {
				return false
			}
		}
		return true
	})
	return masters, replica
}

// TestReplicaShowsMastersEpoch: a replica's line in CLUSTER NODES (its
// own and the others') and in nodes.conf gives its master's config epoch,
// not its own, and its CLUSTER INFO cluster_my_epoch too, as Redis's
// nodeEpoch.
func TestReplicaShowsMastersEpoch(t *testing.T) {
	masters, replica := formWithReplica(t)
	id := replica.c.MyID()
	for i, n := range append(masters, replica) {
		if f := strings.Fields(lineOf(n.c.Nodes(), id)); len(f) < 7 || f[6] != "1" {
			t.Errorf("node %d shows the replica as %v; want its master's epoch 1", i, f)
		}
	}
	if info := replica.c.Info(); !strings.Contains(info, "cluster_my_epoch:1\r\n") {
		t.Errorf("the replica's CLUSTER INFO:\n%s", info)
	}
	replica.c.Close()
	conf, err := os.ReadFile(filepath.Join(replica.dir, "nodes.conf"))
	if f := strings.Fields(lineOf(string(conf), id)); err != nil || len(f) < 7 || f[6] != "1" {
		t.Errorf("nodes.conf: %v\n%s", err, conf)
	}
}

// ownsSlot0 reports whether every node of ns routes slot 0 to id.
func ownsSlot0(ns []*testNode, id string) func() bool {
	return func() bool {
		for _, n := range ns {
			n.h.mu.Lock()
			v := n.h.view
			n.h.mu.Unlock()
			if v == nil || v.Owner[0] < 0 || v.Nodes[v.Owner[0]].Name != id {
				return false
			}
		}
		return true
	}
}

// TestFailoverElection: a master stops; once the others mark it FAIL, its
// replica wins the masters' votes, takes its slots at a new, highest
// config epoch, and every live node routes them to it.
func TestFailoverElection(t *testing.T) {
	masters, replica := formWithReplica(t)
	masters[0].c.Close()
	live := []*testNode{masters[1], masters[2], replica}
	eventually(t, "the replica took slot 0 everywhere", ownsSlot0(live, replica.c.MyID()))
	line := lineOf(replica.c.Nodes(), replica.c.MyID())
	if !strings.Contains(line, "myself,master") || !strings.Contains(line, " 0-5460 ") {
		t.Errorf("replica after the election: %s", line)
	}
	replica.c.mu.Lock()
	epoch, others := replica.c.myself.ConfigEpoch, []uint64{}
	for _, n := range replica.c.nodes {
		if n != replica.c.myself {
			others = append(others, n.ConfigEpoch)
		}
	}
	replica.c.mu.Unlock()
	for _, e := range others {
		if e >= epoch {
			t.Errorf("config epoch %d after the election, another node has %d", epoch, e)
		}
	}
	replica.h.mu.Lock()
	if replica.h.master != "" {
		t.Errorf("still replicating from %q", replica.h.master)
	}
	replica.h.mu.Unlock()
	// Each master voted once, in the election's epoch, and keeps it.
	for _, m := range masters[1:] {
		m.c.mu.Lock()
		voted := m.c.lastVoteEpoch
		m.c.mu.Unlock()
		if voted != epoch {
			t.Errorf("master voted in epoch %d, election was %d", voted, epoch)
		}
	}
}

// TestFailoverManual: CLUSTER FAILOVER pauses the master's writes, waits
// for the replica to reach the master's offset, then swaps them; the old
// master follows the new one and its writes resume.
func TestFailoverManual(t *testing.T) {
	masters, replica := formWithReplica(t)
	old := masters[0]
	old.h.mu.Lock()
	old.h.offset = 1000
	old.h.mu.Unlock()
	if err := replica.c.Failover(false, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the master paused its writes", func() bool {
		old.h.mu.Lock()
		defer old.h.mu.Unlock()
		return old.h.pausedUntil != 0
	})
	eventually(t, "the replica learned the paused master's offset", func() bool {
		replica.c.mu.Lock()
		defer replica.c.mu.Unlock()
		return replica.c.fo.mfMasterOffset == 1000
	})
	replica.c.mu.Lock()
	early := replica.c.myself.IsMaster()
	replica.c.mu.Unlock()
	if early {
		t.Fatal("the replica took over before it reached the master's offset")
	}
	replica.h.mu.Lock()
	replica.h.offset = 1000
	replica.h.mu.Unlock()
	all := []*testNode{masters[0], masters[1], masters[2], replica}
	eventually(t, "the replica took slot 0 everywhere", ownsSlot0(all, replica.c.MyID()))
	eventually(t, "the old master follows the new one and resumes writes", func() bool {
		old.h.mu.Lock()
		defer old.h.mu.Unlock()
		return old.h.master == "127.0.0.1" && old.h.pausedUntil == 0 &&
			strings.Contains(lineOf(old.c.Nodes(), old.c.MyID()), "myself,slave "+replica.c.MyID())
	})
}

// TestFailoverTakeover: TAKEOVER swaps at once, without votes, by a
// bumped epoch; FORCE on a master and FAILOVER without a master refuse
// with Redis's texts.
func TestFailoverTakeover(t *testing.T) {
	masters, replica := formWithReplica(t)
	if err := masters[1].c.Failover(false, false); err != errFailoverMaster {
		t.Errorf("FAILOVER on a master: %v", err)
	}
	if err := replica.c.Failover(true, true); err != nil {
		t.Fatal(err)
	}
	replica.c.mu.Lock()
	master := replica.c.myself.IsMaster()
	replica.c.mu.Unlock()
	if !master {
		t.Fatal("TAKEOVER did not make the replica a master at once")
	}
	all := []*testNode{masters[0], masters[1], masters[2], replica}
	eventually(t, "the replica took slot 0 everywhere", ownsSlot0(all, replica.c.MyID()))
	for _, m := range masters[1:] {
		m.c.mu.Lock()
		voted := m.c.lastVoteEpoch
		m.c.mu.Unlock()
		if voted != 0 {
			t.Errorf("a master voted (epoch %d) in a takeover", voted)
		}
	}
}
