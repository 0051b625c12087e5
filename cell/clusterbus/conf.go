package clusterbus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// nodes.conf is the node table as CLUSTER NODES prints it (handshake nodes
// left out) and a last line "vars currentEpoch N lastVoteEpoch M", as
// Redis writes it. It is rewritten whole on every change of the table:
// written to a temporary file, synced, then renamed over the old one, so
// a crash leaves either version, never half of one.

// nodeLine is one node's line of CLUSTER NODES.
func (c *Cluster) nodeLine(b *strings.Builder, n *Node) {
	b.WriteString(n.Name)
	b.WriteByte(' ')
	b.WriteString(addrString(n))
	if n.Hostname != "" {
		b.WriteString("," + n.Hostname)
	}
	b.WriteByte(' ')
	b.WriteString(flagsString(n.Flags))
	b.WriteByte(' ')
	if n.ReplicaOf != nil {
		b.WriteString(n.ReplicaOf.Name)
	} else {
		b.WriteByte('-')
	}
	link := "disconnected"
	if n.Connected() {
		link = "connected"
	}
	fmt.Fprintf(b, " %d %d %d %s", n.PingSent, n.PongReceived, n.epoch(), link)
	if n.IsMaster() {
		for _, r := range slotRanges(&n.Slots) {
			if r[0] == r[1] {
				fmt.Fprintf(b, " %d", r[0])
			} else {
				fmt.Fprintf(b, " %d-%d", r[0], r[1])
			}
		}
	}
	if n == c.myself {
		for s := range c.migrating {
			if m := c.migrating[s]; m != nil {
				fmt.Fprintf(b, " [%d->-%s]", s, m.Name)
			}
		}
		for s := range c.importing {
			if m := c.importing[s]; m != nil {
				fmt.Fprintf(b, " [%d-<-%s]", s, m.Name)
			}
		}
	}
	b.WriteByte('\n')
}

// slotRanges lists a bitmap's slots as [first, last] runs.
func slotRanges(s *Slots) [][2]int {
	var out [][2]int
	for i := 0; i < SlotCount; i++ {
		if !s.Has(i) {
			continue
		}
		if k := len(out); k > 0 && out[k-1][1] == i-1 {
			out[k-1][1] = i
		} else {
			out = append(out, [2]int{i, i})
		}
	}
	return out
}

// sortedNodes is the table in name order, for stable output.
func (c *Cluster) sortedNodes() []*Node {
	out := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// describe is CLUSTER NODES; withHandshake false for nodes.conf.
func (c *Cluster) describe(withHandshake bool) string {
	var b strings.Builder
	for _, n := range c.sortedNodes() {
		if !withHandshake && n.is(FlagHandshake) {
			continue
		}
		c.nodeLine(&b, n)
	}
	return b.String()
}

// save writes nodes.conf. It syncs the file (and its directory) only when
// the epochs it holds changed since the last synced save: the current and
// last vote epochs and the nodes' config epochs are what Redis fsyncs
// nodes.conf for (a vote given twice, or an epoch used twice, after a
// power loss would break the elections), while a change of slots, flags
// or addresses alone is written unsynced, as Redis 7.0 writes it; a node
// that comes back with an older table learns the newer one from the
// others' newer epochs. Syncing every change cost a reshard some 10 ms a
// slot (redis-cli sends each slot's SETSLOTs to every node). The
// temporary file and the rename keep a crashed process from leaving half
// a file either way.
func (c *Cluster) save() error { return c.saveConf(false) }

// saveConf is save, synced in any case if sync.
func (c *Cluster) saveConf(sync bool) error {
	text := c.describe(false) + fmt.Sprintf("vars currentEpoch %d lastVoteEpoch %d\n", c.currentEpoch, c.lastVoteEpoch)
	mark := c.epochMark()
	sync = sync || mark != c.syncedMark
	tmp := c.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err = f.WriteString(text); err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, c.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		if d, err := os.Open(filepath.Dir(c.path)); err == nil {
			d.Sync()
			d.Close()
		}
		c.syncedMark = mark
		c.syncs++
	}
	return nil
}

// epochMark sums up the epochs nodes.conf holds: equal marks, equal
// epochs (a hash of every node's name and printed epoch, and the two
// epochs of the vars line).
func (c *Cluster) epochMark() uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, n := range c.sortedNodes() {
		if n.is(FlagHandshake) {
			continue // not in the file
		}
		h.Write([]byte(n.Name))
		binary.BigEndian.PutUint64(b[:], n.epoch())
		h.Write(b[:])
	}
	for _, e := range []uint64{c.currentEpoch, c.lastVoteEpoch} {
		binary.BigEndian.PutUint64(b[:], e)
		h.Write(b[:])
	}
	return h.Sum64()
}

