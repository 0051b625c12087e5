package keyspace

import "unsafe"

// A new key's Entry, its key bytes and a short string value share one
// allocation (keyed entries below); the shard's index points at the Entry.
//
// A lookup compares the key's bytes, then reads the Entry, then the value:
// three cache misses on a keyspace larger than the cache when each lives
// in its own allocation, one (or two adjacent lines) when they are one
// object. It is also one allocation per new key instead of three, and
// fewer bytes: a CL.THROTTLE key of 16 bytes with its TAT (an int, no
// buffer) is one 48-byte object.
//
// What must stay true: the key bytes are never written after the index
// holds the entry (key() hands them out as a Go string, immutable); the
// value's slice is capped at the end of the buffer, so appending to it
// never reaches the key; and a key string taken from an entry keeps the
// whole object alive, which only delays its reuse.

// The buffer sizes put Entry plus buffer exactly on Go's size classes
// (48, 64, 80, 96, 112, 128 bytes with the 32-byte Entry).
type (
	keyedEntry16 struct {
		Entry
		b [16]byte
	}
	keyedEntry32 struct {
		Entry
		b [32]byte
	}
	keyedEntry48 struct {
		Entry
		b [48]byte
	}
	keyedEntry64 struct {
		Entry
		b [64]byte
	}
	keyedEntry80 struct {
		Entry
		b [80]byte
	}
	keyedEntry96 struct {
		Entry
		b [96]byte
	}
)

// keyedSizes are the shapes newEntry picks from, smallest first: the room
// after the Entry, and how to allocate one.
var keyedSizes = [...]struct {
	room  int
	alloc func() (*Entry, []byte)
}{
	{16, func() (*Entry, []byte) { k := new(keyedEntry16); return &k.Entry, k.b[:] }},
	{32, func() (*Entry, []byte) { k := new(keyedEntry32); return &k.Entry, k.b[:] }},
	{48, func() (*Entry, []byte) { k := new(keyedEntry48); return &k.Entry, k.b[:] }},
	{64, func() (*Entry, []byte) { k := new(keyedEntry64); return &k.Entry, k.b[:] }},
	{80, func() (*Entry, []byte) { k := new(keyedEntry80); return &k.Entry, k.b[:] }},
	{96, func() (*Entry, []byte) { k := new(keyedEntry96); return &k.Entry, k.b[:] }},
}

// keyLong in Entry.klen marks a key too long to share the allocation: a
// string header follows the Entry instead (longKeyEntry).
const keyLong = 1<<16 - 1

// longKeyEntry holds a key longer than the shapes above: rare on the hot
// paths, so its extra allocation does not matter.
type longKeyEntry struct {
	Entry
	k string
}

// entryTail is where the bytes after an Entry start in its allocation.
func (e *Entry) entryTail() unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(e), unsafe.Sizeof(Entry{}))
}

// key returns the entry's key. Only entries made by newEntry have one.
func (e *Entry) Key() string {
	if e.klen == keyLong {
		return *(*string)(e.entryTail())
	}
	return unsafe.String((*byte)(e.entryTail()), int(e.klen))
}

// keyIs reports whether the entry's key is key.
func (e *Entry) keyIs(key []byte) bool {
	return e.Key() == unsafe.String(unsafe.SliceData(key), len(key))
}

// newEntry makes an Entry for key, whose keyHash is h, with room for a string value of vcap
// bytes after the key, and adds it to s under key, which must be absent.
// It returns the entry and the value buffer (nil when the value did not
// fit: the caller allocates it).
func (s *Shard) newEntry(h uint32, key []byte, vcap int) (*Entry, []byte) {
	e, b := allocEntry(h, key, vcap)
	s.keys.insert(e)
	return e, b
}

// allocEntry makes an Entry for key, not yet in any index, as newEntry
// describes.
func allocEntry(h uint32, key []byte, vcap int) (*Entry, []byte) {
	n := len(key) + vcap
	for _, sz := range keyedSizes {
		if n > sz.room {
			continue
		}
		e, b := sz.alloc()
		copy(b, key)
		e.hash, e.klen = h, uint16(len(key))
		if vcap == 0 {
			return e, nil
		}
		return e, b[len(key):len(key):len(b)]
	}
	if len(key) <= sizeClassRoom {
		// The key alone fits a shape; the value goes on its own.
		e, _ := allocEntry(h, key, 0)
		return e, nil
	}
	l := &longKeyEntry{k: string(key)}
	l.hash, l.klen = h, keyLong
	return &l.Entry, nil
}

// sizeClassRoom is the room of the largest shape.
var sizeClassRoom = keyedSizes[len(keyedSizes)-1].room

// adopt stores the value and expiry of v, an Entry made outside the
// keyspace (loading, tests) or moving to another key (RENAME), under key,
// which must be absent.
func (s *Shard) adopt(key []byte, v *Entry) *Entry {
	e := adopted(keyHash(key), key, v)
	s.keys.insert(e)
	s.setExp(e, v.Exp)
	return e
}

// adopted makes the entry of key, whose keyHash is h, holding v's value
// (not its expiry), in no index yet.
func adopted(h uint32, key []byte, v *Entry) *Entry {
	var e *Entry
	if !v.HasBytes() {
		e, _ = allocEntry(h, key, 0)
		e.ptr, e.n, e.kind = v.ptr, v.n, v.kind
	} else {
		var buf []byte
		e, buf = allocEntry(h, key, v.StrLen())
		if buf != nil {
			e.SetStr(append(buf, v.StrBytes()...))
		} else {
			e.SetStr(v.StrBytes())
		}
	}
	// Not the unsaved flag: the new entry is counted when marked.
	e.enc = v.enc &^ encUnsaved
	return e
}
