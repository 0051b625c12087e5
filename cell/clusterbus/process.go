package clusterbus

// Handling of one received message, as Redis's clusterProcessPacket, with
// the cluster's lock held.

func (c *Cluster) process(l *link, m *Message) {
	if m.Type < TypeCount {
		c.statsRecv[m.Type]++
	}
	t := now()
	sender := c.senderOf(l, m)
	if sender != nil {
		sender.DataReceived = t
	}
	if sender != nil && !sender.is(FlagHandshake) {
		if m.CurrentEpoch > c.currentEpoch {
			c.currentEpoch = m.CurrentEpoch
			c.todoSave = true
		}
		if m.ConfigEpoch > sender.ConfigEpoch {
			sender.ConfigEpoch = m.ConfigEpoch
			c.todoSave = true
		}
		sender.ReplOffset, sender.ReplOffTime = m.Offset, t
	}

	switch m.Type {
	case Ping, Meet:
		// Learn our own address from the one the peer reached.
		if (m.Type == Meet || c.myself.IP == "") && c.announce().IP == "" && localIP(l) != "" && c.myself.IP != localIP(l) {
			c.myself.IP = localIP(l)
			c.todoSave = true
		}
		if sender == nil && m.Type == Meet {
			// A node we do not know wants in: start our side of the
			// handshake towards the address it announces.
			n := &Node{Name: randomName(), Flags: FlagHandshake, IP: m.IP, Port: int(m.Port), CPort: int(m.CPort), PPort: int(m.PPort)}
			if n.IP == "" {
				n.IP = remoteIP(l)
			}
			c.addNode(n)
			c.todoSave = true
		}
		c.sendPing(l, Pong)
	}

	switch m.Type {
	case Ping, Pong, Meet:
		if !c.processPingPong(l, sender, m) {
			return
		}
	case Fail:
		if sender == nil {
			return
		}
		if f := c.lookup(m.Node); f != nil && !f.is(FlagFail|FlagMyself) {
			c.cfg.Log.Info("cluster: FAIL message received", "from", sender.Name, "about", f.Name)
			f.Flags = f.Flags&^FlagPFail | FlagFail
			f.FailTime = t
			c.todoSave, c.todoState = true, true
		}
	case Publish, PublishShard:
		if sender != nil {
			c.cfg.Host.Publish(m.Channel, m.Payload, m.Type == PublishShard)
		}
	case FailoverAuthRequest:
		if sender != nil {
			c.failoverAuthRequest(sender, m)
		}
	case FailoverAuthAck:
		if sender != nil {
			c.failoverAuthAck(sender, m)
		}
	case MFStart:
		if sender != nil {
			c.manualFailoverStart(sender, m)
		}
	case Update:
		if sender == nil {
			return
		}
		n := c.lookup(m.Node)
		if n == nil || n.ConfigEpoch >= m.UpdateEpoch {
			return
		}
		if n.IsReplica() {
			c.setNodeAsMaster(n)
		}
		n.ConfigEpoch = m.UpdateEpoch
		c.todoSave = true
		c.updateSlotsConfigWith(n, m.UpdateEpoch, &m.UpdateSlots)
	}
}

// senderOf is the known node that sent m: the link's node, or for an
// inbound link the node named by the header, which the link then belongs
// to.
func (c *Cluster) senderOf(l *link, m *Message) *Node {
	if l.node != nil && !l.node.is(FlagHandshake) {
		return l.node
	}
	n := c.lookup(m.Sender)
	if n != nil && l.node == nil && l.inbound {
		if n.inbound != nil && n.inbound != l {
			c.freeLink(n.inbound)
		}
		n.inbound = l
		l.node = n
	}
	return n
}

