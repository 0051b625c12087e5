package cell

import (
	"strings"
	"sync"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/resp"
)

// Scripting: EVAL and friends, SCRIPT, and the glue between the Lua
// environment (package script) and the keyspace.
//
// A script runs inside its EVAL's Ctx: dispatch has locked the shards of
// the keys named by numkeys (or every shard, with --lua-allow-undeclared-
// keys), and redis.call runs command handlers straight from the table in
// those shards, with the EVAL's frozen clock. A key whose shard the script
// does not hold is refused, since touching it would not be atomic.

func init() {
	const evalFlags = FlagNoScript | FlagSkipMonitor | FlagMayReplicate | FlagNoMandatoryKeys | FlagStale | FlagMovableKeys | flagScript
	const roFlags = evalFlags&^FlagMayReplicate | FlagReadonly
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{Summary: summary, Since: since, Group: "scripting", Complexity: complexity}
	}
	const runs = "Depends on the script that is executed."
	// EVAL's key spec: numkeys at index 2, then that many keys.
	keys := func(flags KeyFlag, notes string) []KeySpec {
		return []KeySpec{{Notes: notes, Flags: flags, BeginIndex: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, NumStep: 1}}
	}
	rw := KeyRW | KeyAccess | KeyUpdate
	ro := KeyRO | KeyAccess
	allNodes := []string{"request_policy:all_nodes", "response_policy:all_succeeded"}
	register(
		&Command{Name: "eval", Arity: -3, Flags: evalFlags, Keys: evalKeys, Handler: eval, ACL: ACLScripting,
			KeySpecs: keys(rw, "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"),
			Doc:      doc("Execute a Lua script server side", "2.6.0", runs)},
		&Command{Name: "evalsha", Arity: -3, Flags: evalFlags, Keys: evalKeys, Handler: evalsha, ACL: ACLScripting,
			KeySpecs: keys(rw, ""), Doc: doc("Execute a Lua script server side", "2.6.0", runs)},
		&Command{Name: "eval_ro", Arity: -3, Flags: roFlags, Keys: evalKeys, Handler: evalRO, ACL: ACLScripting,
			KeySpecs: keys(ro, "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"),
			Doc:      doc("Execute a read-only Lua script server side", "7.0.0", runs)},
		&Command{Name: "evalsha_ro", Arity: -3, Flags: roFlags, Keys: evalKeys, Handler: evalshaRO, ACL: ACLScripting,
			KeySpecs: keys(ro, ""), Doc: doc("Execute a read-only Lua script server side", "7.0.0", runs)},
		&Command{Name: "script", Arity: -2,
			Doc: doc("A container for Lua scripts management commands", "2.6.0", "Depends on subcommand.")},
		&Command{Name: "script|load", Arity: 3, Flags: FlagNoScript | FlagStale, Handler: scriptLoad, ACL: ACLScripting, Tips: allNodes,
			Doc: doc("Load the specified Lua script into the script cache.", "2.6.0", "O(N) with N being the length in bytes of the script body.")},
		&Command{Name: "script|exists", Arity: -3, Flags: FlagNoScript, Handler: scriptExists, ACL: ACLScripting,
			Tips: []string{"request_policy:all_shards", "response_policy:agg_logical_and"},
			Doc:  doc("Check existence of scripts in the script cache.", "2.6.0", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).")},
		&Command{Name: "script|flush", Arity: -2, Flags: FlagNoScript, Handler: scriptFlush, ACL: ACLScripting, Tips: allNodes,
			Doc: doc("Remove all the scripts from the script cache.", "2.6.0", "O(N) with N being the number of scripts in cache")},
		&Command{Name: "script|kill", Arity: 2, Flags: FlagNoScript | FlagAllowBusy, Handler: scriptKill, ACL: ACLScripting,
			Tips: []string{"request_policy:all_shards", "response_policy:one_succeeded"},
			Doc:  doc("Kill the script currently in execution.", "2.6.0", "O(1)")},
		&Command{Name: "script|debug", Arity: 3, Flags: FlagNoScript, Handler: scriptDebug, ACL: ACLScripting,
			Doc: doc("Set the debug mode for executed scripts.", "3.2.0", "O(1)")},
		&Command{Name: "script|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: scriptHelp, ACL: ACLScripting,
			Doc: doc("Show helpful text about the different subcommands", "5.0.0", "O(1)")},
	)
}

