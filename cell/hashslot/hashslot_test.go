package hashslot

import (
	"math/rand/v2"
	"testing"
)

func TestCRC16Vectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint16
	}{
		{"", 0},
		{"123456789", 0x31C3}, // the XMODEM check value Redis's crc16.c cites
		{"A", 0x58E5},
	} {
		if got := crc16([]byte(tc.in)); got != tc.want {
			t.Errorf("crc16(%q) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
}

// TestOf: slots Redis 7.0.15's CLUSTER KEYSLOT gives for the same keys.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"foo", 12182},
		{"a", 15495},
		{"b", 3300},
		{"aa", 1180},
		{"key1", 9189},
		{"", 0},
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"user1000", 3443},
		{"{}a", 10875},     // empty tag: the whole key
		{"{a", 10276},      // no closing brace: the whole key
		{"a{b}c{d}", 3300}, // first tag only: "b"
		{"{{b}}", 6215},
		{"x{}{b}", 10463}, // the first '{' decides, and its tag is empty
	} {
		if got := Of([]byte(tc.key)); got != tc.want {
			t.Errorf("Of(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func BenchmarkOf(b *testing.B) {
	k := []byte("rate:user:1234567:api")
	for b.Loop() {
		Of(k)
	}
}

// TestCRC16Slicing checks the sliced CRC against the bit-by-bit
// definition on inputs of every length up to 40 and random bytes.
func TestCRC16Slicing(t *testing.T) {
	bitwise := func(b []byte) uint16 {
		var c uint16
		for _, x := range b {
			c ^= uint16(x) << 8
			for range 8 {
				if c&0x8000 != 0 {
					c = c<<1 ^ 0x1021
				} else {
					c <<= 1
				}
			}
		}
		return c
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		for range 50 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			if got, want := crc16(b), bitwise(b); got != want {
				t.Fatalf("crc16(%x) = %#04x, want %#04x", b, got, want)
			}
		}
	}
}