// processPingPong is the PING/PONG/MEET part of clusterProcessPacket. It
// returns false when it freed the link.
func (c *Cluster) processPingPong(l *link, sender *Node, m *Message) bool {
	t := now()
	if !l.inbound && l.node != nil {
		n := l.node
		if n.is(FlagHandshake) {
			if sender != nil {
				// We already know this node under its real name: drop
				// the handshake entry, after updating the address.
				c.updateAddress(sender, l, m)
				c.delNode(n)
				return false
			}
			c.renameNode(n, lower(m.Sender))
			n.Flags &^= FlagHandshake
			n.Flags |= m.Flags & (FlagMaster | FlagReplica)
			c.todoSave = true
		} else if n.Name != m.Sender && lower(m.Sender) != n.Name {
			// Another node answers at this address: the address is stale.
			n.Flags |= FlagNoAddr
			n.IP, n.Port, n.CPort, n.PPort = "", 0, 0, 0
			c.freeLink(l)
			c.todoSave = true
			return false
		}
	}
	if sender != nil && m.Type == Ping && !sender.is(FlagHandshake) && c.updateAddress(sender, l, m) {
		c.todoSave, c.todoState = true, true
	}
	if !l.inbound && l.node != nil && m.Type == Pong {
		n := l.node
		n.PongReceived = t
		n.PingSent = 0
		if n.is(FlagPFail) {
			n.Flags &^= FlagPFail
			c.todoState = true
		} else if n.is(FlagFail) {
			c.clearFailureIfNeeded(n)
		}
	}
	if sender == nil {
		return true
	}
	c.masterPaused(sender, m)
	// Role.
	if m.ReplicaOf == "" {
		c.setNodeAsMaster(sender)
	} else {
		if sender.IsMaster() {
			c.delNodeSlots(sender)
			sender.Flags = sender.Flags&^(FlagMaster|FlagMigrateTo) | FlagReplica
			c.todoSave, c.todoState = true, true
		}
		master := c.lookup(m.ReplicaOf)
		if master != nil && sender.ReplicaOf != master {
			if sender.ReplicaOf != nil {
				sender.ReplicaOf.removeReplica(sender)
			}
			master.addReplica(sender)
			sender.ReplicaOf = master
			c.todoSave = true
		}
	}
	// Slots.
	senderMaster := sender
	if sender.IsReplica() {
		senderMaster = sender.ReplicaOf
	}
	dirty := senderMaster != nil && senderMaster.Slots != m.Slots
	if sender.IsMaster() && dirty {
		c.updateSlotsConfigWith(sender, m.ConfigEpoch, &m.Slots)
	}
	if dirty {
		// The sender claims slots someone else holds with a newer
		// epoch: tell it (UPDATE), once per message.
		for s := 0; s < SlotCount; s++ {
			if !m.Slots.Has(s) {
				continue
			}
			o := c.slots[s]
			if o == sender || o == nil {
				continue
			}
			if o.ConfigEpoch > m.ConfigEpoch {
				c.sendUpdate(sender.link, o)
				break
			}
		}
	}
	if sender.IsMaster() && c.myself.IsMaster() && sender.ConfigEpoch == c.myself.ConfigEpoch {
		c.handleEpochCollision(sender)
	}
	c.processGossip(sender, m)
	if m.Hostname != sender.Hostname {
		sender.Hostname = m.Hostname
		c.todoSave = true
	}
	return true
}

// updateAddress takes the address a known node now sends from; true if it
// changed (its outbound link is then reopened).
func (c *Cluster) updateAddress(n *Node, l *link, m *Message) bool {
	if n == c.myself || l == nil {
		return false
	}
	ip := m.IP
	if ip == "" {
		ip = remoteIP(l)
	}
	if ip == "" || n.IP == ip && n.Port == int(m.Port) && n.CPort == int(m.CPort) && n.PPort == int(m.PPort) {
		return false
	}
	n.IP, n.Port, n.CPort, n.PPort = ip, int(m.Port), int(m.CPort), int(m.PPort)
	c.freeLink(n.link)
	n.Flags &^= FlagNoAddr
	if n.IsReplica() && c.myself.ReplicaOf == n {
		c.cfg.Host.ReplicateFrom(n.IP, n.Port)
	}
	return true
}

