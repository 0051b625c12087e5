package keyspace

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/zsetlite"
)

// checkIndex fails unless ix holds exactly the keys of model, each found
// by get, with every invariant of keyIndex true.
func checkIndex(t *testing.T, ix *keyIndex, model map[string]*Entry) {
	t.Helper()
	if ix.len() != len(model) {
		t.Fatalf("len %d, model %d", ix.len(), len(model))
	}
	if len(ix.tags) != 0 && ix.n*5 > len(ix.tags)*4 {
		t.Fatalf("load %d/%d above 4/5", ix.n, len(ix.tags))
	}
	checkView(t, ix)
	mask := uint32(len(ix.tags) - 1)
	n := 0
	for i, e := range ix.slots {
		if (e == nil) != (ix.tags[i] == 0) {
			t.Fatalf("slot %d: tag %d, entry %v", i, ix.tags[i], e)
		}
		if e == nil {
			continue
		}
		n++
		if ix.tags[i] != tagOf(e.hash) {
			t.Fatalf("slot %d: tag %d, want %d", i, ix.tags[i], tagOf(e.hash))
		}
		// Every slot from the entry's home to it is occupied.
		for j := ix.home(e.hash); j != uint32(i); j = (j + 1) & mask {
			if ix.tags[j] == 0 {
				t.Fatalf("slot %d: gap at %d after home %d", i, j, ix.home(e.hash))
			}
		}
	}
	if n != ix.n {
		t.Fatalf("%d occupied slots, n = %d", n, ix.n)
	}
	for k, e := range model {
		if got := ix.getS(k); got != e {
			t.Fatalf("get %q = %p, want %p", k, got, e)
		}
	}
	seen := map[string]bool{}
	for k, e := range ix.all() {
		if model[k] != e || seen[k] {
			t.Fatalf("all yields %q (in model: %v, twice: %v)", k, model[k] == e, seen[k])
		}
		seen[k] = true
	}
}

// checkView fails unless the view prefetchHome reads is ix's table.
func checkView(t *testing.T, ix *keyIndex) {
	t.Helper()
	v := (*indexView)(ix.view)
	if len(ix.tags) == 0 {
		if v != nil {
			t.Fatalf("empty table, view of %d slots", len(v.tags))
		}
		return
	}
	if v == nil || len(v.tags) != len(ix.tags) || &v.tags[0] != &ix.tags[0] ||
		len(v.slots) != len(ix.slots) || &v.slots[0] != &ix.slots[0] || v.shift != ix.shift {
		t.Fatalf("the view is not the table")
	}
}

// TestKeyIndexSwapView: swap and reset leave each index's view its own
// table's.
func TestKeyIndexSwapView(t *testing.T) {
	var a, b keyIndex
	for i := range 100 {
		k := []byte("a" + strconv.Itoa(i))
		e, _ := allocEntry(keyHash(k), k, 0)
		a.insert(e)
	}
	checkView(t, &a)
	checkView(t, &b)
	a.swap(&b)
	if a.len() != 0 || b.len() != 100 {
		t.Fatalf("after swap: %d and %d keys", a.len(), b.len())
	}
	checkView(t, &a)
	checkView(t, &b)
	b.reset()
	checkView(t, &b)
	a.reserve(1000)
	checkView(t, &a)
}

// TestKeyIndex: inserts, deletes, growth, shrinking and long keys against
// a map, with every invariant checked after each step.
func TestKeyIndex(t *testing.T) {
	long := strings.Repeat("L", 300)
	tests := []struct {
		name string
		ops  []string // "+key" inserts, "-key" deletes, "compact"
	}{
		{"empty", nil},
		{"one", []string{"+a"}},
		{"insert delete", []string{"+a", "+b", "-a", "+c", "-b", "-c"}},
		{"delete absent", []string{"-x", "+a", "-x", "-a", "-a"}},
		{"grow", numbered("+k", 100)},
		{"grow and empty", append(numbered("+k", 100), numbered("-k", 100)...)},
		{"shrink", append(append(numbered("+k", 200), numbered("-k", 190)...), "compact")},
		{"compact empty", append(append(numbered("+k", 20), numbered("-k", 20)...), "compact", "+again")},
		{"long keys", []string{"+" + long, "+" + long + "2", "+short", "-" + long, "+" + long}},
		{"empty key", []string{"+", "+a", "-", "+"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ix keyIndex
			model := map[string]*Entry{}
			for _, op := range tc.ops {
				applyIndexOp(&ix, model, op)
				checkIndex(t, &ix, model)
			}
		})
	}
}

