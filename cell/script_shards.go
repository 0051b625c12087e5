package cell

import (
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
)

// Which shards a script holds.
//
// On Redis a script runs alone: it may touch any key, declared in KEYS or
// not, and run KEYS, SCAN, FLUSHDB or SELECT. Here a script starts holding
// only the shards of its declared keys, so that scripts on different
// shards run side by side, and takes more when it reaches past them:
//
//   - before it has written, the run is abandoned: nothing it did is
//     visible (its reads changed nothing, its reply and redis.log lines
//     are dropped, math.random is rewound), and it is run again from the
//     start holding every shard of every database. Its script is noted
//     (script.ShardNotes.NeedsAll), so later runs start that way.
//   - after a write, it cannot be rerun, so it try-locks the shards it
//     lacks, out of ascending order. Commands and scripts still taking
//     their locks have shown nothing, so a lock wait that holds what the
//     script wants lets it go when the script marks itself reaching
//     (keyspace's lockwait.go). Only a shard held by another running
//     script in the same state can stay held: that ends the call with
//     ErrScriptReach once busy-reply-threshold passes.
//
// Invariant: every run that shows anything to another client (a reply, a
// write, a log line) holds each shard it touched from its first touch to
// its end, and gives none back before that (two-phase locking). Every
// interleaving another client can observe is then that of some serial
// order of whole scripts and commands, as on Redis. An abandoned run
// shows nothing, so it adds no interleaving. With --lua-allow-undeclared-
// keys no (Config.LuaStrictKeys), reaching past the declared keys is an
// error instead, as before.

// holdAll trades the shards callAt locked for the script's declared keys
// for every shard of every database, in ascending order after letting go
// of all: no deadlock. It must only be called while the script has shown
// nothing. false: a shard is held by a busy script; x answers BUSY.
func (x *Ctx) holdAll() bool {
	c := x.cl
	c.commitEffects(&c.locks) // lazy expiries of the abandoned run
	c.locks.Unlock()
	ks := x.srv.ks
	for d := range ks.DBs() {
		c.locks.AddDB(ks, d)
	}
	if !c.locks.Lock(false) {
		x.busy = true
		return false
	}
	return true
}

// errAbandoned stops a run that reached past its shards before writing.
var errAbandoned = scriptError("ERR script abandoned to be run again holding every shard")

// reach makes s available to the running script, which does not hold it.
// false: the call must not run (the run is abandoned, or s stayed held);
// the reason is in w.
func (r *scriptRun) reach(s *keyspace.Shard, refuse func(string)) bool {
	r.mu.Lock()
	wrote := r.wrote
	if !wrote {
		r.abandoned = true
		r.haltLocked(errAbandoned)
	}
	r.mu.Unlock()
	if !wrote {
		refuse(string(errAbandoned))
		return false
	}
	r.needsAll = true
	locks := &r.x.cl.locks
	var deadline time.Time
	for !locks.TryAdd(s) {
		now := time.Now()
		if deadline.IsZero() {
			// Lock waits holding the shard s let it go (keyspace's
			// lockwait.go); a script in the same state cannot.
			r.mark.MarkReaching()
			deadline = now.Add(time.Duration(r.x.srv.live.busyReplyThresholdMs.Load())*time.Millisecond + 100*time.Millisecond)
		} else if now.After(deadline) {
			refuse(ErrScriptReach)
			return false
		}
		time.Sleep(20 * time.Microsecond)
	}
	r.held = append(r.held, s)
	keyspace.Hold(r.held[len(r.held)-1:], &r.mark)
	return true
}

// reachDB makes every shard of db (of every database with all) available.
func (r *scriptRun) reachDB(db int, all bool, refuse func(string)) bool {
	ks := r.x.srv.ks
	shards := ks.AllShards()
	if !all {
		n := ks.Shards()
		shards = shards[db*n : (db+1)*n]
	}
	for _, s := range shards {
		if !r.holds(s) && !r.reach(s, refuse) {
			return false
		}
	}
	return true
}

// scriptLog is one redis.log line held back until the run is known not
// to be abandoned.
type scriptLog struct {
	level int
	msg   string
}

// Log is script.LogHost: lines of a run that may still be abandoned wait.
func (r *scriptRun) Log(level int, msg string) {
	if !r.mayAbandon() {
		scriptLogger(r.x.srv)(level, msg)
		return
	}
	r.logs = append(r.logs, scriptLog{level, msg})
}

// mayAbandon: the run may still be dropped, so what it shows waits.
func (r *scriptRun) mayAbandon() bool { return !r.allowAll && !r.strict }

// scriptFeed is one command of a run that may still be abandoned, for
// MONITOR and the slow log once the run stands.
type scriptFeed struct {
	cmd              *Command
	args             [][]byte
	db               int
	d                time.Duration
	monitor, observe bool
}

func cloneArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// flushLogs writes the lines and feeds held back, once the run has stood.
func (r *scriptRun) flushLogs() {
	for _, l := range r.logs {
		scriptLogger(r.x.srv)(l.level, l.msg)
	}
	for _, f := range r.later {
		if f.monitor {
			r.x.cl.feedMonitorsAs(f.cmd, f.args, f.db, "lua")
		}
		if f.observe {
			r.x.srv.obs.observe(nil, f.cmd, f.args, f.d)
		}
	}
	r.logs, r.later = nil, nil
}

var _ script.LogHost = (*scriptRun)(nil)
