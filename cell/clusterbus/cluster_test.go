package clusterbus

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// fakeHost is a server with no keys that records what the bus tells it.
type fakeHost struct {
	mu          sync.Mutex
	offset      uint64
	pausedUntil int64
	view        *View
	master      string
	publish     []string
}

func (h *fakeHost) CountKeysInSlot(int) int { return 0 }
func (h *fakeHost) DelKeysInSlot(int)       {}
func (h *fakeHost) KeyCount() int           { return 0 }
func (h *fakeHost) ReplOffset() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.offset
}
func (h *fakeHost) ReplDataAge() int64 { return 0 }
func (h *fakeHost) PauseWrites(until int64) {
	h.mu.Lock()
	h.pausedUntil = until
	h.mu.Unlock()
}
func (h *fakeHost) ReplicateFrom(host string, port int) {
	h.mu.Lock()
	h.master = host
	h.mu.Unlock()
}
func (h *fakeHost) Publish(ch, msg []byte, shard bool) {
	h.mu.Lock()
	h.publish = append(h.publish, string(ch)+"="+string(msg))
	h.mu.Unlock()
}
func (h *fakeHost) Changed(v *View) {
	h.mu.Lock()
	h.view = v
	h.mu.Unlock()
}

type testNode struct {
	c    *Cluster
	h    *fakeHost
	port int
	dir  string
}

func startNode(t *testing.T, dir string) *testNode {
	t.Helper()
	port, err := serverproc.FreeClusterPort()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	return openNode(t, dir, port)
}

func openNode(t *testing.T, dir string, port int) *testNode {
	t.Helper()
	h := &fakeHost{}
	c, err := Open(Config{Dir: dir, File: "nodes.conf", Port: port, Bind: "127.0.0.1",
		NodeTimeout: func() time.Duration { return 300 * time.Millisecond },
		Log:         slog.New(slog.NewTextHandler(io.Discard, nil)), Host: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &testNode{c, h, port, dir}
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func seesAll(ns []*testNode) func() bool {
	return func() bool {
		for _, n := range ns {
			if !n.c.StateOK() || strings.Count(n.c.Nodes(), "\n") != len(ns) || strings.Contains(n.c.Nodes(), "handshake") {
				return false
			}
		}
		return true
	}
}

// TestFormCluster forms three nodes as redis-cli --cluster create does
// (ADDSLOTS, SET-CONFIG-EPOCH, MEET), then moves a slot with SETSLOT NODE
// and sees the claim spread by its bumped epoch; a stopped node is
// marked fail by the other two.
func TestFormCluster(t *testing.T) {
	ns := []*testNode{startNode(t, ""), startNode(t, ""), startNode(t, "")}
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	for i, n := range ns {
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
	for _, n := range ns[1:] {
		if err := n.c.Meet("127.0.0.1", int64(ns[0].port), 0); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "three nodes agree and are ok", seesAll(ns))
	// Every node routes slot 6000 to node 1.
	for _, n := range ns {
		n.h.mu.Lock()
		v := n.h.view
		n.h.mu.Unlock()
		if got := v.Nodes[v.Owner[6000]].Name; got != ns[1].c.MyID() {
			t.Errorf("slot 6000 owner %s, want %s", got, ns[1].c.MyID())
		}
	}
	// Move slot 0 from node 0 to node 2 the way reshard does.
	id0, id2 := ns[0].c.MyID(), ns[2].c.MyID()
	for _, step := range []struct {
		n            *testNode
		action, node string
	}{{ns[2], "importing", id0}, {ns[0], "migrating", id2}, {ns[2], "node", id2}, {ns[0], "node", id2}} {
		if err := step.n.c.SetSlot(0, step.action, step.node); err != nil {
			t.Fatalf("SETSLOT 0 %s: %v", step.action, err)
		}
	}
	eventually(t, "node 1 learns slot 0 moved", func() bool {
		return strings.Contains(ns[1].c.Nodes(), id2+" 127.0.0.1") && strings.Contains(lineOf(ns[1].c.Nodes(), id2), " 0 ")
	})
	// A node stopped is PFAIL, then FAIL by the two others' agreement.
	ns[1].c.Close()
	id1 := ns[1].c.MyID()
	eventually(t, "node 1 marked fail", func() bool {
		return strings.Contains(lineOf(ns[0].c.Nodes(), id1), "master,fail ") && strings.Contains(lineOf(ns[2].c.Nodes(), id1), "master,fail ")
	})
	if ns[0].c.StateOK() {
		t.Error("cluster_state ok with a master failed")
	}
	// PUBLISH reaches the other live node.
	ns[0].c.Publish([]byte("ch"), []byte("hi"), false)
	eventually(t, "PUBLISH delivered", func() bool {
		ns[2].h.mu.Lock()
		defer ns[2].h.mu.Unlock()
		return len(ns[2].h.publish) == 1 && ns[2].h.publish[0] == "ch=hi"
	})
}

func lineOf(nodes, id string) string {
	for _, l := range strings.Split(nodes, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l + " "
		}
	}
	return ""
}

// TestNodesConfRoundTrip: a node reopened from its nodes.conf has its
// name, epochs, slots, open slots and peers back.
func TestNodesConfRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, b := startNode(t, dir), startNode(t, "")
	a.c.AddSlots([]int{1, 2, 3, 100})
	a.c.Meet("127.0.0.1", int64(b.port), 0)
	// Known, and a knows its own address (from b's PING).
	eventually(t, "a knows b", func() bool {
		n := a.c.Nodes()
		return strings.Count(n, "\n") == 2 && !strings.Contains(n, "handshake") && strings.Contains(lineOf(n, a.c.MyID()), " 127.0.0.1:")
	})
	a.c.BumpEpoch()
	if err := a.c.SetSlot(3, "migrating", b.c.MyID()); err != nil {
		t.Fatal(err)
	}
	before := a.c.Nodes()
	a.c.Close()
	conf, _ := os.ReadFile(filepath.Join(dir, "nodes.conf"))
	if !strings.Contains(string(conf), "vars currentEpoch 1 lastVoteEpoch 0\n") || !strings.Contains(string(conf), "1-3 100 [3->-"+b.c.MyID()+"]") {
		t.Fatalf("nodes.conf:\n%s", conf)
	}
	again := openNode(t, dir, a.port)
	after := again.c.Nodes()
	if again.c.MyID() != a.c.MyID() || lineOf(after, a.c.MyID()) != lineOf(before, a.c.MyID()) {
		t.Errorf("reopened:\n%s\nbefore:\n%s", after, before)
	}
	// Damaged files stop the node instead of starting it empty.
	for name, text := range map[string]string{
		"no myself": strings.ReplaceAll(string(conf), "myself,", ""),
		"bad slot":  strings.Replace(string(conf), "1-3", "3-1", 1),
		"bad name":  "xyz " + string(conf)[41:],
	} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "nodes.conf"), []byte(text), 0o644)
		if _, err := Open(Config{Dir: d, File: "nodes.conf", Port: 1, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Host: &fakeHost{}}); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
}

