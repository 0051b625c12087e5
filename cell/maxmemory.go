package cell

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// maxmemory and its policies.
//
// Used memory is the Go heap's live bytes as of the last collection
// (runtime/metrics /gc/heap/live:bytes), less the estimated size of keys
// evicted since. Like Redis's used_memory it counts everything the server
// holds (keys, values, client buffers, scripts), and unlike the heap's
// current size it does not count garbage, which would make a server full
// of garbage evict live keys. The figure lags by up to one collection, so
// while maxmemory is set the Go memory limit (debug.SetMemoryLimit) is
// set to maxmemory plus a quarter (at least 16 MiB) to make collections
// come often as the heap nears maxmemory: the overshoot stays bounded
// by that margin. Before a command is refused or keys are evicted, the
// server collects (at most once a second) to measure afresh.
//
// Policies: noeviction refuses deny-oom commands with Redis's -OOM.
// allkeys-random and volatile-random evict random keys (volatile: only
// keys with a TTL). volatile-ttl evicts, among maxmemory-samples sampled
// keys with a TTL, the one that expires soonest, as Redis does. The LRU
// and LFU policies are approximations: cellserver keeps no access clock
// per key (that would be a write on every read), so they evict among the
// sampled keys the one whose TTL ends soonest, or a random one when none
// has a TTL. CL.THROTTLE is not deny-oom (redis-cell flags it "write"),
// so a limiter keeps limiting at the limit, as it does under Redis.
//
// The Go memory limit is one per process: several servers in one
// process (tests) share the last one set.

// evictionPolicies are maxmemory-policy's values in Redis's order; the
// index is the policy.
var evictionPolicies = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
	"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

const policyNoEviction = 7

// lfuPolicy says whether the maxmemory policy is an LFU one (Redis's
// MAXMEMORY_FLAG_LFU), which OBJECT FREQ and IDLETIME answer by.
func (s *Server) lfuPolicy() bool {
	p := evictionPolicies[s.ops.mem.policy.Load()]
	return strings.HasSuffix(p, "-lfu")
}

func policyByName(name string) int {
	for i, p := range evictionPolicies {
		if p == name {
			return i
		}
	}
	return policyNoEviction
}

// memoryState is the maxmemory settings and the cached measure.
type memoryState struct {
	limit   atomic.Int64
	policy  atomic.Int32
	samples atomic.Int64

	mu       sync.Mutex // one measurer or evictor at a time
	used     atomic.Int64
	measured atomic.Int64 // Unix ns of used
	gcs      uint64       // GC cycles seen at the last measure
	freed    int64        // estimated bytes evicted since that GC
	lastGC   time.Time    // our last forced collection
	evicted  atomic.Int64 // keys evicted, for INFO evicted_keys
	// replicaObeys is replica-ignore-maxmemory no (maxmemoryApplies).
	replicaObeys atomic.Bool
	samplesM     []metrics.Sample
}

// goMemoryLimit is the Go memory limit the process started with
// (GOMEMLIMIT), restored when maxmemory goes back to 0.
var goMemoryLimit = debug.SetMemoryLimit(-1)

func (m *memoryState) init() {
	m.policy.Store(policyNoEviction)
	m.samples.Store(5)
	m.samplesM = []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
}

// setLimit makes maxmemory n live and moves the Go memory limit with it.
func (m *memoryState) setLimit(n int64) {
	loadLimitsDropped() // load_gc.go: the limit set below is the one in force
	m.limit.Store(n)
	if n == 0 {
		debug.SetMemoryLimit(goMemoryLimit)
		return
	}
	margin := max(n/4, 16<<20)
	if n > math.MaxInt64-margin {
		debug.SetMemoryLimit(goMemoryLimit)
		return
	}
	debug.SetMemoryLimit(min(n+margin, goMemoryLimit))
}

// measureLocked reads the heap. m.mu must be held.
func (m *memoryState) measureLocked() int64 {
	metrics.Read(m.samplesM)
	live := int64(m.samplesM[0].Value.Uint64())
	if m.samplesM[1].Value.Uint64() <= loadEndGCs.Load() {
		// No collection yet, or none since a load (load_gc.go): the heap
		// as it stands is all we know.
		live = int64(m.samplesM[2].Value.Uint64())
	}
	if gcs := m.samplesM[1].Value.Uint64(); gcs != m.gcs {
		m.gcs, m.freed = gcs, 0
	}
	used := max(live-m.freed, 0)
	m.used.Store(used)
	m.measured.Store(time.Now().UnixNano())
	return used
}

