package clusterbus

import "time"

// Failure detection and cluster state, as Redis's clusterCron and
// clusterUpdateState. A node that has not answered a PING for
// cluster-node-timeout is PFAIL here; masters gossip what they see as
// failing, and once a majority of the masters serving slots report a node
// (this one included, if a master), it is FAIL and a FAIL message tells
// every node at once.

const (
	cronPeriod            = 100 * time.Millisecond
	failReportValidity    = 2 // node timeouts a failure report stays valid
	failUndoTimeMult      = 2 // node timeouts before a FAIL master with slots is cleared
	writableDelayMs       = 2000
	blacklistTTLSeconds   = 60
	minRejoinDelayMs      = 500
	maxRejoinDelayMs      = 5000
	minHandshakeTimeoutMs = 1000
)

func (c *Cluster) cronLoop() {
	defer c.wg.Done()
	t := time.NewTicker(cronPeriod)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		c.cron()
		c.afterChange()
		c.mu.Unlock()
	}
}

func (c *Cluster) cron() {
	t := now()
	timeout := c.nodeTimeout()
	handshakeTimeout := max(timeout, minHandshakeTimeoutMs)
	c.iteration++
	c.updateMyselfFlags()
	c.updateMyself()
	for name, until := range c.blacklist {
		if until <= t/1000 {
			delete(c.blacklist, name)
		}
	}
	for _, n := range c.nodes {
		if n == c.myself || n.is(FlagNoAddr) {
			continue
		}
		if n.is(FlagHandshake) && t-n.Created > handshakeTimeout {
			c.delNode(n)
			continue
		}
		if n.link == nil && n.IP != "" && n.CPort != 0 {
			c.connect(n)
		}
	}
	// Once a second, PING the node of five random ones whose pong is the
	// oldest.
	if c.iteration%10 == 0 {
		var oldest *Node
		k := 0
		for _, n := range c.nodes {
			if k == 5 {
				break
			}
			k++
			if n.link == nil || n.PingSent != 0 || n.is(FlagMyself|FlagHandshake) {
				continue
			}
			if oldest == nil || n.PongReceived < oldest.PongReceived {
				oldest = n
			}
		}
		if oldest != nil {
			c.sendPing(oldest.link, Ping)
		}
	}
	for _, n := range c.nodes {
		if n.is(FlagMyself | FlagNoAddr | FlagHandshake) {
			continue
		}
		pingDelay, dataDelay := t-n.PingSent, t-n.DataReceived
		// A link that carries nothing back for half the timeout is
		// reopened: the peer may be fine, the connection not.
		if n.link != nil && t-n.link.created > timeout && n.PingSent != 0 && pingDelay > timeout/2 && dataDelay > timeout/2 {
			c.freeLink(n.link)
		}
		if n.link != nil && n.PingSent == 0 && t-n.PongReceived > timeout/2 {
			c.sendPing(n.link, Ping)
			continue
		}
		if n.PingSent == 0 {
			continue
		}
		if min(pingDelay, dataDelay) > timeout && !n.Failing() {
			c.cfg.Log.Debug("cluster: node might be failing", "node", n.Name)
			n.Flags |= FlagPFail
			c.todoState = true
		}
	}
	// A replica that lost its replication link (a restart) re-attaches.
	if me := c.myself; me.IsReplica() && me.ReplicaOf != nil && me.ReplicaOf.IP != "" && !c.replicating {
		c.cfg.Host.ReplicateFrom(me.ReplicaOf.IP, me.ReplicaOf.Port)
		c.replicating = true
	}
	c.failoverCron()
	if c.iteration%10 == 0 || !c.stateOK {
		c.todoState = true
	}
}

