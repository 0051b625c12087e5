package cell

import (
	"bytes"
	"testing"
)

// TestChunkWriter: a snapshot collected for the replicas is the bytes
// written, in order, in chunks of snapChunk (only the last one shorter),
// so collecting it never copies what it already holds.
func TestChunkWriter(t *testing.T) {
	for _, sizes := range [][]int{
		{},
		{1},
		{snapChunk},
		{snapChunk + 1},
		{10, snapChunk - 10, 5},
		{3 * snapChunk, 7, 64 << 10, snapChunk/2 + 3},
	} {
		var w chunkWriter
		var want bytes.Buffer
		for i, n := range sizes {
			p := bytes.Repeat([]byte{byte('a' + i)}, n)
			if k, err := w.Write(p); k != n || err != nil {
				t.Fatalf("%v: Write(%d bytes) = %d, %v", sizes, n, k, err)
			}
			want.Write(p)
		}
		if got := bytes.Join(w.chunks, nil); !bytes.Equal(got, want.Bytes()) || w.n != want.Len() {
			t.Errorf("%v: collected %d bytes (n %d), not the %d written", sizes, len(got), w.n, want.Len())
		}
		for i, c := range w.chunks {
			if cap(c) != snapChunk || (i < len(w.chunks)-1 && len(c) != snapChunk) {
				t.Errorf("%v: chunk %d of %d holds %d of %d bytes", sizes, i, len(w.chunks), len(c), cap(c))
			}
		}
	}
}
