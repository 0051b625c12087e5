package zsetlite

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// model is the reference the property tests compare Set against: a sorted
// slice, rebuilt the obvious way, tracking the encoding by Redis's rules.
type model struct {
	cfg      Config
	skiplist bool
	es       []modelEntry
}

type modelEntry struct {
	member string
	score  float64
}

func (m *model) less(a, b modelEntry) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.member < b.member
}

func (m *model) find(member string) int {
	for i, e := range m.es {
		if e.member == member {
			return i
		}
	}
	return -1
}

// store applies the listpack's -0 -> 0 rule.
func (m *model) store(score float64) float64 {
	if !m.skiplist && score == 0 {
		return 0
	}
	return score
}

func (m *model) put(member string, score float64) {
	if i := m.find(member); i >= 0 {
		m.es = append(m.es[:i], m.es[i+1:]...)
	} else if !m.skiplist && (len(m.es)+1 > m.cfg.MaxListpackEntries || len(member) > m.cfg.MaxListpackValue) {
		m.skiplist = true
	}
	e := modelEntry{member, m.store(score)}
	i := sort.Search(len(m.es), func(i int) bool { return m.less(e, m.es[i]) })
	m.es = append(m.es, modelEntry{})
	copy(m.es[i+1:], m.es[i:])
	m.es[i] = e
}

func (m *model) add(member string, score float64, f AddFlags) (AddResult, float64) {
	i := m.find(member)
	if i < 0 {
		if f&AddXX != 0 {
			return Skipped, 0
		}
		m.put(member, score)
		return Added, score
	}
	if f&AddNX != 0 {
		return Skipped, 0
	}
	cur := m.es[i].score
	if f&AddIncr != 0 {
		score += cur
		if math.IsNaN(score) {
			return NotANumber, 0
		}
	}
	if f&AddLT != 0 && score >= cur || f&AddGT != 0 && score <= cur {
		return Skipped, 0
	}
	if score == cur {
		return Unchanged, score
	}
	m.put(member, score)
	return Updated, score
}

func (m *model) del(lo, hi int) {
	if lo < hi {
		m.es = append(m.es[:lo], m.es[hi:]...)
	}
}

func (m *model) scoreBounds(r ScoreRange) (int, int) {
	lo, hi := -1, -1
	for i, e := range m.es {
		in := (e.score > r.Min || e.score == r.Min && !r.MinEx) && (e.score < r.Max || e.score == r.Max && !r.MaxEx)
		if in {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

func (m *model) lexBounds(r LexRange) (int, int) {
	lo, hi := -1, -1
	for i, e := range m.es {
		if !r.belowMin([]byte(e.member)) && r.notAboveMax([]byte(e.member)) {
			if lo < 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo, hi
}

func (m *model) allScoresEqual() bool {
	for _, e := range m.es {
		if e.score != m.es[0].score {
			return false
		}
	}
	return true
}

func (m *model) encoding() string {
	if m.skiplist {
		return EncodingSkiplist
	}
	return EncodingListpack
}

var (
	testScores = []float64{
		math.Inf(-1), math.Inf(1), 0, math.Copysign(0, -1), 1, -1, 1.5, -2.25, 2, 3,
		1e300, -1e-300, 127, 128, -128, -129, 1 << 31, -1 << 31, 1700000000000,
		1700000000001, 1 << 47, -1 << 47, 1<<47 - 1, 1 << 53, 0.1,
	}
	testMembers = func() []string {
		ms := []string{"", "a", "b", "A", "ab", "0", "-0", "00", "01", "1", "-1", "+1",
			"12", "127", "128", "-128", "-129", "32767", "32768", "2147483648",
			"1700000000000", "1700000000001", "-140737488355328", "140737488355328",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808",
			"-9223372036854775809", "18446744073709551616", "\x00", "\xff", "a\x00b",
			" 1", "1 ", "1e3", "-",
		}
		for _, n := range []int{57, 58, 63, 64, 65, 127, 128, 200, 300} {
			ms = append(ms, strings.Repeat("x", n))
		}
		return ms
	}()
)

// windowBases centre the window pattern's integers on small values and on
// the edges of each stored integer width (a score's int8, int32 and int48,
// past which a member is no longer stored as its own score).
var windowBases = []int{0, 0, 0, 127, -128, 32767, 1<<31 - 1, -1 << 31, 1<<47 - 1, -1 << 47, 1_700_000_000_000}

func genScore(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return float64(r.IntN(20))
	case 1:
		return r.NormFloat64() * 1e3
	}
	return testScores[r.IntN(len(testScores))]
}

func genMember(r *rand.Rand, pool int) string {
	switch r.IntN(3) {
	case 0:
		return testMembers[r.IntN(len(testMembers))]
	case 1:
		return fmt.Sprint(r.IntN(pool))
	}
	b := make([]byte, r.IntN(6))
	for i := range b {
		b[i] = "ab\x00\xff01"[r.IntN(6)]
	}
	return string(b)
}

func genScoreRange(r *rand.Rand) ScoreRange {
	return ScoreRange{Min: genScore(r), Max: genScore(r), MinEx: r.IntN(3) == 0, MaxEx: r.IntN(3) == 0}
}

func genLexBound(r *rand.Rand, pool int) ([]byte, bool, int8) {
	switch r.IntN(8) {
	case 0:
		return nil, true, -1
	case 1:
		return nil, true, 1
	}
	return []byte(genMember(r, pool)), r.IntN(2) == 0, 0
}

func genLexRange(r *rand.Rand, pool int) LexRange {
	var lr LexRange
	lr.Min, lr.MinEx, lr.MinInf = genLexBound(r, pool)
	lr.Max, lr.MaxEx, lr.MaxInf = genLexBound(r, pool)
	return lr
}

// collect gathers what a walk visits.
func collect(walk func(Visitor) int) ([]modelEntry, int) {
	var out []modelEntry
	n := walk(func(m []byte, s float64) bool {
		out = append(out, modelEntry{string(m), s})
		return true
	})
	return out, n
}

func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b)
}

func sameEntries(a, b []modelEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].member != b[i].member || !sameFloat(a[i].score, b[i].score) {
			return false
		}
	}
	return true
}

