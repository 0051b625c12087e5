package cell

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/clusterbus"
)

// Cluster mode without a cluster bus.
//
// Redis Cluster nodes learn the topology from each other over a gossip bus.
// cellserver nodes are told it instead: every node reads the same topology
// file, one line per node in the shape of CLUSTER NODES, and learns which
// line is its own from --cluster-node-id (or from the line whose port is its
// own --port, or the line flagged myself). Clients see a Redis 7.0 cluster:
// CLUSTER SLOTS/SHARDS/NODES describe the file, keys of slots served
// elsewhere get -MOVED, multi-key requests across slots get -CROSSSLOT.
//
// The topology is immutable once built. The server holds the current one
// behind an atomic pointer: SIGHUP (re-reading the file) and CLUSTER SETSLOT
// (live slot migration, with Redis's MIGRATING/IMPORTING states and -ASK)
// build a new one and swap it in, so the check on the command path reads
// one pointer and takes no lock.
//
// There are no replicas and no failure detection: a node that dies is down
// until it restarts (its slots answer nothing, and clients retry), and
// every node of the file is considered reachable.

// clusterState is the Server's cluster mode: fixed at start, so the
// command path pays one predictable branch when it is off.
type clusterState struct {
	clusterOn bool
	bus       *clusterbus.Cluster // bus mode (cluster_bus.go); nil with a topology file
	busErr    error               // nodes.conf could not be read: Listen fails with it
	lost      *lostSlots          // slots whose keys are to go (cluster_lostslots.go)
	topo      atomic.Pointer[Topology]
	topoMu    sync.Mutex // serializes topology changes (SETSLOT, SIGHUP)
}

// ClusterNode is one line of the topology.
type ClusterNode struct {
	ID       string // 40 hex characters, as Redis node names
	Host     string // the address clients are redirected to
	Port     int
	BusPort  int    // printed only: there is no bus
	Hostname string // optional, from "host:port@cport,hostname"
	Epoch    uint64 // config epoch, printed only
}

// Addr is host:port as -MOVED and -ASK print it.
func (n *ClusterNode) Addr() string { return n.Host + ":" + strconv.Itoa(n.Port) }

// Topology is one version of the cluster's layout as this node sees it.
type Topology struct {
	Nodes []ClusterNode
	Self  int // index of this node in Nodes
	// owner maps each slot to the index of the node serving it, -1 for none.
	owner [ClusterSlots]int16
	// migrating and importing are this node's open slots (CLUSTER SETSLOT
	// MIGRATING/IMPORTING): slot -> the other node's index.
	migrating, importing map[int]int
	assigned             int // slots with an owner
	// fromBus: built from the bus's view, whose cluster_state (busOK)
	// already weighs coverage and failures.
	fromBus, busOK bool
	// isReplica: this node replicates Nodes[master] (bus mode), and may
	// serve READONLY clients' reads of its slots.
	isReplica bool
	master    int
}

// Owner returns the node serving slot, or nil.
func (t *Topology) Owner(slot int) *ClusterNode {
	if i := t.owner[slot]; i >= 0 {
		return &t.Nodes[i]
	}
	return nil
}

// Myself is this node.
func (t *Topology) Myself() *ClusterNode { return &t.Nodes[t.Self] }

// ok is cluster_state: every slot served (Redis's default
// cluster-require-full-coverage yes).
func (t *Topology) ok() bool {
	if t.fromBus {
		return t.busOK
	}
	return t.assigned == ClusterSlots
}

