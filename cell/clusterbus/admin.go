package clusterbus

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
)

// The administrative side: what the CLUSTER subcommands ask of the bus.
// Each call takes the lock and ends with afterChange.

// Open reads the node table from Dir/File, or starts a new one with a
// fresh name when the file does not exist, and saves it. Start opens the
// bus port.
func Open(cfg Config) (*Cluster, error) {
	c := &Cluster{cfg: cfg, nodes: map[string]*Node{}, blacklist: map[string]int64{},
		inboundLinks: map[*link]struct{}{}, stop: make(chan struct{}), size: 1}
	c.path = cfg.File
	if !filepath.IsAbs(c.path) {
		c.path = filepath.Join(cfg.Dir, c.path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch err := c.load(); {
	case errors.Is(err, errNoConfig):
		c.myself = &Node{Name: randomName(), Flags: FlagMyself | FlagMaster}
		c.addNode(c.myself)
	case err != nil:
		return nil, err
	default:
		c.loadedFromFile = true
	}
	me := c.myself
	me.Port, me.PPort, me.CPort = c.announcedPorts()
	c.updateMyself()
	c.todoSave, c.todoState = true, true
	c.afterChange()
	c.cfg.Host.Changed(c.view())
	return c, nil
}

// MyID is this node's name.
func (c *Cluster) MyID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.myself.Name
}

// Nodes is CLUSTER NODES.
func (c *Cluster) Nodes() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.describe(true)
}

// IsReplica reports whether this node is a replica, and of which master.
func (c *Cluster) IsReplica() (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.myself.IsReplica() && c.myself.ReplicaOf != nil {
		return true, c.myself.ReplicaOf.Name
	}
	return c.myself.IsReplica(), ""
}

// Info is CLUSTER INFO.
func (c *Cluster) Info() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	assigned, pfail, fail := 0, 0, 0
	for _, n := range c.slots {
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.is(FlagFail):
			fail++
		case n.is(FlagPFail):
			pfail++
		}
	}
	state := "fail"
	if c.stateOK {
		state = "ok"
	}
	var b strings.Builder
	f := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	f("cluster_state", state)
	f("cluster_slots_assigned", assigned)
	f("cluster_slots_ok", assigned-pfail-fail)
	f("cluster_slots_pfail", pfail)
	f("cluster_slots_fail", fail)
	f("cluster_known_nodes", len(c.nodes))
	f("cluster_size", c.size)
	f("cluster_current_epoch", c.currentEpoch)
	f("cluster_my_epoch", c.myself.epoch())
	var sent, recv uint64
	for t := Type(0); t < TypeCount; t++ {
		if n := c.statsSent[t]; n > 0 {
			f("cluster_stats_messages_"+t.String()+"_sent", n)
			sent += n
		}
	}
	f("cluster_stats_messages_sent", sent)
	for t := Type(0); t < TypeCount; t++ {
		if n := c.statsRecv[t]; n > 0 {
			f("cluster_stats_messages_"+t.String()+"_received", n)
			recv += n
		}
	}
	f("cluster_stats_messages_received", recv)
	f("total_cluster_links_buffer_limit_exceeded", c.linkBufferExceeded)
	return b.String()
}

// NodeInfo is a node as CLUSTER SLOTS, SHARDS and REPLICAS describe it.
type NodeInfo struct {
	Name, IP, Hostname string
	Port               int
	Master             bool
	Offset             uint64
	Failed, Loading    bool
	Line               string // its CLUSTER NODES line, without the newline
}

// SlotRange is one entry of CLUSTER SLOTS: a run of slots, its master
// and its replicas not failing.
type SlotRange struct {
	First, Last int
	Master      NodeInfo
	Replicas    []NodeInfo
}

// Shard is one entry of CLUSTER SHARDS: a master, its replicas, its slots.
type Shard struct {
	Slots [][2]int
	Nodes []NodeInfo
}

func (c *Cluster) info(n *Node) NodeInfo {
	var b strings.Builder
	c.nodeLine(&b, n)
	off := n.ReplOffset
	if n == c.myself {
		off = c.cfg.Host.ReplOffset()
	}
	return NodeInfo{Name: n.Name, IP: n.IP, Hostname: n.Hostname, Port: n.Port, Master: n.IsMaster(), Offset: off,
		Failed: n.is(FlagFail), Loading: n.IsReplica() && off == 0, Line: strings.TrimSuffix(b.String(), "\n")}
}

