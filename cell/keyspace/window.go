package keyspace

import (
	"encoding/binary"

	"github.com/cellserver/cellserver/persist"
)

// Window is the value of a CL.WINDOW key: the admitted events of a
// sliding-window log, as runs of (time in ms, count) in ascending time,
// coded in one byte slice as uvarint(time - previous run's time) |
// uvarint(count) (the first run's time from 0). A burst in one
// millisecond is one run, and steady traffic a byte or two per event,
// where a sorted set of timestamps holds a member, a score and its index
// entries for each.
//
// Invariant: a Window stored in the keyspace holds at least one event;
// the call that would leave it empty removes the key.
type Window struct {
	enc []byte
}

// WindowRun is count events admitted at Time (Unix ms).
type WindowRun struct{ Time, Count int64 }

// TypeName is the TYPE of a window key. It is no Redis type: clients
// pass unknown TYPE names through as strings, as they do module types'.
func (w *Window) TypeName() string { return "window" }

// Encoding is OBJECT ENCODING's answer for a window.
func (w *Window) Encoding() string { return "deltas" }

// MemoryBytes is the window's size for MEMORY USAGE and maxmemory: its
// struct (a slice header) and its encoding.
func (w *Window) MemoryBytes() int { return 24 + cap(w.enc) }

// Runs appends the window's runs to dst, oldest first.
func (w *Window) Runs(dst []WindowRun) []WindowRun {
	b := w.enc
	var t int64
	for len(b) > 0 {
		d, n := binary.Uvarint(b)
		c, m := binary.Uvarint(b[n:])
		b = b[n+m:]
		t += int64(d)
		dst = append(dst, WindowRun{t, int64(c)})
	}
	return dst
}

// SetRuns makes runs (ascending in time, counts positive) the window.
func (w *Window) SetRuns(runs []WindowRun) {
	b := w.enc[:0]
	var prev int64
	for _, r := range runs {
		b = binary.AppendUvarint(b, uint64(r.Time-prev))
		b = binary.AppendUvarint(b, uint64(r.Count))
		prev = r.Time
	}
	w.enc = b
}

// WindowDecision is one CL.WINDOW call's outcome.
type WindowDecision struct {
	Limited    bool
	Remaining  int64
	RetryAfter int64 // ms; -1 when allowed or when cost can never fit
	Reset      int64 // ms until the window holds no event; 0 if none
	Newest     int64 // time of the newest event kept, ms; 0 if none
	Changed    bool  // runs were dropped or added
}

// DecideWindow decides a call at now (ms) over runs (ascending): it drops
// the runs at or before now-window, allows iff the events left plus cost
// fit in limit, and then records cost events at now. It returns the runs
// left, which reuse runs' array.
func DecideWindow(runs []WindowRun, now, window, limit, cost int64) ([]WindowRun, WindowDecision) {
	var d WindowDecision
	cut := 0
	for cut < len(runs) && runs[cut].Time <= now-window {
		cut++
	}
	if cut > 0 {
		runs = append(runs[:0], runs[cut:]...)
		d.Changed = true
	}
	var count int64
	for _, r := range runs {
		count += r.Count
	}
	d.Limited = count+cost > limit
	d.Remaining = limit - count
	d.RetryAfter = -1
	if !d.Limited {
		d.Remaining -= cost
		if cost > 0 {
			runs = insertRun(runs, now, cost)
			d.Changed = true
		}
	} else if cost <= limit {
		// The oldest events leave first: find the run whose leaving lets
		// cost fit.
		left := count
		for _, r := range runs {
			left -= r.Count
			if left+cost <= limit {
				d.RetryAfter = r.Time + window - now
				break
			}
		}
	}
	if n := len(runs); n > 0 {
		d.Newest = runs[n-1].Time
		d.Reset = max(d.Newest+window-now, 0)
	}
	return runs, d
}

// insertRun adds count events at t, keeping runs in time order (a clock
// stepped back puts them before newer runs).
func insertRun(runs []WindowRun, t, count int64) []WindowRun {
	i := len(runs)
	for i > 0 && runs[i-1].Time > t {
		i--
	}
	if i > 0 && runs[i-1].Time == t {
		runs[i-1].Count += count
		return runs
	}
	runs = append(runs, WindowRun{})
	copy(runs[i+1:], runs[i:])
	runs[i] = WindowRun{t, count}
	return runs
}

func (w *Window) appendStored(dst []byte, exp int64) []byte {
	return persist.AppendWindow(dst, exp, w.enc)
}

// windowFromStored makes a window from a KindWindow payload (checked by
// persist.Decode), copying it.
func windowFromStored(enc []byte) (*Window, bool) {
	if len(enc) == 0 {
		return nil, false
	}
	return &Window{enc: append([]byte(nil), enc...)}, true
}
