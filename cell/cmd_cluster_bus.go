package cell

import (
	"strconv"
	"strings"

	"github.com/cellserver/cellserver/cell/clusterbus"
	"github.com/cellserver/cellserver/resp"
)

// The CLUSTER subcommands that change the cluster (MEET, ADDSLOTS,
// REPLICATE, ...) and those that read the bus's own state (LINKS,
// COUNT-FAILURE-REPORTS), as Redis 7.0.15 answers them. They need the
// cluster bus: with a topology file (a fixed cluster) they answer
// errClusterNeedsBus.

func init() {
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "cluster", complexity}
	}
	admin := FlagAdmin | FlagStale
	register(
		&Command{Name: "cluster|addslots", Arity: -3, Flags: admin, Handler: clusterAddSlots,
			Doc: doc("Assign new hash slots to receiving node", "3.0.0", "O(N) where N is the total number of hash slot arguments")},
		&Command{Name: "cluster|addslotsrange", Arity: -4, Flags: admin, Handler: clusterAddSlotsRange,
			Doc: doc("Assign new hash slots to receiving node", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")},
		&Command{Name: "cluster|delslots", Arity: -3, Flags: admin, Handler: clusterDelSlots,
			Doc: doc("Set hash slots as unbound in receiving node", "3.0.0", "O(N) where N is the total number of hash slot arguments")},
		&Command{Name: "cluster|delslotsrange", Arity: -4, Flags: admin, Handler: clusterDelSlotsRange,
			Doc: doc("Set hash slots as unbound in a range", "7.0.0", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")},
		&Command{Name: "cluster|meet", Arity: -4, Flags: admin, Handler: clusterMeet,
			Doc: doc("Force a node cluster to handshake with another node", "3.0.0", "O(1)")},
		&Command{Name: "cluster|forget", Arity: 3, Flags: admin, Handler: clusterForget,
			Doc: doc("Remove a node from the nodes table", "3.0.0", "O(1)")},
		&Command{Name: "cluster|reset", Arity: -2, Flags: admin | FlagNoScript, Handler: clusterReset,
			Doc: doc("Reset a Redis Cluster node", "3.0.0", "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.")},
		&Command{Name: "cluster|saveconfig", Arity: 2, Flags: admin, Handler: clusterSaveConfig,
			Doc: doc("Forces the node to save cluster state on disk", "3.0.0", "O(1)")},
		&Command{Name: "cluster|bumpepoch", Arity: 2, Flags: admin, Handler: clusterBumpEpoch, Tips: []string{"nondeterministic_output"},
			Doc: doc("Advance the cluster config epoch", "3.0.0", "O(1)")},
		&Command{Name: "cluster|set-config-epoch", Arity: 3, Flags: admin, Handler: clusterSetConfigEpoch,
			Doc: doc("Set the configuration epoch in a new node", "3.0.0", "O(1)")},
		&Command{Name: "cluster|count-failure-reports", Arity: 3, Flags: admin, Handler: clusterCountFailureReports, Tips: []string{"nondeterministic_output"},
			Doc: doc("Return the number of failure reports active for a given node", "3.0.0", "O(N) where N is the number of failure reports")},
		&Command{Name: "cluster|links", Arity: 2, Flags: FlagStale, Handler: clusterLinks, Tips: []string{"nondeterministic_output"},
			Doc: doc("Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", "O(N) where N is the total number of Cluster nodes")},
		&Command{Name: "cluster|replicas", Arity: 3, Flags: admin, Handler: clusterReplicas, Tips: []string{"nondeterministic_output"},
			Doc: doc("List replica nodes of the specified master node", "5.0.0", "O(1)")},
		&Command{Name: "cluster|slaves", Arity: 3, Flags: admin, Handler: clusterReplicas, Tips: []string{"nondeterministic_output"},
			Doc: doc("List replica nodes of the specified master node", "3.0.0", "O(1)")},
		&Command{Name: "cluster|replicate", Arity: 3, Flags: admin, Handler: clusterReplicate,
			Doc: doc("Reconfigure a node as a replica of the specified master node", "3.0.0", "O(1)")},
		&Command{Name: "cluster|failover", Arity: -2, Flags: admin, Handler: clusterFailover,
			Doc: doc("Forces a replica to perform a manual failover of its master.", "3.0.0", "O(1)")},
		&Command{Name: "cluster|flushslots", Arity: 2, Flags: admin, Handler: clusterFlushSlots,
			Doc: doc("Delete a node's own slots information", "3.0.0", "O(1)")},
	)
}

// clusterBus returns the bus, or replies why there is none.
func clusterBus(x *Ctx) *clusterbus.Cluster {
	if clusterTopo(x) == nil {
		return nil
	}
	if x.srv.bus == nil {
		x.Error(errClusterNeedsBus(x.Args[1]))
	}
	return x.srv.bus
}

// busReply writes OK or the bus's refusal.
func busReply(x *Ctx, err error) {
	if err != nil {
		x.Error(err.Error())
		return
	}
	x.W.OK()
}

// slotArgs reads slot numbers as Redis's getSlotOrReply.
func slotArgs(x *Ctx, args [][]byte) ([]int, bool) {
	out := make([]int, 0, len(args))
	for _, a := range args {
		s, ok := parseSlot(string(a))
		if !ok {
			x.Error(ErrSlotArg)
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// slotRangeArgs reads start-end pairs (an even count, by arity and this
// check) into the slots they cover.
func slotRangeArgs(x *Ctx, args [][]byte) ([]int, bool) {
	if len(args)%2 != 0 {
		x.Error(errArity("cluster|" + strings.ToLower(string(x.Args[1]))))
		return nil, false
	}
	ends, ok := slotArgs(x, args)
	if !ok {
		return nil, false
	}
	var out []int
	for i := 0; i < len(ends); i += 2 {
		if ends[i] > ends[i+1] {
			x.Error(errSlotRangeOrder(ends[i], ends[i+1]))
			return nil, false
		}
		for s := ends[i]; s <= ends[i+1]; s++ {
			out = append(out, s)
		}
	}
	return out, true
}

func clusterAddSlots(x *Ctx) {
	if b := clusterBus(x); b != nil {
		if slots, ok := slotArgs(x, x.Args[2:]); ok {
			busReply(x, b.AddSlots(slots))
		}
	}
}

func clusterAddSlotsRange(x *Ctx) {
	if b := clusterBus(x); b != nil {
		if slots, ok := slotRangeArgs(x, x.Args[2:]); ok {
			busReply(x, b.AddSlots(slots))
		}
	}
}

func clusterDelSlots(x *Ctx) {
	if b := clusterBus(x); b != nil {
		if slots, ok := slotArgs(x, x.Args[2:]); ok {
			busReply(x, b.DelSlots(slots))
		}
	}
}

func clusterDelSlotsRange(x *Ctx) {
	if b := clusterBus(x); b != nil {
		if slots, ok := slotRangeArgs(x, x.Args[2:]); ok {
			busReply(x, b.DelSlots(slots))
		}
	}
}

// clusterFlushSlots unassigns every slot of this node; Redis refuses it
// while the node holds keys.
func clusterFlushSlots(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	if x.srv.ks.DBSize(0) != 0 {
		x.Error(ErrFlushSlotsKeys)
		return
	}
	t := x.srv.topo.Load()
	var mine []int
	for s := range ClusterSlots {
		if int(t.owner[s]) == t.Self {
			mine = append(mine, s)
		}
	}
	busReply(x, b.DelSlots(mine))
}

// clusterMeet is MEET ip port [cport].
func clusterMeet(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	if len(x.Args) > 5 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	// Numbers out of range are the handshake's to refuse (Meet).
	port, ok := resp.ParseInt(x.Args[3])
	if !ok {
		x.Error(errMeetPort(x.Args[3]))
		return
	}
	var cport int64
	if len(x.Args) == 5 {
		if cport, ok = resp.ParseInt(x.Args[4]); !ok {
			x.Error(errMeetBusPort(x.Args[4]))
			return
		}
	}
	busReply(x, b.Meet(string(x.Args[2]), port, cport))
}

func clusterForget(x *Ctx) {
	if b := clusterBus(x); b != nil {
		busReply(x, b.Forget(string(x.Args[2])))
	}
}

// clusterReset is RESET [HARD|SOFT], soft by default.
func clusterReset(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	hard := false
	if len(x.Args) == 3 {
		switch {
		case optIs(x.Args[2], "hard"):
			hard = true
		case optIs(x.Args[2], "soft"):
		default:
			x.Error(ErrSyntax)
			return
		}
	} else if len(x.Args) > 3 {
		x.Error(ErrSyntax)
		return
	}
	busReply(x, b.Reset(hard))
}

func clusterSaveConfig(x *Ctx) {
	if b := clusterBus(x); b != nil {
		busReply(x, b.SaveConfig())
	}
}

// clusterBumpEpoch replies BUMPED <epoch> or STILL <epoch>.
func clusterBumpEpoch(x *Ctx) {
	if b := clusterBus(x); b != nil {
		bumped, epoch := b.BumpEpoch()
		word := "STILL"
		if bumped {
			word = "BUMPED"
		}
		x.W.Status(word + " " + strconv.FormatUint(epoch, 10))
	}
}

func clusterSetConfigEpoch(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	epoch, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	busReply(x, b.SetConfigEpoch(epoch))
}

func clusterCountFailureReports(x *Ctx) {
	if b := clusterBus(x); b != nil {
		n, err := b.CountFailureReports(string(x.Args[2]))
		if err != nil {
			x.Error(err.Error())
			return
		}
		x.W.Int(int64(n))
	}
}

// clusterLinks is one map per link, as Redis 7.0's.
func clusterLinks(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	links := b.Links()
	x.W.Array(len(links))
	for _, l := range links {
		x.W.Map(6)
		x.W.BulkString("direction")
		if l.To {
			x.W.BulkString("to")
		} else {
			x.W.BulkString("from")
		}
		x.W.BulkString("node")
		x.W.BulkString(l.Node)
		x.W.BulkString("create-time")
		x.W.Int(l.Created)
		x.W.BulkString("events")
		x.W.BulkString(l.Events)
		x.W.BulkString("send-buffer-allocated")
		x.W.Int(int64(l.BufferUsed))
		x.W.BulkString("send-buffer-used")
		x.W.Int(int64(l.BufferUsed))
	}
}

// clusterReplicas is REPLICAS (and SLAVES): the replicas' CLUSTER NODES
// lines.
func clusterReplicas(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	reps, err := b.Replicas(string(x.Args[2]))
	if err != nil {
		x.Error(err.Error())
		return
	}
	x.W.Array(len(reps))
	for _, r := range reps {
		x.W.BulkString(r.Line)
	}
}

// clusterReplicate makes this node a replica of a master, replicating
// with cellserver's own replication (repl_replica.go).
func clusterReplicate(x *Ctx) {
	if b := clusterBus(x); b != nil {
		busReply(x, b.Replicate(string(x.Args[2])))
	}
}

// clusterFailover is CLUSTER FAILOVER [FORCE|TAKEOVER], on a replica.
func clusterFailover(x *Ctx) {
	b := clusterBus(x)
	if b == nil {
		return
	}
	var force, takeover bool
	switch {
	case len(x.Args) > 3:
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	case len(x.Args) == 3 && strings.EqualFold(string(x.Args[2]), "force"):
		force = true
	case len(x.Args) == 3 && strings.EqualFold(string(x.Args[2]), "takeover"):
		force, takeover = true, true
	case len(x.Args) == 3:
		x.Error(ErrSyntax)
		return
	}
	busReply(x, b.Failover(force, takeover))
}

// busSetSlot is SETSLOT on the bus, after the arguments were checked.
func busSetSlot(x *Ctx, b *clusterbus.Cluster, slot int, action string) {
	name := ""
	if len(x.Args) == 5 {
		name = string(x.Args[4])
	}
	busReply(x, b.SetSlot(slot, action, name))
}

// busSlots is CLUSTER SLOTS from the bus: masters and their replicas.
func busSlots(x *Ctx, b *clusterbus.Cluster) {
	rs := b.Slots()
	w := x.W
	w.Array(len(rs))
	typ := x.srv.endpointType()
	node := func(n clusterbus.NodeInfo) { writeSlotNode(x, typ, n.IP, n.Port, n.Name, n.Hostname) }
	for _, r := range rs {
		w.Array(3 + len(r.Replicas))
		w.Int(int64(r.First))
		w.Int(int64(r.Last))
		node(r.Master)
		for _, rep := range r.Replicas {
			node(rep)
		}
	}
}

// writeShards is CLUSTER SHARDS' reply, in either mode.
func writeShards(x *Ctx, shards []clusterbus.Shard) {
	w := x.W
	w.Array(len(shards))
	typ := x.srv.endpointType()
	for _, sh := range shards {
		w.Map(2)
		w.BulkString("slots")
		w.Array(2 * len(sh.Slots))
		for _, r := range sh.Slots {
			w.Int(int64(r[0]))
			w.Int(int64(r[1]))
		}
		w.BulkString("nodes")
		w.Array(len(sh.Nodes))
		for _, n := range sh.Nodes {
			fields := 7
			if n.Hostname != "" {
				fields++
			}
			w.Map(fields)
			w.BulkString("id")
			w.BulkString(n.Name)
			w.BulkString("port")
			w.Int(int64(n.Port))
			w.BulkString("ip")
			w.BulkString(n.IP)
			w.BulkString("endpoint")
			w.BulkString(preferredEndpoint(typ, n.IP, n.Hostname))
			if n.Hostname != "" {
				w.BulkString("hostname")
				w.BulkString(n.Hostname)
			}
			w.BulkString("role")
			if n.Master {
				w.BulkString("master")
			} else {
				w.BulkString("replica")
			}
			w.BulkString("replication-offset")
			w.Int(int64(n.Offset))
			w.BulkString("health")
			switch {
			case n.Failed:
				w.BulkString("fail")
			case n.Loading:
				w.BulkString("loading")
			default:
				w.BulkString("online")
			}
		}
	}
}
