package zsetlite

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestPackedEnds: the ends of a packed set's entries; nothing for an
// empty set, a converted one, or a pointer too near its page's end.
func TestPackedEnds(t *testing.T) {
	if packedHeader != 0 {
		t.Fatalf("packed is at offset %d of a Set: PackedEnds reads the first two words", packedHeader)
	}
	s := New(DefaultConfig())
	if f, l := PackedEnds(unsafe.Pointer(s)); f != 0 || l != 0 {
		t.Errorf("empty set: %#x, %#x", f, l)
	}
	for i := range 10 {
		s.Put([]byte(strconv.Itoa(1700000000000+i)), float64(1700000000000+i))
	}
	f, l := PackedEnds(unsafe.Pointer(s))
	if f != uintptr(unsafe.Pointer(&s.packed[0])) || l != uintptr(unsafe.Pointer(&s.packed[len(s.packed)-1])) {
		t.Errorf("packed set: %#x, %#x; want its first and last byte", f, l)
	}
	for i := range 200 {
		s.Put([]byte("m"+strconv.Itoa(i)), float64(i))
	}
	if s.big == nil {
		t.Fatal("200 members did not convert the set")
	}
	if f, l := PackedEnds(unsafe.Pointer(s)); f != 0 || l != 0 {
		t.Errorf("converted set: %#x, %#x", f, l)
	}
	if f, l := PackedEnds(nil); f != 0 || l != 0 {
		t.Errorf("nil: %#x, %#x", f, l)
	}
	// A pointer whose two words would cross into the next page.
	buf := make([]byte, 3*4096)
	base := (uintptr(unsafe.Pointer(&buf[0])) + 4095) &^ 4095
	end := unsafe.Add(unsafe.Pointer(&buf[0]), base-uintptr(unsafe.Pointer(&buf[0]))+4096-8)
	if f, l := PackedEnds(end); f != 0 || l != 0 {
		t.Errorf("last word of a page: %#x, %#x", f, l)
	}
}
