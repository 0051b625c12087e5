package clusterbus

import (
	"math/rand/v2"
)

// Replica failover, as Redis 7.0's clusterHandleSlaveFailover and its
// helpers. A replica whose master is FAIL (or that was asked by CLUSTER
// FAILOVER) waits a delay that grows with its rank among its master's
// replicas (the one with the most data goes first), then asks every
// master for a vote at a new epoch. Each master gives at most one vote
// per epoch, none to a replica of a master it does not see failing
// (unless the request forces it: a manual failover) and none within two
// node timeouts of its last vote for that master. With a majority of the
// masters that serve slots, the replica takes its master's slots at the
// election's epoch and says so in a PONG to everyone; the rest of the
// cluster (the old master and its other replicas too, once they hear)
// follows through updateSlotsConfigWith, as for any newer claim.
//
// A manual failover (CLUSTER FAILOVER) first asks the master to stop
// writes (MFSTART); the master then sends PINGs flagged paused with its
// replication offset, and the replica starts its election only once it
// has applied up to that offset, so nothing acknowledged is lost. FORCE
// skips the master; TAKEOVER skips the election too.

const (
	mfTimeoutMs    = 5000 // CLUSTER_MF_TIMEOUT
	mfPauseMult    = 2    // the master pauses writes for twice the timeout
	minAuthTimeout = 2000
	rankDelayMs    = 1000
	baseDelayMs    = 500
	randomDelayMs  = 500
)

// failoverState is the replica's election and the manual failover, kept
// on the Cluster.
type failoverState struct {
	authTime  int64  // when the election may start (or started)
	authCount int    // votes received
	authSent  bool   // the request went out
	authRank  int    // our rank among the master's replicas
	authEpoch uint64 // the epoch asked for

	mfEnd          int64 // a manual failover runs until then; 0: none
	mfReplica      *Node // on the master: the replica that asked
	mfMasterOffset int64 // on the replica: the paused master's offset; -1: unknown
	mfCanStart     bool  // on the replica: the election may start at once
	lastCantLog    int64
}

// replicaRank is how many other replicas of our master have more data
// than us, as Redis's clusterGetSlaveRank.
func (c *Cluster) replicaRank() int {
	master := c.myself.ReplicaOf
	if master == nil {
		return 0
	}
	mine := c.cfg.Host.ReplOffset()
	rank := 0
	for _, r := range master.Replicas {
		if r != c.myself && !r.is(FlagNoFailover) && r.ReplOffset > mine {
			rank++
		}
	}
	return rank
}

// failoverCron runs the replica's side on every cron tick.
func (c *Cluster) failoverCron() {
	c.manualFailoverCheckTimeout()
	if c.myself.IsReplica() {
		c.manualFailoverCheckOffset()
		c.replicaFailover()
	}
}

