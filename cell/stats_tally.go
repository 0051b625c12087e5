package cell

import "time"

// statsTally holds the INFO commandstats and latencystats counts of the
// commands a client has just run, until it publishes them to the shared
// counters (flush). A pipeline batch repeats a few commands (one, or the
// five of a MULTI block), so one tally covers a whole batch: the shared
// cache lines, which every core would otherwise fight over on every
// command, are written once per batch and command instead.
//
// What must stay true: a command that may read the stats (anything not
// fast and not a plain key or transaction command: INFO, CONFIG
// RESETSTAT, LATENCY, CLIENT LIST, EVAL) runs after its client's tally is flushed, and the tally is
// flushed before replies are sent, so that no reply reveals a command the
// stats do not count yet. Other clients see the counts at most one
// pipeline batch late.
type statsTally struct {
	cmds [6]cmdTally
	n    int // cmds in use
	// throttle counts the rate limiting commands' outcomes for /metrics
	// (countThrottle), published with the rest.
	throttle  [limiterCmds][3]int64
	throttled bool // throttle holds counts
	// hits and misses count key lookups of read commands (INFO
	// keyspace_hits, keyspace_misses; Ctx.Lookup), published with the rest.
	hits, misses int64
	// native counts the scripts run natively (INFO's lua_native_calls).
	native int64
	// last is the last command run, for CLIENT LIST's cmd= (lastCmd):
	// in a MULTI block every command differs from the one before, and
	// an atomic store per command showed in W1's profile.
	last *Command
}

// cmdTally is the tally of one command.
type cmdTally struct {
	cmd               *Command
	calls, usec, fail int64
	inScript          int64 // of calls, those a script made
	// lat holds latency histogram counts not yet added, by bucket; nlat
	// of them are in use.
	lat  [8]latencyCount
	nlat int
}

type latencyCount struct {
	bucket int32
	n      int32
}

// add counts one run of cmd that took d.
func (t *statsTally) add(c *Client, cmd *Command, failed bool, d time.Duration) {
	t.last = cmd
	t.count(c, cmd, failed, d)
}

// addInScript counts one run of cmd that a script called (a native
// script's call): in commandstats and latencystats, but neither in
// total_commands_processed nor as the client's last command, as the Lua
// path counts them (scriptRun.Call).
func (t *statsTally) addInScript(c *Client, cmd *Command, failed bool, d time.Duration) {
	t.count(c, cmd, failed, d).inScript++
}

// count counts one run of cmd that took d in its cmdTally, which it
// returns.
func (t *statsTally) count(c *Client, cmd *Command, failed bool, d time.Duration) *cmdTally {
	var ct *cmdTally
	for i := range t.cmds[:t.n] {
		if t.cmds[i].cmd == cmd {
			ct = &t.cmds[i]
			break
		}
	}
	if ct == nil {
		if t.n == len(t.cmds) {
			t.flush(c)
		}
		ct = &t.cmds[t.n]
		ct.cmd = cmd
		t.n++
	}
	ct.calls++
	ct.usec += int64(d / time.Microsecond)
	if failed {
		ct.fail++
	}
	if !latencyTracking.Load() {
		return ct
	}
	b := int32(latencyBucket(int64(d)))
	for i := range ct.lat[:ct.nlat] {
		if ct.lat[i].bucket == b {
			ct.lat[i].n++
			return ct
		}
	}
	if ct.nlat == len(ct.lat) {
		ct.flushLatency(c.srv.statsOf(ct.cmd))
	}
	ct.lat[ct.nlat] = latencyCount{b, 1}
	ct.nlat++
	return ct
}

// flush adds the tally to the shared counters and empties it.
func (t *statsTally) flush(c *Client) {
	if t.last != nil {
		if c.lastCmd.Load() != t.last { // single writer: see publish
			c.lastCmd.Store(t.last)
		}
		t.last = nil
	}
	if t.throttled {
		for i := range t.throttle {
			for r, n := range t.throttle[i] {
				if n != 0 {
					c.srv.obs.throttle[i][r].Add(n)
				}
			}
		}
		t.throttle, t.throttled = [limiterCmds][3]int64{}, false
	}
	if t.hits != 0 {
		c.hits.Add(t.hits)
		t.hits = 0
	}
	if t.misses != 0 {
		c.misses.Add(t.misses)
		t.misses = 0
	}
	if t.native != 0 {
		c.srv.native.calls.Add(t.native)
		t.native = 0
	}
	if t.n == 0 {
		return
	}
	calls := int64(0)
	for i := range t.cmds[:t.n] {
		ct := &t.cmds[i]
		cs := c.srv.statsOf(ct.cmd)
		cs.calls.Add(ct.calls)
		cs.usec.Add(ct.usec)
		if ct.fail != 0 {
			cs.failed.Add(ct.fail)
		}
		ct.flushLatency(cs)
		calls += ct.calls - ct.inScript
		*ct = cmdTally{}
	}
	t.n = 0
	c.ncmds.Add(calls)
}

// flushLatency adds the latency counts to cs, the command's statistics.
func (ct *cmdTally) flushLatency(cs *cmdStats) {
	if ct.nlat == 0 {
		return
	}
	h := cs.histogram()
	for _, l := range ct.lat[:ct.nlat] {
		h.counts[l.bucket].Add(int64(l.n))
	}
	ct.nlat = 0
}

// readsStats reports whether cmd may read the stats counters, so that the
// client's tally must be flushed before it runs. The transaction commands
// do not (EXEC flushes before each queued command that does), so that a
// pipeline of MULTI blocks is tallied as one batch; nor do EVAL and FCALL
// themselves: a script that runs in Lua, which may call INFO, flushes as
// it starts (runCallable), and one run natively reads nothing.
func readsStats(cmd *Command) bool {
	return cmd.Flags&(FlagFast|FlagWrite|FlagReadonly|flagTxn|flagScript) == 0
}
