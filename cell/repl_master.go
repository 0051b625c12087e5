package cell

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// The master side of replication: replicas that sent SYNC or PSYNC, the
// stream (repl_stream.go) pushed to them and kept in a backlog of
// repl-backlog-size bytes for partial resyncs, their acknowledged offsets
// (WAIT, INFO replication). Offsets count the bytes of the stream, as
// Redis counts them; the stream starts with the first replica.
type replMaster struct {
	// on: a replica has attached, so executions note what they change
	// (keyspace.Journal) and commitEffects streams it.
	on atomic.Bool
	mu sync.Mutex
	// off is master_repl_offset; backlog holds the stream's last bytes,
	// its first at offset off-len(backlog)+1.
	off      int64
	backlog  []byte
	db       int // the database the stream has selected; -1: none
	replicas []*replica
	batch    *syncBatch // replicas waiting for a shared snapshot (repl_fullsync.go)
	scratch  []byte
	body     []byte
	sc       streamScratch
	pinger   bool
	// syncing counts the snapshots being taken for full resyncs: while
	// any is, keys are streamed whole (repl_stream.go).
	syncing int
	// replid is master_replid: ours as a master, our master's as a
	// replica. replid2 is the one it replaced (at a promotion or a
	// master's ID change), still good for offsets up to off2
	// (second_repl_offset), so that the other replicas of the old master
	// resync partially with this one, as PSYNC2 does; "": none.
	replid, replid2 string
	off2            int64

	syncFull, partialOK, partialErr atomic.Int64
	// minToWrite and maxLag are min-replicas-to-write and -max-lag
	// (repl_minreplicas.go); minToWrite is 0 unless both are set.
	minToWrite, maxLag atomic.Int64
	// backlogMax is repl-backlog-size (0: its default), see backlogSize.
	backlogMax atomic.Int64
}

// replica is one attached replica connection.
type replica struct {
	c      *Client
	sink   *outSink
	ip     string
	port   int
	online bool // the snapshot is sent; until then the stream waits in pending
	// streamOnAck: the snapshot went with an EOF mark, and the stream
	// waits in pending for the replica's first REPLCONF ACK, as Redis's
	// repl_start_cmd_stream_on_ack: a redis-server replica finds the mark
	// only at the end of a read, so nothing may follow it before the
	// replica has loaded the snapshot.
	streamOnAck bool
	pending     []byte // the stream since the snapshot began
	softAt      int64  // when pending went over the replica class's soft limit
	dropped     bool   // pending went over the limits: the connection is closing
	ackOff      atomic.Int64
	ackTime     atomic.Int64 // Unix ms of the last ACK
	capaEOF     bool
	listenPort  int
	psync       bool // it asked with PSYNC: +FULLRESYNC goes before the snapshot
	closed      bool // its connection closed (dropReplica); r.mu guards it
}

// replicaState is what REPLCONF announced on a connection before its
// SYNC/PSYNC.
type replicaState struct {
	port    int
	ip      string
	capaEOF bool
	rep     *replica // set once the connection is a replica
	master  bool     // this is a replica's link to its master (repl_replica.go)
}

// replID is this server's replication ID (master_replid).
func (s *Server) replID() string {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idLocked(s)
}

// idLocked is replID with r.mu held: the ID picked at start until a
// master or a promotion changes it.
func (r *replMaster) idLocked(s *Server) string {
	if r.replid == "" {
		r.replid = s.identity().replID
	}
	return r.replid
}

// propagate streams what c's execution changed, noted in its journal; its
// shards are still locked, so the stream follows the order in which
// executions on the same keys ran.
func (s *Server) propagate(fx *keyspace.Effects) {
	j := fx.Journal()
	if len(j.Entries()) == 0 {
		return
	}
	if s.isReplica() {
		// A replica's stream is its master's, fed as it arrives
		// (feedFromMaster); its own changes (a writable replica's, a read
		// that found a key expired) stay local, as in Redis.
		j.Reset()
		return
	}
	r := &s.repl
	r.mu.Lock()
	b := r.scratch[:0]
	body, n := streamJournal(r.body[:0], s.ks, fx, &r.db, r.syncing > 0, &r.sc)
	r.body = body[:0]
	if n > 1 {
		b = append(b, multiCmd...)
		b = append(b, body...)
		b = append(b, execCmd...)
	} else {
		b = append(b, body...)
	}
	r.feed(b)
	r.scratch = b[:0]
	r.mu.Unlock()
	j.Reset()
}

