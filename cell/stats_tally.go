package cell

import "time"

// statsTally holds the INFO commandstats and latencystats counts of the
// commands a client has just run, until it publishes them to the shared
// counters (flush). A pipeline repeats one command, so one tally covers a
// whole batch: the shared cache lines, which every core would otherwise
// fight over on every command, are written once per batch instead.
//
// What must stay true: a command that may read the stats (anything not
// fast and not a plain key command: INFO, CONFIG RESETSTAT, LATENCY,
// EVAL, ...) runs after its client's tally is flushed, and the tally is
// flushed before replies are sent, so that no reply reveals a command the
// stats do not count yet. Other clients see the counts at most one
// pipeline batch late.
type statsTally struct {
	cmd               *Command
	calls, usec, fail int64
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
	if t.cmd != cmd {
		t.flush(c)
		t.cmd = cmd
	}
	t.calls++
	t.usec += int64(d / time.Microsecond)
	if failed {
		t.fail++
	}
	if !latencyTracking.Load() {
		return
	}
	b := int32(latencyBucket(int64(d)))
	for i := range t.lat[:t.nlat] {
		if t.lat[i].bucket == b {
			t.lat[i].n++
			return
		}
	}
	if t.nlat == len(t.lat) {
		t.flushLatency()
	}
	t.lat[t.nlat] = latencyCount{b, 1}
	t.nlat++
}

// flush adds the tally to the shared counters and empties it.
func (t *statsTally) flush(c *Client) {
	if t.cmd == nil {
		return
	}
	cs := &t.cmd.stats
	cs.calls.Add(t.calls)
	cs.usec.Add(t.usec)
	if t.fail != 0 {
		cs.failed.Add(t.fail)
	}
	t.flushLatency()
	c.ncmds.Add(t.calls)
	t.cmd, t.calls, t.usec, t.fail = nil, 0, 0, 0
}

func (t *statsTally) flushLatency() {
	if t.nlat == 0 {
		return
	}
	h := t.cmd.stats.histogram()
	for _, l := range t.lat[:t.nlat] {
		h.counts[l.bucket].Add(int64(l.n))
	}
	t.nlat = 0
}

// readsStats reports whether cmd may read the stats counters, so that the
// client's tally must be flushed before it runs.
func readsStats(cmd *Command) bool {
	return cmd.Flags&(FlagFast|FlagWrite|FlagReadonly) == 0
}
