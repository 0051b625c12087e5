package zsetlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"
)

// collidingHashes are member hashes that force the index's collision paths:
// every member on one tag (each lookup confirms candidates in the tree), a
// handful of tags (long probe runs that deletes must shift back), and the
// real hash.
var collidingHashes = []struct {
	name string
	hash func([]byte) uint32
}{
	{"one tag", func([]byte) uint32 { return 0 }}, // 0 also tests the tag-0 remap
	{"four tags", func(m []byte) uint32 {
		if len(m) == 0 {
			return 3
		}
		return uint32(m[len(m)-1] & 3)
	}},
	{"real", memberHash},
}

// withHash runs fn with memberHash replaced.
func withHash(t *testing.T, h func([]byte) uint32, fn func()) {
	old := memberHash
	memberHash = h
	defer func() { memberHash = old }()
	fn()
}

// TestAgainstModelCollidingHashes runs the random operations on sets that
// are large from the start or soon, under hashes that collide.
func TestAgainstModelCollidingHashes(t *testing.T) {
	cfgs := []Config{{MaxListpackEntries: 0, MaxListpackValue: 64}, {MaxListpackEntries: 4, MaxListpackValue: 8}}
	for _, h := range collidingHashes {
		t.Run(h.name, func(t *testing.T) {
			withHash(t, h.hash, func() {
				for seed := 0; seed < 8; seed++ {
					r := rand.New(rand.NewPCG(uint64(seed), 31))
					runOps(t, r, cfgs[seed%2], 600, []int{100, 1000}[seed%2])
				}
			})
		})
	}
}

// uuidOf is a UUID-shaped member for entry i.
func uuidOf(i int) string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i*2654435761&0xffffffff, i&0xffff, i&0xfff, (i>>12)&0xfff, i)
}

// TestLargeUUIDWindow runs the window pattern with UUID members (score the
// timestamp, member unrelated to it): appends, prefix slides, random
// deletes, score updates, some of them to -0 and back, and lookups, against
// the model, then takes the set apart by single deletes.
func TestLargeUUIDWindow(t *testing.T) {
	for _, h := range collidingHashes {
		t.Run(h.name, func(t *testing.T) {
			withHash(t, h.hash, func() {
				r := rand.New(rand.NewPCG(8, 9))
				s := New(DefaultConfig())
				m := &model{cfg: DefaultConfig()}
				// Colliding hashes make every lookup walk many
				// members: smaller windows keep the test fast.
				steps, window := 6000, 1500
				switch h.name {
				case "one tag":
					steps, window = 1500, 200
				case "four tags":
					steps, window = 3000, 400
				}
				ts := 1700000000000
				for i := 0; i < steps; i++ {
					ts += r.IntN(3)
					mem := uuidOf(i)
					s.Put([]byte(mem), float64(ts))
					m.add(mem, float64(ts), 0)
					switch r.IntN(10) {
					case 0: // slide the window
						sr := ScoreRange{Min: math.Inf(-1), Max: float64(ts - window)}
						lo, hi := m.scoreBounds(sr)
						m.del(lo, hi)
						if got := s.DeleteRangeByScore(sr); got != hi-lo {
							t.Fatalf("DeleteRangeByScore = %d, want %d", got, hi-lo)
						}
					case 1: // delete one
						e := m.es[r.IntN(len(m.es))]
						m.del(m.find(e.member), m.find(e.member)+1)
						if !s.Delete([]byte(e.member)) {
							t.Fatalf("Delete(%q) failed", e.member)
						}
					case 2: // move one, sometimes to -0
						e := m.es[r.IntN(len(m.es))]
						sc := float64(ts - r.IntN(window))
						if r.IntN(4) == 0 {
							sc = math.Copysign(0, -1)
						}
						wr, _ := m.add(e.member, sc, 0)
						if gr, _ := s.Add([]byte(e.member), sc, 0); gr != wr {
							t.Fatalf("Add(%q, %v) = %v, want %v", e.member, sc, gr, wr)
						}
					}
					if i%500 == 0 {
						checkInvariants(t, s)
					}
					for k := 0; k < 2; k++ {
						probe := uuidOf(r.IntN(i + 2))
						j := m.find(probe)
						sc, ok := s.Score([]byte(probe))
						rk, rok := s.Rank([]byte(probe), false)
						if ok != (j >= 0) || rok != ok || ok && (!sameFloat(sc, m.es[j].score) || rk != j) {
							t.Fatalf("Score/Rank(%s) = %v %v / %d %v, want index %d", probe, sc, ok, rk, rok, j)
						}
					}
				}
				checkInvariants(t, s)
				got, _ := collect(func(v Visitor) int { return s.Range(0, -1, false, v) })
				if !sameEntries(got, m.es) {
					t.Fatalf("contents differ")
				}
				for _, k := range r.Perm(len(m.es)) {
					if !s.Delete([]byte(m.es[k].member)) {
						t.Fatalf("Delete(%q) failed", m.es[k].member)
					}
				}
				checkInvariants(t, s)
				if s.Len() != 0 || s.big.idx != nil {
					t.Fatalf("emptied: len %d, index %v", s.Len(), s.big.idx != nil)
				}
			})
		})
	}
}

