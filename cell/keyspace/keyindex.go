package keyspace

import (
	"hash/maphash"
	"iter"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/cellserver/cellserver/internal/prefetch"
	"github.com/cellserver/cellserver/zsetlite"
)

// keyIndex is a shard's key -> *Entry index: open addressing with linear
// probing over a power-of-two table, in place of a map[string]*Entry.
//
// Why not a Go map: the map stores a 16-byte string header beside each
// 8-byte value (about 38 bytes per key at its average fill) and hashes
// the key a second time after shardOf did. Here a slot is one pointer
// plus one tag byte (about 15 bytes per key at the average fill), and the
// key bytes live in the Entry's own allocation (entry_alloc.go), which
// also keeps the key's 32-bit hash. A lookup reads the tag bytes of the
// probe run (adjacent, usually one cache line), and dereferences only the
// slots whose tag matches: one entry miss per hit, almost none per miss.
//
// Invariants: tags[i] == 0 exactly when slots[i] == nil; a present key
// sits in the run of occupied slots that starts at its home slot, so a
// probe stops at the first empty slot. Deletion shifts the rest of the
// run back (no tombstones), which keeps that true. The load stays at most
// 4/5: the table doubles before it would pass it.
//
// A key's home is the top bits of its hash (hash >> shift), not the low
// ones: the table is then in hash order but for the few keys a run
// displaced, and the keys of a range of hashes are found by walking the
// slots of that range, which is what SCAN's cursor needs (scan below).
// The tag is the hash's low byte, the part the home does not use.
type keyIndex struct {
	tags  []uint8
	slots []*Entry
	n     int
	// shift is 32 - log2(len(slots)): a hash's home slot is hash>>shift.
	shift uint8
	// A checkpoint visits the table in slot order a part at a time, and
	// unlocks the shard between parts (checkpoint.go). mark is the slot
	// it stopped at. moved records that an entry escaped the visit: a
	// deletion shifted one from mark or after it to before it, or the
	// table was rebuilt.
	mark  int
	moved bool
	// view is the table as prefetchHome sees it (an *indexView, nil
	// while empty): published atomically whenever tags, slots or shift
	// change, since prefetchHome runs without the shard's lock.
	view unsafe.Pointer
}

// indexView is the part of a keyIndex's table that prefetchHome reads.
// The slices are never read through it, only indexed for an address.
type indexView struct {
	tags  []uint8
	slots []*Entry
	shift uint8
}

// publish makes the current table what prefetchHome sees.
func (ix *keyIndex) publish() {
	var v *indexView
	if len(ix.tags) != 0 {
		v = &indexView{ix.tags, ix.slots, ix.shift}
	}
	atomic.StorePointer(&ix.view, unsafe.Pointer(v))
}

// prefetchHome asks the CPU for the tag and slot lines where a probe for
// hash h starts (internal/prefetch), without the shard's lock and without
// waiting. A pipeline's requests are all in the read buffer before the
// first runs: asked for then, the lines of the later ones arrive while
// the earlier ones run, instead of each lookup waiting for its own
// (BenchmarkKeyIndexGetBatch). A table replaced meanwhile only makes the
// hint useless.
func (ix *keyIndex) prefetchHome(h uint32) {
	v := (*indexView)(atomic.LoadPointer(&ix.view))
	if v == nil {
		return
	}
	i := h >> v.shift
	prefetch.Line(&v.tags[i])
	prefetch.Line((*byte)(unsafe.Pointer(&v.slots[i])))
}

// probeHint is the slot of the first entry whose tag matches hash h's
// in the run at h's home, looking at most hintProbes slots, or -1; read
// without the shard's lock, so it may be stale or another key's: good for
// a prefetch only. It must not be instrumented by the race detector: a
// writer may change the table meanwhile, which is what makes it a hint.
//
//go:norace
func (v *indexView) probeHint(h uint32) int {
	mask := uint32(len(v.tags) - 1)
	t := tagOf(h)
	i := h >> v.shift
	for range hintProbes {
		switch v.tags[i] {
		case 0:
			return -1
		case t:
			return int(i)
		}
		i = (i + 1) & mask
	}
	return -1
}

