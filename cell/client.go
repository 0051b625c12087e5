package cell

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/resp"
)

// Client is one connection and its state. It is owned by its connection's
// goroutine; fields that other goroutines read (CLIENT LIST, CLIENT KILL,
// WATCH invalidation) are atomics or behind mu.
type Client struct {
	srv  *Server
	id   int64
	nc   net.Conn
	sock *sockIO // nc's raw reads and writes; nil for TLS (sockio.go)
	// Serving inside the poller's read callback (pollserve.go): the body,
	// bound once; a command or protocol error it hands to serve's loop;
	// the error that ends the connection; noWait while a command runs
	// there, and wouldWait when it had to give up rather than wait.
	pollBody          func() bool
	pending           [][]byte
	pendErr, fillErr  error
	noWait, wouldWait bool
	// The event loop (evloop.go): the loop c waits in when it may, who
	// serves c now, the wake-up its goroutine waits for, whether c was
	// closed from elsewhere, whether c is registered; and replies the
	// socket did not take inside a callback, which the goroutine sends.
	loop       *evLoop
	loopState  atomic.Int32
	loopWake   chan struct{}
	loopKicked atomic.Bool
	inLoop     bool
	unsent     []byte
	rd         *resp.Reader
	w          *resp.Writer
	ctx        Ctx      // reused for every command: no allocation per call
	clock      cmdClock // dispatch's clock (clock.go)

	db     int
	authed bool
	// user is the ACL user the connection runs as (acl_*.go); dispatch
	// checks its permissions unless it is open.
	user *aclUser
	// closeAfter closes the connection once the pending replies are sent
	// (QUIT, protocol errors).
	closeAfter bool

	multi      *txn // non-nil between MULTI and EXEC/DISCARD; then &txn
	txn        txn  // the MULTI state, reused by every transaction
	execCtx    Ctx  // the queued commands' Ctx while EXEC runs them
	watched    []watchedKey
	watchDirty atomic.Bool
	asking     bool // ASKING was sent: the next command may use an importing slot
	readonly   bool // READONLY: a cluster replica serves this client's reads of its master's slots

	locks   keyspace.LockSet // the shards of the running command
	txLocks keyspace.LockSet // the shards of a running EXEC
	keyIdx  []int

	// The command names looked up last, as the client sent them
	// (cmd_cache.go).
	cmds cmdCache
	// The last script EVALSHA found, and the script cache's generation
	// then (scriptBySHA).
	lastScript    *script.Script
	lastScriptGen int64

	// fx collects the running execution's effects, for the store
	// (persist.go); its Tx's point at it while there is a store.
	fx keyspace.Effects
	// syncTo is the last batch this client's replies may reveal; under
	// appendfsync always they wait for it to be on disk.
	syncTo uint64
	// scriptOOM: memory was over maxmemory when the command began
	// (checkMemory), for the scripts it runs (script_flags.go).
	scriptOOM bool

	created time.Time
	addr    string
	laddr   string

	mu         sync.Mutex // guards name for CLIENT LIST
	name       string
	lastCmd    atomic.Pointer[Command]
	lastActive atomic.Int64 // Unix ms
	ncmds      atomic.Int64 // commands processed; written only by this client
	// INFO stats of this connection, written only by this client (the
	// lookups from its tally), summed by INFO and the sampler
	// (stats_sample.go): no cache line shared between clients per command.
	netIn, netOut, hits, misses atomic.Int64
	tally                       statsTally  // this client's stats not yet in ncmds and commandstats
	scriptCalls                 scriptCalls // a native run's calls, counted at its command's end (native_scripts.go)
	native                      *nativeRun  // the state of its native runs, reused (native_scripts.go)
	killed                      atomic.Bool
	running                     atomic.Bool // a command is executing: not idle (ops.go)

	// CLIENT LIST / KILL / REPLY state (cmd_client.go).
	shared    clientShared // what other connections may read
	reply     replyMode
	replyKeep bool  // CLIENT REPLY ON: keep its own reply even when it ends OFF
	isUnix    bool  // connected over the unix socket (flag U)
	fd        int64 // a plausible file descriptor number for CLIENT LIST

	// out is non-nil while other goroutines write to this client too
	// (outsink.go): in MONITOR mode (monitoring) or while subscribed (ps).
	out        *outSink
	monitoring bool
	ps         *clientSubs // channels and patterns (pubsub.go); nil until SUBSCRIBE

	// repl is what REPLCONF announced, and the replica this connection
	// became (repl_master.go); jr notes the changes of its executions for
	// the replication stream once there is one.
	repl *replicaState
	jr   keyspace.Journal

	// Blocking pops (blocking.go): the waiter of the command this client
	// is blocked in (nil: none); the keys its executions readied for
	// other clients' waiters, what serving them uses, and the waiters
	// served under the execution's locks, woken once it commits.
	blocked    atomic.Pointer[waiter]
	ready      keyspace.Ready
	serveLocks keyspace.LockSet
	serveCtx   Ctx
	served     []*waiter
}