// propagateRaw streams b, whole commands (PING, REPLCONF GETACK, a DEL of
// a key active expiry deleted in db; db -1: none needed).
func (s *Server) propagateRaw(db int, b []byte) {
	r := &s.repl
	r.mu.Lock()
	if db >= 0 && db != r.db {
		r.feed(replCmd(nil, []byte("SELECT"), []byte(strconv.Itoa(db))))
		r.db = db
	}
	r.feed(b)
	r.mu.Unlock()
}

// feed appends b to the backlog and sends it to the replicas. r.mu is held.
func (r *replMaster) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	r.off += int64(len(b))
	r.backlog = append(r.backlog, b...)
	if size := r.backlogSize(); len(r.backlog) > 2*size {
		// Trimmed in place once it holds twice its size: a copy of size
		// bytes per size bytes fed, where a new array per trim cost
		// master and replica alike more in GC than their commands'
		// allocations (a smaller size set since gets a smaller array).
		if cap(r.backlog) > 4*size {
			r.backlog = append(make([]byte, 0, 2*size), r.backlog[len(r.backlog)-size:]...)
		} else {
			r.backlog = r.backlog[:copy(r.backlog, r.backlog[len(r.backlog)-size:])]
		}
	}
	for _, rp := range r.replicas {
		switch {
		case rp.online && !rp.streamOnAck:
			rp.sink.push(b, nil)
		case !rp.dropped:
			rp.pending = append(rp.pending, b...)
			// What waits for the snapshot counts against the replica
			// class's limits, as Redis's output buffer does during a full
			// resync.
			if l := replicaLimits(rp.c); l.check(int64(len(rp.pending)), &rp.softAt) {
				rp.pending, rp.dropped = nil, true
				go rp.c.closeForOutputLimit()
			}
		}
	}
}

// backlogSize is repl-backlog-size, at least 16kb as in Redis, read each
// time the stream is fed: an atomic the parameter's apply sets, not the
// parameter table's lookup, which showed as a quarter of a replica's CPU.
func (r *replMaster) backlogSize() int {
	return int(max(r.backlogConf(), 16<<10))
}

// backlogConf is repl-backlog-size as set, or its default.
func (r *replMaster) backlogConf() int64 {
	if n := r.backlogMax.Load(); n > 0 {
		return n
	}
	return 1 << 20
}

// firstByte is repl_backlog_first_byte_offset. r.mu is held.
func (r *replMaster) firstByte() int64 { return r.off - r.histLen() + 1 }

// histLen is repl_backlog_histlen: what the backlog serves, its last
// repl-backlog-size bytes. r.mu is held.
func (r *replMaster) histLen() int64 { return int64(min(len(r.backlog), r.backlogSize())) }

// start turns the stream on, with the pinger, at the first replica.
func (s *Server) startRepl() {
	r := &s.repl
	if r.on.Load() {
		return
	}
	r.db = -1
	s.ks.SetExpiredHook(func(db int, key []byte) {
		if !s.isReplica() {
			s.propagateRaw(db, replCmd(nil, []byte("DEL"), key))
		}
	})
	r.on.Store(true)
	if !r.pinger {
		r.pinger = true
		s.bg.Add(1)
		go s.pingReplicas()
	}
}

// pingReplicas sends PING into the stream every repl-ping-replica-period
// while there are replicas, as Redis does, so that they see a live link.
func (s *Server) pingReplicas() {
	defer s.bg.Done()
	ping := replCmd(nil, []byte("PING"))
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		period, _ := strconv.Atoi(configParamByName("repl-ping-replica-period").value(s))
		if period < 1 || tick%period != 0 {
			continue
		}
		s.repl.mu.Lock()
		n := len(s.repl.replicas)
		s.repl.mu.Unlock()
		// A replica forwards its master's PINGs; a failover's wait must
		// see the offset still.
		if n > 0 && !s.isReplica() && !s.failingOver() {
			s.propagateRaw(-1, ping)
		}
	}
}