// evalKeys is EVAL's key positions: the numkeys arguments after numkeys.
// A bad numkeys names no keys; the handler reports it. The positions are
// always 3, 4, ..., so up to evalKeyCount keys they are a slice of one
// shared table, which callers only read (keyIndexes copies it): a script
// call then costs no allocation here.
func evalKeys(args [][]byte) []int {
	if len(args) < 3 {
		return nil
	}
	n, ok := resp.ParseInt(args[2])
	if !ok || n <= 0 || n > int64(len(args)-3) {
		return nil
	}
	if n <= evalKeyCount {
		return evalKeyIdx[:n:n]
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = 3 + i
	}
	return idx
}

const evalKeyCount = 64

// evalKeyIdx is 3, 4, ..., 3+evalKeyCount-1; never written after init.
var evalKeyIdx = func() (t [evalKeyCount]int) {
	for i := range t {
		t[i] = 3 + i
	}
	return t
}()

func eval(x *Ctx)      { evalGeneric(x, false, false) }
func evalsha(x *Ctx)   { evalGeneric(x, true, false) }
func evalRO(x *Ctx)    { evalGeneric(x, false, true) }
func evalshaRO(x *Ctx) { evalGeneric(x, true, true) }

// evalGeneric checks in Redis's order: the sha's length (EVALSHA), numkeys,
// the script (NOSCRIPT or a compile error), then the flags against *_RO.
func evalGeneric(x *Ctx, bySHA, ro bool) {
	// EVAL skips the normal MONITOR feed: it is fed here, before the
	// commands of the script, as Redis does.
	if x.srv.obs.monitors.count.Load() > 0 {
		if x.cl.noWait {
			// In the poller's callback, which hands the call to the
			// ordinary loop if it must run in Lua: fed there, once.
			x.cl.wouldWait = true
			return
		}
		x.cl.feedMonitorsAs(x.cmd, x.Args, x.DB(), "")
	}
	if bySHA && len(x.Args[1]) != 40 {
		x.Error(ErrNoScript)
		return
	}
	n, ok := scriptNumKeys(x, ErrNotInteger)
	if !ok {
		return
	}
	var s *script.Script
	if bySHA {
		if s = x.cl.scriptBySHA(x.Args[1]); s == nil {
			x.Error(ErrNoScript)
			return
		}
	} else {
		var err error
		if s, err = x.srv.scripts.Load(x.Args[1]); err != nil {
			x.Error(err.Error())
			return
		}
	}
	if !scriptPrepare(x, s.Flags, ro) { // script_flags.go
		return
	}
	readOnly := ro || s.Flags&script.FlagNoWrites != 0
	if x.srv.runNative(x, s, readOnly, x.Args[3:3+n], x.Args[3+n:]) { // native_scripts.go
		return
	}
	if x.cl.noWait {
		x.cl.wouldWait = true // Lua may wait: the ordinary loop runs it (polledNative)
		return
	}
	runCallable(x, callable{script: s, notes: &s.Notes}, readOnly, x.Args[3:3+n], x.Args[3+n:])
}

// scriptBySHA is the cached script with SHA1 sha, as scripts.Lookup,
// remembering the client's last answer: a client sends the same few
// scripts again and again, and a script leaves the cache only when SCRIPT
// FLUSH changes its generation.
func (c *Client) scriptBySHA(sha []byte) *script.Script {
	gen := c.srv.scripts.Generation()
	if s := c.lastScript; s != nil && c.lastScriptGen == gen && string(sha) == s.SHA {
		return s
	}
	s := c.srv.scripts.Lookup(sha)
	if s != nil {
		c.lastScript, c.lastScriptGen = s, gen
	}
	return s
}

// callable is what EVAL or FCALL runs: a script or a function, and the
// notes on which shards its runs need (script_shards.go).
type callable struct {
	script *script.Script
	fn     *script.Function
	notes  *script.ShardNotes
}

// flags are the flags c declares.
func (c callable) flags() script.Flags {
	if c.fn != nil {
		return c.fn.Flags
	}
	return c.script.Flags
}

