package cell

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/persist"
)

// Server is a running cellserver: its keyspace, its listeners and its
// clients.
type Server struct {
	cfg   *Config
	live  liveConfig
	ks    *keyspace.Keyspace
	log   *slog.Logger
	stats serverStats
	// cmdStats are the per-command statistics, indexed by Command.id
	// (statsOf).
	cmdStats []cmdStats
	start    time.Time
	conf     configStore // CONFIG SET values without a live setting (cmd_config.go)
	ops      opsState    // file, security, TLS, maxmemory, SHUTDOWN (ops.go)
	obs      observer    // slow log, MONITOR, latency monitor (observe.go)
	// pubsub is who subscribes to which channel and pattern, spubsub to
	// which shard channel (pubsub.go).
	pubsub, spubsub *pubsubRegistry

	paused atomic.Pointer[pauseState] // the pause in effect, or nil (pause.go)
	pauses pauses                     // each purpose's pause (pause.go)
	loops  []*evLoop                  // the event loops, one per core (evloop.go)
	idOnce sync.Once                  // run_id and master_replid for INFO (cmd_info.go)
	ident  *serverIdentity

	nextClientID atomic.Int64
	reap         reapCollect // when reaped keys call for a GC; expiry goroutine only
	// activeExpiryOff pauses the active cycle, as Redis's DEBUG
	// SET-ACTIVE-EXPIRE 0 does, for tests that need expired keys to stay.
	activeExpiryOff atomic.Bool
	closing         atomic.Bool
	memReturn       memReturn // bigargs.go

	persistState                // the store, its checkpoints and saves (persist.go)
	bg           sync.WaitGroup // background goroutines, done before the store closes

	clusterState // cluster mode (cluster.go)

	repl     replMaster               // replicas, backlog and stream (repl_master.go)
	link     atomic.Pointer[replLink] // this server's master, once REPLICAOF (repl_replica.go)
	failover failoverState            // FAILOVER's attempt in course (repl_failover.go)

	// Scripting: the script cache and Lua states, the scripts running now
	// (for SCRIPT KILL) and how many of them are past the busy threshold.
	acl aclState // users, their rules and the ACL log (acl_*.go)

	scripts *script.Engine
	// functions are the libraries of FUNCTION LOAD (functions.go).
	functions functionSet
	scriptMu  sync.Mutex
	running   map[*scriptRun]struct{}
	// scriptWatcher: the goroutine watching running scripts is up
	// (scriptctx.go); guarded by scriptMu.
	scriptWatcher bool
	busyScripts   atomic.Int32

	// limiters: rate limiter decisions and clock (limiter_stats.go).
	limiters limiterState
	// native: known scripts run as Go (native_scripts.go).
	native nativeState

	// blockers: the clients blocked on keys (blocking.go).
	blockers blockers

	mu        sync.Mutex
	listeners []net.Listener
	clients   map[int64]*Client
	conns     sync.WaitGroup
	done      chan struct{}
}

// New makes an in-memory server from cfg: it never touches the disk,
// whatever cfg.AppendOnly says (Open honours it). Nothing listens until
// Serve.
func New(cfg Config) *Server {
	cfg.AppendOnly = false
	s := newServer(cfg)
	if err := s.loadUsersAtStartup(); err != nil {
		s.log.Warn("users not loaded", "err", err)
	}
	s.memOnly = true
	s.startBackground()
	return s
}

