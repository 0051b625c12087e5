package keyspace

import (
	"slices"
	"strconv"

	"github.com/cellserver/cellserver/resp"
)

// Set is the value of a set key, in one of three forms.
//
// An intset (Redis's intset encoding): every member is the canonical
// decimal text of an int64 (what Redis's string2ll accepts) and there are
// at most set-max-intset-entries of them; the set is then a sorted slice
// of int64, eight bytes a member, and SMEMBERS lists them in ascending
// order as Redis does.
//
// A small set: members in one slice of strings, searched linearly, while
// there are at most setMaxSmallEntries members of at most setMaxSmallValue
// bytes each; no index to pay for.
//
// A table: the same slice plus an index from member to position; a delete
// moves the last member into the hole.
//
// Redis 7.0 has only intset and hashtable, so OBJECT ENCODING reports
// "hashtable" for the small form too. A set never converts back, as in
// Redis. A Set is never empty while it is stored in the keyspace.
type Set struct {
	ints    []int64
	members []string
	index   map[string]int
	isInts  bool
}

// The small form's limits, those Redis 7.2 gives its listpack sets
// (set-max-listpack-entries, set-max-listpack-value): past them a linear
// search costs more than the index saves.
const (
	setMaxSmallEntries = 128
	setMaxSmallValue   = 64
)

// SetMaxIntsetEntries is Redis 7.0's default set-max-intset-entries.
const SetMaxIntsetEntries = 512

// setMaxIntsLoaded is the intset limit of sets read back from the store,
// which holds members, not encodings.
const setMaxIntsLoaded = SetMaxIntsetEntries

// NewSet returns an empty set in the intset form, which the first member
// that is not an integer converts (Redis's setTypeCreate picks by the first
// member: the same thing).
func NewSet() *Set { return &Set{isInts: true} }

// TypeName is the TYPE of a set key.
func (s *Set) TypeName() string { return "set" }

// Encoding is what OBJECT ENCODING reports, as Redis 7.0 does.
func (s *Set) Encoding() string {
	if s.isInts {
		return "intset"
	}
	return "hashtable"
}

// Len is the number of members.
func (s *Set) Len() int {
	if s.isInts {
		return len(s.ints)
	}
	return len(s.members)
}

// IsIntset reports whether the set is in the intset form.
func (s *Set) IsIntset() bool { return s.isInts }

func (s *Set) findInt(v int64) (int, bool) { return slices.BinarySearch(s.ints, v) }

func (s *Set) find(m []byte) int {
	if s.index != nil {
		if i, ok := s.index[string(m)]; ok {
			return i
		}
		return -1
	}
	for i := range s.members {
		if s.members[i] == string(m) {
			return i
		}
	}
	return -1
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.isInts {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := s.findInt(v)
		return found
	}
	return s.find(m) >= 0
}

// Add adds m and reports whether it is new. maxInts is
// set-max-intset-entries: an intset that would grow past it converts.
func (s *Set) Add(m []byte, maxInts int) bool {
	if s.isInts {
		v, ok := resp.ParseInt(m)
		if ok {
			i, found := s.findInt(v)
			if found {
				return false
			}
			if len(s.ints) == cap(s.ints) {
				// A quarter more, not append's double: a small intset
				// then wastes a few words, not half its array.
				grown := make([]int64, len(s.ints), len(s.ints)+max(1, len(s.ints)/4))
				copy(grown, s.ints)
				s.ints = grown
			}
			s.ints = slices.Insert(s.ints, i, v)
			if len(s.ints) > maxInts {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	if s.find(m) >= 0 {
		return false
	}
	s.members = append(s.members, string(m))
	switch {
	case s.index != nil:
		s.index[s.members[len(s.members)-1]] = len(s.members) - 1
	case len(s.members) > setMaxSmallEntries || len(m) > setMaxSmallValue:
		s.makeIndex()
	}
	return true
}

// Remove deletes m and reports whether it was a member.
func (s *Set) Remove(m []byte) bool {
	if s.isInts {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		i, found := s.findInt(v)
		if found {
			s.ints = slices.Delete(s.ints, i, i+1)
		}
		return found
	}
	i := s.find(m)
	if i < 0 {
		return false
	}
	s.removeAt(i)
	return true
}

// RemoveAt deletes the i-th member in At's order.
func (s *Set) RemoveAt(i int) {
	if s.isInts {
		s.ints = slices.Delete(s.ints, i, i+1)
		return
	}
	s.removeAt(i)
}

func (s *Set) removeAt(i int) {
	last := len(s.members) - 1
	if s.index != nil {
		delete(s.index, s.members[i])
	}
	if i != last {
		s.members[i] = s.members[last]
		if s.index != nil {
			s.index[s.members[i]] = i
		}
	}
	s.members[last] = ""
	s.members = s.members[:last]
}

// convert leaves the intset form for the string forms.
func (s *Set) convert() {
	s.members = make([]string, len(s.ints), max(len(s.ints), 4))
	for i, v := range s.ints {
		s.members[i] = strconv.FormatInt(v, 10)
	}
	s.ints, s.isInts = nil, false
	if len(s.members) > setMaxSmallEntries {
		s.makeIndex()
	}
}

// ToIntset turns a set of another form back into an intset when its
// members are all integers (as Add accepts them) and at most maxInts, and
// reports whether it did. SPOP needs it: where Redis 7.0 pops most of a
// set (spopWithCountCommand's third case) it builds the members that stay
// into a new set, which setTypeCreate makes an intset when they allow.
func (s *Set) ToIntset(maxInts int) bool {
	if s.isInts || len(s.members) > maxInts {
		return false
	}
	ints := make([]int64, 0, len(s.members))
	for _, m := range s.members {
		v, ok := resp.ParseInt([]byte(m))
		if !ok {
			return false
		}
		ints = append(ints, v)
	}
	slices.Sort(ints)
	s.ints, s.members, s.index, s.isInts = ints, nil, nil, true
	return true
}

func (s *Set) makeIndex() {
	s.index = make(map[string]int, len(s.members))
	for i, m := range s.members {
		s.index[m] = i
	}
}

// AppendAt appends the i-th member, 0 <= i < Len(), to dst: in ascending
// order for an intset, in a stable order otherwise.
func (s *Set) AppendAt(dst []byte, i int) []byte {
	if s.isInts {
		return strconv.AppendInt(dst, s.ints[i], 10)
	}
	return append(dst, s.members[i]...)
}

// At returns the i-th member as AppendAt orders them.
func (s *Set) At(i int) string {
	if s.isInts {
		return strconv.FormatInt(s.ints[i], 10)
	}
	return s.members[i]
}

// Clone returns a copy of s (for SINTERSTORE and the like, whose
// destination may be one of the sources).
func (s *Set) Clone() *Set {
	c := &Set{isInts: s.isInts, ints: slices.Clone(s.ints), members: slices.Clone(s.members)}
	if s.index != nil {
		c.makeIndex()
	}
	return c
}

// MemoryBytes estimates the set's heap bytes for MEMORY USAGE and maxmemory.
func (s *Set) MemoryBytes() int {
	if s.isInts {
		return 48 + 8*cap(s.ints)
	}
	n := 48 + 16*cap(s.members)
	for _, m := range s.members {
		n += len(m)
	}
	if s.index != nil {
		n += 48 * len(s.index)
	}
	return n
}