// runCallable runs c for x's EVAL or FCALL: on its declared shards when
// it is known to stay within them, else holding every shard, and again
// holding every shard when a run was abandoned.
func runCallable(x *Ctx, c callable, readOnly bool, keys, argv [][]byte) {
	x.cl.tally.flush(x.cl) // the script may read the stats (readsStats)
	strict := x.srv.cfg.LuaStrictKeys
	inExec := x != &x.cl.ctx // EXEC holds every shard for a script
	r := &scriptRun{
		x:        x,
		db:       x.DB(),
		readOnly: readOnly,
		allowOOM: c.flags()&(script.FlagAllowOOM|script.FlagCompat) == script.FlagAllowOOM,
		fn:       c.fn,
		allowAll: !strict && (inExec || c.notes.NeedsAll.Load() || !c.notes.StaysDeclared.Load()),
		strict:   strict,
		stop:     make(chan struct{}),
		start:    time.Now(),
	}
	if r.allowAll && !inExec && !x.holdAll() {
		return
	}
	// A script's first runs hold every shard and watch whether it stays
	// within its declared keys (probing); only one seen to stay within
	// them runs on its own shards. So a script that reaches past them
	// after writing, which cannot be dropped and rerun, is rare: it must
	// have stayed within them before (script_shards.go).
	r.probing = r.allowAll && !inExec && !c.notes.NeedsAll.Load()
	r.held = r.heldBuf[:0]
	for _, k := range keys {
		r.held = append(r.held, x.srv.ks.ShardOf(x.DB(), k))
	}
	if !x.srv.runScript(r, c, keys, argv) {
		switch {
		case r.needsAll || r.outside:
			c.notes.NeedsAll.Store(true)
		case r.probing:
			c.notes.StaysDeclared.Store(true)
		}
		return
	}
	// Abandoned before it showed anything: again, holding every shard.
	c.notes.NeedsAll.Store(true)
	r = &scriptRun{x: x, db: x.DB(), readOnly: r.readOnly, allowOOM: r.allowOOM, fn: c.fn, allowAll: true, stop: make(chan struct{}), start: time.Now()}
	if x.holdAll() {
		x.srv.runScript(r, c, keys, argv)
	}
}

// scriptRun is one running script: the Host its redis.calls go through, and
// the state SCRIPT KILL and BUSY look at. It is also the context the Lua
// state watches (scriptctx.go): SCRIPT KILL and the memory limit stop the
// script by closing stop.
type scriptRun struct {
	x        *Ctx
	db       int               // the script's own SELECT; starts as the caller's
	held     []*keyspace.Shard // the shards the script may touch (not with allowAll)
	heldBuf  [4]*keyspace.Shard
	allowAll bool // holds every shard of every database
	strict   bool // --lua-allow-undeclared-keys no: reaching past is an error
	readOnly bool
	allowOOM bool             // declared allow-oom: no deny-oom command refused (scriptOOMDenied)
	fn       *script.Function // FCALL's function; nil for EVAL
	// abandoned: the run reached past its shards before writing, and is
	// to be run again holding all (script_shards.go); needsAll: it reached
	// past them after writing, and took them.
	abandoned bool
	needsAll  bool
	// waitFor: the shard the run waits for, having written (tryReach);
	// guarded by the server's scriptMu.
	waitFor *keyspace.Shard
	// probing: held every shard to learn whether it stays within its
	// declared keys; outside: it did not.
	probing bool
	outside bool
	logs    []scriptLog  // redis.log lines held until the run stands
	later   []scriptFeed // MONITOR and slow log feeds held until then
	start   time.Time
	sub     Ctx // the Ctx of the command redis.call runs, reused

	stop chan struct{} // closed to stop the script, and when it has ended

	// mark is what the shards r holds point at: the shards' waiters
	// learn from it when r passes busy-reply-threshold and when it ends.
	mark keyspace.Busy

	mu      sync.Mutex // guards the fields below
	wrote   bool       // a write command ran: SCRIPT KILL refuses
	killed  bool
	ended   bool  // no more checks by the watcher
	cause   error // why stop was closed, if by SCRIPT KILL or a limit
	memBase uint64
}