func sliceOf(es []modelEntry, lo, hi int, reverse bool) []modelEntry {
	out := append([]modelEntry(nil), es[lo:hi]...)
	if reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

func modelLimit(es []modelEntry, reverse bool, offset, count int) []modelEntry {
	if offset < 0 || offset >= len(es) {
		return nil
	}
	es = es[offset:]
	if count >= 0 && count < len(es) {
		es = es[:count]
	}
	return es
}

// checkInvariants verifies the B+tree's structure and its agreement with the
// map.
func checkInvariants(t testing.TB, s *Set) {
	t.Helper()
	if s.big == nil {
		n := 0
		for off := 0; off < len(s.packed); off = skip(s.packed, off) {
			if readBacklen(s.packed, skip(s.packed, off)) != off {
				t.Fatalf("backlen of entry at %d is wrong", off)
			}
			n++
		}
		if n != int(s.pn) {
			t.Fatalf("packed count %d, walked %d", s.pn, n)
		}
		return
	}
	b := s.big
	if b.idx != nil && b.idx.n != b.tree.n {
		t.Fatalf("index has %d, tree %d", b.idx.n, b.tree.n)
	}
	if b.tree.n == 0 {
		if b.tree.root != nil {
			t.Fatalf("empty tree keeps a root")
		}
		return
	}
	depth := -1
	var prev *item
	var pairs map[indexPair]int // the index's pairs, to tick off one per member
	if b.idx != nil {
		pairs = map[indexPair]int{}
		live := 0
		for i, tag := range b.idx.tags {
			if tag != 0 {
				pairs[indexPair{tag, math.Float64bits(b.idx.scores[i])}]++
				live++
				// Every pair is reachable from its home slot.
				mask := len(b.idx.tags) - 1
				for j := int(tag) & mask; j != i; j = (j + 1) & mask {
					if b.idx.tags[j] == 0 {
						t.Fatalf("index pair at %d cut off from its home by an empty slot", i)
					}
				}
			}
		}
		if live != b.idx.n {
			t.Fatalf("index counts %d, holds %d", b.idx.n, live)
		}
	}
	var walk func(n *node, d int, lower *item) int
	walk = func(n *node, d int, lower *item) int {
		if n.leaf() {
			if depth < 0 {
				depth = d
			} else if depth != d {
				t.Fatalf("leaves at depths %d and %d", depth, d)
			}
			if n.n == 0 {
				t.Fatalf("empty leaf")
			}
			if n.n > maxLeaf || n.n > 1 && len(n.p) > maxLeafBytes {
				t.Fatalf("leaf of %d entries, %d bytes", n.n, len(n.p))
			}
			c := 0
			for off := 0; off < len(n.p); c++ {
				var scratch [20]byte
				if c%markStride == 0 && c > 0 && c/markStride <= n.liveMarks() && int(n.marks[c/markStride-1]) != off {
					t.Fatalf("mark %d of a leaf says %d, entry %d is at %d", c/markStride-1, n.marks[c/markStride-1], c, off)
				}
				e := decode(n.p, off)
				if readBacklen(n.p, e.end) != off {
					t.Fatalf("backlen of leaf entry at %d is wrong", off)
				}
				it := item{e.score, string(e.member(&scratch))}
				if lower != nil && cmpItem(it, *lower) < 0 {
					t.Fatalf("entry below its separator")
				}
				if prev != nil && cmpItem(*prev, it) >= 0 {
					t.Fatalf("entries out of order")
				}
				if b.idx == nil {
					if !selfKeyedPair([]byte(it.member), it.score) {
						t.Fatalf("no index, but %q is not self-keyed", it.member)
					}
				} else {
					k := indexPair{tagOf([]byte(it.member)), math.Float64bits(it.score)}
					if pairs[k] == 0 {
						t.Fatalf("index lacks %q at %v", it.member, it.score)
					}
					pairs[k]--
				}
				prev = &it
				off = e.end
			}
			if c != int(n.n) {
				t.Fatalf("leaf counts %d, holds %d", n.n, c)
			}
			return c
		}
		in := n.in
		if len(in.kids) == 0 || len(in.kids) != len(in.seps) || len(in.kids) != len(in.cnts) {
			t.Fatalf("internal node shape %d/%d/%d", len(in.kids), len(in.seps), len(in.cnts))
		}
		total := 0
		for i, k := range in.kids {
			lb := lower
			if i > 0 {
				lb = &in.seps[i]
			}
			c := walk(k, d+1, lb)
			if c != in.cnts[i] {
				t.Fatalf("count %d, subtree has %d", in.cnts[i], c)
			}
			total += c
		}
		return total
	}
	if c := walk(b.tree.root, 0, nil); c != b.tree.n {
		t.Fatalf("tree n %d, walked %d", b.tree.n, c)
	}
}

// cmpItem orders by score, then member bytes. -0 and 0 are equal scores.
func cmpItem(a, b item) int {
	if a.score < b.score {
		return -1
	}
	if a.score > b.score {
		return 1
	}
	return strings.Compare(a.member, b.member)
}

type indexPair struct {
	tag  uint32
	bits uint64
}

var testConfigs = []Config{
	DefaultConfig(),
	{MaxListpackEntries: 4, MaxListpackValue: 8},
	{MaxListpackEntries: 0, MaxListpackValue: 64},
	{MaxListpackEntries: 1, MaxListpackValue: 0},
	{MaxListpackEntries: 16, MaxListpackValue: 60},
	{MaxListpackEntries: 300, MaxListpackValue: 300},
	{MaxListpackEntries: 2000, MaxListpackValue: 1000},
}

type randAdapter struct{ r *rand.Rand }

func (a randAdapter) IntN(n int) int { return a.r.IntN(n) }

// runOps drives s and a model with the same random operations and fails on
// the first disagreement.
func runOps(t testing.TB, r *rand.Rand, cfg Config, steps, pool int) {
	s := New(cfg)
	m := &model{cfg: cfg}
	for step := 0; step < steps; step++ {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (cfg %+v, len %d, %s): %s", step, cfg, len(m.es), m.encoding(), fmt.Sprintf(format, args...))
		}
		op := r.IntN(25)
		switch {
		case op == 24: // a checkpoint and a load: the set as its integers, made again by AddInts
			b, ok := s.AppendIntDeltas(nil)
			if !ok || len(m.es) == 0 { // an empty set is never stored
				continue
			}
			var vs []int64
			var cur int64
			for len(b) > 0 {
				d, n := binary.Varint(b)
				cur += d
				vs = append(vs, cur)
				b = b[n:]
			}
			loaded := New(cfg)
			loaded.AddInts(vs)
			got, _ := collect(func(v Visitor) int { return loaded.Range(0, -1, false, v) })
			if want := sliceOf(m.es, 0, len(m.es), false); !sameEntries(got, want) {
				fail("AddInts(%v) holds %v, want %v", vs, got, want)
			}
			s = loaded
			// A set made afresh is packed unless its size or a member
			// rules that out, whatever the old one had become.
			m.skiplist = len(m.es) > cfg.MaxListpackEntries
			for _, e := range m.es {
				m.skiplist = m.skiplist || len(e.member) > cfg.MaxListpackValue
			}
		case op < 7: // Add, mostly plain inserts
			mem, sc := genMember(r, pool), genScore(r)
			if r.IntN(2) == 0 {
				// The window pattern: the member is its score's text.
				v := windowBases[r.IntN(len(windowBases))] + r.IntN(pool) - pool/2
				if len(m.es) > 0 && r.IntN(2) == 0 {
					v = int(m.es[len(m.es)-1].score) + r.IntN(3) - 1
				}
				mem, sc = fmt.Sprint(v), float64(v)
			}
			var f AddFlags
			switch r.IntN(8) {
			case 0:
				f = AddNX
			case 1:
				f = AddXX
			case 2:
				f = AddGT
			case 3:
				f = AddLT | AddXX
			case 4:
				f = AddIncr
			case 5:
				f = AddIncr | AddGT
			}
			gr, gs := s.Add([]byte(mem), sc, f)
			wr, ws := m.add(mem, sc, f)
			if gr != wr || (wr != Skipped && wr != NotANumber && !sameFloat(gs, ws)) {
				fail("Add(%q, %v, %b) = %v %v, want %v %v", mem, sc, f, gr, gs, wr, ws)
			}
		case op < 9: // Delete
			mem := genMember(r, pool)
			if i := m.find(mem); r.IntN(2) == 0 && len(m.es) > 0 {
				mem = m.es[r.IntN(len(m.es))].member
			} else {
				_ = i
			}
			want := m.find(mem) >= 0
			if want {
				m.del(m.find(mem), m.find(mem)+1)
			}
			if got := s.Delete([]byte(mem)); got != want {
				fail("Delete(%q) = %v", mem, got)
			}
		case op < 11: // Score and Rank
			mem := genMember(r, pool)
			if r.IntN(2) == 0 && len(m.es) > 0 {
				mem = m.es[r.IntN(len(m.es))].member
			}
			i := m.find(mem)
			sc, ok := s.Score([]byte(mem))
			if ok != (i >= 0) || ok && !sameFloat(sc, m.es[i].score) {
				fail("Score(%q) = %v %v", mem, sc, ok)
			}
			rev := r.IntN(2) == 0
			rk, ok := s.Rank([]byte(mem), rev)
			want := i
			if rev && i >= 0 {
				want = len(m.es) - 1 - i
			}
			if ok != (i >= 0) || ok && rk != want {
				fail("Rank(%q, %v) = %d %v, want %d", mem, rev, rk, ok, want)
			}
		case op < 13: // Range by rank
			n := len(m.es) + 2
			start, stop, rev := r.IntN(2*n)-n, r.IntN(2*n)-n, r.IntN(2) == 0
			got, cnt := collect(func(v Visitor) int { return s.Range(start, stop, rev, v) })
			lo, hi := RankBounds(start, stop, len(m.es))
			var want []modelEntry
			if rev {
				want = sliceOf(m.es, len(m.es)-hi, len(m.es)-lo, true)
			} else {
				want = sliceOf(m.es, lo, hi, false)
			}
			if !sameEntries(got, want) || cnt != len(want) {
				fail("Range(%d, %d, %v) = %v (%d), want %v", start, stop, rev, got, cnt, want)
			}
		case op < 15: // Range and count by score
			sr := genScoreRange(r)
			rev := r.IntN(2) == 0
			offset, count := r.IntN(6)-1, r.IntN(8)-2
			if r.IntN(2) == 0 {
				offset, count = 0, -1
			}
			lo, hi := m.scoreBounds(sr)
			want := modelLimit(sliceOf(m.es, lo, hi, rev), rev, offset, count)
			got, cnt := collect(func(v Visitor) int { return s.RangeByScore(sr, rev, offset, count, v) })
			if !sameEntries(got, want) || cnt != len(want) {
				fail("RangeByScore(%+v, %v, %d, %d) = %v, want %v", sr, rev, offset, count, got, want)
			}
			if c := s.CountByScore(sr); c != hi-lo {
				fail("CountByScore(%+v) = %d, want %d", sr, c, hi-lo)
			}
		case op < 16: // Range and count by lex, checked only where Redis defines it
			lr := genLexRange(r, pool)
			rev := r.IntN(2) == 0
			offset, count := r.IntN(4), r.IntN(6)-2
			got, cnt := collect(func(v Visitor) int { return s.RangeByLex(lr, rev, offset, count, v) })
			c := s.CountByLex(lr)
			if cnt != len(got) {
				fail("RangeByLex returned %d for %d visits", cnt, len(got))
			}
			if m.allScoresEqual() {
				lo, hi := m.lexBounds(lr)
				want := modelLimit(sliceOf(m.es, lo, hi, rev), rev, offset, count)
				if !sameEntries(got, want) {
					fail("RangeByLex(%+v, %v, %d, %d) = %v, want %v", lr, rev, offset, count, got, want)
				}
				if c != hi-lo {
					fail("CountByLex = %d, want %d", c, hi-lo)
				}
			}
		case op < 18: // Delete ranges
			switch r.IntN(3) {
			case 0:
				sr := genScoreRange(r)
				if r.IntN(2) == 0 {
					sr.Min = math.Inf(-1)
				}
				lo, hi := m.scoreBounds(sr)
				want := append([]modelEntry(nil), m.es[lo:hi]...)
				m.del(lo, hi)
				if r.IntN(2) == 0 {
					if got := s.DeleteRangeByScore(sr); got != hi-lo {
						fail("DeleteRangeByScore(%+v) = %d, want %d", sr, got, hi-lo)
					}
					break
				}
				var seen []modelEntry
				scratch := new([20]byte)
				if r.IntN(2) == 0 { // integer members unformatted: shown as nil
					scratch = nil
					for i := range want {
						if _, ok := parseCanonicalInt([]byte(want[i].member)); ok {
							want[i].member = "<nil>"
						}
					}
				}
				got := s.DeleteRangeByScoreVisit(sr, func(member []byte, score float64) bool {
					m := string(member)
					if member == nil {
						m = "<nil>"
					}
					seen = append(seen, modelEntry{member: m, score: score})
					return true
				}, scratch)
				if got != hi-lo || fmt.Sprint(seen) != fmt.Sprint(want) {
					fail("DeleteRangeByScoreVisit(%+v) = %d, visited %v, want %d, %v", sr, got, seen, hi-lo, want)
				}
			case 1:
				n := len(m.es) + 2
				start, stop := r.IntN(2*n)-n, r.IntN(2*n)-n
				lo, hi := RankBounds(start, stop, len(m.es))
				m.del(lo, hi)
				if got := s.DeleteRangeByRank(start, stop); got != hi-lo {
					fail("DeleteRangeByRank(%d, %d) = %d, want %d", start, stop, got, hi-lo)
				}
			case 2:
				if !m.allScoresEqual() {
					continue
				}
				lr := genLexRange(r, pool)
				lo, hi := m.lexBounds(lr)
				m.del(lo, hi)
				if got := s.DeleteRangeByLex(lr); got != hi-lo {
					fail("DeleteRangeByLex(%+v) = %d, want %d", lr, got, hi-lo)
				}
			}
		case op < 19: // Pop
			count := r.IntN(5) - 1
			if r.IntN(2) == 0 {
				got, _ := collect(func(v Visitor) int { return s.PopMin(count, v) })
				n := min(max(count, 0), len(m.es))
				want := sliceOf(m.es, 0, n, false)
				m.del(0, n)
				if !sameEntries(got, want) {
					fail("PopMin(%d) = %v, want %v", count, got, want)
				}
			} else {
				got, _ := collect(func(v Visitor) int { return s.PopMax(count, v) })
				n := min(max(count, 0), len(m.es))
				want := sliceOf(m.es, len(m.es)-n, len(m.es), true)
				m.del(len(m.es)-n, len(m.es))
				if !sameEntries(got, want) {
					fail("PopMax(%d) = %v, want %v", count, got, want)
				}
			}
		case op < 20: // Random members
			count := r.IntN(2*len(m.es)+3) - len(m.es) - 1
			got, n := collect(func(v Visitor) int { return s.RandomMembers(randAdapter{r}, count, v) })
			want := count
			if count > 0 {
				want = min(count, len(m.es))
			} else if len(m.es) == 0 {
				want = 0
			} else {
				want = -count
			}
			if n != want || len(got) != want {
				fail("RandomMembers(%d) gave %d (%d), want %d", count, len(got), n, want)
			}
			seen := map[string]bool{}
			for _, e := range got {
				i := m.find(e.member)
				if i < 0 || !sameFloat(m.es[i].score, e.score) {
					fail("RandomMembers gave %v, not in the set", e)
				}
				if count > 0 && seen[e.member] {
					fail("RandomMembers(%d) repeated %q", count, e.member)
				}
				seen[e.member] = true
			}
		case op < 21: // At
			i := r.IntN(len(m.es)+2) - 1
			mem, sc, ok := s.At(i)
			if ok != (i >= 0 && i < len(m.es)) || ok && (string(mem) != m.es[i].member || !sameFloat(sc, m.es[i].score)) {
				fail("At(%d) = %q %v %v", i, mem, sc, ok)
			}
		default: // many plain inserts, to cross the thresholds
			for k := r.IntN(40); k > 0; k-- {
				mem, sc := genMember(r, pool), genScore(r)
				if r.IntN(2) == 0 && len(m.es) > 0 {
					sc = m.es[len(m.es)-1].score + float64(r.IntN(3))
				}
				if got, want := s.Put([]byte(mem), sc), m.find(mem) < 0; got != want {
					fail("Put(%q) = %v", mem, got)
				}
				m.add(mem, sc, 0)
			}
		}
		if s.Len() != len(m.es) {
			fail("Len = %d", s.Len())
		}
		if s.Encoding() != m.encoding() {
			fail("Encoding = %s", s.Encoding())
		}
		if step%16 == 0 {
			checkInvariants(t, s)
			got, _ := collect(func(v Visitor) int { return s.Range(0, -1, false, v) })
			if !sameEntries(got, m.es) {
				fail("contents %v, want %v", got, m.es)
			}
			checkIntDeltas(t, s, got)
			if s.MemoryBytes() <= 0 {
				fail("MemoryBytes = %d", s.MemoryBytes())
			}
		}
	}
}

