package cell

import (
	"math"
	"strings"

	"github.com/cellserver/cellserver/cell/clusterbus"
	"github.com/cellserver/cellserver/resp"
)

// CLUSTER and the connection commands of cluster clients, with Redis 7.0's
// replies in cluster mode. Without it every one of them answers "cluster
// support disabled", as Redis does (unknown subcommands and wrong arity
// still get their own errors first).

func init() {
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "cluster", complexity}
	}
	nondet := []string{"nondeterministic_output"}
	register(
		&Command{Name: "cluster", Arity: -2, Doc: doc("A container for Redis Cluster commands", "3.0.0", "Depends on subcommand.")},
		&Command{Name: "cluster|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: clusterHelp,
			Doc: doc("Show helpful text about the different subcommands", "5.0.0", "O(1)")},
		&Command{Name: "cluster|info", Arity: 2, Flags: FlagStale, Handler: clusterInfo, Tips: nondet,
			Doc: doc("Provides info about Redis Cluster node state", "3.0.0", "O(1)")},
		&Command{Name: "cluster|myid", Arity: 2, Flags: FlagStale, Handler: clusterMyID,
			Doc: doc("Return the node id", "3.0.0", "O(1)")},
		&Command{Name: "cluster|nodes", Arity: 2, Flags: FlagStale, Handler: clusterNodes, Tips: nondet,
			Doc: doc("Get Cluster config for the node", "3.0.0", "O(N) where N is the total number of Cluster nodes")},
		&Command{Name: "cluster|slots", Arity: 2, Flags: FlagStale, Handler: clusterSlots, Tips: nondet,
			Doc: doc("Get array of Cluster slot to node mappings", "3.0.0", "O(N) where N is the total number of Cluster nodes")},
		&Command{Name: "cluster|shards", Arity: 2, Flags: FlagStale, Handler: clusterShards, Tips: nondet,
			Doc: doc("Get array of cluster slots to node mappings", "7.0.0", "O(N) where N is the total number of cluster nodes")},
		&Command{Name: "cluster|keyslot", Arity: 3, Flags: FlagStale, Handler: clusterKeyslot,
			Doc: doc("Returns the hash slot of the specified key", "3.0.0", "O(N) where N is the number of bytes in the key")},
		&Command{Name: "cluster|countkeysinslot", Arity: 3, Flags: FlagStale, Handler: clusterCountKeysInSlot,
			Doc: doc("Return the number of local keys in the specified hash slot", "3.0.0", "O(1)")},
		&Command{Name: "cluster|getkeysinslot", Arity: 4, Flags: FlagStale, Handler: clusterGetKeysInSlot, Tips: nondet,
			Doc: doc("Return local key names in the specified hash slot", "3.0.0", "O(log(N)) where N is the number of requested keys")},
		&Command{Name: "cluster|setslot", Arity: -4, Flags: FlagAdmin | FlagStale, Handler: clusterSetSlot,
			Doc: doc("Bind a hash slot to a specific node", "3.0.0", "O(1)")},
		&Command{Name: "readonly", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: readonlyCmd, ACL: ACLConnection,
			Doc: doc("Enables read queries for a connection to a cluster replica node", "3.0.0", "O(1)")},
		&Command{Name: "readwrite", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: readwriteCmd, ACL: ACLConnection,
			Doc: doc("Disables read queries for a connection to a cluster replica node", "3.0.0", "O(1)")},
		&Command{Name: "asking", Arity: 1, Flags: FlagFast, Handler: asking, ACL: ACLConnection,
			Doc: doc("Sent by cluster clients after an -ASK redirect", "3.0.0", "O(1)")},
	)
}

// redisMode is INFO's redis_mode and HELLO's mode.
func (s *Server) redisMode() string {
	if s.clusterOn {
		return "cluster"
	}
	return "standalone"
}

// infoCluster is INFO's Cluster section.
func infoCluster(s *Server, _ *Ctx, b *strings.Builder) {
	if s.clusterOn {
		field(b, "cluster_enabled", "1")
	} else {
		field(b, "cluster_enabled", "0")
	}
}

// clusterTopo returns the topology, or replies the disabled error.
func clusterTopo(x *Ctx) *Topology {
	t := x.srv.topo.Load()
	if t == nil {
		x.Error(ErrClusterDisabled)
	}
	return t
}