// TestNodesConfSyncsEpochs: every change is written to nodes.conf, but
// synced only when an epoch changed (a vote, BUMPEPOCH, SET-CONFIG-EPOCH),
// as Redis fsyncs it; slots alone are written unsynced.
func TestNodesConfSyncsEpochs(t *testing.T) {
	dir := t.TempDir()
	n := startNode(t, dir)
	syncs := func() int {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		return n.c.syncs
	}
	conf := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "nodes.conf"))
		return string(b)
	}
	before := syncs()
	for _, step := range []struct {
		what   string
		do     func() error
		synced bool
		want   string
	}{
		{"ADDSLOTS", func() error { return n.c.AddSlots([]int{1, 2, 3}) }, false, " 0 connected 1-3\n"},
		{"DELSLOTS", func() error { return n.c.DelSlots([]int{2}) }, false, " 0 connected 1 3\n"},
		{"SET-CONFIG-EPOCH", func() error { return n.c.SetConfigEpoch(5) }, true, " 5 connected 1 3\nvars currentEpoch 5 "},
		{"ADDSLOTS", func() error { return n.c.AddSlots([]int{2}) }, false, " 5 connected 1-3\n"},
		{"BUMPEPOCH", func() error { n.c.BumpEpoch(); return nil }, false, "vars currentEpoch 5 "}, // already the highest: STILL
		{"SAVECONFIG", n.c.SaveConfig, true, " 5 connected 1-3\n"},                                 // synced whatever changed, as Redis's
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.what, err)
		}
		after := syncs()
		if synced := after > before; synced != step.synced {
			t.Errorf("%s: synced %v, want %v", step.what, synced, step.synced)
		}
		before = after
		if !strings.Contains(conf(), step.want) {
			t.Errorf("%s: nodes.conf lacks %q:\n%s", step.what, step.want, conf())
		}
	}
}

// TestHostileLink: whatever a connection to the bus port sends that is not
// a well-formed message closes that link; the node carries on.
func TestHostileLink(t *testing.T) {
	n := startNode(t, "")
	good := (&Message{Header: Header{Type: Ping, Sender: strings.Repeat("a", NameLen)}}).Append(nil)
	badCount := append([]byte(nil), good...)
	badCount[15] = 9 // claims 9 gossip sections it does not carry
	for name, in := range map[string][]byte{
		"RESP":        []byte("*1\r\n$4\r\nPING\r\n"),
		"short total": []byte("RCmb\x00\x00\x00\x20garbage"),
		"huge total":  []byte("RCmb\x7f\xff\xff\xff"),
		"bad counts":  badCount,
	} {
		conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port+10000)))
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(in)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(conn); err != nil {
			t.Errorf("%s: the link was not closed: %v", name, err)
		}
		conn.Close()
	}
	if !strings.Contains(n.c.Nodes(), "myself,master") {
		t.Fatalf("node after hostile links:\n%s", n.c.Nodes())
	}
}