func TestAgainstModel(t *testing.T) {
	iters := 300
	if testing.Short() {
		iters = 40
	}
	for seed := 0; seed < iters; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		cfg := testConfigs[seed%len(testConfigs)]
		pool := []int{10, 100, 1000}[seed%3]
		runOps(t, r, cfg, 600, pool)
	}
}

// TestAgainstModelLarge drives sets far past one B+tree level, so splits,
// merges and range deletes across internal nodes are exercised.
func TestAgainstModelLarge(t *testing.T) {
	for seed := 0; seed < 6; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		s := New(DefaultConfig())
		m := &model{cfg: DefaultConfig()}
		for i := 0; i < 20000; i++ {
			mem := fmt.Sprint(r.IntN(12000))
			sc := float64(r.IntN(5000))
			if seed%2 == 0 {
				sc = float64(i)
			}
			s.Put([]byte(mem), sc)
			m.add(mem, sc, 0)
			if r.IntN(50) == 0 {
				sr := ScoreRange{Min: math.Inf(-1), Max: float64(r.IntN(i + 1))}
				lo, hi := m.scoreBounds(sr)
				m.del(lo, hi)
				if got := s.DeleteRangeByScore(sr); got != hi-lo {
					t.Fatalf("DeleteRangeByScore = %d, want %d", got, hi-lo)
				}
			}
			if r.IntN(100) == 0 {
				n := len(m.es)
				a, b := r.IntN(n+1), r.IntN(n+1)
				lo, hi := RankBounds(a, b, n)
				m.del(lo, hi)
				s.DeleteRangeByRank(a, b)
			}
			if i%1000 == 0 {
				checkInvariants(t, s)
			}
		}
		checkInvariants(t, s)
		got, _ := collect(func(v Visitor) int { return s.Range(0, -1, false, v) })
		if !sameEntries(got, m.es) {
			t.Fatalf("seed %d: contents differ", seed)
		}
		for i, e := range m.es {
			if rk, ok := s.Rank([]byte(e.member), false); !ok || rk != i {
				t.Fatalf("Rank(%q) = %d %v, want %d", e.member, rk, ok, i)
			}
		}
		// Empty it through deletes in random order.
		perm := r.Perm(len(m.es))
		for k, i := range perm {
			if !s.Delete([]byte(m.es[i].member)) {
				t.Fatalf("Delete of a member failed")
			}
			if k%500 == 0 {
				checkInvariants(t, s)
			}
		}
		checkInvariants(t, s)
		if s.Len() != 0 || s.Encoding() != EncodingSkiplist {
			t.Fatalf("after deleting all: len %d, %s", s.Len(), s.Encoding())
		}
	}
}