// runScript runs s for r's EVAL, with r registered where SCRIPT KILL and
// the shards' BUSY waiters can see it, and writes the reply. true: the run
// was abandoned, leaving no reply, to be run again holding every shard.
func (srv *Server) runScript(r *scriptRun, c callable, keys, argv [][]byte) (abandoned bool) {
	x := r.x
	cl := x.cl
	savedDB := cl.db
	keyspace.Hold(r.shards(srv), &r.mark)
	srv.watchScript(r)

	mark := x.W.Len()
	rng := srv.scripts.RNG()
	var out script.Outcome
	if c.fn != nil {
		out = srv.scripts.RunFunction(r, c.fn, keys, argv, r, x.W)
	} else {
		out = srv.scripts.Run(r, c.script, keys, argv, r, x.W)
	}
	if r.abandoned {
		x.W.Truncate(mark)
		srv.scripts.RewindRNG(rng, srv.scripts.RNG())
		r.logs, r.later = nil, nil
	} else {
		r.flushLogs()
		x.failed = out.Failed
		for _, e := range out.Errors {
			srv.stats.countError(e)
		}
	}

	r.mu.Lock()
	r.ended = true
	wasBusy := r.mark.IsBusy()
	r.mu.Unlock()
	if wasBusy {
		srv.busyScripts.Add(-1)
	}
	keyspace.Hold(r.shards(srv), nil)
	srv.unwatchScript(r)
	r.mark.Finish()
	r.halt(nil)
	cl.db = savedDB // SELECT inside a script does not leak to its caller
	return r.abandoned
}

// shards lists the shards r holds for BUSY purposes.
func (r *scriptRun) shards(srv *Server) []*keyspace.Shard {
	if !r.allowAll {
		return r.held
	}
	return srv.ks.AllShards()
}

// scriptError carries a reply text as the cause of a stopped script.
type scriptError string

func (e scriptError) Error() string { return string(e) }

// Call runs one redis.call: the script layer's checks in Redis's order
// (unknown command, arity, not allowed from scripts, writes from a
// read-only script, then our key declarations), then the handler, inside
// the shards the EVAL holds, with its frozen clock.
func (r *scriptRun) Call(args [][]byte, w *resp.Writer) {
	x := r.x
	cmd, msg := scriptCommand(args)
	if msg == "" {
		var holds func(*keyspace.Shard) bool // nil: every shard
		if x.srv.clusterOn && !r.allowAll {
			holds = r.holds // only then: the method value escapes, an allocation
		}
		msg = x.scriptCallRefusal(cmd, args, r.readOnly, r.scriptOOMDenied, holds)
	}
	if msg != "" {
		x.refuseScriptCall(cmd, msg, w)
		return
	}
	if r.probing && !r.outside && cmd.Flags&flagChannelKeys == 0 {
		if cmd.allDBs(args) || cmd.wholeDB(args) {
			r.outside = true
		} else {
			c := x.cl
			c.keyIdx = cmd.keyIndexes(args, c.keyIdx[:0])
			for _, i := range c.keyIdx {
				if !r.holds(x.srv.ks.ShardOf(r.db, args[i])) {
					r.outside = true
					break
				}
			}
		}
	}
	if !r.allowAll && cmd.Flags&flagChannelKeys == 0 {
		quiet := func(msg string) { w.Error(msg) } // not counted: the run is dropped or the text is ours
		if all := cmd.allDBs(args); all || cmd.wholeDB(args) {
			if r.strict {
				x.refuseScriptCall(cmd, errUndeclaredWholeDB(cmd.Name), w)
				return
			}
			if !r.reachDB(r.db, all, quiet) {
				return
			}
		}
		// The client's key-position scratch: its EVAL took its locks
		// already, and no command a script runs locks again.
		c := x.cl
		c.keyIdx = cmd.keyIndexes(args, c.keyIdx[:0])
		for _, i := range c.keyIdx {
			if sh := x.srv.ks.ShardOf(r.db, args[i]); !r.holds(sh) {
				if r.strict {
					x.refuseScriptCall(cmd, errUndeclaredKey(args[i]), w)
					return
				}
				if !r.reach(sh, quiet) {
					return
				}
			}
		}
	}
	r.mu.Lock()
	if r.abandoned {
		r.mu.Unlock()
		w.Error(string(errAbandoned))
		return
	}
	if r.killed {
		r.mu.Unlock()
		x.refuseScriptCall(cmd, ErrScriptKilled, w)
		return
	}
	if cmd.Flags&FlagWrite != 0 {
		r.wrote = true
	}
	r.mu.Unlock()
	// Timed against the script's start: a monotonic reading is half the
	// cost of time.Now's wall and monotonic pair.
	began := time.Since(r.start)
	var failed bool
	r.db, failed = x.runScriptCmd(&r.sub, cmd, args, w, r.db)
	// Fed after the command, as Redis's call() does: a SELECT shows the
	// database it selected.
	monitor := x.srv.obs.monitors.count.Load() > 0 && cmd.Flags&(FlagSkipMonitor|FlagAdmin) == 0
	if monitor && !r.mayAbandon() {
		x.cl.feedMonitorsAs(cmd, args, r.db, "lua")
	}
	d := time.Since(r.start) - began
	cs := x.srv.statsOf(cmd)
	cs.calls.Add(1)
	cs.usec.Add(int64(d / time.Microsecond))
	cs.recordLatency(d)
	if failed {
		cs.failed.Add(1)
	}
	observe := int64(d) >= x.srv.obs.gate.Load()
	if r.mayAbandon() && (monitor || observe) {
		r.later = append(r.later, scriptFeed{cmd: cmd, args: cloneArgs(args), db: r.db, d: d, monitor: monitor, observe: observe})
	} else if observe {
		x.srv.obs.observe(nil, cmd, args, d) // MONITOR was fed above
	}
}