// hintProbes bounds probeHint's walk: runs are short at a load of 4/5.
const hintProbes = 4

// prefetchEntry is the second step of prefetchHome, once its lines have
// had time to arrive: it asks for the line of the entry the probe for h
// will most likely find (its header and the first bytes of its key).
//
//go:norace
func (ix *keyIndex) prefetchEntry(h uint32) {
	v := (*indexView)(atomic.LoadPointer(&ix.view))
	if v == nil {
		return
	}
	if i := v.probeHint(h); i >= 0 {
		if e := v.slots[i]; e != nil {
			prefetch.Line((*byte)(unsafe.Pointer(e)))
			// An entry is not aligned to a line: one of 48 bytes (a
			// key of up to 16) starts a third of the time so far into
			// its line that its hash or key is on the next.
			prefetch.Addr(uintptr(unsafe.Pointer(e)) + entryPrefetchEnd)
		}
	}
}

// entryPrefetchEnd is the last byte of an entry that prefetchEntry asks
// for: the header and the first 16 bytes of the key.
const entryPrefetchEnd = unsafe.Sizeof(Entry{}) + 15

// prefetchValue is the third step, once the entry's line has arrived:
// it asks for the first line of the entry's value (a string's bytes, an
// aggregate's struct). An entry that changes meanwhile gives the line of
// its old value or of its new one, both still allocated (the value is
// read through the entry, never the reverse).
//
// It reports whether the entry is a sorted set, which the fourth step
// looks inside: for any other, that step would probe for nothing.
//
//go:norace
func (ix *keyIndex) prefetchValue(h uint32) bool {
	v := (*indexView)(atomic.LoadPointer(&ix.view))
	if v == nil {
		return false
	}
	if i := v.probeHint(h); i >= 0 {
		if e := v.slots[i]; e != nil && e.hash == h && e.kind != valInt && e.ptr != nil {
			prefetch.Line((*byte)(e.ptr))
			return e.kind == valZSet
		}
	}
	return false
}

// prefetchPacked is the fourth step, once the value's line has arrived:
// for a sorted set in the packed encoding, it asks for the first and
// the last line of its entries, which ZADD at the tail and a trim from
// the head read (zsetlite.PackedEnds, which reads a set that may be
// changing, or an entry's old value of another kind, without trusting
// it). A ZSet starts with its zsetlite.Set (zsetFirst).
//
//go:norace
func (ix *keyIndex) prefetchPacked(h uint32) {
	v := (*indexView)(atomic.LoadPointer(&ix.view))
	if v == nil {
		return
	}
	if i := v.probeHint(h); i >= 0 {
		if e := v.slots[i]; e != nil && e.hash == h && e.kind == valZSet {
			first, last := zsetlite.PackedEnds(e.ptr)
			if first != 0 {
				prefetch.Addr(first)
				prefetch.Addr(last)
			}
		}
	}
}

// zsetFirst is where a ZSet's zsetlite.Set is: at its start, which
// prefetchPacked relies on.
const zsetFirst = unsafe.Offsetof(ZSet{}.Set)

// keySeed seeds every key hash: the shard a key belongs to (its low bits,
// outside cluster mode) and the hash its Entry keeps for the index and
// SCAN's cursor (its top 32 bits), so that one hash of the key serves a
// whole lookup. One seed for the process.
var keySeed = maphash.MakeSeed()

// minIndexSize is the smallest table an index with keys has.
const minIndexSize = 8

// keyHash64 is the key's hash, of which the others are parts.
func keyHash64(key []byte) uint64 { return maphash.Bytes(keySeed, key) }

// keyHash is the hash an Entry of key stores.
func keyHash(key []byte) uint32 { return indexHash(keyHash64(key)) }

// indexHash is the part of a keyHash64 the index uses.
func indexHash(h uint64) uint32 { return uint32(h >> 32) }