var _ = bytes.Compare

// TestBigTree builds trees several levels deep in random and in ascending
// order, then takes them apart by rank ranges and single deletes, checking
// the structure as it goes.
func TestBigTree(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 30000
	}
	for _, ascending := range []bool{false, true} {
		r := rand.New(rand.NewPCG(3, 4))
		s := New(DefaultConfig())
		want := make([]modelEntry, 0, n)
		for i := 0; i < n; i++ {
			sc := float64(r.IntN(n / 4))
			if ascending {
				sc = float64(i)
			}
			mem := fmt.Sprintf("m%d", i)
			s.Put([]byte(mem), sc)
			want = append(want, modelEntry{mem, sc})
		}
		m := &model{es: want}
		sort.Slice(want, func(i, j int) bool { return m.less(want[i], want[j]) })
		checkInvariants(t, s)
		for k := 0; k < 60 && len(m.es) > 0; k++ {
			a := r.IntN(len(m.es))
			b := a + r.IntN(len(m.es)/8+1)
			lo, hi := RankBounds(a, b, len(m.es))
			m.del(lo, hi)
			if got := s.DeleteRangeByRank(a, b); got != hi-lo {
				t.Fatalf("DeleteRangeByRank(%d, %d) = %d, want %d", a, b, got, hi-lo)
			}
			checkInvariants(t, s)
		}
		for k := 0; k < len(m.es)/2; k++ {
			i := r.IntN(len(m.es))
			if !s.Delete([]byte(m.es[i].member)) {
				t.Fatalf("Delete(%q) failed", m.es[i].member)
			}
			m.del(i, i+1)
			if k%4096 == 0 {
				checkInvariants(t, s)
			}
		}
		checkInvariants(t, s)
		got, _ := collect(func(v Visitor) int { return s.Range(0, -1, false, v) })
		if !sameEntries(got, m.es) {
			t.Fatalf("contents differ")
		}
		got, _ = collect(func(v Visitor) int { return s.Range(0, -1, true, v) })
		if !sameEntries(got, sliceOf(m.es, 0, len(m.es), true)) {
			t.Fatalf("reverse contents differ")
		}
		s.DeleteRangeByRank(0, -1)
		checkInvariants(t, s)
		if s.Len() != 0 {
			t.Fatalf("Len = %d after deleting all", s.Len())
		}
	}
}