// scriptCommand is the command a redis.call names, after the checks Redis
// makes first: a known command and subcommand, its arity, allowed in
// scripts. A refusal's text comes with the command it found, if any.
func scriptCommand(args [][]byte) (*Command, string) {
	cmd := lookupCommand(commands, args[0])
	if cmd == nil {
		return nil, ErrScriptUnknownCmd
	}
	return scriptCommandOf(cmd, args)
}

// scriptCommandOf is scriptCommand past the lookup of the name: cmd is
// the command args[0] names.
func scriptCommandOf(cmd *Command, args [][]byte) (*Command, string) {
	if cmd.Sub != nil && len(args) >= 2 {
		sub := lookupCommand(cmd.Sub, args[1])
		if sub == nil {
			return cmd, errUnknownSubcommand(args[0], args[1])
		}
		cmd = sub
	}
	if !cmd.arityOK(len(args)) {
		return cmd, ErrScriptArity
	}
	if cmd.Flags&FlagNoScript != 0 {
		return cmd, ErrScriptNotAllowed
	}
	return cmd, ""
}

// scriptCallRefusal is the rest of the script layer's checks on a
// redis.call of cmd before the keys it may touch, in Redis's order: stale
// data, the caller's permissions, writes from a read-only script, writes
// this server refuses (a read-only replica, a failing disk, too few good
// replicas: scriptVerifyWriteCommandAllow's order), deny-oom commands over
// maxmemory (oomDenied), the cluster's state (holds: the shards the run
// holds, nil for every one). "" lets it run.
func (x *Ctx) scriptCallRefusal(cmd *Command, args [][]byte, readOnly bool, oomDenied func(*Command) bool, holds func(*keyspace.Shard) bool) string {
	if cmd.Flags&FlagStale == 0 && x.cl.staleReplica() {
		return ErrStaleScriptCall
	}
	if u := x.cl.user; !u.open.Load() {
		// The script runs with its caller's permissions (acl_check.go).
		if res, at := u.rules.Load().checkCommand(cmd, args); res != aclOK {
			x.cl.aclLogDenial(x.cmd, res, aclCtxLua, aclObject(cmd, args, res, at), u.name)
			return errScriptNoPerm(res)
		}
	}
	if write := cmd.Flags&FlagWrite != 0; write {
		switch {
		case readOnly:
			return ErrScriptReadOnly
		case x.cl.readOnlyReplica():
			return ErrReadOnlyReplica
		}
		if msg := x.srv.writesDenied(); msg != "" {
			return msg
		}
		if x.srv.tooFewReplicas() {
			return ErrNoReplicas
		}
	}
	if oomDenied(cmd) { // script_flags.go
		return ErrOOM
	}
	if x.srv.clusterOn {
		// Redis's scriptVerifyClusterState (cluster_route.go).
		return x.scriptClusterCheck(cmd, args, holds)
	}
	return ""
}

// refuseScriptCall answers a redis.call the checks refused. It counts in
// the error statistics here, as in Redis; the script package does not
// count it again when the script fails with it.
func (x *Ctx) refuseScriptCall(cmd *Command, msg string, w *resp.Writer) {
	w.Error(msg)
	x.srv.stats.countError(msg)
	if cmd != nil {
		x.srv.statsOf(cmd).rejected.Add(1)
	}
}

