package rdb

import (
	"hash/crc64"
	"math/rand"
	"testing"
)

// TestCRC64 checks the check value Redis's crc64.c tests ("123456789") and,
// for every length up to a few blocks, agrees with a bit-at-a-time CRC built
// from the standard library's table for the same polynomial (that table
// inverts before and after; undoing both gives Redis's CRC).
func TestCRC64(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("CRC64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	tab := crc64.MakeTable(jonesPoly)
	ref := func(crc uint64, p []byte) uint64 { return ^crc64.Update(^crc, tab, p) }
	r := rand.New(rand.NewSource(1))
	buf := make([]byte, 100)
	r.Read(buf)
	for n := 0; n <= len(buf); n++ {
		if got, want := CRC64(0, buf[:n]), ref(0, buf[:n]); got != want {
			t.Fatalf("len %d: %#x, want %#x", n, got, want)
		}
		// Extending in two pieces is the same as one.
		if got, want := CRC64(CRC64(0, buf[:n/3]), buf[n/3:n]), ref(0, buf[:n]); got != want {
			t.Fatalf("len %d split: %#x, want %#x", n, got, want)
		}
	}
}