// Slots is CLUSTER SLOTS, masters in name order.
func (c *Cluster) Slots() []SlotRange {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []SlotRange
	for _, n := range c.sortedNodes() {
		if !n.IsMaster() || n.NumSlots == 0 {
			continue
		}
		master := c.info(n)
		var reps []NodeInfo
		for _, r := range n.Replicas {
			if !r.is(FlagFail) {
				reps = append(reps, c.info(r))
			}
		}
		for _, r := range slotRanges(&n.Slots) {
			out = append(out, SlotRange{First: r[0], Last: r[1], Master: master, Replicas: reps})
		}
	}
	return out
}

// Shards is CLUSTER SHARDS: every master, with or without slots.
func (c *Cluster) Shards() []Shard {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Shard
	for _, n := range c.sortedNodes() {
		if !n.IsMaster() {
			continue
		}
		sh := Shard{Slots: slotRanges(&n.Slots), Nodes: []NodeInfo{c.info(n)}}
		for _, r := range n.Replicas {
			sh.Nodes = append(sh.Nodes, c.info(r))
		}
		out = append(out, sh)
	}
	return out
}

// Replicas is CLUSTER REPLICAS: the replicas of a master.
func (c *Cluster) Replicas(name string) ([]NodeInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.lookup(name)
	if n == nil {
		return nil, ErrUnknownNode(name)
	}
	if !n.IsMaster() {
		return nil, errNotAMaster
	}
	out := []NodeInfo{}
	for _, r := range n.Replicas {
		out = append(out, c.info(r))
	}
	return out, nil
}

// Meet starts a handshake with the node at ip:port, its bus on cport (0:
// port + 10000), as Redis's clusterStartHandshake.
func (c *Cluster) Meet(ip string, port64, cport64 int64) error {
	if cport64 == 0 {
		cport64 = port64 + 10000
	}
	addr := net.ParseIP(ip)
	if addr == nil || port64 <= 0 || port64 > 65535 || cport64 <= 0 || cport64 > 65535 {
		return errorf("Invalid node address specified: %s:%d", ip, port64)
	}
	ip, port, cport := addr.String(), int(port64), int(cport64)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.nodes {
		if n.is(FlagHandshake) && n.IP == ip && n.Port == port && n.CPort == cport {
			return nil // a handshake already runs
		}
	}
	c.addNode(&Node{Name: randomName(), Flags: FlagHandshake | FlagMeet, IP: ip, Port: port, CPort: cport})
	c.todoSave = true
	c.afterChange()
	return nil
}

// AddSlots assigns free slots to this node; DelSlots unassigns slots. The
// slots are checked in the order given; none changes if one is refused.
func (c *Cluster) AddSlots(slots []int) error { return c.updateSlots(slots, false) }

// DelSlots unassigns slots, whoever serves them.
func (c *Cluster) DelSlots(slots []int) error { return c.updateSlots(slots, true) }

func (c *Cluster) updateSlots(slots []int, del bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[int]bool{}
	for _, s := range slots {
		if del && c.slots[s] == nil {
			return errorf("Slot %d is already unassigned", s)
		}
		if !del && c.slots[s] != nil {
			return errorf("Slot %d is already busy", s)
		}
		if seen[s] {
			return errorf("Slot %d specified multiple times", s)
		}
		seen[s] = true
	}
	for _, s := range slots {
		if del {
			c.delSlot(s)
		} else {
			// A slot we import and now serve is no longer importing.
			c.importing[s] = nil
			c.addSlot(c.myself, s)
		}
	}
	c.afterChange()
	return nil
}

// SetSlot is CLUSTER SETSLOT: action is "migrating", "importing", "node"
// (with name) or "stable".
func (c *Cluster) SetSlot(slot int, action, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.myself.IsReplica() {
		return errSetSlotReplica
	}
	var n *Node
	if action != "stable" {
		n = c.lookup(name)
	}
	switch action {
	case "migrating", "importing":
		mine := c.slots[slot] == c.myself
		switch {
		case action == "migrating" && !mine:
			return ErrNotOwner(slot)
		case action == "importing" && mine:
			return ErrAlreadyOwner(slot)
		case n == nil:
			return ErrDontKnowNode(name)
		case n.IsReplica():
			return errNotMaster
		}
		if action == "migrating" {
			c.migrating[slot] = n
		} else {
			c.importing[slot] = n
		}
	case "stable":
		c.importing[slot], c.migrating[slot] = nil, nil
	case "node":
		if n == nil {
			return ErrUnknownNode(name)
		}
		if n.IsReplica() {
			return errNotMaster
		}
		keys := c.cfg.Host.CountKeysInSlot(slot)
		if c.slots[slot] == c.myself && n != c.myself && keys != 0 {
			return ErrSlotHasKeys(slot)
		}
		if keys == 0 && c.migrating[slot] != nil {
			c.migrating[slot] = nil
		}
		wasMine := c.slots[slot] == c.myself
		c.delSlot(slot)
		c.addSlot(n, slot)
		if wasMine && n != c.myself && c.myself.NumSlots == 0 && (c.cfg.ReplicaMigration == nil || c.cfg.ReplicaMigration()) {
			c.setMaster(n)
		}
		if n == c.myself && c.importing[slot] != nil {
			// A slot moved by hand: a new epoch makes the claim win
			// everywhere, and a PONG to all spreads it at once.
			if c.bumpEpochWithoutConsensus() {
				c.cfg.Log.Info("cluster: configEpoch updated after importing slot", "slot", slot)
			}
			c.importing[slot] = nil
			c.broadcastPong()
		}
	}
	c.todoSave, c.todoState = true, true
	c.afterChange()
	return nil
}

