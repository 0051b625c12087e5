package rdb

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	random := make([]byte, 10000)
	r.Read(random)
	cases := map[string][]byte{
		"repeated":   bytes.Repeat([]byte("a"), 10000),
		"text":       []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 200)),
		"random":     random,
		"short":      []byte("abcdabcdabcd"),
		"long match": append(bytes.Repeat([]byte("xyz"), 3000), random[:100]...),
		"far":        append(append(append([]byte{}, random[:9000]...), random[:50]...), random[:50]...),
	}
	for name, in := range cases {
		c := lzfCompress(in, len(in)*2)
		if c == nil {
			t.Fatalf("%s: did not fit in twice its size", name)
		}
		out, err := lzfDecompress(nil, c, len(in))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("%s: round trip failed: %v", name, err)
		}
		// Appended after what dst holds (a reader's reused buffer).
		out, err = lzfDecompress([]byte("prefix"), c, len(in))
		if err != nil || string(out[:6]) != "prefix" || !bytes.Equal(out[6:], in) {
			t.Fatalf("%s: round trip after a prefix failed: %v", name, err)
		}
		if name == "repeated" && len(c) > 200 {
			t.Errorf("repeated: %d bytes compressed, want a few dozen", len(c))
		}
		if name == "random" {
			if lzfCompress(in, len(in)-4) != nil {
				t.Errorf("random data claimed to compress")
			}
		}
	}
}

func TestLZFDecompressRejects(t *testing.T) {
	good := lzfCompress(bytes.Repeat([]byte("hello "), 100), 1000)
	cases := []struct {
		name string
		in   []byte
		n    int
	}{
		{"wrong length", good, 599},
		{"too long", good, 601},
		{"truncated", good[:len(good)-1], 600},
		{"literal past end", []byte{5, 'a'}, 6},
		{"reference before start", []byte{0, 'a', 0x20, 5}, 4},
		{"forged length", []byte{0, 'a'}, 1 << 40},
		{"negative", []byte{0, 'a'}, -1},
	}
	for _, c := range cases {
		if _, err := lzfDecompress(nil, c.in, c.n); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		// A reference must not reach back into what dst held before.
		if _, err := lzfDecompress([]byte("prefix"), c.in, c.n); err == nil {
			t.Errorf("%s after a prefix: accepted", c.name)
		}
	}
}