// replicaFailover is clusterHandleSlaveFailover.
func (c *Cluster) replicaFailover() {
	f := &c.fo
	me := c.myself
	master := me.ReplicaOf
	t := now()
	needed := c.size/2 + 1
	manual := f.mfEnd != 0 && f.mfCanStart
	authTimeout := max(c.nodeTimeout()*2, minAuthTimeout)
	authRetry := authTimeout * 2

	if master == nil || master.NumSlots == 0 || !master.is(FlagFail) && !manual || me.is(FlagNoFailover) && !manual {
		return
	}
	// A replica that lost its master long ago holds data too old to
	// serve: it does not stand, unless an operator asked.
	age := c.cfg.Host.ReplDataAge()
	if age > c.nodeTimeout() {
		age -= c.nodeTimeout()
	}
	if limit := c.maxDataAge(); limit > 0 && !manual && age > limit {
		c.cantFailover("Disconnected from master for longer than allowed. Please check the 'cluster-replica-validity-factor' configuration option.")
		return
	}
	if t-f.authTime > authRetry {
		f.authTime = t + baseDelayMs + rand.Int64N(randomDelayMs)
		f.authCount, f.authSent = 0, false
		f.authRank = c.replicaRank()
		f.authTime += int64(f.authRank) * rankDelayMs
		if f.mfEnd != 0 {
			f.authTime, f.authRank = t, 0
		}
		c.cfg.Log.Info("cluster: start of election delayed", "ms", f.authTime-t, "rank", f.authRank, "offset", c.cfg.Host.ReplOffset())
		// Tell the other replicas of our master our offset now, so their
		// ranks see it.
		for _, r := range master.Replicas {
			if r != me && r.link != nil {
				c.sendPing(r.link, Pong)
			}
		}
		return
	}
	if !f.authSent && f.mfEnd == 0 {
		if rank := c.replicaRank(); rank > f.authRank {
			f.authTime += int64(rank-f.authRank) * rankDelayMs
			f.authRank = rank
		}
	}
	if t < f.authTime {
		c.cantFailover("Waiting the delay before I can start a new failover.")
		return
	}
	if t-f.authTime > authTimeout {
		c.cantFailover("Failover attempt expired.")
		return
	}
	if !f.authSent {
		c.currentEpoch++
		f.authEpoch = c.currentEpoch
		c.cfg.Log.Info("cluster: starting a failover election", "epoch", c.currentEpoch)
		m := c.header(FailoverAuthRequest)
		if f.mfEnd != 0 {
			m.MFlags[0] |= MFlagForceAck
		}
		c.broadcast(m)
		f.authSent = true
		c.todoSave = true
		return
	}
	if f.authCount >= needed {
		c.cfg.Log.Info("cluster: failover election won", "votes", f.authCount, "needed", needed)
		if me.ConfigEpoch < f.authEpoch {
			me.ConfigEpoch = f.authEpoch
			c.cfg.Log.Info("cluster: configEpoch set after successful failover", "epoch", me.ConfigEpoch)
		}
		c.replaceMaster()
		return
	}
	c.cantFailover("Waiting for votes, but majority still not reached.")
}

// cantFailover logs why the election does not go on, at most every ten
// seconds, as Redis's clusterLogCantFailover.
func (c *Cluster) cantFailover(reason string) {
	t := now()
	if t-c.fo.lastCantLog < 10000 {
		return
	}
	c.fo.lastCantLog = t
	c.cfg.Log.Info("cluster: currently unable to failover: " + reason)
}

// maxDataAge is Config.MaxDataAge, Redis's defaults when unset.
func (c *Cluster) maxDataAge() int64 {
	if c.cfg.MaxDataAge == nil {
		return 10*1000 + c.nodeTimeout()*10
	}
	return c.cfg.MaxDataAge()
}

// replaceMaster makes this replica the master of its master's slots, as
// clusterFailoverReplaceYourMaster.
func (c *Cluster) replaceMaster() {
	me := c.myself
	old := me.ReplicaOf
	if me.IsMaster() || old == nil {
		return
	}
	c.setNodeAsMaster(me)
	c.cfg.Host.ReplicateFrom("", 0)
	c.replicating = false
	for s := range c.slots {
		if c.slots[s] == old {
			c.delSlot(s)
			c.addSlot(me, s)
		}
	}
	c.updateState()
	c.todoSave = true
	c.broadcastPong()
	c.resetManualFailover()
}

// failoverAuthRequest is a master's vote, as clusterSendFailoverAuthIfNeeded.
func (c *Cluster) failoverAuthRequest(sender *Node, m *Message) {
	me := c.myself
	master := sender.ReplicaOf
	force := m.MFlags[0]&MFlagForceAck != 0
	if me.IsReplica() || me.NumSlots == 0 {
		return
	}
	if m.CurrentEpoch < c.currentEpoch || c.lastVoteEpoch == c.currentEpoch {
		return
	}
	if sender.IsMaster() || master == nil || !master.is(FlagFail) && !force {
		return
	}
	t := now()
	if t-master.VotedTime < c.nodeTimeout()*2 {
		c.cfg.Log.Info("cluster: failover auth denied: can't vote for a replica of this master before a while", "replica", sender.Name)
		return
	}
	for s := 0; s < SlotCount; s++ {
		if !m.Slots.Has(s) {
			continue
		}
		if o := c.slots[s]; o != nil && o.ConfigEpoch > m.ConfigEpoch {
			c.cfg.Log.Info("cluster: failover auth denied: a slot it claims is served at a newer epoch", "replica", sender.Name, "slot", s)
			return
		}
	}
	c.lastVoteEpoch = c.currentEpoch
	master.VotedTime = t
	c.todoSave = true
	if err := c.saveConf(true); err != nil {
		// A vote not on disk could be given twice after a restart.
		c.cfg.Log.Warn("cluster: could not save the vote; not voting", "err", err)
		return
	}
	c.todoSave = false
	c.cfg.Log.Info("cluster: failover auth granted", "replica", sender.Name, "epoch", c.currentEpoch)
	if l := sender.link; l != nil {
		c.send(l, c.header(FailoverAuthAck))
	} else if l := sender.inbound; l != nil {
		c.send(l, c.header(FailoverAuthAck))
	}
}

