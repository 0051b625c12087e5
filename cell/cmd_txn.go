package cell

func init() {
	register(
		&Command{Name: "multi", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | flagTxn, Handler: multi,
			ACL: ACLTransaction, Doc: &CommandDoc{"Mark the start of a transaction block", "1.2.0", "transactions", "O(1)"}},
		&Command{Name: "exec", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagSkipSlowlog | flagTxn, Handler: exec,
			ACL: ACLTransaction, Doc: &CommandDoc{"Execute all commands issued after MULTI", "1.2.0", "transactions", "Depends on commands in the transaction"}},
		&Command{Name: "discard", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | flagTxn, Handler: discard,
			ACL: ACLTransaction, Doc: &CommandDoc{"Discard all commands issued after MULTI", "2.0.0", "transactions", "O(N), when N is the number of queued commands"}},
		&Command{Name: "watch", Arity: -2, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy | flagTxn, FirstKey: 1, LastKey: -1, Handler: watch,
			ACL: ACLTransaction, KeySpecs: []KeySpec{{Flags: KeyRO, BeginIndex: 1, LastKey: -1, KeyStep: 1}},
			Doc: &CommandDoc{"Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", "transactions", "O(1) for every key."}},
		&Command{Name: "unwatch", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy, Handler: unwatch,
			ACL: ACLTransaction, Doc: &CommandDoc{"Forget about all watched keys", "2.2.0", "transactions", "O(1)"}},
	)
}

// txn is a client's MULTI state: the queued commands with their own copies
// of the arguments, and whether a queue-time error poisoned it.
//
// A client keeps one txn and reuses it (begin): its queue and the arenas
// the arguments are copied into keep their capacity, so a pipelined MULTI
// block costs no allocation once the client has run one like it.
type txn struct {
	cmds   []queued
	dirty  bool
	writes bool // a queued command writes: EXEC counts as a write (MISCONF)
	busy   bool // a command was refused BUSY: EXEC is too while scripts are busy

	argv [][]byte // the queued commands' argument slices, end to end
	data []byte   // their bytes, end to end
}

type queued struct {
	cmd  *Command
	args [][]byte
}

// txnArenaMax is the arena capacity a txn keeps between transactions; a
// client that once queued more gives the excess back.
const txnArenaMax = 64 << 10

// begin empties t for a new transaction, keeping its capacity. The previous
// transaction's queue is dead by then: EXEC and DISCARD have finished with
// it, and handlers copy what they keep out of their arguments.
func (t *txn) begin() {
	clear(t.cmds) // drop the old commands' references for the GC
	t.cmds = t.cmds[:0]
	t.dirty, t.writes, t.busy = false, false, false
	if cap(t.data) > txnArenaMax {
		t.data = nil
	}
	if cap(t.argv) > txnArenaMax/24 {
		t.argv = nil
	}
	t.data, t.argv = t.data[:0], t.argv[:0]
}

// add queues a command, copying its arguments out of the read buffer into
// the arenas. When an arena grows, earlier commands keep pointing into the
// old array, which stays valid: appending never changes bytes already there.
func (t *txn) add(cmd *Command, args [][]byte) {
	base := len(t.argv)
	for _, a := range args {
		t.data = append(t.data, a...)
		n := len(t.data)
		t.argv = append(t.argv, t.data[n-len(a):n:n])
	}
	t.cmds = append(t.cmds, queued{cmd, t.argv[base:len(t.argv):len(t.argv)]})
	t.writes = t.writes || cmd.Flags&FlagWrite != 0
}

// watchedKey is a key a client WATCHes. expired records that the key was
// already logically expired at WATCH time: it then counts as missing and
// its later deletion does not abort the transaction (Redis 7.0).
type watchedKey struct {
	db      int
	key     string
	expired bool
}

func multi(x *Ctx) {
	if x.cl.multi != nil {
		x.Error(ErrMultiNested)
		return
	}
	x.cl.txn.begin()
	x.cl.multi = &x.cl.txn
	x.W.OK()
}

func discard(x *Ctx) {
	if x.cl.multi == nil {
		x.Error(ErrDiscardNoMult)
		return
	}
	x.cl.multi = nil
	x.cl.unwatchAll()
	x.W.OK()
}

func unwatch(x *Ctx) {
	x.cl.unwatchAll()
	x.W.OK()
}

