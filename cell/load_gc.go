package cell

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The collector during and after an RDB load.
//
// A load runs with the collector off (beginLoadGC, endLoadGC): nearly all
// it allocates stays live. A Go memory limit at nine tenths of the
// process's memory guards it (loadMemoryGuard), unless a lower one is
// set. Turning it back on at the end started a cycle over the whole
// loaded heap at once, since the pacer's goal still came from the few MB
// live before the load: a pass that finds everything live, run while the
// server starts to serve (about 8% of the CPU of a durable load of a
// million keys before it served). After a load at start the collector
// stays off instead, with the Go memory limit
// lowered to the heap GOGC would have let the loaded heap grow to (the
// memory in use plus GOGC percent of the heap's objects), or to the limit
// already set if lower (maxmemory's, GOMEMLIMIT). The first collection
// after, which that limit brings once memory grows, or which MEMORY PURGE
// or eviction's measure forces, ends the pause: GOGC and the memory limit
// are put back. A change of maxmemory ends it, and a load's guard, first,
// so its limit is the one in force.
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
	// guarded: the memory limit is loadMemoryGuard's while loads run;
	// unguarded is the one to put back when they end.
	guarded   bool
	unguarded int64
}

// gcCount is the number of collections so far.
func gcCount() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// loadMemoryGuard is the Go memory limit while a load runs with the
// collector off, when none lower is set: nine tenths of the memory the
// process may have (its cgroup's limit, else the machine's), 0 when
// unknown. Garbage a load leaves (a replica's flushed keyspace during its
// full sync) is then collected as memory runs out, rather than never.
func loadMemoryGuard() int64 {
	limit := int64(0)
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		limit, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && (limit <= 0 || kb<<10 < limit) {
					limit = kb << 10
				}
			}
		}
	}
	return limit / 10 * 9
}

// guardLocked lowers the memory limit to loadMemoryGuard's for the loads
// running, unless it is lower already. loadGC.mu must be held.
func guardLocked() {
	p := &loadGC
	g := loadMemoryGuard()
	cur := debug.SetMemoryLimit(-1)
	if g <= 0 || g >= cur {
		return
	}
	p.guarded, p.unguarded = true, cur
	debug.SetMemoryLimit(g)
}

// beginLoadGC turns the collector off for a load, under the memory guard.
// Loads may nest (a replica's full sync during the pause after the load
// at start): the collector comes back when the last ends and no pause is
// on.
func beginLoadGC() {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loads == 0 {
		if !p.paused {
			p.percent = debug.SetGCPercent(-1)
		}
		guardLocked()
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
	if p.loads > 0 {
		return // the last load ends it
	}
	if p.guarded {
		p.guarded = false
		debug.SetMemoryLimit(p.unguarded)
	}
	if p.paused {
		return // the pause's first collection ends it
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
// goes back, and GOGC too unless a load is running (which keeps its
// guard).
func resumeGC() {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		return
	}
	p.paused = false
	p.guarded = false
	debug.SetMemoryLimit(p.limit)
	if p.loads > 0 {
		guardLocked()
		return
	}
	debug.SetGCPercent(p.percent)
}

// loadLimitsDropped is told that the memory limit is about to be set anew
// (maxmemory changed): the pause after a load ends and a load's guard is
// forgotten, neither putting back the limit it replaced.
func loadLimitsDropped() {
	p := &loadGC
	p.mu.Lock()
	defer p.mu.Unlock()
	p.guarded = false
	if p.paused {
		p.paused = false
		if p.loads == 0 {
			debug.SetGCPercent(p.percent)
		}
	}
}