// Open makes a server from cfg and, with cfg.AppendOnly, opens its store in
// cfg.Dir and loads the keyspace from it first. It fails when the store
// cannot be opened, for instance because another server uses cfg.Dir.
func Open(cfg Config) (*Server, error) {
	s, err := OpenStore(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Load(); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenStore makes a server from cfg and, with cfg.AppendOnly, opens its
// store without loading it, so that the server can listen first (a port in
// use is found at once) and answer clients while it loads, as Redis does:
// commands without the loading flag and PING get -LOADING, and INFO
// persistence shows the progress (loading.go). Load must follow.
func OpenStore(cfg Config) (*Server, error) {
	s := newServer(cfg)
	if err := s.loadUsersAtStartup(); err != nil { // acl_file.go
		close(s.done)
		return nil, err
	}
	if s.cfg.AppendOnly {
		switch s.cfg.AppendFsync {
		case FsyncAlways, FsyncEverySec, FsyncNo:
		default:
			close(s.done)
			return nil, fmt.Errorf("appendfsync %q: must be always, everysec or no", s.cfg.AppendFsync)
		}
		st, err := persist.Open(s.cfg.Dir, persist.Options{Logger: s.log, FS: s.cfg.persistFS, LogFault: s.cfg.logFault,
			SkipDamagedLog: s.loadDamaged() == LoadDamagedSkip})
		if err != nil {
			close(s.done) // stops what newServer started
			return nil, explainDamage(err)
		}
		s.store = st
		s.ckptBase.Store(int64(st.SnapshotSize()))
		s.measureLoad() // loading.go
	}
	s.loading.Store(true) // until Load ends: the store, or an RDB file
	return s, nil
}

// Load fills the keyspace from the store OpenStore opened, then starts
// the background work (expiry, fsync, checkpoints). On failure the store
// is closed and the server must not be used: the caller exits.
func (s *Server) Load() error {
	if s.store != nil {
		if err := s.loadWithProgress(); err != nil { // loading.go
			s.store.Close()
			close(s.done)
			return fmt.Errorf("loading %s: %w", s.store.Path(), err)
		}
	}
	if err := s.loadRDBAtStart(); err != nil { // rdb_load.go
		if s.store != nil {
			s.store.Close()
		}
		close(s.done)
		return err
	}
	s.loading.Store(false)
	s.startBackground()
	return nil
}

func newServer(cfg Config) *Server {
	if cfg.Databases <= 0 {
		cfg.Databases = 16
	}
	if cfg.Shards <= 0 {
		cfg.Shards = DefaultShards()
	}
	if cfg.Hz <= 0 {
		cfg.Hz = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if cfg.LogLevel == nil {
		cfg.LogLevel = new(slog.LevelVar)
	}
	if cfg.Version == "" {
		cfg.Version = DefaultConfig().Version
	}
	s := &Server{
		cmdStats: make([]cmdStats, registered),
		cfg:      &cfg,
		ks:       keyspace.NewKeyspace(cfg.Databases, cfg.Shards),
		log:      cfg.Logger,
		start:    time.Now(),
		clients:  map[int64]*Client{},
		done:     make(chan struct{}),
		pubsub:   newPubsubRegistry(false),
		spubsub:  newPubsubRegistry(true),
	}
	if cfg.Cluster != nil {
		// Before anything (recovery included) puts a key in the keyspace:
		// placement by slot must hold for every key.
		s.clusterOn = true
		s.ks.PlaceBySlot()
		s.topo.Store(cfg.Cluster)
	}
	s.acl.init()
	s.live.load(&cfg)
	if p := s.live.requirePass.Load(); p != nil {
		s.setDefaultPassword(*p)
	}
	s.lastRewrite.Store(-1)
	s.lastSave.Store(s.start.Unix())
	s.bgsaveSecs.Store(-1)
	if s.cfg.AppendFsync == "" {
		s.cfg.AppendFsync = FsyncEverySec
	}
	s.setFsync(s.cfg.AppendFsync)
	s.scripts = script.NewEngine(cfg.Version, scriptLogger(s))
	s.scripts.SetKnown(knownNative) // native_scripts.go
	s.running = map[*scriptRun]struct{}{}
	s.obs.init()
	s.startOps() // after setFsync: a start-up appendfsync parameter wins
	s.limiters.setPrefixes(cfg.LimiterPrefixes)
	if cfg.ClusterBus {
		// After startOps: the cluster parameters given at start apply.
		s.clusterOn = true
		s.ks.PlaceBySlot()
		s.openBus() // cluster_bus.go
	}
	return s
}

// startBackground starts the active expiry and, with a store, the fsync
// ticker and the checkpoints.
func (s *Server) startBackground() {
	s.bg.Add(2)
	go s.activeExpiry()
	go s.sampleStats() // stats_sample.go
	if s.lost != nil {
		s.bg.Add(1)
		go s.deleteLostSlots(s.lost) // cluster_lostslots.go
	}
	if s.store != nil {
		s.bg.Add(2)
		go s.fsyncLoop()
		go s.checkpointLoop()
	}
	if !s.memOnly {
		s.bg.Add(1)
		go s.saveRuleLoop() // save_rules.go
	}
	s.startConfiguredLink() // repl_replica.go
}

// Listen opens the configured TCP and unix listeners.
func (s *Server) Listen() error {
	var lns []net.Listener
	fail := func(err error) error {
		for _, l := range lns {
			l.Close()
		}
		return err
	}
	if s.cfg.Port > 0 {
		for _, b := range s.cfg.Bind {
			ln, err := listenBind(b, s.cfg.Port) // "*", "-::1" as redis.conf (ops.go)
			if err != nil {
				return fail(err)
			}
			if ln != nil {
				lns = append(lns, ln)
			}
		}
	}
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
		ln, err := net.Listen("unix", s.cfg.UnixSocket)
		if err != nil {
			return fail(err)
		}
		if s.cfg.UnixSocketPerm != 0 {
			os.Chmod(s.cfg.UnixSocket, os.FileMode(s.cfg.UnixSocketPerm))
		}
		lns = append(lns, ln)
	}
	if s.busErr != nil {
		return fail(fmt.Errorf("cluster: %w", s.busErr))
	}
	if s.bus != nil {
		if err := s.bus.Start(); err != nil {
			return fail(fmt.Errorf("cluster bus: %w", err))
		}
	}
	tlsLns, err := s.listenTLS() // tls.go
	if err != nil {
		return fail(err)
	}
	lns = append(lns, tlsLns...)
	if len(lns) == 0 {
		return errors.New("nothing to listen on: give --port, --tls-port or --unixsocket")
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, lns...)
	s.mu.Unlock()
	return nil
}

// Addrs lists the listening addresses.
func (s *Server) Addrs() []net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []net.Addr
	for _, l := range s.listeners {
		out = append(out, l.Addr())
	}
	return out
}

// Serve accepts clients on every listener until Shutdown.
func (s *Server) Serve() error {
	s.mu.Lock()
	lns := append([]net.Listener(nil), s.listeners...)
	s.mu.Unlock()
	errc := make(chan error, len(lns))
	if s.cfg.EventLoop && !s.cfg.NoServeInPoller && s.loops == nil {
		s.startLoops(runtime.GOMAXPROCS(0))
	}
	for _, ln := range lns {
		go func(ln net.Listener) { errc <- s.accept(ln) }(ln)
	}
	var first error
	for range lns {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Server) accept(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
			tc.SetKeepAlive(true)
			tc.SetKeepAlivePeriod(300 * time.Second)
		}
		c := newClient(s, nc)
		if !s.addClient(c) {
			if !s.closing.Load() {
				s.log.Warn("connection refused: max number of clients reached", "addr", c.addr)
			}
			go refuseConn(nc, ErrMaxClients) // off the accept loop (ops.go)
			continue
		}
		if s.log.Enabled(context.Background(), slog.LevelDebug) {
			s.log.Debug("client connected", "id", c.id, "addr", c.addr)
		}
		go c.serve()
	}
}