// numbered makes n operations prefix0, prefix1, ...
func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func applyIndexOp(ix *keyIndex, model map[string]*Entry, op string) {
	switch {
	case op == "compact":
		ix.compact()
	case op[0] == '+':
		k := op[1:]
		if model[k] != nil {
			return
		}
		e, _ := allocEntry(keyHash([]byte(k)), []byte(k), 0)
		ix.insert(e)
		model[k] = e
	case op[0] == '-':
		k := op[1:]
		if got := ix.removeS(k); got != model[k] {
			panic("remove " + k + " returned another entry")
		}
		delete(model, k)
	}
}

// TestKeyIndexCollisions: keys forced into one home slot form one run;
// deleting from its middle and its start keeps the rest findable, also
// when the run wraps past the end of the table.
func TestKeyIndexCollisions(t *testing.T) {
	for _, home := range []uint32{0, 3, 7} { // 7: the run wraps in a table of 8
		var ix keyIndex
		ix.resize(minIndexSize)
		model := map[string]*Entry{}
		for i := 0; i < 5; i++ {
			k := "c" + strconv.Itoa(i)
			e, _ := allocEntry(keyHash([]byte(k)), []byte(k), 0)
			e.hash = home<<ix.shift | uint32(i)<<1 // same home, different tags
			if i == 4 {
				e.hash = home << ix.shift // same tag too: only the key bytes differ
			}
			ix.place(e)
			ix.n++
			model[k] = e
		}
		findAll := func() {
			t.Helper()
			for k, e := range model {
				if i := ix.find(e.hash, []byte(k)); i < 0 || ix.slots[i] != e {
					t.Fatalf("home %d: %q not found", home, k)
				}
			}
		}
		findAll()
		for _, k := range []string{"c2", "c0", "c4", "c1", "c3"} {
			i := ix.find(model[k].hash, []byte(k))
			ix.removeAt(uint32(i))
			delete(model, k)
			findAll()
		}
		if ix.n != 0 || slices.ContainsFunc(ix.tags, func(t uint8) bool { return t != 0 }) {
			t.Fatalf("home %d: not empty after deleting all: %v", home, ix.tags)
		}
	}
}

// TestKeyIndexIterDelete: a loop over from() that deletes some of the
// entries it meets still meets every entry once, as expiry sampling needs.
func TestKeyIndexIterDelete(t *testing.T) {
	for _, start := range []uint64{0, 5, 1 << 40} {
		var ix keyIndex
		model := map[string]*Entry{}
		for _, op := range numbered("+k", 300) {
			applyIndexOp(&ix, model, op)
		}
		seen := map[string]int{}
		for k := range ix.from(start) {
			seen[k]++
			if len(k)%2 == 0 || k[len(k)-1]%3 == 0 {
				ix.removeS(k)
				delete(model, k)
			}
		}
		for _, k := range numbered("k", 300) {
			if seen[k] == 0 {
				t.Errorf("start %d: %q never visited", start, k)
			}
		}
		checkIndex(t, &ix, model)
	}
}

// FuzzKeyIndex runs random inserts, deletes and compactions against a map
// model. Each operation is two bytes: the op, and a key from a small space
// so that operations meet the same keys; a few keys are long.
func FuzzKeyIndex(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 1, 1, 0, 3, 2, 0})
	f.Add(binary.LittleEndian.AppendUint64(nil, 0x0102030405060708))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var ix keyIndex
		model := map[string]*Entry{}
		for i := 0; i+1 < len(ops); i += 2 {
			k := strconv.Itoa(int(ops[i+1]))
			if ops[i+1] > 250 {
				k = strings.Repeat(k, 40)
			}
			switch ops[i] % 8 {
			case 0, 1, 2, 3:
				applyIndexOp(&ix, model, "+"+k)
			case 4, 5, 6:
				applyIndexOp(&ix, model, "-"+k)
			case 7:
				ix.compact()
			}
		}
		checkIndex(t, &ix, model)
	})
}