// failoverAuthAck counts a master's vote for our election.
func (c *Cluster) failoverAuthAck(sender *Node, m *Message) {
	if sender.IsMaster() && sender.NumSlots > 0 && m.CurrentEpoch >= c.fo.authEpoch && c.fo.authSent {
		c.fo.authCount++
	}
}

// manualFailoverStart is MFSTART on the master: pause writes, and let the
// replica know our offset (PINGs now carry MFlagPaused).
func (c *Cluster) manualFailoverStart(sender *Node, m *Message) {
	if sender.ReplicaOf != c.myself || !c.myself.IsMaster() {
		return
	}
	c.resetManualFailover()
	t := now()
	c.fo.mfEnd = t + mfTimeoutMs
	c.fo.mfReplica = sender
	c.cfg.Host.PauseWrites(t + mfTimeoutMs*mfPauseMult)
	c.cfg.Log.Info("cluster: manual failover requested by replica", "replica", sender.Name)
	if l := sender.link; l != nil {
		c.sendPing(l, Ping)
	}
}

// manualFailoverCheckTimeout ends a manual failover that took too long.
func (c *Cluster) manualFailoverCheckTimeout() {
	if c.fo.mfEnd != 0 && c.fo.mfEnd < now() {
		c.cfg.Log.Warn("cluster: manual failover timed out")
		c.resetManualFailover()
	}
}

// manualFailoverCheckOffset lets the election start once the replica
// applied everything the paused master wrote.
func (c *Cluster) manualFailoverCheckOffset() {
	f := &c.fo
	if f.mfEnd == 0 || f.mfCanStart || f.mfMasterOffset < 0 {
		return
	}
	if uint64(f.mfMasterOffset) == c.cfg.Host.ReplOffset() {
		f.mfCanStart = true
		c.cfg.Log.Info("cluster: all of the master's replication stream processed; manual failover can start")
	}
}

// masterPaused takes the offset a paused master sent us, during a manual
// failover.
func (c *Cluster) masterPaused(sender *Node, m *Message) {
	f := &c.fo
	if f.mfEnd != 0 && c.myself.ReplicaOf == sender && m.MFlags[0]&MFlagPaused != 0 && f.mfMasterOffset < 0 {
		f.mfMasterOffset = int64(m.Offset)
		c.cfg.Log.Info("cluster: received replication offset for paused master manual failover", "offset", f.mfMasterOffset)
	}
}

// resetManualFailover ends any manual failover, and its pause.
func (c *Cluster) resetManualFailover() {
	f := &c.fo
	if f.mfReplica != nil || f.mfEnd != 0 && c.myself.IsMaster() {
		c.cfg.Host.PauseWrites(0)
	}
	f.mfEnd, f.mfReplica, f.mfMasterOffset, f.mfCanStart = 0, nil, -1, false
}

// Failover is CLUSTER FAILOVER [FORCE|TAKEOVER] on a replica.
func (c *Cluster) Failover(force, takeover bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.afterChange()
	me := c.myself
	switch {
	case me.IsMaster():
		return errFailoverMaster
	case me.ReplicaOf == nil:
		return errFailoverNoMaster
	case !force && (me.ReplicaOf.is(FlagFail) || me.ReplicaOf.link == nil):
		return errFailoverMasterDown
	}
	c.resetManualFailover()
	c.fo.mfEnd = now() + mfTimeoutMs
	switch {
	case takeover:
		c.cfg.Log.Warn("cluster: taking over the master (user request)")
		c.bumpEpochWithoutConsensus()
		c.replaceMaster()
	case force:
		c.cfg.Log.Warn("cluster: forced failover user request accepted")
		c.fo.mfCanStart = true
	default:
		c.cfg.Log.Warn("cluster: manual failover user request accepted")
		c.send(me.ReplicaOf.link, c.header(MFStart))
	}
	return nil
}