// Forget removes a node and keeps it out for a minute.
func (c *Cluster) Forget(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.lookup(name)
	switch {
	case n == nil:
		return ErrUnknownNode(name)
	case n == c.myself:
		return errForgetMyself
	case c.myself.IsReplica() && c.myself.ReplicaOf == n:
		return errForgetMaster
	}
	c.blacklist[n.Name] = now()/1000 + blacklistTTLSeconds
	c.delNode(n)
	c.afterChange()
	return nil
}

// Reset forgets every other node and every slot; hard also takes a new
// name and zeroes the epochs.
func (c *Cluster) Reset(hard bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	me := c.myself
	if me.IsMaster() && c.cfg.Host.KeyCount() != 0 {
		return errResetKeys
	}
	if me.IsReplica() {
		c.setNodeAsMaster(me)
		c.cfg.Host.ReplicateFrom("", 0)
		c.replicating = false
	}
	for s := range c.slots {
		c.importing[s], c.migrating[s] = nil, nil
		c.delSlot(s)
	}
	for _, n := range c.nodes {
		if n != me {
			c.delNode(n)
		}
	}
	if hard {
		c.currentEpoch, c.lastVoteEpoch, me.ConfigEpoch = 0, 0, 0
		c.renameNode(me, randomName())
	}
	c.todoSave, c.todoState = true, true
	c.afterChange()
	return nil
}

// SaveConfig writes nodes.conf now.
func (c *Cluster) SaveConfig() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.saveConf(true); err != nil {
		return errorf("error saving the cluster node config: %s", err)
	}
	return nil
}

// BumpEpoch is CLUSTER BUMPEPOCH: true and the new epoch when it moved.
func (c *Cluster) BumpEpoch() (bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	bumped := c.bumpEpochWithoutConsensus()
	c.afterChange()
	return bumped, c.myself.ConfigEpoch
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH, for a node alone.
func (c *Cluster) SetConfigEpoch(epoch int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case epoch < 0:
		return errorf("Invalid config epoch specified: %d", epoch)
	case len(c.nodes) > 1:
		return errEpochKnown
	case c.myself.ConfigEpoch != 0:
		return errEpochNonZero
	}
	c.myself.ConfigEpoch = uint64(epoch)
	c.currentEpoch = max(c.currentEpoch, uint64(epoch))
	c.todoSave, c.todoState = true, true
	c.afterChange()
	return nil
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (c *Cluster) CountFailureReports(name string) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.lookup(name)
	if n == nil {
		return 0, ErrUnknownNode(name)
	}
	return c.failureReports(n), nil
}

// Replicate makes this node a replica of the named master.
func (c *Cluster) Replicate(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.lookup(name)
	switch {
	case n == nil:
		return ErrUnknownNode(name)
	case n == c.myself:
		return errReplicateMyself
	case n.IsReplica():
		return errReplicateReplica
	case c.myself.IsMaster() && (c.myself.NumSlots != 0 || c.cfg.Host.KeyCount() != 0):
		return errReplicateBusy
	}
	c.setMaster(n)
	c.afterChange()
	return nil
}

// LinkInfo is one entry of CLUSTER LINKS.
type LinkInfo struct {
	To         bool // outbound
	Node       string
	Created    int64
	Events     string
	BufferUsed int
}

// Links is CLUSTER LINKS: every link attached to a node.
func (c *Cluster) Links() []LinkInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []LinkInfo
	for _, n := range c.sortedNodes() {
		for _, l := range []*link{n.link, n.inbound} {
			if l == nil {
				continue
			}
			ev := "r"
			if l.queued > 0 {
				ev = "rw"
			}
			out = append(out, LinkInfo{To: !l.inbound, Node: n.Name, Created: l.created, Events: ev, BufferUsed: l.queued})
		}
	}
	return out
}

// StateOK is cluster_state.
func (c *Cluster) StateOK() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stateOK
}