// TestIndexShrinks checks that a table emptied by deletes gives its slots
// back, and that growing again works.
func TestIndexShrinks(t *testing.T) {
	s := New(DefaultConfig())
	for i := 0; i < 5000; i++ {
		s.Put([]byte(uuidOf(i)), float64(i))
	}
	big := len(s.big.idx.tags)
	s.DeleteRangeByRank(0, 4899) // ranks 0..4899: 100 remain
	if got := len(s.big.idx.tags); got*8 > big {
		t.Fatalf("index of 100 keeps %d slots (had %d)", got, big)
	}
	for i := 0; i < 500; i++ {
		s.Put([]byte(uuidOf(10000+i)), float64(i))
	}
	checkInvariants(t, s)
	if s.Len() != 600 {
		t.Fatalf("Len = %d", s.Len())
	}
}

// TestLargeMemberBytes puts members far longer than a leaf's byte budget
// into a large set: a leaf then holds one entry, and everything still
// works.
func TestLargeMemberBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := New(DefaultConfig())
	m := &model{cfg: DefaultConfig()}
	for i := 0; i < 300; i++ {
		mem := fmt.Sprintf("%d-%s", r.IntN(200), string(make([]byte, r.IntN(3*maxLeafBytes))))
		sc := float64(r.IntN(50))
		s.Put([]byte(mem), sc)
		m.add(mem, sc, 0)
		if i%7 == 0 {
			e := m.es[r.IntN(len(m.es))]
			m.del(m.find(e.member), m.find(e.member)+1)
			s.Delete([]byte(e.member))
		}
	}
	checkInvariants(t, s)
	got, _ := collect(func(v Visitor) int { return s.Range(0, -1, true, v) })
	if !sameEntries(got, sliceOf(m.es, 0, len(m.es), true)) {
		t.Fatalf("contents differ")
	}
}

// TestMemoryBytesMatchesHeap checks MemoryBytes, which MEMORY USAGE and
// maxmemory accounting use, against the heap the runtime reports for many
// sets of each shape: packed and large windows, UUID members.
func TestMemoryBytesMatchesHeap(t *testing.T) {
	shapes := []struct {
		name string
		n    int
		uuid bool
	}{{"window of 100", 100, false}, {"window of 1000", 1000, false}, {"UUID window of 1000", 1000, true}}
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			members := make([][]byte, sh.n)
			for i := range members {
				if sh.uuid {
					members[i] = []byte(uuidOf(i))
				} else {
					members[i] = []byte(fmt.Sprint(ts0 + i))
				}
			}
			sets := make([]*Set, 4_000_000/(sh.n*16)) // megabytes: noise of the runtime's own allocations vanishes
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for k := range sets {
				s := New(DefaultConfig())
				for i, m := range members {
					s.Put(m, float64(ts0+i))
				}
				sets[k] = s
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			est := 0
			for _, s := range sets {
				est += s.MemoryBytes()
			}
			heap := int(after.HeapAlloc - before.HeapAlloc)
			t.Logf("MemoryBytes %d, heap %d", est, heap)
			if d := float64(est-heap) / float64(heap); d < -0.1 || d > 0.1 {
				t.Fatalf("MemoryBytes sums to %d, heap grew %d (%+.0f%%)", est, heap, 100*d)
			}
			runtime.KeepAlive(sets)
		})
	}
}

// TestSetStructSize: every sorted-set key pays for one Set; 48 bytes is a
// Go size class, 56 would round up to 64.
func TestSetStructSize(t *testing.T) {
	if n := unsafe.Sizeof(Set{}); n > 48 {
		t.Fatalf("Set is %d bytes", n)
	}
}
