package cell

import "unsafe"

// A new key's Entry, its key bytes and a short string value share one
// allocation: the map's key string points into it (keyed entries below).
//
// A lookup compares the key's bytes, then reads the Entry, then the value:
// three cache misses on a keyspace larger than the cache when each lives
// in its own allocation, one (or two adjacent lines) when they are one
// object. It is also one allocation per new key instead of three, and
// fewer bytes: a CL.THROTTLE key of 16 bytes with its 19-digit TAT is one
// 96-byte object instead of 64 + 16 + 24.
//
// What must stay true: the key bytes are never written after the map holds
// them (a Go string is immutable); the value's slice is capped at the end
// of the buffer, so appending to it never reaches the key; and a key string
// taken from the map keeps the whole object alive, which only delays its
// reuse.

// The buffer sizes put Entry plus buffer exactly on Go's size classes
// (64, 80, 96, 112, 128 bytes with the 56-byte Entry).
type (
	keyedEntry8 struct {
		Entry
		b [8]byte
	}
	keyedEntry24 struct {
		Entry
		b [24]byte
	}
	keyedEntry40 struct {
		Entry
		b [40]byte
	}
	keyedEntry56 struct {
		Entry
		b [56]byte
	}
	keyedEntry72 struct {
		Entry
		b [72]byte
	}
)

// keyedSizes are the shapes newEntry picks from, smallest first: the room
// after the Entry, and how to allocate one.
var keyedSizes = [...]struct {
	room  int
	alloc func() (*Entry, []byte)
}{
	{8, func() (*Entry, []byte) { k := new(keyedEntry8); return &k.Entry, k.b[:] }},
	{24, func() (*Entry, []byte) { k := new(keyedEntry24); return &k.Entry, k.b[:] }},
	{40, func() (*Entry, []byte) { k := new(keyedEntry40); return &k.Entry, k.b[:] }},
	{56, func() (*Entry, []byte) { k := new(keyedEntry56); return &k.Entry, k.b[:] }},
	{72, func() (*Entry, []byte) { k := new(keyedEntry72); return &k.Entry, k.b[:] }},
}

// newEntry makes an Entry for key, with room for a string value of vcap
// bytes after the key, and adds it to s under key. It returns the entry
// and the value buffer (nil when the value did not fit: the caller
// allocates it).
func (s *Shard) newEntry(key []byte, vcap int) (*Entry, []byte) {
	n := len(key) + vcap
	for _, sz := range keyedSizes {
		if n > sz.room {
			continue
		}
		e, b := sz.alloc()
		copy(b, key)
		s.keys[unsafe.String(unsafe.SliceData(b), len(key))] = e
		if vcap == 0 {
			return e, nil
		}
		return e, b[len(key):len(key):len(b)]
	}
	// Too long to share: a key this long is rare on the hot paths.
	e := new(Entry)
	s.keys[string(key)] = e
	return e, nil
}