// attachReplica makes c a replica: full resync when psync is false or
// the replid/offset asked cannot be served from the backlog, else
// partial. The backlog serves our replication ID up to our offset, and
// the ID we had before (replid2) up to where it ended (off2).
func (s *Server) attachReplica(x *Ctx, psync bool, replid string, offset int64) {
	c := x.cl
	if l := s.link.Load(); l != nil && !l.up.Load() {
		x.Error(ErrNoMasterLink)
		return
	}
	st := c.replState()
	s.startRepl()
	r := &s.repl
	rp := &replica{c: c, ip: st.ip, port: st.port, capaEOF: st.capaEOF}
	if rp.ip == "" {
		rp.ip = c.addr[:max(0, strings.LastIndexByte(c.addr, ':'))]
	}
	rp.sink = c.attachSink()
	rp.sink.replica = true // client-output-buffer-limit replica
	st.rep = rp
	r.mu.Lock()
	id := r.idLocked(s)
	known := replid == id || (r.replid2 != "" && replid == r.replid2 && offset <= r.off2)
	if psync && known && offset >= r.firstByte() && offset <= r.off+1 {
		rp.online = true
		rp.ackOff.Store(offset - 1)
		rp.ackTime.Store(time.Now().UnixMilli())
		rp.sink.push([]byte("+CONTINUE "+id+"\r\n"), r.backlog[len(r.backlog)-int(r.off-offset+1):])
		r.replicas = append(r.replicas, rp)
		r.mu.Unlock()
		r.partialOK.Add(1)
		s.log.Info("Partial resynchronization request accepted", "replica", c.addr, "offset", offset)
		return
	}
	if psync && replid != "?" {
		r.partialErr.Add(1)
	}
	r.syncFull.Add(1)
	r.mu.Unlock()

	rp.psync = psync
	s.fullSync(rp)
}

// replicaAcked starts the stream of a replica that waited for its first
// ACK after an EOF-marked snapshot (streamOnAck).
func (s *Server) replicaAcked(rp *replica) {
	r := &s.repl
	r.mu.Lock()
	if rp.streamOnAck {
		rp.streamOnAck = false
		rp.sink.push(rp.pending, nil)
		rp.pending = nil
	}
	r.mu.Unlock()
}

// disconnectReplicas closes every replica's connection, as Redis's
// disconnectSlaves: after our replication ID changed they reconnect and
// learn the new one, most by a partial resync.
func (s *Server) disconnectReplicas() {
	r := &s.repl
	r.mu.Lock()
	reps := r.replicas
	r.replicas = nil
	r.mu.Unlock()
	for _, rp := range reps {
		rp.c.nc.Close()
	}
}

// shiftReplID starts a new history at a promotion: the old ID stays good
// up to the offset reached, for the replicas that followed it too.
func (s *Server) shiftReplID() {
	r := &s.repl
	r.mu.Lock()
	r.replid2, r.off2 = r.idLocked(s), r.off+1
	r.replid = randomHex(20)
	r.db = -1 // our own stream starts: SELECT first
	r.mu.Unlock()
	s.log.Info("Setting secondary replication ID", "replid2", r.replid2, "offset", r.off2, "replid", r.replid)
}

// adoptMaster takes a master's history after a full resync: its ID, its
// offset, an empty backlog from there.
func (s *Server) adoptMaster(replid string, off int64) {
	r := &s.repl
	r.mu.Lock()
	r.replid, r.replid2, r.off2 = replid, "", 0
	r.off = off
	r.backlog = r.backlog[:0]
	r.mu.Unlock()
	s.startRepl()
}

// masterIDChanged follows a master that answered +CONTINUE with another
// ID (it was promoted): ours becomes that one, the old one our second,
// and our own replicas reconnect to learn it.
func (s *Server) masterIDChanged(replid string) {
	r := &s.repl
	r.mu.Lock()
	old := r.idLocked(s)
	if old == replid {
		r.mu.Unlock()
		return
	}
	r.replid2, r.off2 = old, r.off+1
	r.replid = replid
	r.mu.Unlock()
	s.log.Info("Master replication ID changed to " + replid)
	s.disconnectReplicas()
}

// feedFromMaster appends what the master sent (one command, as it came)
// to the backlog and our replicas, so that offsets stay the master's.
func (s *Server) feedFromMaster(b []byte) {
	r := &s.repl
	r.mu.Lock()
	r.feed(b)
	r.mu.Unlock()
}

