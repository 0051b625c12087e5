package cell

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The replica side: REPLICAOF host port makes this server follow a master
// (redis-server 7.0 or cellserver). A goroutine per link does Redis's
// handshake (PING, AUTH with masterauth, REPLCONF listening-port and capa
// eof psync2, PSYNC), loads the snapshot (a bulk of known length, or the
// diskless $EOF:<mark> form) into the flushed keyspace, then runs the
// stream through the normal command path as the master client: no
// replies, writes allowed although replica-read-only refuses other
// clients' writes. It acknowledges its offset every second and on
// REPLCONF GETACK; after a drop it reconnects and asks PSYNC for what it
// missed. With a store, what it applies is durable like any write.
type replLink struct {
	srv       *Server
	host      string
	port      int
	stop      chan struct{}
	done      chan struct{}
	mu        sync.Mutex // guards nc and writes to nc
	nc        net.Conn
	applyMu   sync.Mutex   // held while a command of the stream runs and is fed on (holdStream)
	off       atomic.Int64 // slave_repl_offset: the stream applied
	readOff   atomic.Int64 // slave_read_repl_offset
	up        atomic.Bool  // master_link_status:up
	syncing   atomic.Bool  // master_sync_in_progress
	lastIO    atomic.Int64 // Unix s
	downSince atomic.Int64 // Unix s the link went down
	master    *Client
	// everSynced: this server holds a history (replID, offset) that a
	// PSYNC may continue: a master's it synced with, or its own when it
	// was a master itself, as Redis's cached master.
	everSynced bool
}

// isReplica reports whether REPLICAOF made this server a replica.
func (s *Server) isReplica() bool { return s.link.Load() != nil }

