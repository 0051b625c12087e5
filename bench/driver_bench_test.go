package main

import (
	"bytes"
	"strings"
	"testing"
)

// The driver's own cost per operation, to show it is small next to a
// server's: go test -bench . -benchmem ./bench

func BenchmarkGenerate(b *testing.B) {
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			prefix, suffix := keyPrefix(w)
			keys := newKeyTable(prefix, suffix, 100000)
			gen := w.newGen(keys, strings.Repeat("a", 40))
			g := &genState{rng: newRand(1), nowMs: 1700000000000}
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				buf = gen(g, buf[:0])
			}
		})
	}
}

// loopReader replays the same bytes forever, standing in for a socket.
type loopReader struct {
	data []byte
	off  int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.data[r.off:])
		n += c
		r.off = (r.off + c) % len(r.data)
	}
	return n, nil
}

func BenchmarkReadReply(b *testing.B) {
	for _, tt := range []struct{ name, reply string }{
		{"status", "+PONG\r\n"},
		{"throttle", "*5\r\n:0\r\n:16\r\n:15\r\n:-1\r\n:2\r\n"},
		{"exec", "*4\r\n:1\r\n:0\r\n:7\r\n:1\r\n"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			rr := newReplyReader(&loopReader{data: bytes.Repeat([]byte(tt.reply), 1000)})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := rr.next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
