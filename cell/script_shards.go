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
//     lacks, out of ascending order, until it has them. Commands and
//     scripts still taking their locks have shown nothing, so a lock wait
//     that holds what the script wants lets it go when the script marks
//     itself reaching (keyspace's lockwait.go). A running script holding
//     it lets it go when it ends, however long it runs (Redis would have
//     run the two one after the other). Only scripts that each wait, so,
//     for a shard the next one holds, in a cycle, could wait forever: the
//     one that closes the cycle (tryReach) gives way, its call failing
//     with ErrScriptReach. That is where this differs from Redis, which
//     never fails there: what the script wrote before stays, as after
//     any error in a script; undoing it to run it again holding every
//     shard is not done. runCallable's probing makes it rare: a script runs
//     on its declared shards only once seen staying within them, and
//     after it reaches past them once it holds every shard.
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
	srv := r.x.srv
	defer srv.stopWaiting(r)
	pause := 20 * time.Microsecond
	for marked := false; ; marked = true {
		taken, cycle := srv.tryReach(r, s)
		switch {
		case taken:
			return true
		case cycle:
			refuse(ErrScriptReach)
			return false
		}
		if !marked {
			// Lock waits holding the shard s let it go (keyspace's
			// lockwait.go); a running script does when it ends.
			r.mark.MarkReaching()
		}
		select {
		case <-r.stop: // the memory limit, or the server's end
			refuse(ErrScriptReach)
			return false
		default:
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// tryReach tries to lock s for r, under scriptMu: the shards the running
// scripts hold and wait for hold still meanwhile, since every script
// takes a shard out of order here. taken: r holds s (and has marked it).
// Otherwise r now waits for s; cycle: s's holder waits for a shard whose
// holder waits ... for one r holds, so none of them can ever go on, and
// r gives way (it stops waiting, so the others see no cycle).
func (srv *Server) tryReach(r *scriptRun, s *keyspace.Shard) (taken, cycle bool) {
	srv.scriptMu.Lock()
	defer srv.scriptMu.Unlock()
	if r.x.cl.locks.TryAdd(s) {
		r.waitFor = nil
		r.held = append(r.held, s)
		keyspace.Hold(r.held[len(r.held)-1:], &r.mark)
		return true, false
	}
	r.waitFor = s
	at := s
	for range len(srv.running) {
		b := at.Holder()
		if b == nil {
			return false, false // a command, or a script not yet marking it: it ends
		}
		if b == &r.mark {
			r.waitFor = nil
			return false, true
		}
		var h *scriptRun
		for q := range srv.running {
			if &q.mark == b {
				h = q
				break
			}
		}
		if h == nil || h.waitFor == nil {
			return false, false // a running script that waits for nothing: it ends
		}
		at = h.waitFor
	}
	return false, false
}

// stopWaiting notes that r waits for no shard.
func (srv *Server) stopWaiting(r *scriptRun) {
	srv.scriptMu.Lock()
	r.waitFor = nil
	srv.scriptMu.Unlock()
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