// nodeIndex finds a node by id.
func (t *Topology) nodeIndex(id string) int {
	for i := range t.Nodes {
		if t.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}

// clone copies t for a change (SETSLOT), maps included.
func (t *Topology) clone() *Topology {
	n := *t
	n.Nodes = append([]ClusterNode(nil), t.Nodes...)
	n.migrating, n.importing = map[int]int{}, map[int]int{}
	for k, v := range t.migrating {
		n.migrating[k] = v
	}
	for k, v := range t.importing {
		n.importing[k] = v
	}
	return &n
}

// setOwner gives slot to node i (-1: unassigned), keeping the count.
func (t *Topology) setOwner(slot, i int) {
	if t.owner[slot] >= 0 {
		t.assigned--
	}
	if i >= 0 {
		t.assigned++
	}
	t.owner[slot] = int16(i)
}

// ranges lists node i's slots as [start, end] pairs in slot order.
func (t *Topology) ranges(i int) [][2]int {
	var out [][2]int
	for s := 0; s < ClusterSlots; s++ {
		if int(t.owner[s]) != i {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == s-1 {
			out[n-1][1] = s
		} else {
			out = append(out, [2]int{s, s})
		}
	}
	return out
}

// Whom a topology file line belongs to when no node id is given.
type SelfHint struct {
	NodeID string   // --cluster-node-id; wins when set
	Port   int      // --port: the line with this port
	Bind   []string // --bind: breaks a tie between lines with that port
}

// LoadTopology reads and checks a topology file.
func LoadTopology(path string, self SelfHint) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ParseTopology(string(data), self)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTopology reads the lines of a topology file:
//
//	<id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link> [<slot>|<start-end>|[<slot>->-<id>]|[<slot>-<-<id>] ...]
//
// Blank lines, lines starting with '#' and Redis's "vars" line are skipped,
// so a nodes.conf written by Redis, or CLUSTER NODES output, reads as is.
// Only masters are supported; ping, pong and link are ignored. A slot
// served by two lines is an error, as are unknown flags and bad numbers.
func ParseTopology(text string, self SelfHint) (*Topology, error) {
	t := &Topology{Self: -1, migrating: map[int]int{}, importing: map[int]int{}}
	for i := range t.owner {
		t.owner[i] = -1
	}
	type pending struct {
		line, slot int
		peer       string
		migrating  bool
		node       int
	}
	var open []pending
	myself := -1
	for ln, line := range strings.Split(text, "\n") {
		ln++
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || strings.EqualFold(f[0], "vars") {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s", ln, fmt.Sprintf(format, a...))
		}
		if len(f) < 8 {
			return nil, bad("want at least 8 fields (id addr flags master ping pong epoch link [slots]), got %d", len(f))
		}
		if !validNodeID(f[0]) {
			return nil, bad("node id %q is not 40 hex characters", f[0])
		}
		if t.nodeIndex(f[0]) >= 0 {
			return nil, bad("node id %s appears twice", f[0])
		}
		n := ClusterNode{ID: strings.ToLower(f[0])}
		if err := parseNodeAddr(f[1], &n); err != nil {
			return nil, bad("%v", err)
		}
		idx := len(t.Nodes)
		for _, fl := range strings.Split(f[2], ",") {
			switch strings.ToLower(fl) {
			case "myself":
				if myself >= 0 {
					return nil, bad("a second line flagged myself")
				}
				myself = idx
			case "master", "noflags", "fail?", "fail", "handshake", "noaddr", "nofailover":
			case "slave", "replica":
				return nil, bad("replicas are not supported (node %s)", n.ID)
			default:
				return nil, bad("unknown flag %q", fl)
			}
		}
		if f[3] != "-" {
			return nil, bad("replicas are not supported (master field %q)", f[3])
		}
		ep, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return nil, bad("config epoch %q is not a number", f[6])
		}
		n.Epoch = ep
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") && strings.HasSuffix(r, "]") {
				body := r[1 : len(r)-1]
				p := pending{line: ln, node: idx}
				var s string
				var ok bool
				if s, p.peer, ok = strings.Cut(body, "->-"); ok {
					p.migrating = true
				} else if s, p.peer, ok = strings.Cut(body, "-<-"); !ok {
					return nil, bad("bad open slot %q", r)
				}
				if p.slot, ok = parseSlot(s); !ok {
					return nil, bad("bad slot in %q", r)
				}
				open = append(open, p)
				continue
			}
			lo, hi, ok := parseSlotRange(r)
			if !ok {
				return nil, bad("bad slot or range %q (0..16383, or start-end)", r)
			}
			for s := lo; s <= hi; s++ {
				if o := t.owner[s]; o >= 0 {
					return nil, bad("slot %d already served by %s", s, t.Nodes[o].ID)
				}
				t.setOwner(s, idx)
			}
		}
		t.Nodes = append(t.Nodes, n)
	}
	if len(t.Nodes) == 0 {
		return nil, errors.New("no nodes")
	}
	switch {
	case self.NodeID != "":
		t.Self = t.nodeIndex(strings.ToLower(self.NodeID))
		if t.Self < 0 {
			return nil, fmt.Errorf("node id %s (--cluster-node-id) is not in the file", self.NodeID)
		}
	case myself >= 0:
		t.Self = myself
	default:
		t.Self = matchSelf(t, self)
		if t.Self < 0 {
			return nil, fmt.Errorf("no line is this node's: give --cluster-node-id (no unique line has port %d and a --bind address)", self.Port)
		}
	}
	// Open slots matter only on this node's line, as in Redis's nodes.conf.
	for _, p := range open {
		if p.node != t.Self {
			continue
		}
		peer := t.nodeIndex(strings.ToLower(p.peer))
		if peer < 0 {
			return nil, fmt.Errorf("line %d: unknown node %s in an open slot", p.line, p.peer)
		}
		if p.migrating {
			t.migrating[p.slot] = peer
		} else {
			t.importing[p.slot] = peer
		}
	}
	return t, nil
}

