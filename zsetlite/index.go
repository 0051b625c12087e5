package zsetlite

import (
	"hash/maphash"
	"unsafe"
)

// index answers "what is this member's score?" for a large set whose
// members are not all self-keyed, without holding the members: it is an
// open-addressing table (linear probing) of (tag, score) pairs, where tag
// is 32 bits of the member's hash. A lookup hashes the member, and for each
// pair with its tag asks the B+tree whether (score, member) is there; the
// tree holds the only copy of every member. That is 12 bytes a slot where a
// map[string]float64 would take 24 plus a string of its own.
//
// The table is a multiset of pairs, one per member. Two members with the
// same tag and the same score have equal pairs, so whichever of the two
// pairs an update or a removal takes, the table stays right: removal needs
// only the tag and the score, never the tree, which lets range deletes
// empty it while the tree is being cut. Scores are matched by their bits,
// so that -0 and 0 (equal as numbers) stay apart.
//
// Deletion shifts later entries of the probe run back (no tombstones), so
// probe runs stay short under the window pattern's constant churn. The
// table doubles past 7/8 full and halves below 1/8.
type index struct {
	tags   []uint32 // 0: an empty slot
	scores []float64
	n      int
}

// minIndexSlots is the smallest table: large sets start past 128 members.
const minIndexSlots = 16

// hashSeed is random per process, so that clients cannot pick members that
// collide and turn lookups into walks.
var hashSeed = maphash.MakeSeed()

// memberHash hashes a member for the index. It is a variable so that tests
// can force collisions.
var memberHash = func(m []byte) uint32 {
	return uint32(maphash.Bytes(hashSeed, m))
}

// tagOf is member's tag: its hash, never 0.
func tagOf(m []byte) uint32 {
	if h := memberHash(m); h != 0 {
		return h
	}
	return 1
}

// newIndex returns a table sized for n members.
func newIndex(n int) *index {
	x := &index{}
	x.resize(slotsFor(n))
	return x
}

// slotsFor is the table size that holds n pairs at most 7/8 full.
func slotsFor(n int) int {
	s := minIndexSlots
	for s*7/8 < n {
		s *= 2
	}
	return s
}

func (x *index) resize(slots int) {
	tags, scores := x.tags, x.scores
	x.tags, x.scores = make([]uint32, slots), make([]float64, slots)
	for i, t := range tags {
		if t != 0 {
			x.place(t, scores[i])
		}
	}
}

// place puts a pair in the first free slot of its probe run.
func (x *index) place(tag uint32, score float64) {
	mask := uint32(len(x.tags) - 1)
	i := tag & mask
	for x.tags[i] != 0 {
		i = (i + 1) & mask
	}
	x.tags[i], x.scores[i] = tag, score
}

func (x *index) add(tag uint32, score float64) {
	if (x.n+1)*8 > len(x.tags)*7 {
		x.resize(len(x.tags) * 2)
	}
	x.place(tag, score)
	x.n++
}

// slot returns the slot of a pair equal to (tag, score), or -1.
func (x *index) slot(tag uint32, score float64) int {
	mask := uint32(len(x.tags) - 1)
	for i := tag & mask; x.tags[i] != 0; i = (i + 1) & mask {
		if x.tags[i] == tag && sameBits(x.scores[i], score) {
			return int(i)
		}
	}
	return -1
}

func sameBits(a, b float64) bool {
	return a == b && (a != 0 || 1/a == 1/b)
}

// set changes the score of one (tag, old) pair.
func (x *index) set(tag uint32, old, score float64) {
	if i := x.slot(tag, old); i >= 0 {
		x.scores[i] = score
	}
}

// remove takes out one (tag, score) pair.
func (x *index) remove(tag uint32, score float64) {
	if i := x.slot(tag, score); i >= 0 {
		x.removeSlot(i)
	}
}

// removeSlot takes out the pair in slot i.
func (x *index) removeSlot(i int) {
	x.n--
	mask := len(x.tags) - 1
	// Backward shift: move each later entry of the run whose home is not
	// cyclically in (i, j] into the hole.
	for j := (i + 1) & mask; x.tags[j] != 0; j = (j + 1) & mask {
		home := int(x.tags[j]) & mask
		if i <= j && i < home && home <= j || i > j && (i < home || home <= j) {
			continue
		}
		x.tags[i], x.scores[i] = x.tags[j], x.scores[j]
		i = j
	}
	x.tags[i] = 0
	x.shrink()
}

// shrink halves the table while it is less than 1/8 full.
func (x *index) shrink() {
	s := len(x.tags)
	for s > minIndexSlots && x.n*8 < s {
		s /= 2
	}
	if s != len(x.tags) {
		x.resize(s)
	}
}

// memory is the heap the table holds.
func (x *index) memory() int {
	return allocSize(int(unsafe.Sizeof(*x))) + allocSize(len(x.tags)*4) + allocSize(len(x.scores)*8)
}