func (s *Server) addClient(c *Client) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() || int64(len(s.clients)) >= s.live.maxClients.Load() {
		s.stats.rejectedConns.Add(1)
		return false
	}
	s.clients[c.id] = c
	s.conns.Add(1)
	s.stats.connections.Add(1)
	return true
}

func (s *Server) removeClient(c *Client) {
	s.mu.Lock()
	if _, ok := s.clients[c.id]; ok {
		delete(s.clients, c.id)
		s.stats.closedCommands.Add(c.ncmds.Load())
		s.stats.closed.netIn.Add(c.netIn.Load())
		s.stats.closed.netOut.Add(c.netOut.Load())
		s.stats.closed.hits.Add(c.hits.Load())
		s.stats.closed.misses.Add(c.misses.Load())
		s.conns.Done()
	}
	s.mu.Unlock()
}

// Shutdown stops accepting, lets every client finish the command it is
// running and flush its replies, then returns. Clients still busy when ctx
// ends are cut off.
func (s *Server) Shutdown(ctx context.Context) error {
	if !s.closing.CompareAndSwap(false, true) {
		return nil
	}
	close(s.done)
	if s.bus != nil {
		s.bus.Close()
	}
	if l := s.link.Swap(nil); l != nil {
		l.close() // the master client ends with it (repl_replica.go)
	}
	s.mu.Lock()
	for _, l := range s.listeners {
		l.Close()
	}
	if s.cfg.UnixSocket != "" {
		os.Remove(s.cfg.UnixSocket)
	}
	// A client blocked reading wakes up now; one running a command finishes
	// it, flushes and sees closing before it reads again.
	for _, c := range s.clients {
		c.nc.SetReadDeadline(time.Now())
		c.kickLoop()
	}
	s.mu.Unlock()
	s.stopLoops()
	idle := make(chan struct{})
	go func() { s.conns.Wait(); close(idle) }()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		s.mu.Lock()
		for _, c := range s.clients {
			c.closeConn()
		}
		s.mu.Unlock()
		err = ctx.Err()
	}
	bgDone := make(chan struct{})
	go func() { s.bg.Wait(); close(bgDone) }()
	select {
	case <-bgDone:
	case <-ctx.Done():
	}
	if s.store != nil {
		s.closeStore()
	} else if !s.loading.Load() && !s.ops.stopSaved.Load() && !s.ExitMode().NoSave {
		if serr := s.stopSave(s.ExitMode()); serr != nil { // save_rules.go
			s.log.Error("persistence: save at shutdown failed", "err", serr)
		}
	}
	return err
}