// matchSelf finds the one line with our port, preferring one whose host is
// a --bind address.
func matchSelf(t *Topology, self SelfHint) int {
	var byPort []int
	for i := range t.Nodes {
		if t.Nodes[i].Port == self.Port {
			byPort = append(byPort, i)
		}
	}
	if len(byPort) == 1 {
		return byPort[0]
	}
	found := -1
	for _, i := range byPort {
		for _, b := range self.Bind {
			if t.Nodes[i].Host == b {
				if found >= 0 && found != i {
					return -1
				}
				found = i
			}
		}
	}
	return found
}

func validNodeID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// parseNodeAddr reads ip:port[@cport][,hostname].
func parseNodeAddr(s string, n *ClusterNode) error {
	addr, host, _ := strings.Cut(s, ",")
	n.Hostname = host
	addr, bus, hasBus := strings.Cut(addr, "@")
	h, p, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return fmt.Errorf("address %q is not ip:port@cport", s)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return fmt.Errorf("bad port in %q", s)
	}
	n.Host, n.Port, n.BusPort = h, port, port+10000
	if hasBus {
		if n.BusPort, err = strconv.Atoi(bus); err != nil || n.BusPort < 0 || n.BusPort > 65535 {
			return fmt.Errorf("bad bus port in %q", s)
		}
	}
	return nil
}

func parseSlot(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0 && n < ClusterSlots
}

func parseSlotRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	if lo, ok = parseSlot(a); !ok {
		return 0, 0, false
	}
	if !isRange {
		return lo, lo, true
	}
	if hi, ok = parseSlot(b); !ok || hi < lo {
		return 0, 0, false
	}
	return lo, hi, true
}

// nodesText is CLUSTER NODES: one line per node, in file order. The ping
// and pong times are 0 and now (every node counts as reachable).
func (t *Topology) nodesText() string {
	var b strings.Builder
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	for i := range t.Nodes {
		n := &t.Nodes[i]
		b.WriteString(n.ID)
		b.WriteByte(' ')
		b.WriteString(n.Addr())
		b.WriteString("@" + strconv.Itoa(n.BusPort))
		if n.Hostname != "" {
			b.WriteString("," + n.Hostname)
		}
		if i == t.Self {
			b.WriteString(" myself,master - 0 0 ")
		} else {
			b.WriteString(" master - 0 " + now + " ")
		}
		b.WriteString(strconv.FormatUint(n.Epoch, 10))
		b.WriteString(" connected")
		for _, r := range t.ranges(i) {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(r[0]))
			if r[1] != r[0] {
				b.WriteString("-" + strconv.Itoa(r[1]))
			}
		}
		if i == t.Self {
			for _, s := range sortedSlots(t.migrating) {
				b.WriteString(" [" + strconv.Itoa(s) + "->-" + t.Nodes[t.migrating[s]].ID + "]")
			}
			for _, s := range sortedSlots(t.importing) {
				b.WriteString(" [" + strconv.Itoa(s) + "-<-" + t.Nodes[t.importing[s]].ID + "]")
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func sortedSlots(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