// tagOf is the tag byte of hash: never 0, which marks an empty slot.
func tagOf(h uint32) uint8 { return uint8(h) | 1 }

// home is the slot where a probe for hash starts. The table must not be
// empty.
func (ix *keyIndex) home(h uint32) uint32 { return h >> ix.shift }

// len is the number of keys.
func (ix *keyIndex) len() int { return ix.n }

// get returns key's entry, or nil.
func (ix *keyIndex) get(key []byte) *Entry {
	if ix.n == 0 {
		return nil
	}
	return ix.getH(keyHash(key), key)
}

// getH is get for a key whose keyHash is h.
func (ix *keyIndex) getH(h uint32, key []byte) *Entry {
	if ix.n == 0 {
		return nil
	}
	if i := ix.find(h, key); i >= 0 {
		return ix.slots[i]
	}
	return nil
}

// getS is get for a string key, without copying it.
func (ix *keyIndex) getS(key string) *Entry {
	return ix.get(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// find returns the slot of key with hash h, or -1.
func (ix *keyIndex) find(h uint32, key []byte) int {
	mask := uint32(len(ix.tags) - 1)
	t := tagOf(h)
	for i := ix.home(h); ; i = (i + 1) & mask {
		switch ix.tags[i] {
		case 0:
			return -1
		case t:
			if e := ix.slots[i]; e.hash == h && e.keyIs(key) {
				return int(i)
			}
		}
	}
}

// insert adds e, whose key must not be present; e.hash must be its key's.
func (ix *keyIndex) insert(e *Entry) {
	if (ix.n+1)*5 > len(ix.tags)*4 {
		ix.resize(max(minIndexSize, 2*len(ix.tags)))
	}
	ix.place(e)
	ix.n++
}

// place puts e in the first free slot of its run.
func (ix *keyIndex) place(e *Entry) {
	mask := uint32(len(ix.tags) - 1)
	i := ix.home(e.hash)
	for ix.tags[i] != 0 {
		i = (i + 1) & mask
	}
	ix.tags[i], ix.slots[i] = tagOf(e.hash), e
}

// remove deletes key and returns its entry, or nil if it was absent.
func (ix *keyIndex) remove(key []byte) *Entry {
	if ix.n == 0 {
		return nil
	}
	i := ix.find(keyHash(key), key)
	if i < 0 {
		return nil
	}
	e := ix.slots[i]
	ix.removeAt(uint32(i))
	return e
}

// removeS is remove for a string key.
func (ix *keyIndex) removeS(key string) *Entry {
	return ix.remove(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// removeAt empties slot i and shifts back the entries after it that may
// move closer to their home slot, so every run stays unbroken.
func (ix *keyIndex) removeAt(i uint32) {
	mask := uint32(len(ix.tags) - 1)
	hole := i
	for j := (i + 1) & mask; ix.tags[j] != 0; j = (j + 1) & mask {
		home := ix.home(ix.slots[j].hash)
		// j's entry may fill the hole unless its home lies in (hole, j]
		// cyclically: then it would sit before its home.
		if (j-home)&mask >= (j-hole)&mask {
			ix.tags[hole], ix.slots[hole] = ix.tags[j], ix.slots[j]
			if int(j) >= ix.mark && int(hole) < ix.mark {
				ix.moved = true
			}
			hole = j
		}
	}
	ix.tags[hole], ix.slots[hole] = 0, nil
	ix.n--
}

// resize rebuilds the table with size slots (a power of two that holds n).
func (ix *keyIndex) resize(size int) {
	old := ix.slots
	ix.tags, ix.slots = make([]uint8, size), make([]*Entry, size)
	ix.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	ix.moved = true
	for _, e := range old {
		if e != nil {
			ix.place(e)
		}
	}
	ix.publish()
}

// reserve sizes the table for n keys in all, so that loading them does
// not grow it step by step.
func (ix *keyIndex) reserve(n int) {
	size := minIndexSize
	for size*4 < n*5 {
		size <<= 1
	}
	if size > len(ix.tags) {
		ix.resize(size)
	}
}

// compact shrinks the table to fit its keys once it is mostly empty, so
// that a burst of keys that expired gives its memory back.
func (ix *keyIndex) compact() {
	if ix.n == 0 {
		ix.reset()
		return
	}
	if len(ix.tags) > minIndexSize && ix.n*8 < len(ix.tags) {
		size := minIndexSize
		for size*4 < ix.n*5*2 { // room to grow by half before the next doubling
			size <<= 1
		}
		if size < len(ix.tags) {
			ix.resize(size)
		}
	}
}

// reset empties the index and frees its table.
func (ix *keyIndex) reset() {
	ix.tags, ix.slots, ix.n, ix.shift, ix.moved = nil, nil, 0, 0, true
	ix.publish()
}

// all yields every key and entry in slot order.
func (ix *keyIndex) all() iter.Seq2[string, *Entry] { return ix.from(0) }

// from yields every key and entry in slot order starting at slot
// start % size, wrapping around: a random start gives a random sample.
// The loop body may delete the entry it is given (and only that one):
// the entry shifted into its slot is visited next, so none is skipped,
// though one shifted across the start may be seen twice.
func (ix *keyIndex) from(start uint64) iter.Seq2[string, *Entry] {
	return func(yield func(string, *Entry) bool) {
		size := len(ix.slots)
		if ix.n == 0 {
			return
		}
		i := int(start % uint64(size))
		for steps := 0; steps < size; {
			e := ix.slots[i]
			if e == nil {
				i, steps = (i+1)&(size-1), steps+1
				continue
			}
			if !yield(e.Key(), e) {
				return
			}
			if ix.slots[i] == e || len(ix.slots) != size {
				if len(ix.slots) != size {
					return // the body grew or shrank the table: stop
				}
				i, steps = (i+1)&(size-1), steps+1
			}
		}
	}
}

// hashEnd is one past the largest key hash: the end of every scan.
const hashEnd = 1 << 32

// scan calls yield with every entry whose hash is in [from, next), and
// returns next: past at least want entries, or hashEnd once it has met
// every entry at or above from. It looks at about want slots whatever
// the table's size. yield must not change the index.
//
// Why it meets every entry of its range: an entry's home is the top bits
// of its hash, so the entries with a hash in [from, i<<shift) are those
// with a home in [home(from), i), and each sits between its home and the
// first empty slot after it (a run has no gap). A walk from home(from)
// that stops at an empty slot i therefore meets all of them. On the way
// it also meets entries of lower hashes that a run pushed past
// home(from) (left out by their hash), and entries of the last homes
// that a run wrapped around to the first slots (left out where they sit,
// met by the walk that ends the table).
//
// Because next is a hash, not a slot, it means the same after the table
// grows, shrinks or shifts entries back: in a sequence of calls, each
// from the last one's next, every entry present for the whole sequence is
// yielded exactly once, whatever is inserted or deleted between the calls.
// Redis's reverse-binary cursor gives "at least once" for the same reason
// (a position that means the same set of keys in any table size).
func (ix *keyIndex) scan(from uint64, want int, yield func(*Entry)) (next uint64) {
	if ix.n == 0 || from >= hashEnd {
		return hashEnd
	}
	size, n := len(ix.slots), 0
	for i := int(from >> ix.shift); i < size; i++ {
		e := ix.slots[i]
		if e == nil {
			if n >= want {
				return uint64(i) << ix.shift
			}
			continue
		}
		if uint64(e.hash) >= from && int(ix.home(e.hash)) <= i {
			yield(e)
			n++
		}
	}
	// The run that wraps past the last slot: its entries whose home is
	// after their slot. The load bound leaves an empty slot to stop at.
	for i := 0; ix.slots[i] != nil; i++ {
		if e := ix.slots[i]; int(ix.home(e.hash)) > i && uint64(e.hash) >= from {
			yield(e)
		}
	}
	return hashEnd
}
