package cell

import (
	"strconv"
	"sync"
	"time"

	"github.com/cellserver/cellserver/cell/clusterbus"
)

// Cluster mode on the cluster bus: the node table, epochs and failure
// state live in a clusterbus.Cluster, which gossips with the other nodes
// (cellserver or redis-server) on port + 10000. Every change it makes
// arrives here as a View, turned into the same immutable Topology the
// topology-file mode builds, so routing (cluster_route.go) reads one
// atomic pointer in both modes.

// busHost is the server as the bus sees it.
type busHost struct {
	s      *Server
	replMu sync.Mutex // orders the replication changes the bus asks for
}

func (h *busHost) CountKeysInSlot(slot int) int { return h.s.ks.CountKeysInSlot(slot) }

// DelKeysInSlot is asked when another master took over, with a newer
// epoch, a slot that still has keys here: they are deleted once the new
// slot map is in force (cluster_lostslots.go).
func (h *busHost) DelKeysInSlot(slot int) { h.s.lost.add(slot) }

func (h *busHost) KeyCount() int { return h.s.ks.DBSize(0) }

func (h *busHost) ReplOffset() uint64 {
	if l := h.s.link.Load(); l != nil {
		return uint64(max(l.off.Load(), 0))
	}
	off, _, _ := h.s.masterOffsets()
	return uint64(max(off, 0))
}

// ReplicateFrom runs off the bus's lock: a link being replaced waits for
// its goroutine.
func (h *busHost) ReplicateFrom(host string, port int) {
	go func() {
		h.replMu.Lock()
		defer h.replMu.Unlock()
		s := h.s
		if s.closing.Load() {
			return
		}
		if host == "" {
			if l := s.link.Swap(nil); l != nil {
				l.close()
				// As REPLICAOF NO ONE: a new history, which the other
				// replicas of the old master continue by partial resync.
				s.shiftReplID()
				s.disconnectReplicas()
				s.log.Info("MASTER MODE enabled (cluster failover)")
			}
			return
		}
		if l := s.link.Load(); l != nil && l.host == host && l.port == port {
			return
		}
		s.startLink(host, port)
	}()
}

// ReplDataAge is Redis's data_age: since the master was last heard from,
// or since the link went down.
func (h *busHost) ReplDataAge() int64 {
	l := h.s.link.Load()
	if l == nil {
		return 0
	}
	t := time.Now().Unix()
	if l.up.Load() {
		return (t - l.lastIO.Load()) * 1000
	}
	return (t - l.downSince.Load()) * 1000
}

// PauseWrites is the master's side of a manual failover: writes wait, as
// under CLIENT PAUSE WRITE, until the replica took over or the time ran
// out; 0 ends it. A pause of another purpose (CLIENT PAUSE) stays.
func (h *busHost) PauseWrites(until int64) {
	if until == 0 {
		h.s.unpause(pauseForClusterFailover)
		return
	}
	h.s.pause(pauseForClusterFailover, until, true)
}

func (h *busHost) Publish(channel, message []byte, shard bool) {
	if shard {
		h.s.spubsub.publish(nil, channel, message)
	} else {
		h.s.pubsub.publish(nil, channel, message)
	}
}

// Changed turns the bus's View into the routing Topology.
func (h *busHost) Changed(v *clusterbus.View) {
	t := &Topology{Self: v.Self, migrating: map[int]int{}, importing: map[int]int{}, fromBus: true, busOK: v.OK,
		isReplica: v.Master >= 0, master: v.Master}
	for _, n := range v.Nodes {
		t.Nodes = append(t.Nodes, ClusterNode{ID: n.Name, Host: n.IP, Port: n.Port, BusPort: n.CPort, Hostname: n.Hostname, Epoch: n.ConfigEpoch})
	}
	for s := range v.Owner {
		t.owner[s] = v.Owner[s]
	}
	t.assigned = v.Assigned
	for s, i := range v.Migrating {
		t.migrating[s] = i
	}
	for s, i := range v.Importing {
		t.importing[s] = i
	}
	h.s.topo.Store(t)
	h.s.lost.start()
}

// openBus reads nodes.conf and makes the bus, in newServer; Listen opens
// its port.
func (s *Server) openBus() {
	timeout := func() time.Duration {
		ms, _ := strconv.ParseInt(configParamByName("cluster-node-timeout").value(s), 10, 64)
		return time.Duration(ms) * time.Millisecond
	}
	bind := "127.0.0.1"
	if len(s.cfg.Bind) > 0 && s.cfg.Bind[0] != "*" && s.cfg.Bind[0] != "" {
		bind = s.cfg.Bind[0]
		if bind[0] == '-' {
			bind = bind[1:]
		}
	}
	if len(s.cfg.Bind) > 0 && s.cfg.Bind[0] == "*" {
		bind = ""
	}
	file := s.cfg.ClusterConfigFile
	if file == "" {
		file = "nodes.conf"
	}
	port, _ := strconv.Atoi(configParamByName("cluster-port").value(s))
	s.lost = &lostSlots{wake: make(chan struct{}, 1)}
	s.bus, s.busErr = clusterbus.Open(clusterbus.Config{
		Dir: s.cfg.Dir, File: file, Port: s.cfg.Port, BusPort: port, Bind: bind,
		Announce: func() clusterbus.Announce {
			return clusterbus.Announce{
				IP:       configParamByName("cluster-announce-ip").value(s),
				Hostname: configParamByName("cluster-announce-hostname").value(s),
				Port:     int(s.configInt("cluster-announce-port")),
				BusPort:  int(s.configInt("cluster-announce-bus-port")),
				TLSPort:  int(s.configInt("cluster-announce-tls-port")),
			}
		},
		NodeTimeout:      timeout,
		FullCoverage:     func() bool { return s.configBool("cluster-require-full-coverage") },
		ReplicaMigration: func() bool { return s.configBool("cluster-allow-replica-migration") },
		NoFailover:       func() bool { return s.configBool("cluster-replica-no-failover") },
		MaxDataAge: func() int64 {
			factor := s.configInt("cluster-replica-validity-factor")
			if factor == 0 {
				return 0
			}
			return s.configInt("repl-ping-replica-period")*1000 + timeout().Milliseconds()*factor
		},
		Log:  s.log,
		Host: &busHost{s: s},
	})
}
