package cell

import (
	"strconv"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// Redirection: where dispatch sends a command in cluster mode, as Redis's
// getNodeByQuery and clusterRedirectClient decide it.
//
// Only commands that take keys are checked (and EXEC, for the keys of its
// queue). All keys of a request must hash to one slot (-CROSSSLOT); that
// slot must have an owner (-CLUSTERDOWN Hash slot not served), the cluster
// must cover every slot (-CLUSTERDOWN The cluster is down), and the owner
// must be this node (-MOVED), unless the slot is being migrated away and a
// key is missing here (-ASK to the target), or is being imported and the
// client sent ASKING. Inside MULTI each command is checked when queued, and
// EXEC checks the whole queue again as one request.

// SetTopology swaps in a new topology (SIGHUP). It must describe the same
// node as the current one.
func (s *Server) SetTopology(t *Topology) error {
	s.topoMu.Lock()
	defer s.topoMu.Unlock()
	cur := s.topo.Load()
	if cur == nil {
		return errNotCluster
	}
	if t.Myself().ID != cur.Myself().ID {
		return errSelfChanged
	}
	s.topo.Store(t)
	return nil
}

// Topology is the current cluster layout, nil without cluster mode.
func (s *Server) Topology() *Topology { return s.topo.Load() }

type clusterError string

func (e clusterError) Error() string { return string(e) }

const (
	errNotCluster  = clusterError("cluster mode is off")
	errSelfChanged = clusterError("the new topology names another node as this one; restart to change a node's id")
)

// clusterCheck is dispatch's cluster step. It reports false when it has
// replied with a redirection or an error instead of running cmd.
func (c *Client) clusterCheck(cmd *Command, args [][]byte) bool {
	asking := c.asking
	// ASKING lasts for one command, or to the end of a MULTI it precedes.
	if c.multi == nil && cmd.Name != "multi" && cmd.Name != "asking" || cmd.Name == "exec" || cmd.Name == "discard" {
		c.asking = false
	}
	if cmd.FirstKey <= 0 && cmd.Keys == nil && cmd.Name != "exec" {
		return true
	}
	t := c.srv.topo.Load()
	r := slotRouter{t: t, srv: c.srv, slot: -1, readonly: c.readonly}
	if cmd.Name == "exec" {
		if c.multi == nil {
			return true
		}
		for _, q := range c.multi.cmds {
			if !r.add(q.cmd, q.args, c) {
				break
			}
		}
	} else {
		r.add(cmd, args, c)
	}
	msg := r.verdict(cmd, asking || cmd.Flags&FlagAsking != 0)
	if msg == "" {
		return true
	}
	if cmd.Name == "exec" {
		// Redis discards the transaction and replies the redirection itself,
		// not EXECABORT.
		c.multi = nil
		c.unwatchAll()
	} else if c.multi != nil {
		c.multi.dirty = true
	}
	c.w.Error(msg)
	c.srv.stats.countError(msg)
	c.srv.statsOf(cmd).rejected.Add(1)
	return false
}

// slotRouter accumulates the keys of a request (one command, or EXEC's
// queue) as getNodeByQuery does.
type slotRouter struct {
	t   *Topology
	srv *Server
	// held: the request runs inside a script, which already holds its
	// shards, so key existence (for open slots) is read without locking,
	// at the script's frozen time now.
	held bool
	now  int64
	// holds, inside a script that holds only some shards, says which:
	// a key of another shard cannot be looked at and counts as missing.
	holds     func(*keyspace.Shard) bool
	slot      int
	first     []byte
	multiple  bool // more than one distinct key
	missing   int  // keys absent here while the slot is open
	open      bool // the slot is migrating from or importing to this node
	migrating bool
	err       string
	readonly  bool // the client sent READONLY
	write     bool // a command of the request writes
}

// add takes the keys of one command; false once the request has failed.
func (r *slotRouter) add(cmd *Command, args [][]byte, c *Client) bool {
	c.keyIdx = cmd.keyIndexes(args, c.keyIdx[:0])
	for _, i := range c.keyIdx {
		key := args[i]
		s := KeySlot(key)
		if cmd.Flags&FlagWrite != 0 {
			r.write = true
		}
		if r.first == nil {
			r.first, r.slot = key, s
			if r.t.owner[s] < 0 {
				r.err = ErrSlotUnbound
				return false
			}
			if int(r.t.owner[s]) == r.t.Self {
				_, r.migrating = r.t.migrating[s]
			}
			_, importing := r.t.importing[s]
			r.open = r.migrating || importing
		} else if string(key) != string(r.first) {
			if s != r.slot {
				r.err = ErrCrossSlot
				return false
			}
			r.multiple = true
		}
		if r.open && !r.exists(key) {
			r.missing++
		}
	}
	return true
}

// exists reports whether key is live here, for open slots.
func (r *slotRouter) exists(key []byte) bool {
	if !r.held {
		return r.srv.keyExists(key)
	}
	if r.holds != nil && !r.holds(r.srv.ks.ShardOf(0, key)) {
		return false
	}
	return r.srv.ks.Exists(0, key, r.now)
}

// verdict is the reply that replaces the command, "" to run it.
func (r *slotRouter) verdict(cmd *Command, asking bool) string {
	t := r.t
	switch {
	case r.err != "":
		return r.err
	case r.first == nil:
		return ""
	case !t.ok() && !r.srv.clusterCoverageOK(t):
		switch {
		case !r.srv.configBool("cluster-allow-reads-when-down"):
			return ErrClusterDown
		case cmd.Flags&FlagWrite != 0:
			return ErrClusterDownRO
		}
	}
	if r.open && cmd.Name == "migrate" {
		return "" // moving keys out works whatever is missing
	}
	if r.migrating && r.missing > 0 {
		if r.multiple {
			return ErrTryAgain
		}
		return errAsk(r.slot, r.srv.redirectAddr(&t.Nodes[t.migrating[r.slot]]))
	}
	if _, importing := t.importing[r.slot]; importing && asking {
		if r.multiple && r.missing > 0 {
			return ErrTryAgain
		}
		return ""
	}
	if t.isReplica && r.readonly && !r.write && int(t.owner[r.slot]) == t.master {
		return "" // a READONLY client reads its master's slot from this replica
	}
	if int(t.owner[r.slot]) != t.Self {
		return errMoved(r.slot, r.srv.redirectAddr(&t.Nodes[t.owner[r.slot]]))
	}
	return ""
}

// keyExists reports whether key is live in database 0, taking its shard's
// lock for the look.
func (s *Server) keyExists(key []byte) bool {
	return s.ks.ExistsLocking(0, key, time.Now().UnixMilli())
}

// scriptClusterCheck is the cluster check of one redis.call inside a
// script, as Redis 7.0's scriptVerifyClusterState: the command is routed
// as if a client sent it (with the calling client's ASKING), and anything
// but "run it here" refuses it. The script's shards are held, so key
// existence is read without locking; holds, when not nil, tells which
// shards the script holds (a key elsewhere counts as missing here, and is
// refused either way). It returns "" to allow the call.
func (x *Ctx) scriptClusterCheck(cmd *Command, args [][]byte, holds func(*keyspace.Shard) bool) string {
	if !x.srv.clusterOn {
		return ""
	}
	r := slotRouter{t: x.srv.topo.Load(), srv: x.srv, slot: -1, held: true, now: x.Now(), holds: holds}
	r.add(cmd, args, x.cl)
	switch r.verdict(cmd, x.cl.asking || cmd.Flags&FlagAsking != 0) {
	case "":
		return ""
	case ErrClusterDown:
		return ErrScriptClusterDown
	case ErrClusterDownRO:
		return ErrScriptClusterDownRO
	default:
		return ErrScriptNonLocalKey
	}
}

// clusterCoverageOK is cluster_state for a topology with unserved slots:
// down, unless cluster-require-full-coverage is no (then only the unserved
// slots fail). Read from CONFIG only on this rare path.
func (s *Server) clusterCoverageOK(t *Topology) bool {
	if t.fromBus {
		return t.busOK
	}
	return t.ok() || !s.configBool("cluster-require-full-coverage")
}

// configBool reads a yes/no CONFIG parameter.
func (s *Server) configBool(name string) bool {
	return configParamByName(name).value(s) == "yes"
}

// configInt reads an integer CONFIG parameter.
func (s *Server) configInt(name string) int64 {
	n, _ := strconv.ParseInt(configParamByName(name).value(s), 10, 64)
	return n
}