// updateSlotsConfigWith applies a master's claim of slots at its config
// epoch: every slot it claims that is unassigned or held with an older
// epoch becomes its, as Redis's clusterUpdateSlotsConfigWith. A master
// left with no slots because its slots went to the sender becomes the
// sender's replica.
func (c *Cluster) updateSlotsConfigWith(sender *Node, epoch uint64, slots *Slots) {
	if sender == c.myself {
		return
	}
	cur := c.myMaster()
	var newMaster *Node
	var dirty []int
	senderSlots, migratedOurs := 0, 0
	for s := 0; s < SlotCount; s++ {
		if !slots.Has(s) {
			continue
		}
		senderSlots++
		o := c.slots[s]
		if o == sender || c.importing[s] != nil {
			continue
		}
		if o == nil || o.ConfigEpoch < epoch {
			if o == c.myself && c.cfg.Host.CountKeysInSlot(s) > 0 {
				dirty = append(dirty, s)
			}
			if o != nil && o == cur {
				newMaster = sender
				migratedOurs++
			}
			c.delSlot(s)
			c.addSlot(sender, s)
			c.migrating[s] = nil
		}
	}
	switch {
	case newMaster != nil && cur.NumSlots == 0 && (c.cfg.ReplicaMigration == nil || c.cfg.ReplicaMigration() || senderSlots == migratedOurs):
		c.cfg.Log.Warn("cluster: configuration change detected; reconfiguring myself as a replica", "master", sender.Name)
		c.setMaster(sender)
	case c.myself.ReplicaOf != nil && c.myself.ReplicaOf.ReplicaOf != nil:
		c.setMaster(c.myself.ReplicaOf.ReplicaOf)
	default:
		for _, s := range dirty {
			c.cfg.Host.DelKeysInSlot(s)
		}
	}
}

// handleEpochCollision resolves two masters with one config epoch: the
// one with the smaller name takes a new epoch, as Redis's
// clusterHandleConfigEpochCollision.
func (c *Cluster) handleEpochCollision(sender *Node) {
	if sender.ConfigEpoch != c.myself.ConfigEpoch || !sender.IsMaster() || !c.myself.IsMaster() {
		return
	}
	if sender.Name <= c.myself.Name {
		return
	}
	c.currentEpoch++
	c.myself.ConfigEpoch = c.currentEpoch
	c.todoSave = true
	c.cfg.Log.Info("cluster: configEpoch collision with another node; configEpoch set", "epoch", c.currentEpoch)
}

// processGossip takes what the sender says of other nodes: failure
// reports from masters, newer pong times, and nodes we do not know yet
// (added at once under their real name; the cron connects to them).
func (c *Cluster) processGossip(sender *Node, m *Message) {
	t := now()
	for i := range m.Gossip {
		g := &m.Gossip[i]
		n := c.lookup(g.Name)
		if n != nil {
			if sender.IsMaster() && n != c.myself {
				if g.Flags&(FlagFail|FlagPFail) != 0 {
					if c.addFailureReport(n, sender) {
						c.cfg.Log.Debug("cluster: node reported as not reachable", "node", n.Name, "by", sender.Name)
					}
					c.markFailingIfNeeded(n)
				} else if _, ok := n.FailReports[sender.Name]; ok {
					delete(n.FailReports, sender.Name)
				}
			}
			if g.Flags&(FlagFail|FlagPFail) == 0 && n.PingSent == 0 && c.failureReports(n) == 0 {
				pong := int64(g.PongReceived) * 1000
				if pong <= t+500 && pong > n.PongReceived {
					n.PongReceived = pong
				}
			}
			if n.Failing() && g.Flags&FlagNoAddr == 0 && n != c.myself &&
				(n.IP != g.IP || n.Port != int(g.Port) || n.CPort != int(g.CPort)) && g.IP != "" {
				c.freeLink(n.link)
				n.IP, n.Port, n.CPort, n.PPort = g.IP, int(g.Port), int(g.CPort), int(g.PPort)
				n.Flags &^= FlagNoAddr
				c.todoSave = true
			}
			continue
		}
		if g.Flags&FlagNoAddr != 0 || !ValidName(g.Name) {
			continue
		}
		if until, ok := c.blacklist[lower(g.Name)]; ok && until > t/1000 {
			continue
		}
		n = &Node{Name: lower(g.Name), Flags: g.Flags &^ (FlagMyself | FlagPFail | FlagFail | FlagHandshake | FlagMeet),
			IP: g.IP, Port: int(g.Port), CPort: int(g.CPort), PPort: int(g.PPort)}
		c.addNode(n)
		c.todoSave = true
	}
}