// TestKeyIndexMoved: with a mark set, moved turns true exactly when an
// entry that sat at the mark or after it ends up before it (a deletion's
// shift), or the table is rebuilt: what a checkpoint's visit in parts
// needs to know to start over.
func TestKeyIndexMoved(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	crossings := 0
	for round := range 2000 {
		var ix keyIndex
		model := map[string]*Entry{}
		for _, op := range numbered("+k", 20+r.IntN(80)) {
			applyIndexOp(&ix, model, op)
		}
		ix.mark = r.IntN(len(ix.slots) + 1)
		ix.moved = false
		crossed := false
		for range 1 + r.IntN(5) {
			before := map[*Entry]int{}
			for i, e := range ix.slots {
				if e != nil {
					before[e] = i
				}
			}
			applyIndexOp(&ix, model, "-k"+strconv.Itoa(r.IntN(100)))
			for i, e := range ix.slots {
				if e != nil && before[e] >= ix.mark && i < ix.mark {
					crossed = true
				}
			}
		}
		if crossed {
			crossings++
		}
		if ix.moved != crossed {
			t.Fatalf("round %d: moved %v, an entry crossed mark %d: %v", round, ix.moved, ix.mark, crossed)
		}
	}
	if crossings == 0 {
		t.Fatal("no deletion shifted an entry across the mark: the test tests nothing")
	}
	for _, rebuild := range []func(*keyIndex){
		func(ix *keyIndex) { ix.resize(2 * len(ix.slots)) },
		func(ix *keyIndex) { ix.reset() },
	} {
		var ix keyIndex
		for _, op := range numbered("+k", 10) {
			applyIndexOp(&ix, map[string]*Entry{}, op)
		}
		ix.mark, ix.moved = 3, false
		rebuild(&ix)
		if !ix.moved || ix.mark != 3 {
			t.Fatalf("after a rebuild: moved %v, mark %d", ix.moved, ix.mark)
		}
	}
}

// TestKeyIndexScan: each scan call yields exactly the entries whose hash
// lies in [from, next), at least want of them unless it reached the end,
// and a sequence of calls with inserts, deletes, growth and shrinking
// between them yields every entry present throughout exactly once. Hashes
// are drawn in clusters, some at the top of the hash space, so that runs
// are long and wrap past the end of the table.
func TestKeyIndexScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	hashOf := func() uint32 {
		switch r.IntN(4) {
		case 0:
			return r.Uint32()
		case 1:
			return math.MaxUint32 - uint32(r.IntN(1<<12)) // the last homes: runs wrap
		case 2:
			return uint32(r.IntN(1 << 10)) // the first homes
		}
		return 1<<31 + uint32(r.IntN(1<<16))
	}
	wrapped := 0
	for round := range 300 {
		var ix keyIndex
		live := map[*Entry]bool{}
		next := 0
		add := func() {
			k := "k" + strconv.Itoa(next)
			next++
			e, _ := allocEntry(0, []byte(k), 0)
			e.hash = hashOf()
			ix.insert(e)
			live[e] = true
		}
		del := func() {
			for e := range live {
				ix.removeAt(uint32(ix.find(e.hash, []byte(e.Key()))))
				delete(live, e)
				return
			}
		}
		for range r.IntN(400) {
			add()
		}
		throughout := map[*Entry]bool{}
		for e := range live {
			throughout[e] = true
		}
		seen := map[*Entry]int{}
		from := uint64(0)
		for calls := 0; from < hashEnd; calls++ {
			if calls > 10000 {
				t.Fatalf("round %d: scan does not end", round)
			}
			for i, e := range ix.slots {
				if e != nil && int(ix.home(e.hash)) > i {
					wrapped++
				}
			}
			want := 1 + r.IntN(50)
			got := map[*Entry]bool{}
			n := ix.scan(from, want, func(e *Entry) {
				if got[e] {
					t.Fatalf("round %d: %q yielded twice in one call", round, e.Key())
				}
				got[e] = true
				seen[e]++
			})
			if n <= from {
				t.Fatalf("round %d: next %d not past from %d", round, n, from)
			}
			if n < hashEnd && len(got) < want {
				t.Fatalf("round %d: %d entries before %d, want %d", round, len(got), n, want)
			}
			for e := range live {
				if in := uint64(e.hash) >= from && uint64(e.hash) < n; in != got[e] {
					t.Fatalf("round %d: hash %x in [%x, %x): %v, yielded: %v", round, e.hash, from, n, in, got[e])
				}
			}
			from = n
			// Between the calls: keys come and go, the table grows and shrinks.
			switch r.IntN(4) {
			case 0:
				for range r.IntN(300) {
					add()
				}
			case 1:
				for range r.IntN(len(live) + 1) {
					del()
				}
				ix.compact()
			default:
				for range r.IntN(5) {
					add()
					del()
				}
			}
			for e := range throughout {
				if !live[e] {
					delete(throughout, e)
				}
			}
		}
		for e := range throughout {
			if seen[e] != 1 {
				t.Fatalf("round %d: %q (hash %x) present throughout, yielded %d times", round, e.Key(), e.hash, seen[e])
			}
		}
	}
	if wrapped == 0 {
		t.Fatal("no run wrapped past the end of a table: the test misses that case")
	}
}