// dropReplica forgets c if it was a replica (its connection closed).
func (s *Server) dropReplica(c *Client) {
	if c.repl == nil || c.repl.rep == nil {
		return
	}
	r := &s.repl
	r.mu.Lock()
	c.repl.rep.closed = true
	for i, rp := range r.replicas {
		if rp == c.repl.rep {
			r.replicas = append(r.replicas[:i], r.replicas[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
}

// replState is c's REPLCONF state, made at its first REPLCONF.
func (c *Client) replState() *replicaState {
	if c.repl == nil {
		c.repl = &replicaState{}
	}
	return c.repl
}

// ackedReplicas counts the online replicas that acknowledged off.
func (s *Server) ackedReplicas(off int64) int {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rp := range r.replicas {
		if rp.online && rp.ackOff.Load() >= off {
			n++
		}
	}
	return n
}

// replicaInfo is one replica as INFO and ROLE show it.
type replicaInfo struct {
	ip          string
	port        int
	online      bool
	off, lagSec int64
}

func (s *Server) replicaList() []replicaInfo {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now().UnixMilli()
	out := make([]replicaInfo, 0, len(r.replicas))
	for _, rp := range r.replicas {
		out = append(out, replicaInfo{ip: rp.ip, port: rp.port, online: rp.online,
			off: rp.ackOff.Load(), lagSec: (now - rp.ackTime.Load()) / 1000})
	}
	if r.batch != nil {
		for _, rp := range r.batch.reps {
			if !rp.closed {
				out = append(out, replicaInfo{ip: rp.ip, port: rp.port})
			}
		}
	}
	return out
}

// replIDs are master_replid, master_replid2 and second_repl_offset as
// INFO prints them (zeros and -1: no second ID).
func (s *Server) replIDs() (id, id2 string, off2 int64) {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replid2 == "" {
		return r.idLocked(s), strings.Repeat("0", 40), -1
	}
	return r.idLocked(s), r.replid2, r.off2
}

// masterOffsets are master_repl_offset and the backlog's first byte and
// length.
func (s *Server) masterOffsets() (off, first, histlen int64) {
	r := &s.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.backlog) == 0 && !r.on.Load() {
		return r.off, 0, 0
	}
	return r.off, r.firstByte(), r.histLen()
}

// startJournal makes c's executions note their changes for the stream,
// from its next command on.
func (c *Client) startJournal() {
	c.fx.SetJournal(&c.jr)
	c.ctx.SetEffects(&c.fx)
	c.execCtx.SetEffects(&c.fx)
}

// infoReplication is INFO's replication section, as Redis prints it.
func infoReplication(s *Server, x *Ctx, b *strings.Builder) {
	if s.isReplica() {
		s.infoReplicaFields(b)
	} else {
		field(b, "role", "master")
	}
	reps := s.replicaList()
	field(b, "connected_slaves", strconv.Itoa(len(reps)))
	if s.repl.minToWrite.Load() > 0 {
		field(b, "min_slaves_good_slaves", strconv.Itoa(s.goodReplicas()))
	}
	for i, r := range reps {
		state := "wait_bgsave"
		if r.online {
			state = "online"
		}
		field(b, "slave"+strconv.Itoa(i), "ip="+r.ip+",port="+strconv.Itoa(r.port)+",state="+state+
			",offset="+strconv.FormatInt(r.off, 10)+",lag="+strconv.FormatInt(r.lagSec, 10))
	}
	off, first, hist := s.masterOffsets()
	active := "0"
	if s.repl.on.Load() {
		active = "1"
	}
	field(b, "master_failover_state", s.failoverStateName())
	replid, replid2, off2 := s.replIDs()
	field(b, "master_replid", replid)
	field(b, "master_replid2", replid2)
	field(b, "master_repl_offset", strconv.FormatInt(off, 10))
	field(b, "second_repl_offset", strconv.FormatInt(off2, 10))
	field(b, "repl_backlog_active", active)
	field(b, "repl_backlog_size", configParamByName("repl-backlog-size").value(s))
	field(b, "repl_backlog_first_byte_offset", strconv.FormatInt(first, 10))
	field(b, "repl_backlog_histlen", strconv.FormatInt(hist, 10))
}
