package cell

import (
	"strings"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// dispatch runs the checks Redis's processCommand runs, in its order, then
// queues the command (inside MULTI) or calls it:
//
//  1. unknown command or subcommand, wrong arity
//  2. NOAUTH
//  3. commands not allowed inside MULTI
//     then the user's permissions (NOPERM, acl_check.go)
//  4. cluster mode: -MOVED, -ASK, -CROSSSLOT, -CLUSTERDOWN (cluster_route.go)
//  5. MISCONF: writes while the disk is failing (after BUSY, MONITOR and
//     maxmemory's checks)
//  6. RESP2 pub/sub mode: only the subscription commands, PING, QUIT, RESET
//  7. LOADING: while the store loads, commands without the loading flag
//  8. CLIENT PAUSE: wait while a pause applies to the command
//  9. MULTI queueing: everything but the transaction commands is queued
//
// A failed check inside MULTI poisons the transaction (EXECABORT).
//
// The master's stream on a replica skips these checks while none of them
// applies (streamChecksIdle, repl_apply.go), which must know of any new
// one that could refuse or hold the master client's commands.
//
// The clock is read once here (cmdClock: at most one monotonic read, none
// for a command MULTI queues after another), for lastActive and as the
// start of call; it is read again only after a check that may have waited
// (eviction, CLIENT PAUSE), so that the wait is not counted as the
// command's time.
func (c *Client) dispatch(args [][]byte) {
	cmd := c.cmds.lookup(c.srv, args[0])
	var mono, wall int64
	if c.multi != nil && cmd != nil && cmd.Flags&flagTxn == 0 {
		mono, wall = c.clock.readQueued() // clock.go
	} else {
		mono, wall = c.clock.read()
	}
	if ms := wall / int64(time.Millisecond); c.lastActive.Load() != ms {
		// A plain load first: an atomic store is a full barrier on amd64,
		// and most commands of a pipeline land in the same millisecond.
		c.lastActive.Store(ms)
	}
	if cmd == nil {
		c.reject(nil, errUnknownCommand(args))
		return
	}
	if cmd.Sub != nil && len(args) >= 2 {
		sub := lookupCommand(cmd.Sub, args[1])
		if sub == nil {
			c.reject(nil, errUnknownSubcommand(args[0], args[1]))
			return
		}
		cmd = sub
	}
	if !cmd.arityOK(len(args)) {
		c.reject(cmd, errArity(cmd.Name))
		return
	}
	if !c.authed && cmd.Flags&FlagNoAuth == 0 {
		c.reject(cmd, ErrNoAuth)
		return
	}
	if c.multi != nil && cmd.Flags&FlagNoMulti != 0 {
		c.reject(cmd, ErrNoMulti)
		return
	}
	if !c.user.open.Load() {
		if msg := c.aclDenied(cmd, args); msg != "" { // acl_check.go
			c.reject(cmd, msg)
			return
		}
	}
	// The master's stream is obeyed whatever the slots (a replica serves
	// none), as Redis's mustObeyClient.
	if c.srv.clusterOn && (c.repl == nil || !c.repl.master) && !c.clusterCheck(cmd, args) {
		return
	}
	if c.multi != nil {
		if msg := c.busyInMulti(cmd, args); msg != "" {
			c.multi.busy = true
			c.reject(cmd, msg)
			return
		}
	}
	if c.monitoring && cmd.Flags&(FlagWrite|FlagReadonly|FlagMayReplicate) != 0 {
		c.reject(cmd, ErrReplicaKeyspace) // a MONITOR client is a replica to Redis
		return
	}
	if !c.srv.maxmemoryApplies() {
		c.scriptOOM = false
	} else {
		if c.noWait { // eviction may wait for shards (pollserve.go)
			c.wouldWait = true
			return
		}
		// maxmemory: evict, then refuse deny-oom commands (maxmemory.go).
		if msg := c.checkMemory(cmd, args); msg != "" {
			c.reject(cmd, msg)
			return
		}
		c.clock.idle()
		mono, wall = c.clock.read()
	}
	if (c.srv.store != nil || c.srv.bgsaveFailed.Load()) && (cmd.Flags&(FlagWrite|flagScript) != 0 || cmd.Name == "ping" ||
		(cmd.Name == "exec" && c.multi != nil && c.multi.writes)) {
		// Redis refuses writes (and PING) while it cannot persist, before
		// queueing them in MULTI; a script by its flags (script_flags.go).
		if msg := c.srv.writesDenied(); msg != "" && c.scriptCmdFlags(cmd, args)&(FlagWrite|flagScript) != flagScript {
			c.reject(cmd, msg)
			return
		}
	}
	if c.srv.repl.minToWrite.Load() > 0 && (cmd.Flags&FlagWrite != 0 || (cmd.Name == "exec" && c.multi != nil && c.multi.writes)) {
		if c.srv.tooFewReplicas() { // repl_minreplicas.go
			c.reject(cmd, ErrNoReplicas)
			return
		}
	}
	if c.srv.link.Load() != nil {
		if msg := c.replicaRefusal(cmd, args); msg != "" { // repl_replica.go
			c.reject(cmd, msg)
			return
		}
	}
	if c.ps != nil {
		if msg := c.checkSubscribed(cmd); msg != "" { // cmd_pubsub.go
			c.reject(cmd, msg)
			return
		}
	}
	if c.srv.loading.Load() && cmd.Flags&FlagLoading == 0 {
		c.reject(cmd, ErrLoading) // the store is loading (loading.go)
		return
	}
	if c.srv.paused.Load() != nil {
		if c.noWait { // pollserve.go
			c.wouldWait = true
			return
		}
		if c.waitPause(cmd) { // CLIENT PAUSE (cmd_client.go)
			c.clock.idle()
			c.dispatch(args)
			return
		}
	}
	if c.multi != nil && cmd.Flags&flagTxn == 0 {
		c.multi.add(cmd, args)
		if cmd.Flags&flagScript != 0 && c.scriptCmdFlags(cmd, args)&FlagWrite != 0 {
			c.multi.writes = true // a script that may write, by its flags
		}
		c.w.Status("QUEUED")
		return
	}
	c.callAt(cmd, args, mono, wall)
}

// reject answers a command that failed dispatch's checks.
//
// EXEC itself failing a check discards the transaction, and its reply
// names the reason (Redis's execCommandAbort).
func (c *Client) reject(cmd *Command, msg string) {
	if cmd != nil && cmd.Name == "exec" {
		c.srv.stats.countError(msg)
		c.multi = nil
		c.unwatchAll()
		// Redis quotes its own ERR texts without the code, others with it.
		c.w.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		c.srv.statsOf(cmd).rejected.Add(1)
		return
	}
	c.w.Error(msg)
	c.srv.stats.countError(msg)
	if cmd != nil {
		c.srv.statsOf(cmd).rejected.Add(1)
	}
	if c.multi != nil {
		c.multi.dirty = true
	}
}

// call runs cmd as callAt does, started at start.
func (c *Client) call(cmd *Command, args [][]byte, start time.Time) {
	c.callAt(cmd, args, int64(start.Sub(monoBase)), start.UnixNano())
}

// callAt locks the command's shards, runs it and records its stats. mono
// and wall are the clock dispatch read (ns): the start of the command's
// duration, and its clock (x.Now(), x.wallNs).
func (c *Client) callAt(cmd *Command, args [][]byte, mono, wall int64) {
	if readsStats(cmd) {
		c.tally.flush(c)
	}
	x := &c.ctx
	if c.srv.repl.on.Load() && c.fx.Journal() == nil && !c.srv.isReplica() {
		// A replica's stream is its master's: nothing to note for it.
		c.startJournal() // repl_master.go
	}
	x.cmd, x.Args, x.failed = cmd, args, false
	x.SetDB(c.db)
	if t := c.srv.limiters.fixedNow.Load(); t != 0 {
		wall = t // a test's clock: keys expire by it too
	}
	x.SetNow(wall / int64(time.Millisecond))
	x.wallNs, x.monoNs = wall, mono
	x.stepping, x.busy = cmd.Flags&flagShardAtATime != 0, false
	var known []byte // a key the hints hashed (keyhint.go), and its hash
	var hash uint64
	if !x.stepping {
		known, hash = c.lockFor(&c.locks, cmd, args, c.db)
		if c.noWait {
			// Inside the poller's callback: no waiting for a shard
			// another execution holds (pollserve.go).
			if !c.locks.TryLock() {
				c.wouldWait = true
				return
			}
		} else if !c.locks.Lock(cmd.Flags&FlagAllowBusy != 0) {
			c.reject(cmd, c.srv.busyError(c.locks.BusyBy()))
			return
		}
	}
	x.KnowHash(known, hash)
	cmd.Handler(x)
	x.KnowHash(nil, 0) // its bytes are valid until the next read only
	if c.wouldWait {
		// The handler gave up, having done nothing, rather than wait
		// inside the poller's callback (polledNative).
		c.locks.Unlock()
		return
	}
	if x.busy {
		c.reject(cmd, c.srv.busyError(c.locks.BusyBy()))
		return
	}
	if len(c.ready.Keys()) != 0 {
		c.serveHeld(&c.locks) // blocked clients this command serves (blocking.go)
	}
	c.commitEffects(&c.locks)
	c.locks.Unlock()
	if len(c.served) != 0 {
		c.wakeServed() // blocking.go
	}
	if len(c.ready.Keys()) != 0 {
		c.serveReady() // those it could not serve holding its shards
	}
	c.record(cmd, args, x.failed, c.endCommand(mono))
}

// endCommand reads the clock at the end of the command that began at
// mono, counts the calls of its native run (scriptCalls) on that
// reading, and returns the command's duration.
func (c *Client) endCommand(mono int64) time.Duration {
	end := c.clock.end()
	c.scriptCalls.settle(c, end)
	return time.Duration(end - mono)
}

// lockShard locks s for a flagShardAtATime command, which callAt left
// unlocked, for one step of its walk; under EXEC or in a script, which
// hold the whole database, it does nothing. It returns false when a
// script has held s past busy-reply-threshold: the handler returns
// without replying, and callAt answers BUSY.
func (x *Ctx) lockShard(s *keyspace.Shard) bool {
	if !x.stepping {
		return true
	}
	l := &x.cl.locks
	l.Add(s)
	if !l.Lock(false) {
		x.busy = true
		return false
	}
	return true
}

// unlockShard ends a step that lockShard began: what it changed (expired
// keys it deleted) is committed, as callAt commits a command's, and the
// shard unlocked.
func (x *Ctx) unlockShard() {
	if x.stepping {
		x.cl.commitEffects(&x.cl.locks)
		x.cl.locks.Unlock()
	}
}

// lockFor adds to l the shards cmd needs when run in db. It returns the
// key among args whose hash the key hints computed (resp.Reader.KeyTag),
// and that hash, for the command's lookups (keyspace.Tx.KnowHash).
func (c *Client) lockFor(l *keyspace.LockSet, cmd *Command, args [][]byte, db int) (known []byte, hash uint64) {
	ks := c.srv.ks
	switch {
	case cmd.allDBs(args):
		for d := range ks.DBs() {
			l.AddDB(ks, d)
		}
	case cmd.wholeDB(args):
		l.AddDB(ks, db)
	case cmd.Flags&flagChannelKeys != 0:
	default:
		c.keyIdx = cmd.keyIndexes(args, c.keyIdx[:0])
		for _, i := range c.keyIdx {
			if h, ok := c.rd.KeyTag(args[i]); ok {
				l.Add(ks.ShardOfHash(db, args[i], h))
				known, hash = args[i], h
				continue
			}
			l.Add(ks.ShardOf(db, args[i]))
		}
	}
	return known, hash
}

// record counts a command that ran for d, in the client's tally
// (stats_tally.go). Past the observer's gate (one atomic load and
// comparison) it also feeds the slow log, the latency monitor and MONITOR
// (observe.go).
func (c *Client) record(cmd *Command, args [][]byte, failed bool, d time.Duration) {
	c.tally.add(c, cmd, failed, d)
	if int64(d) >= c.srv.obs.gate.Load() {
		c.observe(cmd, args, d)
	}
}