// runScriptCmd runs cmd as a script's redis.call, in sub (the run's
// reused Ctx): in database db, on x's effects, blocked-client notes and
// frozen clock, its reply into w. It returns the database the command
// left selected, and whether it failed.
func (x *Ctx) runScriptCmd(sub *Ctx, cmd *Command, args [][]byte, w *resp.Writer, db int) (int, bool) {
	// Field by field, as exec's loop does (cmd_txn.go): a composite
	// literal is built on the stack and copied, and the copy's wide loads
	// of its narrow stores stall; ulule's native profile showed the stall.
	*sub = Ctx{}
	sub.srv, sub.cl, sub.cmd, sub.Args, sub.W, sub.inScript = x.srv, x.cl, cmd, args, w, true
	sub.Begin(x.srv.ks, x.Effects(), db, x.Now())
	sub.KnowHash(x.KnownHash()) // a native run passes the EVALSHA's keys on
	sub.SetReady(x.Ready())
	cmd.Handler(sub)
	return sub.DB(), sub.failed
}

func (r *scriptRun) holds(s *keyspace.Shard) bool {
	for _, h := range r.held {
		if h == s {
			return true
		}
	}
	return false
}

// CommandExists serves redis.acl_check_cmd.
func (r *scriptRun) CommandExists(name []byte) bool {
	return lookupCommand(commands, name) != nil
}

// kill stops r unless it has written. It reports false (UNKILLABLE) after
// a write.
func (r *scriptRun) kill() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wrote {
		return false
	}
	r.killed = true
	r.haltLocked(scriptError(ErrScriptKilled))
	return true
}

// busyInMulti is the BUSY reply to a command sent inside MULTI that is
// refused at queue time, or "": it needs a shard held by a script past
// the busy threshold. EXEC of a transaction that already met BUSY is
// refused the same way while a script is still busy, so that its
// EXECABORT names BUSY as Redis's does.
func (c *Client) busyInMulti(cmd *Command, args [][]byte) string {
	if c.srv.busyScripts.Load() == 0 || cmd.Flags&FlagAllowBusy != 0 {
		return ""
	}
	if cmd.Flags&flagTxn != 0 {
		if cmd.Name == "exec" && c.multi.busy {
			return c.srv.busyError(nil)
		}
		return ""
	}
	var l keyspace.LockSet
	c.lockFor(&l, cmd, args, c.db)
	if b := keyspace.HeldBusy(l.Shards()); b != nil {
		return c.srv.busyError(b)
	}
	return ""
}

// busyError is the BUSY reply to a command refused because of the busy
// script marking b (nil: any busy script). Redis names FUNCTION KILL
// while a function runs, SCRIPT KILL while an EVAL script does.
func (srv *Server) busyError(b *keyspace.Busy) string {
	fn := false
	srv.busyRun(func(r *scriptRun) bool { return b == nil || &r.mark == b }, func(r *scriptRun) { fn = r.fn != nil })
	if fn {
		return ErrBusyFunction
	}
	return ErrBusy
}

// busyRun calls use with the longest running script past
// busy-reply-threshold that match accepts, while it is still registered
// as running (its caller's arguments stay as they are); false: none.
func (srv *Server) busyRun(match func(*scriptRun) bool, use func(*scriptRun)) bool {
	srv.scriptMu.Lock()
	defer srv.scriptMu.Unlock()
	var found *scriptRun
	for r := range srv.running {
		if match(r) && r.mark.IsBusy() && (found == nil || r.start.Before(found.start)) {
			found = r
		}
	}
	if found == nil {
		return false
	}
	use(found)
	return true
}

func scriptLoad(x *Ctx) {
	s, err := x.srv.scripts.Load(x.Args[2])
	if err != nil {
		x.Error(err.Error())
		return
	}
	x.W.BulkString(s.SHA)
}

