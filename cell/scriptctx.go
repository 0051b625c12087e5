package cell

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// How a running script is stopped and watched.
//
// The Lua state checks its context's Done channel between instructions, so
// the context is the script's own scriptRun rather than a context.Context
// built per call: stop is closed by SCRIPT KILL or the memory limit, and at
// the end of the run (which also ends what gopher-lua derived from it for
// coroutines). Busy-threshold and memory checks are made by one watcher
// goroutine per server, running only while scripts run, instead of a timer
// per script: a script of a few microseconds then costs no timer at all.

// Deadline is part of context.Context: a script has none.
func (r *scriptRun) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is closed when the script must stop.
func (r *scriptRun) Done() <-chan struct{} { return r.stop }

// Err is the reason the script was stopped (its text becomes the reply),
// or nil while it may run.
func (r *scriptRun) Err() error {
	select {
	case <-r.stop:
	default:
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cause != nil {
		return r.cause
	}
	return context.Canceled
}

// Value is part of context.Context: a script carries no values.
func (r *scriptRun) Value(any) any { return nil }

// halt closes stop, once, recording cause (nil at the normal end).
func (r *scriptRun) halt(cause error) {
	r.mu.Lock()
	r.haltLocked(cause)
	r.mu.Unlock()
}

func (r *scriptRun) haltLocked(cause error) {
	select {
	case <-r.stop:
	default:
		r.cause = cause
		close(r.stop)
	}
}

// watchScript registers r where SCRIPT KILL and the watcher find it, and
// starts the watcher if none runs.
func (srv *Server) watchScript(r *scriptRun) {
	srv.scriptMu.Lock()
	srv.running[r] = struct{}{}
	if !srv.scriptWatcher {
		srv.scriptWatcher = true
		go srv.watchScripts()
	}
	srv.scriptMu.Unlock()
}

func (srv *Server) unwatchScript(r *scriptRun) {
	srv.scriptMu.Lock()
	delete(srv.running, r)
	srv.scriptMu.Unlock()
}

// scriptTick is the longest pause between two checks of the running
// scripts against the busy threshold and the memory limit.
const scriptTick = 100 * time.Millisecond

// watchInterval is the watcher's pause: a quarter of the threshold, so
// that BUSY starts at most that late, within 1 ms .. scriptTick.
func watchInterval(threshold time.Duration) time.Duration {
	return min(max(threshold/4, time.Millisecond), scriptTick)
}

// scriptMemoryLimit is how far the Go heap may grow while one script runs
// before the script is stopped: gopher-lua has no allocation limit of its
// own, and a Go allocation failure is fatal to the whole server.
const scriptMemoryLimit = 1 << 30

// watchScripts checks the running scripts until none runs.
func (srv *Server) watchScripts() {
	var runs []*scriptRun
	samples := heapSamples()
	for {
		threshold := time.Duration(srv.live.busyReplyThresholdMs.Load()) * time.Millisecond
		time.Sleep(watchInterval(threshold))
		srv.scriptMu.Lock()
		if len(srv.running) == 0 {
			srv.scriptWatcher = false
			srv.scriptMu.Unlock()
			return
		}
		runs = runs[:0]
		for r := range srv.running {
			runs = append(runs, r)
		}
		srv.scriptMu.Unlock()
		heap, live := readHeap(samples)
		for _, r := range runs {
			if r.overMemory(heap, 0) {
				// The heap counts garbage not yet collected: look
				// again after a collection before stopping anyone.
				runtime.GC()
				heap, live = readHeap(samples)
				break
			}
		}
		for _, r := range runs {
			r.check(srv, threshold, heap, live)
		}
		clear(runs)
	}
}

// check marks r busy once it has run past threshold, and stops it when the
// heap has grown by scriptMemoryLimit since it was first checked.
func (r *scriptRun) check(srv *Server, threshold time.Duration, heap, live uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	elapsed := time.Since(r.start)
	if elapsed >= threshold && r.mark.MarkBusy() {
		srv.busyScripts.Add(1)
		srv.log.Warn("Slow script detected: still in execution after " + itoa(elapsed.Milliseconds()) +
			" milliseconds. You can try killing the script using the SCRIPT KILL command.")
	}
	if heap == 0 {
		return
	}
	if r.memBase == 0 {
		r.memBase = memoryBaseline(heap, live)
	} else if heap > r.memBase+scriptMemoryLimit && !r.killed {
		r.killed = true
		r.haltLocked(scriptError(ErrScriptMemory))
		srv.log.Warn("script stopped: memory limit", "heap", heap)
	}
}

// overMemory reports that a heap of heap bytes, plus extra about to be
// allocated, is past r's memory limit.
func (r *scriptRun) overMemory(heap, extra uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.memBase != 0 && !r.killed && heap+extra > r.memBase+scriptMemoryLimit
}

// Reserve is script.MemoryGuard: a builtin about to allocate n bytes at
// once asks first, since the watcher only samples the heap now and then.
// As in the watcher, a refusal is only made after a collection has shown
// the heap really full.
func (r *scriptRun) Reserve(n int64) bool {
	if n > scriptMemoryLimit {
		return r.refuseMemory()
	}
	samples := heapSamples()
	for attempt := 0; ; attempt++ {
		heap, live := readHeap(samples)
		r.mu.Lock()
		if r.memBase == 0 {
			r.memBase = memoryBaseline(heap, live)
		}
		r.mu.Unlock()
		if !r.overMemory(heap, uint64(n)) {
			return true
		}
		if attempt == 1 {
			return r.refuseMemory()
		}
		runtime.GC()
	}
}

func (r *scriptRun) refuseMemory() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.killed {
		r.killed = true
		r.haltLocked(scriptError(ErrScriptMemory))
	}
	return false
}

// memoryBaseline is where a script's memory is counted from: the heap
// live at the last collection, so that garbage left by earlier work does
// not count in the script's favour.
func memoryBaseline(heap, live uint64) uint64 {
	if live > 0 && live < heap {
		return live
	}
	return heap
}

func heapSamples() []metrics.Sample {
	return []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
}

// readHeap is the Go heap's objects, live or not yet swept, and what was
// live at the last collection (0 where the runtime does not say).
func readHeap(s []metrics.Sample) (heap, live uint64) {
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		live = s[1].Value.Uint64()
	}
	return heap, live
}

// pastThreshold reports that r has run past busy-reply-threshold.
func (r *scriptRun) pastThreshold() bool { return r.mark.IsBusy() }
