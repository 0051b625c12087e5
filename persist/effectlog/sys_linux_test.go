package effectlog

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataEnd: dataEnd bounds a sparse file's data, so that a scan for
// nonzero bytes skips its holes, and never cuts data off.
func TestDataEnd(t *testing.T) {
	const size = 64 << 20
	tests := []struct {
		name   string
		writes []int64 // offsets of one nonzero byte each
		from   int64
	}{
		{"all hole", nil, 0},
		{"data at the start only", []int64{0, 4095}, 4096},
		{"data in the middle", []int64{100, 20 << 20}, 4096},
		{"data at the very end", []int64{size - 1}, 0},
		{"from inside data", []int64{10, 5000}, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			last := tc.from
			for _, off := range tc.writes {
				if _, err := f.WriteAt([]byte{1}, off); err != nil {
					t.Fatal(err)
				}
				last = max(last, off+1)
			}
			end := dataEnd(f, tc.from, size)
			if end < last || end > size {
				t.Fatalf("dataEnd = %d, want it in [%d, %d]", end, last, size)
			}
			// The point of it: a file system with SEEK_HOLE (this test's
			// temporary directory) leaves most of a 64 MB hole unread.
			if end > last+4<<20 {
				t.Fatalf("dataEnd = %d: %d bytes past the last data, holes not skipped", end, end-last)
			}
		})
	}
}