// readonlyCmd is READONLY: on a cluster replica, this client's reads of
// the master's slots are served here instead of redirected.
func readonlyCmd(x *Ctx) {
	if clusterTopo(x) != nil {
		x.cl.readonly = true
		x.W.OK()
	}
}

// readwriteCmd is READWRITE, READONLY's undoing.
func readwriteCmd(x *Ctx) {
	if clusterTopo(x) != nil {
		x.cl.readonly = false
		x.W.OK()
	}
}

func asking(x *Ctx) {
	if clusterTopo(x) != nil {
		x.cl.asking = true
		x.W.OK()
	}
}

var clusterHelpLines = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"HELP",
	"    Prints this help.",
}

// clusterBusHelpLines is Redis 7.0.15's CLUSTER HELP, for bus mode.
var clusterBusHelpLines = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
	"HELP",
	"    Prints this help.",
}

func clusterHelp(x *Ctx) {
	if clusterTopo(x) == nil {
		return
	}
	lines := clusterHelpLines
	if x.srv.bus != nil {
		lines = clusterBusHelpLines
	}
	x.W.Array(len(lines))
	for _, l := range lines {
		x.W.Status(l)
	}
}

func clusterInfo(x *Ctx) {
	t := clusterTopo(x)
	if t == nil {
		return
	}
	if b := x.srv.bus; b != nil {
		x.W.Verbatim(b.Info())
		return
	}
	size := 0
	var maxEpoch uint64
	for i := range t.Nodes {
		if len(t.ranges(i)) > 0 {
			size++
		}
		maxEpoch = max(maxEpoch, t.Nodes[i].Epoch)
	}
	state := "ok"
	if !x.srv.clusterCoverageOK(t) {
		state = "fail"
	}
	var b strings.Builder
	info := func(k, v string) { b.WriteString(k + ":" + v + "\r\n") }
	info("cluster_state", state)
	info("cluster_slots_assigned", itoa(int64(t.assigned)))
	info("cluster_slots_ok", itoa(int64(t.assigned)))
	info("cluster_slots_pfail", "0")
	info("cluster_slots_fail", "0")
	info("cluster_known_nodes", itoa(int64(len(t.Nodes))))
	info("cluster_size", itoa(int64(size)))
	info("cluster_current_epoch", itoa(int64(maxEpoch)))
	info("cluster_my_epoch", itoa(int64(t.Myself().Epoch)))
	// No bus: no messages of any type, so only the totals are printed.
	info("cluster_stats_messages_sent", "0")
	info("cluster_stats_messages_received", "0")
	info("total_cluster_links_buffer_limit_exceeded", "0")
	x.W.Verbatim(b.String())
}

func clusterMyID(x *Ctx) {
	if t := clusterTopo(x); t != nil {
		x.W.BulkString(t.Myself().ID)
	}
}

func clusterNodes(x *Ctx) {
	if t := clusterTopo(x); t != nil {
		if b := x.srv.bus; b != nil {
			x.W.Verbatim(b.Nodes())
			return
		}
		x.W.Verbatim(t.nodesText())
	}
}

// clusterSlots lists each contiguous range with its node, in slot order
// (Redis lists them node by node in its dictionary's order; clients sort).
func clusterSlots(x *Ctx) {
	t := clusterTopo(x)
	if t == nil {
		return
	}
	if b := x.srv.bus; b != nil {
		busSlots(x, b)
		return
	}
	type rng struct{ lo, hi, node int }
	var all []rng
	for s := 0; s < ClusterSlots; s++ {
		o := int(t.owner[s])
		if o < 0 {
			continue
		}
		if n := len(all); n > 0 && all[n-1].node == o && all[n-1].hi == s-1 {
			all[n-1].hi = s
		} else {
			all = append(all, rng{s, s, o})
		}
	}
	x.W.Array(len(all))
	typ := x.srv.endpointType()
	for _, r := range all {
		x.W.Array(3)
		x.W.Int(int64(r.lo))
		x.W.Int(int64(r.hi))
		n := &t.Nodes[r.node]
		writeSlotNode(x, typ, n.Host, n.Port, n.ID, n.Hostname)
	}
}

