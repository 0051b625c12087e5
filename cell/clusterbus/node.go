package clusterbus

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Node is one entry of the node table: what this node knows of a node of
// the cluster, itself included. Nodes are owned by their Cluster and read
// or changed only under its lock.
type Node struct {
	Name     string // 40 hex characters; random while in handshake
	Flags    uint16 // Flag*
	IP       string // "" until known
	Port     int    // client port
	CPort    int    // bus port
	PPort    int    // plaintext port when Port is TLS
	Hostname string

	ConfigEpoch uint64
	Slots       Slots
	NumSlots    int
	ReplicaOf   *Node   // its master, nil for a master
	Replicas    []*Node // for a master

	// Times in Unix milliseconds, as Redis keeps them.
	Created      int64
	PingSent     int64 // 0: no ping waiting for its pong
	PongReceived int64
	DataReceived int64
	FailTime     int64 // when FAIL was set
	VotedTime    int64 // when this node last voted for a replica of this master (failover)
	ReplOffset   uint64
	ReplOffTime  int64
	// FailReports are the masters that see this node as failing, by
	// name, with the time of their latest report.
	FailReports map[string]int64

	link    *link // outbound: we connected to it
	inbound *link // inbound: it connected to us
}

func (n *Node) is(flag uint16) bool { return n.Flags&flag != 0 }

// IsMaster and IsReplica are the node's role.
func (n *Node) IsMaster() bool  { return n.is(FlagMaster) }
func (n *Node) IsReplica() bool { return n.is(FlagReplica) }

// epoch is the config epoch CLUSTER NODES and nodes.conf print for the
// node: a replica's master's, as Redis's nodeEpoch (a replica's own
// epoch is only the one it had as a master, or was given by
// SET-CONFIG-EPOCH).
func (n *Node) epoch() uint64 {
	if n.IsReplica() && n.ReplicaOf != nil {
		return n.ReplicaOf.ConfigEpoch
	}
	return n.ConfigEpoch
}

// Failing reports FAIL or PFAIL.
func (n *Node) Failing() bool { return n.is(FlagFail | FlagPFail) }

// Connected reports whether an outbound link exists, as CLUSTER NODES'
// link-state prints it.
func (n *Node) Connected() bool { return n.link != nil || n.is(FlagMyself) }

// hasAddr reports whether the node's address is known.
func (n *Node) hasAddr() bool { return !n.is(FlagNoAddr) }

// randomName is a fresh node name.
func randomName() string {
	var b [NameLen / 2]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidName reports whether s is a node name: 40 hex characters.
func ValidName(s string) bool {
	if len(s) != NameLen {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

var flagNames = []struct {
	flag uint16
	name string
}{
	{FlagMyself, "myself"}, {FlagMaster, "master"}, {FlagReplica, "slave"}, {FlagPFail, "fail?"},
	{FlagFail, "fail"}, {FlagHandshake, "handshake"}, {FlagNoAddr, "noaddr"}, {FlagNoFailover, "nofailover"},
}

// flagsString is the flags field of CLUSTER NODES.
func flagsString(f uint16) string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.flag != 0 {
			out = append(out, fn.name)
		}
	}
	if len(out) == 0 {
		return "noflags"
	}
	return strings.Join(out, ",")
}

// parseFlags reads the flags field of nodes.conf.
func parseFlags(s string) (uint16, bool) {
	var f uint16
	for _, part := range strings.Split(s, ",") {
		switch part {
		case "noflags":
			continue
		case "replica":
			f |= FlagReplica
			continue
		}
		found := false
		for _, fn := range flagNames {
			if fn.name == part {
				f |= fn.flag
				found = true
			}
		}
		if !found {
			return 0, false
		}
	}
	return f, true
}

// addReplica and removeReplica keep a master's replica list.
func (n *Node) addReplica(r *Node) {
	for _, x := range n.Replicas {
		if x == r {
			return
		}
	}
	n.Replicas = append(n.Replicas, r)
}

func (n *Node) removeReplica(r *Node) {
	for i, x := range n.Replicas {
		if x == r {
			n.Replicas = append(n.Replicas[:i], n.Replicas[i+1:]...)
			return
		}
	}
}