// finalSave is the store's save at a stop: the stop's save (stopSave),
// or, when SHUTDOWN has done that already, a checkpoint of what came
// after it.
func (s *Server) finalSave() error {
	if s.ops.stopSaved.Load() {
		return s.syncCheckpoint()
	}
	return s.stopSave(s.ExitMode())
}

// closeStore saves and closes the store at shutdown. With the disk failing
// it does neither (both would wait for the disk forever): what was synced
// is safe, and the log says what is not. A disk that fails during the
// save is given storeCloseTimeout.
func (s *Server) closeStore() {
	if derr := s.store.Err(); derr != nil {
		s.log.Error("persistence: the disk is failing; exiting without a final save, writes not yet synced are lost", "err", derr)
		return
	}
	done := make(chan struct{})
	go func() { s.saveAndClose(); close(done) }()
	select {
	case <-done:
	case <-time.After(storeCloseTimeout):
		s.log.Error("persistence: the disk did not complete the final save; exiting without it, writes not yet synced are lost",
			"err", s.store.Err())
	}
}

// storeCloseTimeout bounds the final save at shutdown.
const storeCloseTimeout = 30 * time.Second

func (s *Server) saveAndClose() {
	// A final save makes the next start load sstables instead of
	// replaying the log; SHUTDOWN NOSAVE skips it (the log is synced by
	// Close all the same).
	start := time.Now()
	if s.loading.Load() {
		// Stopped before or while loading: memory holds part of the
		// store at most, and saving it would lose the rest.
		s.log.Info("persistence: no final save: the store was not loaded yet, it stays as it was")
	} else if s.ExitMode().NoSave {
		s.log.Info("persistence: no final save (SHUTDOWN NOSAVE); the next start replays the log",
			"log_bytes", s.store.LogSize())
	} else if err := s.finalSave(); err != nil {
		s.log.Error("persistence: save at shutdown failed", "err", err)
	} else {
		s.log.Info("persistence: saved at shutdown", "dir", s.store.Path(), "keys", s.loadedTotal(),
			"snapshot_bytes", s.store.SnapshotSize(), "ms", time.Since(start).Milliseconds())
	}
	if err := s.store.Close(); err != nil {
		s.log.Error("persistence: closing the store", "err", err)
		return
	}
	s.log.Info("persistence: store closed, the log is synced")
}

// Keyspace exposes the data for tests and persistence.
func (s *Server) Keyspace() *keyspace.Keyspace { return s.ks }

// statsOf is cmd's statistics on s.
func (s *Server) statsOf(cmd *Command) *cmdStats { return &s.cmdStats[cmd.id] }
