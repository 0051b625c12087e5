package clusterbus

// Where replica failover plugs in.
//
// Redis's election lives beside the state this package keeps, and a
// later change adds it here without touching the rest:
//
//   - failoverCron runs on every cron tick (cron.go), with the lock held.
//     A replica whose master is FAIL (Node.is(FlagFail), FailTime) computes
//     its rank among the master's replicas by ReplOffset (Node.ReplOffset,
//     Host.ReplOffset), waits 500 ms + random 0-500 ms + rank * 1000 ms,
//     then increments currentEpoch, sends FailoverAuthRequest to every
//     master (broadcast(header(FailoverAuthRequest))) and counts the acks.
//     With a majority of c.size it takes the slots (setNodeAsMaster on
//     c.myself, delSlot/addSlot, ConfigEpoch = the election's epoch,
//     Host.ReplicateFrom("", 0)) and broadcastPong; updateSlotsConfigWith
//     on the others does the rest, as it does for SETSLOT NODE.
//   - failoverAuthRequest is a master's vote (Redis's
//     clusterSendFailoverAuthIfNeeded): at most one vote per epoch
//     (c.lastVoteEpoch, saved in nodes.conf), none within two node
//     timeouts of the last vote for the same master (Node.VotedTime),
//     and only for a replica of a FAIL master (or MFlagForceAck).
//   - failoverAuthAck counts a vote for this replica's election.
//   - manualFailoverStart is CLUSTER FAILOVER's MFSTART on the master
//     (pause clients, send the offset with MFlagPaused).
//
// Until then a replica serves reads and follows its master, and a failed
// master's slots wait for it (or for CLUSTER SETSLOT/ADDSLOTS by hand).

func (c *Cluster) failoverCron()                                {}
func (c *Cluster) failoverAuthRequest(sender *Node, m *Message) {}
func (c *Cluster) failoverAuthAck(sender *Node, m *Message)     {}
func (c *Cluster) manualFailoverStart(sender *Node, m *Message) {}
