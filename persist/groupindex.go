package persist

import "bytes"

// groupIndex finds a pending group's record of a key by the key's hash.
//
// It replaces a map[uint64]int32, which was a tenth of the group's cost
// under a write-heavy load (map hashing and probing, then clearing the map
// at every range delete and every commit). Here the hash already computed
// when the record was added picks the slot, the slot's tag (the hash's
// high bits) rejects almost every other key without touching the record,
// and a range delete costs nothing: it raises floor, and records below
// floor no longer count as found (a key rewritten after a range delete must
// be appended after it, not merged before it).
//
// Open addressing with linear probing, at most half full, so that probes
// stay short; a slot is 8 bytes.
type groupIndex struct {
	slots []islot
	// used counts slots holding a record, including records below floor:
	// their slots are reclaimed when the table grows.
	used  int
	floor int32
}

// islot is one slot: rec is the record's index plus one (0: empty), tag the
// high half of the key's hash.
type islot struct {
	tag uint32
	rec int32
}

const groupIndexMinSlots = 1 << 10

// find returns the index of g's record of key (hash h) at or above the
// floor, or the slot where it is to be added and -1.
func (x *groupIndex) find(g *records, key []byte, h uint64) (int32, int) {
	if x.slots == nil {
		x.slots = make([]islot, groupIndexMinSlots)
	}
	mask := len(x.slots) - 1
	tag := uint32(h >> 32)
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.rec == 0 {
			return -1, i
		}
		if r := s.rec - 1; s.tag == tag && r >= x.floor && bytes.Equal(g.key(g.recs[r]), key) {
			return r, i
		}
	}
}

// add records that g's record r (key hash h) is at slot i, as returned by
// a find that did not find the key.
func (x *groupIndex) add(g *records, i int, h uint64, r int32) {
	x.slots[i] = islot{uint32(h >> 32), r + 1}
	x.used++
	if 2*x.used > len(x.slots) {
		x.grow(g)
	}
}

// grow rebuilds the table, dropping records below the floor, at double the
// size if the live ones still fill more than a quarter of it. The records
// keep their full hashes, which place them again.
func (x *groupIndex) grow(g *records) {
	live := 0
	for _, s := range x.slots {
		if s.rec-1 >= x.floor {
			live++
		}
	}
	n := len(x.slots)
	if 4*live > n {
		n *= 2
	}
	old := x.slots
	x.slots, x.used = make([]islot, n), live
	mask := n - 1
	for _, s := range old {
		if s.rec-1 < x.floor {
			continue
		}
		i := int(g.recs[s.rec-1].h) & mask
		for x.slots[i].rec != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// barrier makes every record so far unfindable: g is about to hold a range
// delete at index r.
func (x *groupIndex) barrier(r int32) { x.floor = r + 1 }

// reset empties the index for a group starting over, keeping its table.
func (x *groupIndex) reset() {
	clear(x.slots)
	x.used, x.floor = 0, 0
}
