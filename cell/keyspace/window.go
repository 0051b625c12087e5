package keyspace

import (
	"encoding/binary"
	"math"

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
// The number of events and the newest run's time are kept beside the
// runs, so that a call reads only the runs that leave the window and
// appends at the end: no decoding of the whole log per call.
//
// Invariant: a Window stored in the keyspace holds at least one event;
// the call that would leave it empty removes the key.
type Window struct {
	enc    []byte
	count  int64 // events in enc
	newest int64 // time of enc's last run, ms; 0 when empty
}

// WindowRun is count events admitted at Time (Unix ms).
type WindowRun struct{ Time, Count int64 }

// TypeName is the TYPE of a window key. It is no Redis type: clients
// pass unknown TYPE names through as strings, as they do module types'.
func (w *Window) TypeName() string { return "window" }

// Encoding is OBJECT ENCODING's answer for a window.
func (w *Window) Encoding() string { return "deltas" }

// MemoryBytes is the window's size for MEMORY USAGE and maxmemory: its
// struct (a slice header and two counters) and its encoding.
func (w *Window) MemoryBytes() int { return 40 + cap(w.enc) }

// Empty reports whether the window holds no event.
func (w *Window) Empty() bool { return w.count == 0 }

// Runs appends the window's runs to dst, oldest first.
func (w *Window) Runs(dst []WindowRun) []WindowRun {
	r := runReader{b: w.enc}
	for run, ok := r.next(); ok; run, ok = r.next() {
		dst = append(dst, run)
	}
	return dst
}

// runReader reads an encoding's runs, oldest first.
type runReader struct {
	b []byte // what is left to read
	t int64  // time of the run read last
}

// next reads a run; false at the end (or at a malformed varint).
func (r *runReader) next() (WindowRun, bool) {
	d, n := binary.Uvarint(r.b)
	if n <= 0 {
		return WindowRun{}, false
	}
	c, m := binary.Uvarint(r.b[n:])
	if m <= 0 {
		return WindowRun{}, false
	}
	r.b = r.b[n+m:]
	r.t += int64(d)
	return WindowRun{r.t, int64(c)}, true
}

// SetRuns makes runs (ascending in time, counts positive) the window.
func (w *Window) SetRuns(runs []WindowRun) {
	b := w.enc[:0]
	var prev, count int64
	for _, r := range runs {
		b = binary.AppendUvarint(b, uint64(r.Time-prev))
		b = binary.AppendUvarint(b, uint64(r.Count))
		prev = r.Time
		count += r.Count
	}
	w.enc, w.count, w.newest = b, count, prev
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

// Decide decides a call at now (ms): it drops the runs at or before
// now-window, allows iff the events left plus cost fit in limit (limit and
// cost not negative), and then records cost events at now.
func (w *Window) Decide(now, window, limit, cost int64) WindowDecision {
	var d WindowDecision
	if w.cut(now - window) {
		d.Changed = true
	}
	d.Limited = cost > limit || w.count > limit-cost
	d.Remaining = limit - w.count
	d.RetryAfter = -1
	switch {
	case !d.Limited:
		d.Remaining -= cost
		if cost > 0 {
			w.add(now, cost)
			d.Changed = true
		}
	case cost <= limit:
		// The oldest events leave first: find the run whose leaving lets
		// cost fit.
		left := w.count
		r := runReader{b: w.enc}
		for run, ok := r.next(); ok; run, ok = r.next() {
			if left -= run.Count; left <= limit-cost {
				d.RetryAfter = run.Time + window - now
				break
			}
		}
	}
	if w.count > 0 {
		d.Newest = w.newest
		d.Reset = max(w.newest+window-now, 0)
	}
	return d
}

// cut drops the runs at or before edge, reporting whether it dropped any.
// Only the dropped runs and the first kept one are read: the first kept
// run's delta becomes its time from 0.
func (w *Window) cut(edge int64) bool {
	b := w.enc
	r := runReader{b: b}
	var dropped int64
	off := 0 // where the first kept run starts
	run, ok := r.next()
	for ; ok && run.Time <= edge; run, ok = r.next() {
		dropped += run.Count
		off = len(b) - len(r.b)
	}
	switch {
	case off == 0:
		return false
	case !ok:
		w.enc, w.count, w.newest = b[:0], 0, 0
		return true
	}
	_, n := binary.Uvarint(b[off:])
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(run.Time))
	rest := b[off+n:]
	if h <= off+n {
		k := copy(b, hdr[:h])
		w.enc = b[:k+copy(b[k:], rest)]
	} else {
		w.enc = append(append([]byte(nil), hdr[:h]...), rest...)
	}
	w.count -= dropped
	return true
}

// add records count events at t: a new run at the end, or more events in
// the last run when t is its time. A clock stepped back (t before the
// newest run) takes the slow way, through the decoded runs.
func (w *Window) add(t, count int64) {
	switch {
	case w.count == 0:
		w.enc = binary.AppendUvarint(w.enc[:0], uint64(t))
		w.enc = binary.AppendUvarint(w.enc, uint64(count))
	case t > w.newest:
		w.enc = binary.AppendUvarint(w.enc, uint64(t-w.newest))
		w.enc = binary.AppendUvarint(w.enc, uint64(count))
	case t == w.newest:
		// The last varint (the last run's count) ends at the last byte,
		// the only one of it without the continuation bit.
		i := len(w.enc) - 1
		for i > 0 && w.enc[i-1]&0x80 != 0 {
			i--
		}
		c, _ := binary.Uvarint(w.enc[i:])
		w.enc = binary.AppendUvarint(w.enc[:i], c+uint64(count))
	default:
		w.SetRuns(insertRun(w.Runs(nil), t, count))
		return
	}
	w.count += count
	w.newest = max(w.newest, t)
}
func (w *Window) appendStored(dst []byte, exp int64) []byte {
	return persist.AppendWindow(dst, exp, w.enc)
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

// windowFromStored makes a window from a KindWindow payload (checked by
// persist.Decode), copying it; false if its events do not add up within
// an int64.
func windowFromStored(enc []byte) (*Window, bool) {
	if len(enc) == 0 {
		return nil, false
	}
	w := &Window{enc: append([]byte(nil), enc...)}
	r := runReader{b: w.enc}
	for run, ok := r.next(); ok; run, ok = r.next() {
		if run.Count <= 0 || run.Count > math.MaxInt64-w.count {
			return nil, false
		}
		w.count += run.Count
		w.newest = run.Time
	}
	return w, len(r.b) == 0
}