// usedMemory is the current measure, at most a millisecond old.
func (s *Server) usedMemory() int64 {
	m := &s.ops.mem
	if time.Now().UnixNano()-m.measured.Load() < int64(time.Millisecond) || !m.mu.TryLock() {
		return m.used.Load()
	}
	defer m.mu.Unlock()
	return m.measureLocked()
}

// UsedMemory is the memory measure maxmemory compares, in bytes.
func (s *Server) UsedMemory() int64 {
	s.ops.mem.mu.Lock()
	defer s.ops.mem.mu.Unlock()
	return s.ops.mem.measureLocked()
}

// maxmemoryApplies says whether maxmemory is set and applies: not on a
// replica under replica-ignore-maxmemory yes (the default), which then,
// as Redis's performEvictions, neither evicts nor refuses anything, so
// that it holds what its master writes even when its maxmemory is lower.
func (s *Server) maxmemoryApplies() bool {
	return s.ops.mem.limit.Load() > 0 && (s.ops.mem.replicaObeys.Load() || !s.isReplica())
}

// checkMemory runs before a command while maxmemory is set, as Redis's
// processCommand does: it evicts under the policy until used memory is
// under the limit, and if that fails refuses deny-oom commands and, in
// MULTI, everything that would be queued (EXEC of deny-oom commands too).
//
// It also notes, for a script the command runs, whether memory was over
// the limit when it started (Redis's script_oom): the script's first
// deny-oom command is then refused (scriptVerifyOOM).
func (c *Client) checkMemory(cmd *Command, args [][]byte) string {
	s := c.srv
	limit := s.ops.mem.limit.Load()
	c.scriptOOM = false
	if s.usedMemory() <= limit {
		return ""
	}
	c.scriptOOM = true
	deny := c.scriptCmdFlags(cmd, args)&FlagDenyOOM != 0 // script_flags.go
	if c.multi != nil {
		switch cmd.Name {
		case "exec":
			deny = c.denyOOM()
		case "discard", "quit", "reset":
		default:
			deny = true
		}
	}
	if !deny && s.ops.mem.policy.Load() == policyNoEviction {
		return "" // nothing to free, nothing to refuse
	}
	if s.freeMemory(limit) {
		c.scriptOOM = false
		return ""
	}
	if !deny {
		return ""
	}
	return ErrOOM
}

// evictOne evicts one key under policy (keyspace.Keyspace.EvictOne) and
// returns its estimated size, or 0 when nothing can be evicted. Evictions
// run one at a time, under the memory state's lock, and share one Effects
// for their deletions.
func (s *Server) evictOne(policy, samples int) int64 {
	var fx *keyspace.Effects
	if s.store != nil {
		if s.evictFx == nil {
			s.evictFx = new(keyspace.Effects)
			*s.evictFx = keyspace.NewEffects(s.store)
		}
		fx = s.evictFx
	}
	volatile := policy <= 3
	random := policy == 2 || policy == 6
	n, err := s.ks.EvictOne(volatile, random, samples, fx)
	if err != nil {
		s.log.Error("persistence: commit failed", "err", err)
	}
	return n
}

// denyOOM reports whether a queued transaction holds a deny-oom command
// (a script by the flags it declares).
func (c *Client) denyOOM() bool {
	for _, q := range c.multi.cmds {
		if c.scriptCmdFlags(q.cmd, q.args)&FlagDenyOOM != 0 {
			return true
		}
	}
	return false
}

// freeMemory brings used memory under limit: first by measuring after a
// collection (at most once a second), then by evicting under the policy.
// It reports false only when memory is over the limit and nothing can be
// evicted; like Redis's performEvictions, it stops evicting after a small
// time budget and lets the command run, the next one continuing.
func (s *Server) freeMemory(limit int64) bool {
	m := &s.ops.mem
	m.mu.Lock()
	defer m.mu.Unlock()
	used := m.measureLocked()
	if used <= limit {
		return true
	}
	if time.Since(m.lastGC) > time.Second {
		runtime.GC()
		m.lastGC = time.Now()
		if used = m.measureLocked(); used <= limit {
			return true
		}
	}
	policy := int(m.policy.Load())
	if policy == policyNoEviction {
		return false
	}
	deadline := time.Now().Add(2 * time.Millisecond)
	for used > limit {
		n := s.evictOne(policy, int(m.samples.Load()))
		if n == 0 {
			return false
		}
		m.evicted.Add(1)
		m.freed += n
		used = max(used-n, 0)
		m.used.Store(used)
		if time.Now().After(deadline) {
			break
		}
	}
	return true
}
