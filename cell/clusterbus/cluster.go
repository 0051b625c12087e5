package clusterbus

import (
	"log/slog"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Host is what the bus needs from the server it runs in. Its methods are
// called with the cluster's lock held: they must not call back into the
// Cluster.
type Host interface {
	// CountKeysInSlot and DelKeysInSlot reach the keyspace.
	CountKeysInSlot(slot int) int
	DelKeysInSlot(slot int)
	// KeyCount is the number of keys (REPLICATE and RESET need none).
	KeyCount() int
	// ReplOffset is the replication offset this node advertises.
	ReplOffset() uint64
	// ReplicateFrom makes the server a replica of host:port; "" makes it
	// a master again.
	ReplicateFrom(host string, port int)
	// ReplDataAge is how old a replica's data may be, in ms: since it last
	// heard from its master, or since the link went down.
	ReplDataAge() int64
	// PauseWrites holds writing commands until the Unix ms given (a manual
	// failover's master); 0 lifts it.
	PauseWrites(until int64)
	// Publish delivers a PUBLISH (or PUBLISHSHARD) received from the bus.
	Publish(channel, message []byte, shard bool)
	// Changed hands over a new View after any change of slots, nodes or
	// state.
	Changed(v *View)
}

// Config is the bus's settings. Timeout and the coverage flags are read
// through functions so CONFIG SET applies at once.
type Config struct {
	Dir, File string // nodes.conf: File, relative to Dir unless absolute
	Port      int    // the client port
	BusPort   int    // 0: Port + 10000
	Bind      string // the address the bus listens on
	// Announce is what this node says of its own address (the
	// cluster-announce-* settings), read at every message; nil: nothing.
	Announce         func() Announce
	NodeTimeout      func() time.Duration
	FullCoverage     func() bool // cluster-require-full-coverage
	ReplicaMigration func() bool // cluster-allow-replica-migration
	NoFailover       func() bool // cluster-replica-no-failover
	// MaxDataAge is the oldest data, in ms, a replica may hold and still
	// stand for election: repl-ping-replica-period + node timeout *
	// cluster-replica-validity-factor; 0 for no limit.
	MaxDataAge func() int64
	Log        *slog.Logger
	Host       Host
}

// Announce overrides what the other nodes learn of this node's address,
// as Redis's cluster-announce-* settings do for a node behind NAT or in a
// container: IP goes in the header (else they take the address they see
// the connection come from), Port and BusPort replace the client and bus
// ports, Hostname goes in the hostname extension. "" and 0 announce what
// was detected. TLSPort applies only to a TLS bus (Redis's tls-cluster
// yes), which this package does not speak: it is kept for CONFIG only.
type Announce struct {
	IP, Hostname           string
	Port, BusPort, TLSPort int
}

// Cluster is this node's view of the cluster: the node table, the epochs,
// the slot map and the failure state, all behind one lock, as Redis's
// clusterState. Every entry point (a message, a cron tick, an
// administrative call) takes the lock, changes the state, and ends with
// afterChange, which saves nodes.conf and publishes a View when needed.
type Cluster struct {
	mu  sync.Mutex
	cfg Config

	myself        *Node
	nodes         map[string]*Node
	currentEpoch  uint64
	lastVoteEpoch uint64
	slots         [SlotCount]*Node
	migrating     [SlotCount]*Node // slot -> the node it moves to
	importing     [SlotCount]*Node // slot -> the node it comes from
	stateOK       bool
	size          int // masters serving at least one slot
	// blacklist holds FORGET's nodes for a minute, so gossip does not
	// bring them back at once.
	blacklist map[string]int64

	announcedIP        string        // the cluster-announce-ip last applied
	fo                 failoverState // failover.go
	amongMinoritySince int64
	startTime          int64

	statsSent, statsRecv [TypeCount]uint64
	linkBufferExceeded   uint64

	todoSave, todoState bool
	todoPublish         bool // the View changed without a change to save (state)
	inboundLinks        map[*link]struct{}
	replicating         bool // Host.ReplicateFrom was told our master
	loadedFromFile      bool
	ln                  net.Listener
	stop                chan struct{}
	wg                  sync.WaitGroup
	iteration           int
	path                string
	syncedMark          uint64 // epochMark at the last synced save
	syncs               int    // synced saves, for tests
}

// now is the time in Unix milliseconds.
func now() int64 { return time.Now().UnixMilli() }

func (c *Cluster) nodeTimeout() int64 {
	if c.cfg.NodeTimeout == nil {
		return 15000
	}
	return max(c.cfg.NodeTimeout().Milliseconds(), 1)
}

// busPort is this node's bus port.
func (c *Cluster) busPort() int {
	if c.cfg.BusPort != 0 {
		return c.cfg.BusPort
	}
	return c.cfg.Port + 10000
}

func (c *Cluster) announce() Announce {
	if c.cfg.Announce == nil {
		return Announce{}
	}
	return c.cfg.Announce()
}

// announcedPorts are the client, plaintext and bus ports this node
// announces, as Redis's deriveAnnouncedPorts on a bus without TLS.
func (c *Cluster) announcedPorts() (port, pport, cport int) {
	a := c.announce()
	port, cport = c.cfg.Port, c.busPort()
	if a.Port != 0 {
		port = a.Port
	}
	if a.BusPort != 0 {
		cport = a.BusPort
	}
	return port, 0, cport
}

// updateMyself keeps this node's own entry in step with the announced IP
// and hostname, which CONFIG SET may change at any time (Redis's
// clusterUpdateMyselfIp and clusterUpdateMyselfHostname). An announced IP
// set back to "" clears the address, so the next MEET or PING detects it
// again.
func (c *Cluster) updateMyself() {
	a := c.announce()
	me := c.myself
	if a.IP != c.announcedIP {
		c.announcedIP = a.IP
		me.IP = a.IP
		c.todoSave = true
	}
	if a.Hostname != me.Hostname {
		me.Hostname = a.Hostname
		c.todoSave = true
	}
}

// Lookup finds a node by name (case-insensitively, as names are hex).
func (c *Cluster) lookup(name string) *Node {
	if n := c.nodes[name]; n != nil {
		return n
	}
	if len(name) == NameLen {
		return c.nodes[lower(name)]
	}
	return nil
}

func lower(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'A' && ch <= 'Z' {
			b[i] = ch + 'a' - 'A'
		}
	}
	return string(b)
}

