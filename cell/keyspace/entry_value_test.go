package keyspace

import (
	"testing"
	"unsafe"
)

// The Entry header must stay 32 bytes: with a 16-byte key it fills a
// 48-byte size class (entry_alloc.go).
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n != 32 {
		t.Fatalf("Entry is %d bytes, want 32", n)
	}
}

// TestBigStringReaders: a string kept behind its own slice header (4 GB
// or more, which a test cannot allocate, so the form is made by hand)
// reads, grows and moves like any other.
func TestBigStringReaders(t *testing.T) {
	b := []byte("big value")
	e := &Entry{ptr: unsafe.Pointer(&b), kind: valBig}
	if string(e.Str()) != "big value" || e.StrLen() != 9 || e.StrCap() != cap(b) || !e.IsString() || !e.HasBytes() {
		t.Fatalf("read as %q len %d cap %d", e.Str(), e.StrLen(), e.StrCap())
	}
	var sh Shard
	moved := sh.adopt([]byte("k"), e)
	if string(moved.Str()) != "big value" || sh.keys.getS("k") != moved {
		t.Fatalf("adopted as %q", moved.Str())
	}
	if v := append(e.MutableStr(), '!'); string(v) != "big value!" {
		t.Fatalf("mutable: %q", v)
	}
}