// clusterShards is one shard per node (no replicas), in file order.
func clusterShards(x *Ctx) {
	t := clusterTopo(x)
	if t == nil {
		return
	}
	if b := x.srv.bus; b != nil {
		writeShards(x, b.Shards())
		return
	}
	shards := make([]clusterbus.Shard, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		shards[i] = clusterbus.Shard{Slots: t.ranges(i),
			Nodes: []clusterbus.NodeInfo{{Name: n.ID, IP: n.Host, Hostname: n.Hostname, Port: n.Port, Master: true}}}
	}
	writeShards(x, shards)
}

func clusterKeyslot(x *Ctx) {
	if clusterTopo(x) != nil {
		x.W.Int(int64(KeySlot(x.Args[2])))
	}
}

// clusterCountKeysInSlot counts the slot's keys, expired ones not yet
// reaped included, as Redis's per-slot count does.
func clusterCountKeysInSlot(x *Ctx) {
	if clusterTopo(x) == nil {
		return
	}
	slot, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if slot < 0 || slot >= ClusterSlots {
		x.Error(ErrInvalidSlot)
		return
	}
	x.W.Int(int64(countKeysInSlot(x, int(slot))))
}

func countKeysInSlot(x *Ctx, slot int) int { return x.srv.ks.CountKeysInSlot(slot) }

// clusterGetKeysInSlot lists up to count keys of the slot, in no
// particular order (Redis: the slot's insertion order), expired ones not
// yet reaped included, as Redis's do.
func clusterGetKeysInSlot(x *Ctx) {
	if clusterTopo(x) == nil {
		return
	}
	slot, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	count, ok := resp.ParseInt(x.Args[3])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if count < 0 || slot < 0 || slot >= ClusterSlots {
		x.Error(ErrInvalidSlotOrCount)
		return
	}
	out := x.srv.ks.KeysInSlot(int(slot), int(min(count, math.MaxInt32)))
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// clusterSetSlot changes this node's view of one slot, as Redis's CLUSTER
// SETSLOT does, without telling anyone: there is no bus, so the migration
// tool (cellserver migrate) sends SETSLOT NODE to every node itself.
func clusterSetSlot(x *Ctx) {
	if clusterTopo(x) == nil {
		return
	}
	x.srv.topoMu.Lock()
	defer x.srv.topoMu.Unlock()
	t := x.srv.topo.Load()
	slot, ok := parseSlot(string(x.Args[2]))
	if !ok {
		x.Error(ErrSlotArg)
		return
	}
	action := strings.ToLower(string(x.Args[3]))
	hasNode := len(x.Args) == 5
	if !(hasNode && (action == "migrating" || action == "importing" || action == "node") || len(x.Args) == 4 && action == "stable") {
		x.Error(ErrSetSlotSyntax)
		return
	}
	if b := x.srv.bus; b != nil {
		busSetSlot(x, b, slot, action)
		return
	}
	peer := -1
	if hasNode {
		peer = t.nodeIndex(strings.ToLower(string(x.Args[4])))
	}
	n := t.clone()
	switch action {
	case "migrating":
		if int(t.owner[slot]) != t.Self {
			x.Error(errNotSlotOwner(slot))
			return
		}
		if peer < 0 {
			x.Error(errUnknownNode(x.Args[4]))
			return
		}
		n.migrating[slot] = peer
	case "importing":
		if int(t.owner[slot]) == t.Self {
			x.Error(errAlreadySlotOwner(slot))
			return
		}
		if peer < 0 {
			x.Error(errUnknownNode(x.Args[4]))
			return
		}
		n.importing[slot] = peer
	case "stable":
		delete(n.migrating, slot)
		delete(n.importing, slot)
	case "node":
		if peer < 0 {
			x.Error(errSetSlotNodeUnknown(x.Args[4]))
			return
		}
		if int(t.owner[slot]) == t.Self && peer != t.Self && countKeysInSlot(x, slot) > 0 {
			x.Error(errSlotHasKeys(slot))
			return
		}
		n.setOwner(slot, peer)
		delete(n.migrating, slot)
		if peer == n.Self {
			delete(n.importing, slot)
		}
	}
	x.srv.topo.Store(n)
	x.W.OK()
}
