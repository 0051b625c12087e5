package effectlog

import (
	"os"
	"path/filepath"
	"syscall"
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
			// The point of it: where the file system reports holes (ext4,
			// xfs, btrfs, tmpfs), most of a 64 MB hole is left unread.
			if reportsHoles(t, f) && end > last+4<<20 {
				t.Fatalf("dataEnd = %d: %d bytes past the last data, holes not skipped", end, end-last)
			}
		})
	}
}

// reportsHoles reports whether the file system of f's directory tells
// holes from data: whether the start of a new sparse file is a hole.
// Where it does not, dataEnd is the file's size, which is correct but
// saves nothing.
func reportsHoles(t *testing.T, f *os.File) bool {
	t.Helper()
	probe, err := os.CreateTemp(filepath.Dir(f.Name()), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := probe.Truncate(16 << 20); err != nil {
		t.Fatal(err)
	}
	h, err := syscall.Seek(int(probe.Fd()), 0, seekHole)
	if err != nil || h != 0 {
		t.Logf("this file system reports no holes (SEEK_HOLE at 0 of an empty sparse file: %d, %v): only correctness is checked", h, err)
		return false
	}
	return true
}
