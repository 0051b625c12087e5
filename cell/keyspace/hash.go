package keyspace

// Hash is the value of a hash key.
//
// Its fields live in one slice of pairs. While the hash is small (at most
// hashMaxListpackEntries fields, no field or value longer than
// hashMaxListpackValue bytes) that slice is all there is, kept in insertion
// order and searched linearly, as Redis's listpack encoding is: HGETALL,
// HKEYS and HVALS then list fields in the order Redis lists them. Past
// either limit the hash converts, for good, to the large encoding: the same
// slice plus an index from field to position, and deletion moves the last
// pair into the hole. Redis's order is undefined there too (a hash table),
// but ours stays stable between writes, so HKEYS and HVALS agree.
//
// Invariants: index is nil in the small encoding; in the large one
// index[pairs[i].field] == i for every i. A Hash is never empty while it is
// stored in the keyspace.
type Hash struct {
	pairs []hashPair
	index map[string]int
}

type hashPair struct {
	field string
	value []byte
}

// Redis 7.0's defaults for hash-max-listpack-entries and
// hash-max-listpack-value, read from a running 7.0.15 (CONFIG GET) and from
// Debian's redis.conf alike: 512 fields, 64 bytes.
// A 513th field, or a field or value of 65 bytes, converts.
const (
	hashMaxListpackEntries = 512
	hashMaxListpackValue   = 64
)

// NewHash returns an empty hash in the small encoding.
func NewHash() *Hash { return &Hash{} }

// newHashSized returns an empty hash with room for n fields, for one
// loaded whole: its pairs in one allocation rather than a doubling each,
// which a load with the collector paused would leave as garbage.
func newHashSized(n int) *Hash { return &Hash{pairs: make([]hashPair, 0, n)} }

// TypeName is the TYPE of a hash key.
func (h *Hash) TypeName() string { return "hash" }

// Encoding is what OBJECT ENCODING reports.
func (h *Hash) Encoding() string {
	if h.index == nil {
		return "listpack"
	}
	return "hashtable"
}

// Len is the number of fields.
func (h *Hash) Len() int { return len(h.pairs) }

// find returns the position of field, or -1.
func (h *Hash) find(field []byte) int {
	if h.index != nil {
		if i, ok := h.index[string(field)]; ok {
			return i
		}
		return -1
	}
	for i := range h.pairs {
		if h.pairs[i].field == string(field) {
			return i
		}
	}
	return -1
}

// Get returns field's value; ok is false if the field is missing. The value
// is the hash's own: callers must not keep or change it.
func (h *Hash) Get(field []byte) (value []byte, ok bool) {
	if i := h.find(field); i >= 0 {
		return h.pairs[i].value, true
	}
	return nil, false
}

// Has reports whether field exists.
func (h *Hash) Has(field []byte) bool { return h.find(field) >= 0 }

// Set stores a copy of value under field and reports whether the field is
// new. An existing field keeps its position, as in a listpack.
func (h *Hash) Set(field, value []byte) (added bool) {
	if h.index == nil && (len(field) > hashMaxListpackValue || len(value) > hashMaxListpackValue) {
		h.convert()
	}
	if i := h.find(field); i >= 0 {
		h.pairs[i].value = append(h.pairs[i].value[:0:0], value...)
		return false
	}
	h.pairs = append(h.pairs, hashPair{field: string(field), value: append([]byte(nil), value...)})
	if h.index != nil {
		h.index[h.pairs[len(h.pairs)-1].field] = len(h.pairs) - 1
	} else if len(h.pairs) > hashMaxListpackEntries {
		h.convert()
	}
	return true
}

// Delete removes field and reports whether it was there.
func (h *Hash) Delete(field []byte) bool {
	i := h.find(field)
	if i < 0 {
		return false
	}
	last := len(h.pairs) - 1
	if h.index == nil {
		// The small encoding keeps insertion order, as a listpack does.
		copy(h.pairs[i:], h.pairs[i+1:])
	} else {
		delete(h.index, h.pairs[i].field)
		if i != last {
			h.pairs[i] = h.pairs[last]
			h.index[h.pairs[i].field] = i
		}
	}
	h.pairs[last] = hashPair{}
	h.pairs = h.pairs[:last]
	return true
}

// Clone returns a copy of h in the same encoding, as Redis's hashTypeDup
// copies a hash (COPY, MOVE): a large hash stays large, however few
// fields it has left.
func (h *Hash) Clone() *Hash {
	c := &Hash{pairs: make([]hashPair, len(h.pairs))}
	for i, p := range h.pairs {
		c.pairs[i] = hashPair{field: p.field, value: append([]byte(nil), p.value...)}
	}
	if h.index != nil {
		c.convert()
	}
	return c
}

// convert switches to the large encoding. Redis never converts back.
func (h *Hash) convert() {
	h.index = make(map[string]int, len(h.pairs))
	for i := range h.pairs {
		h.index[h.pairs[i].field] = i
	}
}

// At returns the i-th pair in iteration order, 0 <= i < Len().
func (h *Hash) At(i int) (field string, value []byte) {
	return h.pairs[i].field, h.pairs[i].value
}