// replicaof is REPLICAOF/SLAVEOF host port, and NO ONE.
func replicaof(x *Ctx) {
	s := x.srv
	if s.clusterOn {
		x.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if s.failingOver() {
		x.Error(ErrReplicaofFailingOver)
		return
	}
	if strings.EqualFold(string(x.Args[1]), "no") && strings.EqualFold(string(x.Args[2]), "one") {
		s.unsetMaster("user request from '" + x.cl.addr + "'") // repl_failover.go
		x.W.OK()
		return
	}
	port, err := strconv.Atoi(string(x.Args[2]))
	if err != nil || port < 0 || port > 65535 {
		x.Error("ERR Invalid master port")
		return
	}
	host := string(x.Args[1])
	if l := s.link.Load(); l != nil && l.host == host && l.port == port {
		x.W.Status("OK Already connected to specified master")
		return
	}
	s.startLink(host, port)
	x.W.OK()
}

// checkReplicaOf validates a replicaof configuration line, "host port"
// or "no one", as Redis reads it.
func checkReplicaOf(v string) (string, string) {
	f := strings.Split(v, " ")
	if len(f) != 2 {
		return "", "wrong number of arguments"
	}
	if strings.EqualFold(f[0], "no") && strings.EqualFold(f[1], "one") {
		return "", ""
	}
	if n, err := strconv.Atoi(f[1]); err != nil || n < 0 || n > 65535 {
		return "", "Invalid master port"
	}
	return v, ""
}

// startConfiguredLink follows the master a replicaof line named, once the
// data is loaded.
func (s *Server) startConfiguredLink() {
	v := s.configValue("replicaof")
	host, port, ok := strings.Cut(v, " ")
	if !ok {
		return
	}
	if s.clusterOn {
		s.log.Warn("replicaof directive not allowed in cluster mode: ignored")
		return
	}
	n, _ := strconv.Atoi(port)
	s.startLink(host, n)
}

// startLink replaces any link by one to host:port.
func (s *Server) startLink(host string, port int) {
	l := &replLink{srv: s, host: host, port: port, stop: make(chan struct{}), done: make(chan struct{})}
	l.downSince.Store(time.Now().Unix())
	// The data held follows the old master or, on a master, our own
	// history: PSYNC may continue either.
	l.everSynced = true
	if old := s.link.Swap(l); old != nil {
		old.close()
		l.everSynced = old.everSynced
	}
	off, _, _ := s.masterOffsets()
	l.off.Store(off)
	l.readOff.Store(off)
	s.log.Info("Connecting to MASTER " + net.JoinHostPort(host, strconv.Itoa(port)))
	go l.run()
}

// close stops the link and waits for its goroutine.
func (l *replLink) close() {
	close(l.stop)
	l.mu.Lock()
	if l.nc != nil {
		l.nc.Close()
	}
	l.mu.Unlock()
	<-l.done
}

func (l *replLink) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// run connects, syncs and applies the stream until stopped, reconnecting
// after a second when the link drops.
func (l *replLink) run() {
	defer close(l.done)
	defer func() {
		if l.master != nil {
			l.srv.removeClient(l.master)
		}
	}()
	for !l.stopped() {
		err := l.session()
		l.up.Store(false)
		l.syncing.Store(false)
		l.downSince.Store(time.Now().Unix())
		if l.stopped() {
			return
		}
		l.srv.log.Warn("replication: link with the master lost", "master", net.JoinHostPort(l.host, strconv.Itoa(l.port)), "err", err)
		select {
		case <-l.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// session is one connection to the master.
func (l *replLink) session() error {
	s := l.srv
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(l.host, strconv.Itoa(l.port)), 5*time.Second)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.nc = nc
	l.mu.Unlock()
	defer nc.Close()
	if l.stopped() {
		return errors.New("stopped")
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	ask := func(args ...string) (string, error) {
		var b []byte
		for _, a := range args {
			b = replBulk(b, []byte(a))
		}
		b = append(replHeader(nil, len(args)), b...)
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write(b); err != nil {
			return "", err
		}
		line, err := br.ReadString('\n')
		return strings.TrimRight(line, "\r\n"), err
	}
	if r, err := ask("PING"); err != nil || (strings.HasPrefix(r, "-") && !strings.HasPrefix(r, "-NOAUTH")) {
		return fmt.Errorf("PING: %q %v", r, err)
	}
	if pass := configParamByName("masterauth").value(s); pass != "" {
		args := []string{"AUTH", pass}
		if user := configParamByName("masteruser").value(s); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if r, err := ask(args...); err != nil || r != "+OK" {
			return fmt.Errorf("AUTH: %q %v", r, err)
		}
	}
	// What the master lists us as (INFO's slaveN, which Sentinel reads):
	// replica-announce-port and -ip when set.
	port := strconv.Itoa(s.listenPort())
	if p := configParamByName("replica-announce-port").value(s); p != "0" {
		port = p
	}
	if r, err := ask("REPLCONF", "listening-port", port); err != nil || strings.HasPrefix(r, "-") {
		return fmt.Errorf("REPLCONF listening-port: %q %v", r, err)
	}
	if ip := configParamByName("replica-announce-ip").value(s); ip != "" {
		if r, err := ask("REPLCONF", "ip-address", ip); err != nil || strings.HasPrefix(r, "-") {
			return fmt.Errorf("REPLCONF ip-address: %q %v", r, err)
		}
	}
	if r, err := ask("REPLCONF", "capa", "eof", "capa", "psync2"); err != nil || strings.HasPrefix(r, "-") {
		return fmt.Errorf("REPLCONF capa: %q %v", r, err)
	}
	id, off := "?", "-1"
	if l.everSynced {
		id, off = s.replID(), strconv.FormatInt(l.off.Load()+1, 10)
	}
	psync := []string{"PSYNC", id, off}
	failover := s.failoverInProgress() // asking our replica to take over (repl_failover.go)
	if failover {
		psync = append(psync, "FAILOVER")
	}
	r, err := ask(psync...)
	for err == nil && r == "" { // newlines while the master prepares
		nc.SetDeadline(time.Now().Add(60 * time.Second))
		r, err = br.ReadString('\n')
		r = strings.TrimRight(r, "\r\n")
	}
	if failover {
		ok := err == nil && (strings.HasPrefix(r, "+FULLRESYNC") || strings.HasPrefix(r, "+CONTINUE"))
		s.failoverAnswered(ok)
		if !ok {
			return errFailoverRefused
		}
	}
	if err != nil {
		return err
	}
	nc.SetDeadline(time.Time{})
	switch {
	case strings.HasPrefix(r, "+FULLRESYNC "):
		f := strings.Fields(r)
		if len(f) != 3 {
			return fmt.Errorf("PSYNC: %q", r)
		}
		start, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("PSYNC: %q", r)
		}
		l.syncing.Store(true)
		// Our replicas follow a history that ends here.
		s.disconnectReplicas()
		l.everSynced = false
		if err := l.loadSnapshot(br); err != nil {
			return err
		}
		l.syncing.Store(false)
		s.adoptMaster(f[1], start)
		l.off.Store(start)
		l.readOff.Store(start)
		l.masterClient().db = 0 // the master SELECTs again after a full resync
		l.everSynced = true
		s.log.Info("MASTER <-> REPLICA sync: Finished with success")
	case strings.HasPrefix(r, "+CONTINUE"):
		if f := strings.Fields(r); len(f) == 2 {
			s.masterIDChanged(f[1])
		}
		s.log.Info("Successful partial resynchronization with master.")
	default:
		return fmt.Errorf("PSYNC: %q", r)
	}
	l.up.Store(true)
	l.lastIO.Store(time.Now().Unix())
	return l.applyStream(br)
}

// listenPort is the port a replica announces: the one it listens on.
func (s *Server) listenPort() int {
	for _, a := range s.Addrs() {
		if t, ok := a.(*net.TCPAddr); ok {
			return t.Port
		}
	}
	return s.cfg.Port
}

// loadSnapshot reads the RDB the master sends into a file of dir, then
// loads it into the flushed keyspace.
func (l *replLink) loadSnapshot(br *bufio.Reader) error {
	s := l.srv
	line, err := br.ReadString('\n')
	for err == nil && (line == "\n" || line == "\r\n") {
		line, err = br.ReadString('\n')
	}
	if err != nil {
		return err
	}
	line = strings.TrimRight(line, "\r\n")
	if len(line) == 0 || line[0] != '$' {
		return fmt.Errorf("snapshot header %q", line)
	}
	path := filepath.Join(filepath.Dir(s.rdbPath()), fmt.Sprintf("temp-repl-%d.rdb", os.Getpid()))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer os.Remove(path)
	defer f.Close()
	if mark, ok := strings.CutPrefix(line, "$EOF:"); ok {
		if len(mark) != 40 {
			return fmt.Errorf("snapshot EOF mark %q", mark)
		}
		if err := copyUntilMark(f, br, []byte(mark)); err != nil {
			return err
		}
	} else {
		n, err := strconv.ParseInt(line[1:], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("snapshot header %q", line)
		}
		if _, err := io.CopyN(f, br, n); err != nil {
			return err
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.log.Info("MASTER <-> REPLICA sync: Flushing old data")
	l.run1([][]byte{[]byte("FLUSHALL")})
	s.flushFunctions(nil) // the snapshot carries the master's libraries
	s.log.Info("MASTER <-> REPLICA sync: Loading DB in memory")
	st, err := loadRDBFile(s, f, path, nil)
	if err != nil {
		return err
	}
	if s.store != nil {
		s.ckptFull = true
		if err := s.checkpoint(); err != nil {
			return fmt.Errorf("replication: the snapshot loaded, but making it durable failed: %w", err)
		}
	}
	total := 0
	for _, n := range st.perDB {
		total += n
	}
	s.log.Info("replication: snapshot loaded", "keys", total)
	return nil
}

// copyUntilMark copies br to w up to the 40-byte mark that ends a
// diskless snapshot.
func copyUntilMark(w io.Writer, br *bufio.Reader, mark []byte) error {
	var tail []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := br.Read(buf)
		tail = append(tail, buf[:n]...)
		if len(tail) >= len(mark) && string(tail[len(tail)-len(mark):]) == string(mark) {
			_, werr := w.Write(tail[:len(tail)-len(mark)])
			return werr
		}
		if len(tail) > len(mark) {
			keep := len(mark)
			if _, werr := w.Write(tail[:len(tail)-keep]); werr != nil {
				return werr
			}
			tail = append(tail[:0], tail[len(tail)-keep:]...)
		}
		if err != nil {
			return err
		}
	}
}

// holdStream stops a replica from applying its master's stream until the
// returned function is called; on a master it does nothing.
func (s *Server) holdStream() func() {
	l := s.link.Load()
	if l == nil {
		return func() {}
	}
	l.applyMu.Lock()
	return l.applyMu.Unlock
}

// sendAck sends REPLCONF ACK <offset> to the master.
func (l *replLink) sendAck() {
	b := replCmd(nil, []byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(nil, l.off.Load(), 10))
	l.mu.Lock()
	if l.nc != nil {
		l.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		l.nc.Write(b)
	}
	l.mu.Unlock()
}

// run1 runs one command as the master client, through dispatch: its
// reply is dropped.
func (l *replLink) run1(args [][]byte) {
	c := l.masterClient()
	c.clock.idle() // its last command ended who knows when
	c.dispatch(args)
	c.w.Reset()
}

// masterClient is the client the stream runs as, made on first use and
// listed (CLIENT LIST TYPE master); CLIENT KILL TYPE master closes the
// link's connection, and the link reconnects.
func (l *replLink) masterClient() *Client {
	l.mu.Lock()
	nc := l.nc
	l.mu.Unlock()
	if l.master != nil && l.master.nc == nc {
		return l.master
	}
	c := newClient(l.srv, nc)
	if l.master != nil {
		// A partial resync goes on in the database the stream had
		// selected, as Redis's cached master keeps it.
		c.db = l.master.db
		l.srv.removeClient(l.master)
	}
	c.authed = true
	c.setUser(superUser()) // the master's stream obeys no ACL (acl_clients.go)
	c.replState().master = true
	l.srv.addClient(c)
	l.master = c
	return c
}

// replicaRole is ROLE on a replica: slave, host, port, state, offset.
func (s *Server) replicaRole(x *Ctx) {
	l := s.link.Load()
	if l == nil {
		return
	}
	state := "connect"
	switch {
	case l.up.Load():
		state = "connected"
	case l.syncing.Load():
		state = "sync"
	}
	x.W.Array(5)
	x.W.Bulk([]byte("slave"))
	x.W.Bulk([]byte(l.host))
	x.W.Int(int64(l.port))
	x.W.Bulk([]byte(state))
	x.W.Int(l.off.Load())
}

// replicaAck answers REPLCONF GETACK when x runs as the master client;
// applyStream sends the ACK itself, so nothing more is done here.
func (s *Server) replicaAck(x *Ctx) bool {
	return x.cl.repl != nil && x.cl.repl.master
}

// infoReplicaFields are INFO replication's lines of a replica.
func (s *Server) infoReplicaFields(b *strings.Builder) {
	l := s.link.Load()
	if l == nil {
		return
	}
	status := "down"
	if l.up.Load() {
		status = "up"
	}
	field(b, "role", "slave")
	field(b, "master_host", l.host)
	field(b, "master_port", strconv.Itoa(l.port))
	field(b, "master_link_status", status)
	lastIO := int64(-1)
	if l.up.Load() {
		lastIO = time.Now().Unix() - l.lastIO.Load()
	}
	field(b, "master_last_io_seconds_ago", strconv.FormatInt(lastIO, 10))
	sync := "0"
	if l.syncing.Load() {
		sync = "1"
	}
	field(b, "master_sync_in_progress", sync)
	field(b, "slave_read_repl_offset", strconv.FormatInt(l.readOff.Load(), 10))
	field(b, "slave_repl_offset", strconv.FormatInt(l.off.Load(), 10))
	if !l.up.Load() {
		field(b, "master_link_down_since_seconds", strconv.FormatInt(time.Now().Unix()-l.downSince.Load(), 10))
	}
	field(b, "slave_priority", configParamByName("replica-priority").value(s))
	ro := "1"
	if configParamByName("replica-read-only").value(s) != "yes" {
		ro = "0"
	}
	field(b, "slave_read_only", ro)
	announced := "1"
	if configParamByName("replica-announced").value(s) != "yes" {
		announced = "0"
	}
	field(b, "replica_announced", announced)
}

// replicaRefusal is the refusal of a command on a replica: a write from a
// client other than the master under replica-read-only, or any command
// without the stale flag while the link is down under
// replica-serve-stale-data no. "" lets it run.
func (c *Client) replicaRefusal(cmd *Command, args [][]byte) string {
	l := c.srv.link.Load()
	if l == nil || (c.repl != nil && c.repl.master) {
		return ""
	}
	if l.up.Load() {
		if cmd.Flags&FlagWrite != 0 && c.readOnlyReplica() {
			return ErrReadOnlyReplica
		}
		return ""
	}
	f := c.scriptCmdFlags(cmd, args) // script_flags.go
	write, stale := f&FlagWrite != 0, f&FlagStale != 0
	if write && c.readOnlyReplica() {
		return ErrReadOnlyReplica
	}
	if !stale && c.staleReplica() {
		return ErrMasterDown
	}
	return ""
}

// staleReplica reports whether this replica's link is down under
// replica-serve-stale-data no: only commands flagged stale run.
func (c *Client) staleReplica() bool {
	l := c.srv.link.Load()
	return l != nil && !l.up.Load() && (c.repl == nil || !c.repl.master) &&
		configParamByName("replica-serve-stale-data").value(c.srv) == "no"
}

// readOnlyReplica reports whether c's writes are refused: this server is
// a replica under replica-read-only and c is not its master. Scripts ask
// it for each write they call (cmd_script.go).
func (c *Client) readOnlyReplica() bool {
	return c.srv.isReplica() && (c.repl == nil || !c.repl.master) &&
		configParamByName("replica-read-only").value(c.srv) == "yes"
}