// errNoConfig: there is no nodes.conf yet (a new node).
var errNoConfig = errors.New("no nodes.conf")

// load reads nodes.conf into an empty table, as Redis's clusterLoadConfig.
func (c *Cluster) load() error {
	data, err := os.ReadFile(c.path)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(strings.TrimSpace(string(data))) == 0 {
		return errNoConfig
	}
	if err != nil {
		return err
	}
	masters := map[*Node]string{}
	for ln, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s line %d: %s", c.path, ln+1, fmt.Sprintf(format, a...))
		}
		if f[0] == "vars" {
			for i := 1; i+1 < len(f); i += 2 {
				v, err := strconv.ParseUint(f[i+1], 10, 64)
				if err != nil {
					return bad("%s %q is not a number", f[i], f[i+1])
				}
				switch f[i] {
				case "currentEpoch":
					c.currentEpoch = v
				case "lastVoteEpoch":
					c.lastVoteEpoch = v
				}
			}
			continue
		}
		if len(f) < 8 {
			return bad("want at least 8 fields, got %d", len(f))
		}
		if !ValidName(f[0]) {
			return bad("node name %q is not 40 hex characters", f[0])
		}
		n := c.lookup(f[0])
		if n == nil {
			n = &Node{Name: lower(f[0])}
			c.addNode(n)
		}
		if err := parseAddr(f[1], n); err != nil {
			return bad("%v", err)
		}
		flags, ok := parseFlags(f[2])
		if !ok {
			return bad("unknown flags %q", f[2])
		}
		n.Flags = flags
		if flags&FlagMyself != 0 {
			if c.myself != nil && c.myself != n {
				return bad("a second node flagged myself")
			}
			c.myself = n
		}
		if f[3] != "-" {
			if !ValidName(f[3]) {
				return bad("master %q is not a node name", f[3])
			}
			masters[n] = lower(f[3])
		}
		if n.PingSent, err = strconv.ParseInt(f[4], 10, 64); err != nil {
			return bad("ping time %q", f[4])
		}
		if n.PongReceived, err = strconv.ParseInt(f[5], 10, 64); err != nil {
			return bad("pong time %q", f[5])
		}
		if n.ConfigEpoch, err = strconv.ParseUint(f[6], 10, 64); err != nil {
			return bad("config epoch %q", f[6])
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") && strings.HasSuffix(r, "]") {
				body := r[1 : len(r)-1]
				s, peer, mig := strings.Cut(body, "->-")
				if !mig {
					s, peer, _ = strings.Cut(body, "-<-")
				}
				slot, err := strconv.Atoi(s)
				if err != nil || slot < 0 || slot >= SlotCount || !ValidName(peer) {
					return bad("bad open slot %q", r)
				}
				p := c.lookup(peer)
				if p == nil {
					p = &Node{Name: lower(peer)}
					c.addNode(p)
				}
				if mig {
					c.migrating[slot] = p
				} else {
					c.importing[slot] = p
				}
				continue
			}
			a, b, isRange := strings.Cut(r, "-")
			lo, err1 := strconv.Atoi(a)
			hi := lo
			var err2 error
			if isRange {
				hi, err2 = strconv.Atoi(b)
			}
			if err1 != nil || err2 != nil || lo < 0 || hi >= SlotCount || hi < lo {
				return bad("bad slot range %q", r)
			}
			for s := lo; s <= hi; s++ {
				if c.slots[s] != nil && c.slots[s] != n {
					c.delSlot(s)
				}
				c.addSlot(n, s)
			}
		}
	}
	if c.myself == nil {
		return fmt.Errorf("%s: no node flagged myself", c.path)
	}
	for n, m := range masters {
		master := c.lookup(m)
		if master == nil {
			master = &Node{Name: m}
			c.addNode(master)
		}
		n.ReplicaOf = master
		master.addReplica(n)
	}
	// Links are not in the file; nothing is pending after a restart.
	for _, n := range c.nodes {
		n.PingSent = 0
	}
	return nil
}

// parseAddr reads ip:port@cport[,hostname].
func parseAddr(s string, n *Node) error {
	addr, host, _ := strings.Cut(s, ",")
	n.Hostname = host
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return fmt.Errorf("address %q is not ip:port@cport", s)
	}
	n.IP = addr[:i]
	ports, cport, hasC := strings.Cut(addr[i+1:], "@")
	var err error
	if n.Port, err = strconv.Atoi(ports); err != nil || n.Port < 0 || n.Port > 65535 {
		return fmt.Errorf("bad port in %q", s)
	}
	n.CPort = n.Port + 10000
	if hasC {
		if n.CPort, err = strconv.Atoi(cport); err != nil || n.CPort < 0 || n.CPort > 65535 {
			return fmt.Errorf("bad bus port in %q", s)
		}
	}
	return nil
}