func newClient(srv *Server, nc net.Conn) *Client {
	c := &Client{
		srv:     srv,
		id:      srv.nextClientID.Add(1),
		nc:      nc,
		sock:    newSockIO(nc),
		w:       resp.NewWriter(),
		created: time.Now(),
		authed:  srv.startsAuthed(),
	}
	c.setUser(srv.defaultUser())
	c.rd = resp.NewReader(countingReader{c}, resp.Limits{
		MaxBulkLen:  srv.live.protoMaxBulkLen.Load(),
		MaxQueryBuf: int(srv.live.clientQueryBufferLimit.Load()),
	})
	c.addr = addrString(nc.RemoteAddr())
	c.laddr = addrString(nc.LocalAddr())
	if a := nc.LocalAddr(); a != nil && a.Network() == "unix" {
		// Redis names unix socket clients after the socket's path.
		c.isUnix = true
		c.addr = srv.cfg.UnixSocket + ":0"
		c.laddr = c.addr
	}
	c.fd = 7 + c.id%1000
	c.pollBody = c.servePolled
	if ls := srv.loops; len(ls) > 0 && c.sock != nil {
		c.loop = ls[c.id%int64(len(ls))]
		c.loopWake = make(chan struct{}, 1)
	}
	c.shared.multi.Store(-1)
	c.shared.proto.Store(2)
	c.fx = keyspace.NewEffects(srv.store)
	c.ctx = Ctx{srv: srv, cl: c, W: c.w}
	c.ctx.Begin(srv.ks, c.effects(), 0, 0)
	c.ctx.SetReady(&c.ready)
	c.lastActive.Store(time.Now().UnixMilli())
	return c
}

// countingReader reads the connection for the RESP reader and counts the
// bytes (INFO total_net_input_bytes): one atomic add per read.
type countingReader struct{ c *Client }

func (r countingReader) Read(p []byte) (n int, err error) {
	if r.c.sock != nil {
		n, err = r.c.sock.Read(p)
	} else {
		n, err = r.c.nc.Read(p)
	}
	if n > 0 {
		r.c.netIn.Add(int64(n))
	}
	return n, err
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	if a.Network() == "unix" {
		return "/unixsocket:0"
	}
	return a.String()
}

// serve reads and runs commands until the connection ends. Replies are
// flushed once per batch: when the input buffer holds no complete command.
func (c *Client) serve() {
	defer c.close()
	if c.denyProtected() { // protected mode (ops.go)
		return
	}
	for {
		args, ok, err := c.next() // pollserve.go
		if err != nil {
			var pe resp.ProtocolError
			if errors.As(err, &pe) {
				c.srv.log.Warn("protocol error", "id", c.id, "addr", c.addr, "err", pe.Error())
				c.w.Error(pe.Error())
				c.srv.stats.countError(pe.Error())
				c.flush()
			}
			return
		}
		if !ok {
			if !c.endBatch() {
				return
			}
			if c.closeAfter || c.srv.closing.Load() {
				return
			}
			if err := c.fill(); err != nil { // pollserve.go
				if errors.Is(err, resp.ErrQueryBufferLimit) {
					c.srv.log.Warn("closing client that reached max query buffer length",
						"id", c.id, "addr", c.addr, "qbuf", c.rd.Buffered())
				}
				return
			}
			if c.closeAfter { // QUIT or a protocol error, served in fill
				c.flush()
				return
			}
			continue
		}
		c.run(args)
		if c.closeAfter {
			c.flush()
			return
		}
		if c.w.Len() > 64<<10 && !c.flush() {
			return
		}
	}
}

// run runs one command read from the connection, with what surrounds it
// in serve: the running flag, CLIENT REPLY and CLIENT LIST's copy.
func (c *Client) run(args [][]byte) {
	c.running.Store(true)
	mark := c.startReply()
	c.dispatch(args)
	if c.blocked.Load() != nil {
		mark = c.awaitBlocked(mark) // blocking.go
	}
	c.endReply(mark)
	if c.ps != nil {
		c.settleSubs() // pubsub.go
	}
	c.publish()
	c.running.Store(false)
}

// endBatch ends a pipeline batch: the input holds no complete command.
// It publishes the batch's stats, then sends its replies.
func (c *Client) endBatch() bool {
	c.tally.flush(c) // before the replies: see statsTally
	c.clock.idle()   // the wait for input belongs to no command
	return c.w.Len() == 0 || c.flush()
}

func (c *Client) flush() bool {
	c.tally.flush(c)
	c.clock.idle()
	if c.srv.fsyncAlways.Load() && !c.waitDurable() {
		c.w.Reset()
		return false
	}
	if c.out != nil {
		return c.flushSink()
	}
	c.netOut.Add(int64(c.w.Len()))
	ok := c.flushOps() // output buffer limits (ops.go)
	c.w.Reset()
	return ok
}

// closeWriteGrace is how long a closing client's last output may take.
const closeWriteGrace = 5 * time.Second

func (c *Client) close() {
	c.tally.flush(c) // before removeClient takes ncmds
	// What the sink holds goes out before the socket closes (QUIT's +OK),
	// but a client that does not read cannot hold this goroutine.
	c.nc.SetWriteDeadline(time.Now().Add(closeWriteGrace))
	c.dropSubs()
	c.srv.dropReplica(c)
	c.stopMonitor()
	c.releaseSink()
	c.unwatchAll()
	c.nc.Close()
	if c.inLoop {
		c.loop.remove(c)
	}
	if c.rd.Release() > returnAfter {
		c.srv.returnMemory() // an unfinished big argument (bigargs.go)
	}
	c.srv.removeClient(c)
	if c.srv.log.Enabled(context.Background(), slog.LevelDebug) {
		c.srv.log.Debug("client closed", "id", c.id, "addr", c.addr)
	}
}

// Name is the name set with CLIENT SETNAME or HELLO SETNAME.
func (c *Client) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// effects is where c's executions collect their effects: nil without a
// store, which spares every write the noting.
func (c *Client) effects() *keyspace.Effects {
	if c.srv.store == nil {
		return nil
	}
	return &c.fx
}
