package cell

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The collector during and after an RDB load.
//
// A load runs with the collector off (beginLoadGC, endLoadGC): nearly all
// it allocates stays live. Turning it back on at the end started a cycle
// over the whole loaded heap at once, since the pacer's goal still came
// from the few MB live before the load: a pass that finds everything
// live, run while the server starts to serve (about 8% of the CPU of a
// durable load of a million keys before it served). After a
// load at start the collector stays off instead, with the Go memory limit
// lowered to the heap GOGC would have let the loaded heap grow to (the
// memory in use plus GOGC percent of the heap's objects), or to the limit
// already set if lower (maxmemory's, GOMEMLIMIT). The first collection
// after, which that limit brings once memory grows, or which MEMORY PURGE
// or eviction's measure forces, ends the pause: GOGC and the memory limit
// are put back. A change of maxmemory ends it first, so its limit is the
// one in force.
//
// Until a collection has run after a load, the live heap the runtime
// reports is from before it; used_memory (and maxmemory) take the heap's
// objects as they stand instead (loadEndGCs), which after a load is nearly
// all live.

// loadEndGCs is the collection count when the last load ended: while it
// is still the count, the runtime's live heap predates the load.
var loadEndGCs atomic.Uint64

// loadGC is the collector's state around loads.
var loadGC struct {
	mu      sync.Mutex
	loads   int   // loads running, with the collector off
	paused  bool  // the pause after a load is on: the memory limit is lowered
	percent int   // GOGC to put back, while loads run or the pause is on
	limit   int64 // the memory limit to put back, while the pause is on
}

// gcCount is the number of collections so far.
func gcCount() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// beginLoadGC turns the collector off for a load. Loads may nest (a
// replica's full sync during the pause after the load at start): the
// collector comes back when the last ends and no pause is on.
func beginLoadGC() {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loads == 0 && !p.paused {
		p.percent = debug.SetGCPercent(-1)
	}
	p.loads++
}

// endLoadGC ends a load begun by beginLoadGC; with pause (a load at
// start that succeeded), the collector stays off after it, as above.
func endLoadGC(pause bool) {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	// The live heap the runtime last measured predates the load.
	loadEndGCs.Store(gcCount())
	p.loads--
	if p.loads > 0 || p.paused {
		return // the last load, or the pause's first collection, ends it
	}
	if !pause || p.percent < 0 {
		debug.SetGCPercent(p.percent) // GOGC=off stays off
		return
	}
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(s)
	inUse := s[0].Value.Uint64() - s[1].Value.Uint64()
	goal := int64(inUse + s[2].Value.Uint64()/100*uint64(p.percent))
	limit := debug.SetMemoryLimit(-1)
	if goal >= limit {
		debug.SetGCPercent(p.percent)
		return
	}
	p.paused, p.limit = true, limit
	debug.SetMemoryLimit(goal)
	// Runs after the first collection that finds the object unreachable:
	// the first one from now.
	runtime.AddCleanup(new([4]uint64), func(struct{}) { resumeGC() }, struct{}{})
}

// resumeGC ends the pause after a load, if one is on: the memory limit
// goes back, and GOGC too unless a load is running.
func resumeGC() {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		return
	}
	p.paused = false
	debug.SetMemoryLimit(p.limit)
	if p.loads == 0 {
		debug.SetGCPercent(p.percent)
	}
}
