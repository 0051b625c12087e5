package zsetlite

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

// The benchmarks model W1: members and scores are millisecond timestamps.
const ts0 = 1700000000000

var benchSizes = []int{10, 100, 128, 1000, 100000}

// windowSet returns a set of n consecutive timestamps and their members.
func windowSet(n int) (*Set, [][]byte) {
	s := New(DefaultConfig())
	ms := make([][]byte, n)
	for i := range ms {
		ms[i] = strconv.AppendInt(nil, int64(ts0+i), 10)
		s.Put(ms[i], float64(ts0+i))
	}
	return s, ms
}

// reportBytes records the set's bytes per element; it must run after the
// timed loop, since ResetTimer drops reported metrics.
func reportBytes(b *testing.B, s *Set) {
	b.ReportMetric(float64(s.MemoryBytes())/float64(s.Len()), "B/elem")
}

// BenchmarkAddTail times inserting the newest timestamp, the ZADD of a
// window, into sets growing from n-n/2 to n members. Each batch of n/2
// inserts starts again from a fresh set built outside the timer.
func BenchmarkAddTail(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			k := max(n/2, 1)
			ms := make([][]byte, n)
			for i := range ms {
				ms[i] = strconv.AppendInt(nil, int64(ts0+i), 10)
			}
			var s *Set
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % k
				if j == 0 {
					b.StopTimer()
					s = New(DefaultConfig())
					for idx, m := range ms[:n-k] {
						s.Put(m, float64(ts0+idx))
					}
					b.StartTimer()
				}
				s.Put(ms[n-k+j], float64(ts0+n-k+j))
			}
			b.StopTimer()
			s, _ = windowSet(n)
			reportBytes(b, s)
		})
	}
}

// BenchmarkDeleteRangeByScorePrefix times ZREMRANGEBYSCORE -inf oldest,
// removing one member, on sets shrinking from n to n-n/2 members; each batch
// starts from a fresh set built outside the timer.
func BenchmarkDeleteRangeByScorePrefix(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			k := max(n/2, 1)
			var s *Set
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % k
				if j == 0 {
					b.StopTimer()
					s, _ = windowSet(n)
					b.StartTimer()
				}
				if s.DeleteRangeByScore(ScoreRange{Min: math.Inf(-1), Max: float64(ts0 + j)}) != 1 {
					b.Fatal("removed nothing")
				}
			}
			b.StopTimer()
			s, _ = windowSet(n)
			reportBytes(b, s)
		})
	}
}

// BenchmarkWindow is one whole W1 step on a steady set of n: ZADD now,
// ZREMRANGEBYSCORE -inf now-window, ZCARD.
func BenchmarkWindow(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, _ := windowSet(n)
			var m []byte
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				now := int64(ts0 + n + i)
				m = strconv.AppendInt(m[:0], now, 10)
				s.Put(m, float64(now))
				s.DeleteRangeByScore(ScoreRange{Min: math.Inf(-1), Max: float64(now - int64(n))})
				if s.Len() != n {
					b.Fatal("window size drifted")
				}
			}
			reportBytes(b, s)
		})
	}
}

func BenchmarkScore(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, ms := windowSet(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, ok := s.Score(ms[i%n]); !ok {
					b.Fatal("missing")
				}
			}
			reportBytes(b, s)
		})
	}
}

func BenchmarkRank(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, ms := windowSet(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, ok := s.Rank(ms[i%n], false); !ok {
					b.Fatal("missing")
				}
			}
			reportBytes(b, s)
		})
	}
}

// BenchmarkScoreUUID is Score on sets whose members are 16 random bytes
// (W1 with UUID members, W5's permits): no integer members, and a map once
// large. Its B/elem is the general case's memory.
func BenchmarkScoreUUID(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, ms := uuidSet(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, ok := s.Score(ms[i%n]); !ok {
					b.Fatal("missing")
				}
			}
			reportBytes(b, s)
		})
	}
}

// uuidSet returns a set of n members of 16 random bytes, scored by
// consecutive timestamps, and its members.
func uuidSet(n int) (*Set, [][]byte) {
	s := New(DefaultConfig())
	ms := make([][]byte, n)
	var x uint64 = 0x9e3779b97f4a7c15
	for i := range ms {
		m := make([]byte, 16)
		for j := range m {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			m[j] = byte(x)
		}
		ms[i] = m
		s.Put(m, float64(ts0+i))
	}
	return s, ms
}

// BenchmarkDeleteAddUUID is ZREM of a UUID member and the ZADD that puts it
// back: two lookups (one with the removal, one for ZADD's existence test)
// and two inserts into the tree and the index.
func BenchmarkDeleteAddUUID(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, ms := uuidSet(n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % n
				if !s.Delete(ms[j]) || !s.Put(ms[j], float64(ts0+j)) {
					b.Fatal("missing")
				}
			}
			reportBytes(b, s)
		})
	}
}

// BenchmarkAppendIntDeltasCold times AppendIntDeltas, a checkpoint's
// encoding of a window, over 20,000 windows of 200 timestamps (about 56 MB,
// far past the caches), built interleaved so that their nodes are spread
// as a server's are: per entry, what a checkpoint of W1 windows pays.
func BenchmarkAppendIntDeltasCold(b *testing.B) {
	const windows, entries = 20_000, 200
	sets := make([]*Set, windows)
	for i := range sets {
		sets[i] = New(DefaultConfig())
	}
	var m []byte
	for e := range entries {
		for _, s := range sets {
			m = strconv.AppendInt(m[:0], int64(ts0+e), 10)
			s.Put(m, float64(ts0+e))
		}
	}
	var dst []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ok bool
		if dst, ok = sets[i%windows].AppendIntDeltas(dst[:0]); !ok {
			b.Fatal("not self-keyed")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*entries), "ns/entry")
}