func (c *Cluster) addNode(n *Node) {
	if n.Created == 0 {
		n.Created = now()
	}
	if n.FailReports == nil {
		n.FailReports = map[string]int64{}
	}
	c.nodes[n.Name] = n
}

// delNode removes n from the table, as Redis's clusterDelNode: its slots
// become unassigned, open slots towards it close, its links drop and its
// reports on other nodes go.
func (c *Cluster) delNode(n *Node) {
	for s := range c.slots {
		if c.importing[s] == n {
			c.importing[s] = nil
		}
		if c.migrating[s] == n {
			c.migrating[s] = nil
		}
		if c.slots[s] == n {
			c.delSlot(s)
		}
	}
	for _, o := range c.nodes {
		delete(o.FailReports, n.Name)
	}
	if n.ReplicaOf != nil {
		n.ReplicaOf.removeReplica(n)
	}
	for _, r := range n.Replicas {
		if r.ReplicaOf == n {
			r.ReplicaOf = nil
		}
	}
	c.freeLink(n.link)
	c.freeLink(n.inbound)
	delete(c.nodes, n.Name)
	c.todoSave, c.todoState = true, true
}

// renameNode gives a handshake node its real name.
func (c *Cluster) renameNode(n *Node, name string) {
	delete(c.nodes, n.Name)
	n.Name = name
	c.nodes[name] = n
	c.todoSave = true
}

func (c *Cluster) addSlot(n *Node, s int) bool {
	if c.slots[s] != nil {
		return false
	}
	c.slots[s] = n
	if !n.Slots.Has(s) {
		n.Slots.Set(s)
		n.NumSlots++
	}
	c.todoSave, c.todoState = true, true
	return true
}

func (c *Cluster) delSlot(s int) bool {
	n := c.slots[s]
	if n == nil {
		return false
	}
	if n.Slots.Has(s) {
		n.Slots.Clear(s)
		n.NumSlots--
	}
	c.slots[s] = nil
	c.todoSave, c.todoState = true, true
	return true
}

// delNodeSlots unassigns every slot of n.
func (c *Cluster) delNodeSlots(n *Node) {
	for s := range c.slots {
		if c.slots[s] == n {
			c.delSlot(s)
		}
	}
}

// setNodeAsMaster turns a node the cluster saw as a replica into a master.
func (c *Cluster) setNodeAsMaster(n *Node) {
	if n.IsMaster() {
		return
	}
	if n.ReplicaOf != nil {
		n.ReplicaOf.removeReplica(n)
		if n != c.myself {
			n.Flags |= FlagMigrateTo
		}
	}
	n.Flags = n.Flags&^FlagReplica | FlagMaster
	n.ReplicaOf = nil
	c.todoSave, c.todoState = true, true
}