// updateMyselfFlags applies cluster-replica-no-failover to this node's
// flags, which gossip carries (Redis's clusterUpdateMyselfFlags).
func (c *Cluster) updateMyselfFlags() {
	if c.cfg.NoFailover == nil {
		return
	}
	old := c.myself.Flags
	c.myself.Flags &^= FlagNoFailover
	if c.cfg.NoFailover() {
		c.myself.Flags |= FlagNoFailover
	}
	if c.myself.Flags != old {
		c.todoSave, c.todoState = true, true
	}
}

// addFailureReport records that sender sees n failing; true if new.
func (c *Cluster) addFailureReport(n, sender *Node) bool {
	_, had := n.FailReports[sender.Name]
	n.FailReports[sender.Name] = now()
	return !had
}

// failureReports counts the reports still valid, dropping old ones.
func (c *Cluster) failureReports(n *Node) int {
	limit := now() - c.nodeTimeout()*failReportValidity
	for name, at := range n.FailReports {
		if at < limit {
			delete(n.FailReports, name)
		}
	}
	return len(n.FailReports)
}

// markFailingIfNeeded promotes PFAIL to FAIL once a majority of masters
// agree, and broadcasts it.
func (c *Cluster) markFailingIfNeeded(n *Node) {
	needed := c.size/2 + 1
	if !n.is(FlagPFail) || n.is(FlagFail) {
		return
	}
	failures := c.failureReports(n)
	if c.myself.IsMaster() {
		failures++
	}
	if failures < needed {
		return
	}
	c.cfg.Log.Info("cluster: marking node as failing (quorum reached)", "node", n.Name)
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.FailTime = now()
	m := c.header(Fail)
	m.Node = n.Name
	c.broadcast(m)
	c.todoSave, c.todoState = true, true
}

// clearFailureIfNeeded lifts FAIL from a node reachable again: at once for
// a replica or a master without slots, after a while for a master with
// slots that nobody took over.
func (c *Cluster) clearFailureIfNeeded(n *Node) {
	t := now()
	if n.IsReplica() || n.NumSlots == 0 {
		c.cfg.Log.Info("cluster: clear FAIL state; node is reachable again", "node", n.Name)
		n.Flags &^= FlagFail
		c.todoSave, c.todoState = true, true
	}
	if n.IsMaster() && n.NumSlots > 0 && t-n.FailTime > c.nodeTimeout()*failUndoTimeMult {
		c.cfg.Log.Info("cluster: clear FAIL state; master is reachable again and nobody is serving its slots", "node", n.Name)
		n.Flags &^= FlagFail
		c.todoSave, c.todoState = true, true
	}
}

// updateState computes cluster_state: ok when every slot is served by a
// node not FAIL (unless cluster-require-full-coverage is no) and a
// majority of the masters serving slots is reachable.
func (c *Cluster) updateState() {
	t := now()
	if c.startTime == 0 {
		c.startTime = t
	}
	// A master just started waits a little before it says ok, so it
	// hears of a newer configuration first.
	if c.myself.IsMaster() && !c.stateOK && t-c.startTime < writableDelayMs {
		return
	}
	ok := true
	if c.cfg.FullCoverage == nil || c.cfg.FullCoverage() {
		for s := range c.slots {
			if n := c.slots[s]; n == nil || n.is(FlagFail) {
				ok = false
				break
			}
		}
	}
	size, reachable := 0, 0
	for _, n := range c.nodes {
		if n.IsMaster() && n.NumSlots > 0 {
			size++
			if !n.Failing() {
				reachable++
			}
		}
	}
	c.size = size
	if reachable < size/2+1 {
		ok = false
		c.amongMinoritySince = t
	}
	if ok == c.stateOK {
		return
	}
	rejoin := min(max(c.nodeTimeout(), minRejoinDelayMs), maxRejoinDelayMs)
	if ok && c.myself.IsMaster() && t-c.amongMinoritySince < rejoin {
		return
	}
	c.cfg.Log.Info("cluster state changed", "state", map[bool]string{true: "ok", false: "fail"}[ok])
	c.stateOK = ok
	c.todoPublish = true
}