// TestSelfKeyedLarge runs the window pattern on a large set, where no map is
// kept, then breaks the pattern and checks the map that gets built.
func TestSelfKeyedLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	s := New(DefaultConfig())
	m := &model{cfg: DefaultConfig()}
	v := 1700000000000
	for i := 0; i < 30000; i++ {
		v += r.IntN(3) // repeats: the same millisecond twice
		mem := fmt.Sprint(v)
		s.Put([]byte(mem), float64(v))
		m.add(mem, float64(v), 0)
		if i%7 == 0 {
			sr := ScoreRange{Min: math.Inf(-1), Max: float64(v - 10000)}
			lo, hi := m.scoreBounds(sr)
			m.del(lo, hi)
			if got := s.DeleteRangeByScore(sr); got != hi-lo {
				t.Fatalf("DeleteRangeByScore = %d, want %d", got, hi-lo)
			}
		}
		if i%1000 == 0 {
			checkInvariants(t, s)
			checkIntDeltas(t, s, m.es)
			if s.big != nil && s.big.idx != nil {
				t.Fatalf("a self-keyed set built an index")
			}
			for k := 0; k < 50; k++ {
				probe := fmt.Sprint(v - r.IntN(20000))
				j := m.find(probe)
				sc, ok := s.Score([]byte(probe))
				rk, rok := s.Rank([]byte(probe), false)
				if ok != (j >= 0) || rok != ok || ok && (sc != m.es[j].score || rk != j) {
					t.Fatalf("Score/Rank(%s) = %v %v / %d %v, want index %d", probe, sc, ok, rk, rok, j)
				}
			}
		}
	}
	if s.Encoding() != EncodingSkiplist || s.big.idx != nil {
		t.Fatalf("want an index-less large set")
	}
	// ZINCRBY of an existing member breaks the pattern.
	mem := m.es[len(m.es)/2].member
	s.Add([]byte(mem), 0.5, AddIncr)
	m.add(mem, 0.5, AddIncr)
	if s.big.idx == nil {
		t.Fatalf("no index after a non-self-keyed update")
	}
	checkInvariants(t, s)
	s.Put([]byte("uuid"), 3)
	m.add("uuid", 3, 0)
	checkInvariants(t, s)
	got, _ := collect(func(v Visitor) int { return s.Range(0, -1, false, v) })
	if !sameEntries(got, m.es) {
		t.Fatalf("contents differ")
	}
	// Emptied, it is self-keyed again.
	s.DeleteRangeByRank(0, -1)
	if s.big.idx != nil {
		t.Fatalf("an empty set keeps its index")
	}
}