// setMaster makes this node a replica of n, as Redis's clusterSetMaster.
func (c *Cluster) setMaster(n *Node) {
	me := c.myself
	if me.IsMaster() {
		me.Flags = me.Flags&^(FlagMaster|FlagMigrateTo) | FlagReplica
		c.delNodeSlots(me)
		for s := range c.slots {
			c.importing[s], c.migrating[s] = nil, nil
		}
	} else if me.ReplicaOf != nil {
		me.ReplicaOf.removeReplica(me)
	}
	me.ReplicaOf = n
	n.addReplica(me)
	c.resetManualFailover()
	c.cfg.Host.ReplicateFrom(n.IP, n.Port)
	c.replicating = true
	c.todoSave, c.todoState = true, true
}

// maxEpoch is the largest config epoch known, or the current epoch if
// larger.
func (c *Cluster) maxEpoch() uint64 {
	m := c.currentEpoch
	for _, n := range c.nodes {
		m = max(m, n.ConfigEpoch)
	}
	return m
}

// bumpEpochWithoutConsensus gives this node a fresh, highest config epoch
// unless it already holds the highest, as Redis's
// clusterBumpConfigEpochWithoutConsensus.
func (c *Cluster) bumpEpochWithoutConsensus() bool {
	if c.myself.ConfigEpoch == 0 || c.myself.ConfigEpoch != c.maxEpoch() {
		c.currentEpoch++
		c.myself.ConfigEpoch = c.currentEpoch
		c.todoSave = true
		return true
	}
	return false
}

// myMaster is this node if a master, else its master (may be nil).
func (c *Cluster) myMaster() *Node {
	if c.myself.IsMaster() {
		return c.myself
	}
	return c.myself.ReplicaOf
}

// afterChange ends every entry point: state, then nodes.conf and the View.
func (c *Cluster) afterChange() {
	if c.todoState {
		c.todoState = false
		c.updateState()
	}
	publish := c.todoSave || c.todoPublish
	c.todoPublish = false
	if c.todoSave {
		c.todoSave = false
		if err := c.save(); err != nil {
			c.cfg.Log.Warn("cluster: could not save the node table", "file", c.path, "err", err)
		}
	}
	if publish {
		c.cfg.Host.Changed(c.view())
	}
}

// View is an immutable copy of what routing needs: the nodes, who serves
// each slot and this node's open slots.
type View struct {
	Nodes []ViewNode
	Self  int
	Owner [SlotCount]int16 // index in Nodes, -1 for none
	// Migrating and Importing: slot -> index of the other node.
	Migrating, Importing map[int]int
	OK                   bool // cluster_state
	Assigned             int
	Master               int // index of this node's master, -1 for a master
}

// ViewNode is one node of a View.
type ViewNode struct {
	Name, IP, Hostname string
	Port, CPort        int
	ConfigEpoch        uint64
	Master             bool
}

func (c *Cluster) view() *View {
	v := &View{Migrating: map[int]int{}, Importing: map[int]int{}, OK: c.stateOK, Master: -1}
	idx := map[*Node]int{}
	names := make([]string, 0, len(c.nodes))
	for name := range c.nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := c.nodes[name]
		idx[n] = len(v.Nodes)
		if n == c.myself {
			v.Self = len(v.Nodes)
		}
		if n == c.myself.ReplicaOf && c.myself.IsReplica() {
			v.Master = len(v.Nodes)
		}
		v.Nodes = append(v.Nodes, ViewNode{Name: n.Name, IP: n.IP, Hostname: n.Hostname, Port: n.Port, CPort: n.CPort, ConfigEpoch: n.ConfigEpoch, Master: n.IsMaster()})
	}
	for s := range c.slots {
		v.Owner[s] = -1
		if n := c.slots[s]; n != nil {
			v.Owner[s] = int16(idx[n])
			v.Assigned++
		}
		if n := c.migrating[s]; n != nil {
			v.Migrating[s] = idx[n]
		}
		if n := c.importing[s]; n != nil {
			v.Importing[s] = idx[n]
		}
	}
	return v
}

// addrString is ip:port@cport for CLUSTER NODES.
func addrString(n *Node) string {
	return n.IP + ":" + strconv.Itoa(n.Port) + "@" + strconv.Itoa(n.CPort)
}