func scriptExists(x *Ctx) {
	x.W.Array(len(x.Args) - 2)
	for _, sha := range x.Args[2:] {
		if x.srv.scripts.Lookup(sha) != nil {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

func scriptFlush(x *Ctx) {
	if len(x.Args) > 3 || (len(x.Args) == 3 && !strings.EqualFold(string(x.Args[2]), "sync") && !strings.EqualFold(string(x.Args[2]), "async")) {
		x.Error(ErrScriptFlushMode)
		return
	}
	x.srv.scripts.Flush()
	x.W.OK()
}

// scriptKill is SCRIPT KILL: it stops running EVAL scripts.
func scriptKill(x *Ctx) { killRuns(x, false) }

// killRuns stops the running scripts of one kind (functions: FUNCTION
// KILL, else EVAL scripts: SCRIPT KILL) that have not written. Redis can
// only hear a kill once a script has passed busy-reply-threshold, so a
// kill sent earlier waits for that moment (or for the script's end). It
// answers as Redis: OK; UNKILLABLE for a script that wrote, of either
// kind; BUSY naming the other KILL for a script of the other kind;
// NOTBUSY.
func killRuns(x *Ctx, functions bool) {
	srv := x.srv
	srv.scriptMu.Lock()
	runs := make([]*scriptRun, 0, len(srv.running))
	for r := range srv.running {
		runs = append(runs, r)
	}
	srv.scriptMu.Unlock()
	var killed []<-chan struct{} // the done signals of the runs killed
	unkillable, other := false, false
	for _, r := range runs {
		busy, done := r.mark.Signals()
		select {
		case <-busy:
		case <-done:
			continue
		}
		switch {
		case r.hasWritten():
			unkillable = true
		case (r.fn != nil) != functions:
			other = true
		case r.kill():
			killed = append(killed, done)
		default:
			unkillable = true
		}
	}
	switch {
	case len(killed) > 0:
		// OK once the runs have ended: Redis ends a killed script before
		// it reads its killer's next command, so a client's command sent
		// after the OK must not meet the script still busy (BUSY). A
		// run hears the kill at its next hook; the wait is bounded so
		// that a run stuck elsewhere cannot hold the killer.
		limit := time.NewTimer(killWait)
		defer limit.Stop()
	wait:
		for _, done := range killed {
			select {
			case <-done:
			case <-limit.C:
				break wait
			}
		}
		x.W.OK()
	case unkillable:
		x.Error(ErrUnkillable)
	case other && functions:
		x.Error(ErrBusy)
	case other:
		x.Error(ErrBusyFunction)
	default:
		x.Error(ErrNotBusy)
	}
}

// killWait bounds how long SCRIPT KILL and FUNCTION KILL wait for the
// runs they killed to end before answering OK.
const killWait = 5 * time.Second

// hasWritten reports whether r ran a write command.
func (r *scriptRun) hasWritten() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wrote
}

// scriptDebug accepts only NO: there is no Lua debugger here.
func scriptDebug(x *Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "no":
		x.W.OK()
	case "yes", "sync":
		x.Error(ErrScriptDebug)
	default:
		x.Error(ErrSyntax)
	}
}

var scriptHelpLines = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

func scriptHelp(x *Ctx) {
	x.W.Array(len(scriptHelpLines))
	for _, l := range scriptHelpLines {
		x.W.Status(l)
	}
}

// LuaMemory is INFO's used_memory_lua.
func (srv *Server) LuaMemory() int64 { return srv.scripts.MemoryUsed() }

// CachedScripts is INFO's number_of_cached_scripts.
func (srv *Server) CachedScripts() int { return srv.scripts.Count() }

// scriptLogger sends redis.log lines to the server log, honouring Redis's
// default verbosity (notice): debug and verbose lines are dropped.
func scriptLogger(srv *Server) script.Logger {
	return func(level int, msg string) {
		switch level {
		case script.LogNotice:
			srv.log.Info(msg, "source", "script")
		case script.LogWarning:
			srv.log.Warn(msg, "source", "script")
		}
	}
}

// functionKill is FUNCTION KILL: it stops running functions.
func functionKill(x *Ctx) { killRuns(x, true) }

// scriptNumKeys reads numkeys, argv[2] of EVAL and FCALL, replying the
// error when it is bad: notInt is the text for a non-integer, which the
// two families word differently.
func scriptNumKeys(x *Ctx, notInt string) (int, bool) {
	n, ok := resp.ParseInt(x.Args[2])
	switch {
	case !ok:
		x.Error(notInt)
		return 0, false
	case n > int64(len(x.Args)-3):
		x.Error(ErrNumKeysTooMany)
		return 0, false
	case n < 0:
		x.Error(ErrNumKeysNegative)
		return 0, false
	}
	return int(n), true
}