// timestamps is a self-keyed set of n millisecond timestamps, 3 ms apart.
func timestamps(n int) *Set {
	s := New(DefaultConfig())
	for i := range n {
		v := 1700000000000 + 3*i - n
		s.Put([]byte(fmt.Sprint(v)), float64(v))
	}
	return s
}

// intsOf is a set whose members are vs' integers, each at its own score.
func intsOf(vs ...float64) *Set {
	s := New(DefaultConfig())
	for _, v := range vs {
		s.Put([]byte(strconv.FormatInt(int64(v), 10)), v)
	}
	return s
}

// checkIntDeltas checks that AppendIntDeltas takes s exactly when it is
// SelfKeyed, and that its deltas then add up to es's members, in order,
// each with its score bit for bit.
func checkIntDeltas(t testing.TB, s *Set, es []modelEntry) {
	t.Helper()
	dst, ok := s.AppendIntDeltas(nil)
	if ok != s.SelfKeyed() {
		t.Fatalf("AppendIntDeltas = %v, SelfKeyed = %v", ok, s.SelfKeyed())
	}
	if !ok {
		return
	}
	var prev int64
	for i, e := range es {
		d, n := binary.Varint(dst)
		if n <= 0 {
			t.Fatalf("AppendIntDeltas: no varint for entry %d of %d", i, len(es))
		}
		dst, prev = dst[n:], prev+d
		if e.member != strconv.FormatInt(prev, 10) || math.Float64bits(e.score) != math.Float64bits(float64(prev)) {
			t.Fatalf("AppendIntDeltas: entry %d is %d, want %q %v", i, prev, e.member, e.score)
		}
	}
	if len(dst) != 0 {
		t.Fatalf("AppendIntDeltas: %d bytes after the last entry", len(dst))
	}
}