// sendPing sends a PING, PONG or MEET with gossip about some nodes and
// every node we see failing, as Redis's clusterSendPing: a tenth of the
// table, at least 3 sections when that many nodes are known.
func (c *Cluster) sendPing(l *link, typ Type) {
	m := c.header(typ)
	fresh := len(c.nodes) - 2
	wanted := max(len(c.nodes)/10, 3)
	wanted = min(wanted, fresh)
	seen := map[*Node]bool{}
	// Go's map order is random: a walk picks nodes at random.
	for _, n := range c.nodes {
		if len(m.Gossip) >= wanted {
			break
		}
		if n == c.myself || n.is(FlagPFail) || n.is(FlagHandshake|FlagNoAddr) || n.link == nil && n.NumSlots == 0 {
			continue
		}
		if l.node == n {
			continue
		}
		seen[n] = true
		m.Gossip = append(m.Gossip, c.gossipOf(n))
	}
	for _, n := range c.nodes {
		if n.is(FlagPFail) && !n.is(FlagHandshake|FlagNoAddr) && !seen[n] {
			m.Gossip = append(m.Gossip, c.gossipOf(n))
		}
	}
	if l.node != nil && typ == Ping {
		l.node.PingSent = now()
	}
	c.send(l, m)
}

func (c *Cluster) gossipOf(n *Node) Gossip {
	return Gossip{Name: n.Name, PingSent: uint32(n.PingSent / 1000), PongReceived: uint32(n.PongReceived / 1000),
		IP: n.IP, Port: uint16(n.Port), CPort: uint16(n.CPort), Flags: n.Flags, PPort: uint16(n.PPort)}
}

// header is a message of type typ with this node's header filled in.
func (c *Cluster) header(typ Type) *Message {
	me := c.myself
	a := c.announce()
	port, pport, cport := c.announcedPorts()
	m := &Message{Header: Header{Type: typ, Port: uint16(port), PPort: uint16(pport), CPort: uint16(cport), Sender: me.Name,
		IP: a.IP, Flags: me.Flags, CurrentEpoch: c.currentEpoch, ConfigEpoch: me.ConfigEpoch, State: StateFail}}
	if c.stateOK {
		m.State = StateOK
	}
	master := me
	if me.IsReplica() && me.ReplicaOf != nil {
		master = me.ReplicaOf
		m.ReplicaOf = me.ReplicaOf.Name
	}
	m.Slots = master.Slots
	m.ConfigEpoch = master.ConfigEpoch
	m.Offset = c.cfg.Host.ReplOffset()
	if me.IsMaster() && c.fo.mfEnd != 0 {
		m.MFlags[0] |= MFlagPaused
	}
	if typ == Ping || typ == Pong || typ == Meet {
		m.Hostname = me.Hostname
	}
	return m
}

// sendUpdate tells the node of l that n holds its slots at n's epoch.
func (c *Cluster) sendUpdate(l *link, n *Node) {
	if l == nil {
		return
	}
	m := c.header(Update)
	m.Node, m.UpdateEpoch, m.UpdateSlots = n.Name, n.ConfigEpoch, n.Slots
	c.send(l, m)
}

// broadcast sends m on every outbound link of a node out of handshake.
func (c *Cluster) broadcast(m *Message) {
	for _, n := range c.nodes {
		if n.link == nil || n == c.myself || n.is(FlagHandshake) {
			continue
		}
		c.send(n.link, m)
	}
}

// broadcastPong sends a PONG to every node, so a change of this node's
// slots or role spreads at once.
func (c *Cluster) broadcastPong() {
	for _, n := range c.nodes {
		if n.link == nil || n == c.myself || n.is(FlagHandshake) {
			continue
		}
		c.sendPing(n.link, Pong)
	}
}

// Publish sends a PUBLISH to every node, or a PUBLISHSHARD to the other
// nodes of this node's shard (its master and the master's replicas), as
// Redis's clusterPropagatePublish and clusterPropagatePublishShard.
func (c *Cluster) Publish(channel, message []byte, shard bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.header(Publish)
	m.Channel, m.Payload = channel, message
	if !shard {
		c.broadcast(m)
		return
	}
	m.Type = PublishShard
	master := c.myMaster()
	if master == nil {
		return
	}
	for _, n := range append([]*Node{master}, master.Replicas...) {
		if n != c.myself && n.link != nil {
			c.send(n.link, m)
		}
	}
}