func watch(x *Ctx) {
	c := x.cl
	if c.multi != nil {
		x.Error(ErrWatchInMulti)
		return
	}
next:
	for _, k := range x.Args[1:] {
		for _, w := range c.watched {
			if w.db == x.DB() && w.key == string(k) {
				continue next
			}
		}
		expired := x.srv.ks.Watch(x.DB(), k, &c.watchDirty, x.Now())
		c.watched = append(c.watched, watchedKey{db: x.DB(), key: string(k), expired: expired})
	}
	x.W.OK()
}

// unwatchAll forgets every WATCHed key of c, taking each shard's lock.
func (c *Client) unwatchAll() {
	for _, w := range c.watched {
		c.srv.ks.Unwatch(w.db, w.key, &c.watchDirty)
	}
	c.watched = c.watched[:0]
	c.watchDirty.Store(false)
}

// exec runs the queued commands atomically: it locks the shards of every
// queued command and every WATCHed key together, checks the WATCHes, then
// runs the queue with time frozen at EXEC's start.
func exec(x *Ctx) {
	c := x.cl
	t := c.multi
	if t == nil {
		x.Error(ErrExecNoMulti)
		return
	}
	if t.dirty {
		c.multi = nil
		c.unwatchAll()
		x.Error(ErrExecAbort)
		return
	}
	locks := &c.txLocks
	db := c.db
	for _, q := range t.cmds {
		c.lockFor(locks, q.cmd, q.args, db)
		if q.cmd.Flags&flagScript != 0 && !c.srv.cfg.LuaStrictKeys {
			// A script may reach past its keys, and EXEC cannot let go
			// of its shards to rerun it: it holds them all from the start.
			for d := range c.srv.ks.DBs() {
				locks.AddDB(c.srv.ks, d)
			}
		}
		if q.cmd.Name == "select" {
			if n, ok := parseDBIndex(c.srv, q.args[1]); ok {
				db = n
			}
		}
	}
	for _, w := range c.watched {
		locks.Add(c.srv.ks.ShardOf(w.db, []byte(w.key)))
	}
	if c.noWait {
		// Inside the poller's callback (pollserve.go): a shard held
		// elsewhere hands EXEC, untouched, to the ordinary loop.
		if !locks.TryLock() {
			c.wouldWait = true
			return
		}
	} else if !locks.Lock(false) {
		x.cl.reject(x.cmd, x.srv.busyError(locks.BusyBy())) // ends the transaction
		return
	}
	c.multi = nil
	defer c.unwatchAll()
	defer locks.Unlock()
	if c.watchAborted(x.Now()) {
		x.W.NullArray()
		return
	}
	x.W.Array(len(t.cmds))
	sub := &c.execCtx // a local Ctx would escape through Handler: one allocation per command
	for _, q := range t.cmds {
		if readsStats(q.cmd) {
			c.tally.flush(c)
		}
		if !c.user.open.Load() {
			// The rules may have changed since the command was queued.
			if res, at := c.user.rules.Load().checkCommand(q.cmd, q.args); res != aclOK {
				c.multi = t // the log's client-info shows the client in MULTI, as Redis's
				c.aclLogDenial(x.cmd, res, aclCtxMulti, aclObject(q.cmd, q.args, res, at), c.user.name)
				c.multi = nil
				x.W.Error(errExecNoPerm(res))
				x.srv.stats.countError(errExecNoPerm(res))
				continue
			}
		}
		mono, wall := c.clock.read() // frozen x.Now() for expiry, but CL.THROTTLE's clock moves
		// Field by field: a composite literal is built on the stack and
		// copied, and the copy's wide loads of its narrow stores stall
		// (store forwarding), a cost W1's profile showed here.
		*sub = Ctx{}
		sub.srv, sub.cl, sub.cmd, sub.Args, sub.W, sub.wallNs, sub.monoNs = x.srv, c, q.cmd, q.args, x.W, wall, mono
		sub.Begin(x.srv.ks, x.Effects(), c.db, x.Now())
		sub.SetReady(x.Ready())
		q.cmd.Handler(sub)
		c.record(q.cmd, q.args, sub.failed, c.endCommand(mono))
	}
	*sub = Ctx{}
	if len(c.ready.Keys()) != 0 {
		c.serveHeld(locks) // callAt wakes them
	}
	// One batch for the whole transaction, before its shards unlock.
	c.commitEffects(locks)
}

// watchAborted reports whether a WATCHed key changed, or expired, since
// WATCH. The shards of the watched keys must be locked.
func (c *Client) watchAborted(now int64) bool {
	if c.watchDirty.Load() {
		return true
	}
	for _, w := range c.watched {
		if w.expired {
			continue
		}
		if c.srv.ks.ExpiredAt(w.db, w.key, now) {
			return true
		}
	}
	return false
}
