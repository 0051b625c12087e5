package cell

import "time"

// cmdClock is a client's clock for the time dispatch takes per command:
// the start of its duration (monotonic) and its "now" (wall clock).
//
// time.Now costs two clock reads (wall and monotonic) and a duration one
// more; at a few hundred nanoseconds per pipelined command the three reads
// were a sixth of PING's CPU. Here a command costs one monotonic read, and
// its wall time is the wall time of an anchor plus the monotonic time
// since. The anchor is re-read from time.Now when it is older than
// clockAnchorAge, so a wall clock step shows within that age and the slew
// between the two clocks (at most 0.05% under NTP) stays far below a
// millisecond.
//
// Commands of one pipeline batch run back to back, so the end of one is
// the start of the next: end's reading is handed to the next read, unless
// the client went idle (flushed its replies or waited for input) between
// them. A command's duration then also counts the parsing of its request,
// a few tens of nanoseconds, and a batched command costs one clock read.
type cmdClock struct {
	anchorMono int64 // monoNow at the anchor
	anchorWall int64 // Unix ns at the anchor
	last       int64 // end's reading for the next read; 0: none
	queued     int64 // the reading of the last command MULTI queued; 0: none
}

const clockAnchorAge = int64(time.Millisecond)

// monoBase is the origin of monoNow.
var monoBase = time.Now()

// monoNow is the monotonic clock in ns since monoBase: time.Since reads
// only the monotonic clock.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// read returns the monotonic and the wall clock, in ns, at the start of
// a command.
func (k *cmdClock) read() (mono, wall int64) {
	mono = k.last
	k.last, k.queued = 0, 0
	if mono == 0 {
		mono = monoNow()
	}
	if d := mono - k.anchorMono; d >= 0 && d < clockAnchorAge && k.anchorWall != 0 {
		return mono, k.anchorWall + d
	}
	t := time.Now()
	mono = int64(t.Sub(monoBase))
	k.anchorMono, k.anchorWall = mono, t.UnixNano()
	return mono, k.anchorWall
}

// readQueued is read for a command that MULTI is about to queue. Queueing
// is not timed, so the commands queued one after another share one
// reading, handed on from each to the next: a W1 block's ZADD,
// ZREMRANGEBYSCORE, ZCARD and EXPIRE cost one clock read instead of four.
// The next read (EXEC's, DISCARD's) takes a reading of its own, so that
// no command's duration counts the queueing.
func (k *cmdClock) readQueued() (mono, wall int64) {
	if k.last == 0 {
		k.last = k.queued
	}
	mono, wall = k.read()
	k.queued = mono
	return mono, wall
}

// end reads the monotonic clock at the end of a command; the next read
// starts from it.
func (k *cmdClock) end() int64 {
	k.last = monoNow()
	return k.last
}

// idle forgets end's reading: the client is about to wait or write, and
// that time belongs to no command.
func (k *cmdClock) idle() { k.last, k.queued = 0, 0 }