// intSet is a case of TestAppendIntDeltas: ok says whether the set is to
// be given as integers.
type intSet struct {
	name string
	s    *Set
	ok   bool
}

// intSets are its cases.
func intSets() []intSet {
	mixed := timestamps(10)
	mixed.Put([]byte("m"), 1)
	return []intSet{
		{"empty", New(DefaultConfig()), true},
		{"small window", timestamps(50), true},
		{"large window", timestamps(5000), true},
		{"negatives", intsOf(-5, -1, 0, 7), true},
		{"not self-keyed", mixed, false},
	}
}

// TestAppendIntDeltas: the varint deltas decode to Range's members, in
// Range's order, small sets and large, whose scores are exactly their
// integers, also when a score is stored as a float (past 2^47); a set that
// is not self-keyed is refused and dst is left as it was.
func TestAppendIntDeltas(t *testing.T) {
	large := timestamps(300)
	large.Put([]byte(strconv.Itoa(1<<50)), 1<<50)
	for _, tt := range append(intSets(),
		intSet{"negative zero, stored as 0 (normScore)", intsOf(math.Copysign(0, -1), 3), true},
		intSet{"past 2^47", intsOf(1, 1<<50), true},
		intSet{"large, past 2^47 at the end", large, true},
	) {
		t.Run(tt.name, func(t *testing.T) {
			dst, ok := tt.s.AppendIntDeltas([]byte("head"))
			if ok != tt.ok {
				t.Fatalf("AppendIntDeltas = %v, want %v", ok, tt.ok)
			}
			if !ok {
				if string(dst) != "head" {
					t.Fatalf("refused, but dst is %q", dst)
				}
				return
			}
			var got []string
			b, prev := dst[len("head"):], int64(0)
			for len(b) > 0 {
				d, n := binary.Varint(b)
				if n <= 0 {
					t.Fatalf("bad varint at %d", len(dst)-len(b))
				}
				b, prev = b[n:], prev+d
				got = append(got, fmt.Sprintf("%d=%x", prev, math.Float64bits(float64(prev))))
			}
			var want []string
			tt.s.Range(0, -1, false, func(m []byte, sc float64) bool {
				want = append(want, fmt.Sprintf("%s=%x", m, math.Float64bits(sc)))
				return true
			})
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("deltas decode to %v, Range gives %v", got, want)
			}
		})
	}
}