// TestProbeHint: the hint's probe finds the slot of a present key, and
// nothing where the run at a key's home has no entry of its tag.
func TestProbeHint(t *testing.T) {
	var ix keyIndex
	if v := (*indexView)(ix.view); v != nil {
		t.Fatal("an empty index has a view")
	}
	ix.prefetchEntry(12345) // no table: nothing to do, no panic
	ix.prefetchValue(12345)
	present := map[string]*Entry{}
	for i := range 1000 {
		k := []byte("k" + strconv.Itoa(i))
		e, _ := allocEntry(keyHash(k), k, 0)
		ix.insert(e)
		present[string(k)] = e
	}
	v := (*indexView)(ix.view)
	hits := 0
	for k, e := range present {
		i := v.probeHint(e.hash)
		if i >= 0 && ix.slots[i] == e {
			hits++
		} else if i >= 0 && tagOf(ix.slots[i].hash) != tagOf(e.hash) {
			t.Fatalf("%q: slot %d holds another tag", k, i)
		}
	}
	// A run longer than hintProbes, or an earlier key of the same tag,
	// may hide a key: rare at a load of at most 4/5.
	if hits < len(present)*95/100 {
		t.Errorf("the hint found %d of %d present keys", hits, len(present))
	}
	for i := range 1000 {
		k := []byte("absent" + strconv.Itoa(i))
		h := keyHash(k)
		if j := v.probeHint(h); j >= 0 && tagOf(ix.slots[j].hash) != tagOf(h) {
			t.Fatalf("%q: slot %d holds another tag", k, j)
		}
	}
}

// TestZSetStartsWithSet: prefetchPacked reads a ZSet as its Set.
func TestZSetStartsWithSet(t *testing.T) {
	if zsetFirst != 0 {
		t.Fatalf("a ZSet's Set is at offset %d", zsetFirst)
	}
}

// TestPrefetchRacesWriters: the steps after Hint read the table and the
// entries without the shard's lock while a writer holding it inserts,
// deletes, resizes and changes values; they must not fault, and under
// -race must not be reported (they are not instrumented).
func TestPrefetchRacesWriters(t *testing.T) {
	ks := NewKeyspace(1, 4)
	keys := make([][]byte, 200)
	for i := range keys {
		keys[i] = []byte("key:" + strconv.Itoa(i))
	}
	var l LockSet
	l.AddDB(ks, 0)
	l.Lock(false)
	defer l.Unlock()
	x := new(Tx)
	x.Begin(ks, new(Effects), 0, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			for _, k := range keys {
				h := ks.Hint(0, k)
				h.PrefetchEntry()
				h.PrefetchValue()
				h.PrefetchInside()
			}
		}
	}()
	rng := rand.New(rand.NewPCG(3, 4))
	for {
		select {
		case <-done:
			return
		default:
		}
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(4) {
		case 0:
			x.SetString(k, []byte("a value long enough to be stored apart from its entry"), 0)
		case 3:
			z := NewZSet(zsetlite.DefaultConfig())
			for j := range rng.IntN(200) {
				z.Put([]byte(strconv.Itoa(j)), float64(j))
			}
			x.SetObject(k, z, 0)
		case 1:
			x.SetInt(k, int64(rng.IntN(100)), 0)
		default:
			x.Remove(k)
		}
	}
}

// TestKnowHash: a Tx uses the hash it was told for the very slice it was
// told about, and hashes any other slice, even of the same bytes; a
// known hash serves as a computed one.
func TestKnowHash(t *testing.T) {
	for _, bySlot := range []bool{false, true} {
		ks := NewKeyspace(1, 8)
		if bySlot {
			ks.PlaceBySlot()
		}
		var l LockSet
		l.AddDB(ks, 0)
		l.Lock(false)
		x := new(Tx)
		x.Begin(ks, nil, 0, 1000)
		buf := []byte("xkey:1")
		key := buf[1:]
		x.KnowHash(key, KeyHash(key))
		x.SetInt(key, 7, 0)
		if e := x.Lookup([]byte("key:1")); e == nil {
			t.Fatalf("bySlot %v: a key stored with its known hash is not found by its bytes", bySlot)
		}
		x.KnowHash(nil, 0)
		if e := x.Lookup(key); e == nil {
			t.Fatalf("bySlot %v: not found by the slice once forgotten", bySlot)
		}
		// A wrong hash for key: only key itself is looked up with it.
		x.KnowHash(key, KeyHash(key)+1<<40)
		if e := x.Lookup(key); e != nil {
			t.Errorf("bySlot %v: the known hash was not used for the known slice", bySlot)
		}
		if e := x.Lookup([]byte("key:1")); e == nil {
			t.Errorf("bySlot %v: the known hash was used for a copy", bySlot)
		}
		if e := x.Lookup(buf[:5]); e != nil {
			t.Errorf("bySlot %v: the known hash was used for another slice of the same memory", bySlot)
		}
		x.Begin(ks, nil, 0, 1000)
		if e := x.Lookup(key); e == nil {
			t.Errorf("bySlot %v: Begin kept the known hash", bySlot)
		}
		l.Unlock()
	}
}
