package effectlog

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damage changes a closed log's files; recs are its records, segs its
// segment files in order.
type damage func(t *testing.T, recs []rec, segs []string)

// recordOffset is the file offset of recs[i] in a log of one segment.
func recordOffset(r rec) int64 { return headerSize + int64(r.start) }

func patchFile(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	patchFile(t, path, off, []byte{b[off] ^ 0x40})
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// TestTornTail damages one segment's records: Open must keep exactly the
// records before the damage, say so once, and never let the cut bytes come
// back, even when a new record of the cut one's size lands where it was.
func TestTornTail(t *testing.T) {
	tests := []struct {
		name  string
		keep  int   // records that survive
		bytes int64 // bytes the cut line must report; 0: not checked
		hurt  damage
	}{
		{"truncated mid last record", 9, 100, func(t *testing.T, r []rec, s []string) {
			if err := os.Truncate(s[0], recordOffset(r[9])+100); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated in last record's header", 9, 5, func(t *testing.T, r []rec, s []string) {
			if err := os.Truncate(s[0], recordOffset(r[9])+5); err != nil {
				t.Fatal(err)
			}
		}},
		{"last record's payload changed", 9, 208, func(t *testing.T, r []rec, s []string) {
			flipByte(t, s[0], recordOffset(r[9])+frameHeader+150)
		}},
		{"last record's CRC zeroed", 9, 208, func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[9])+4, le32(0))
		}},
		{"garbage after the last record", 10, 300 + 7 - 208, func(t *testing.T, r []rec, s []string) {
			patchFile(t, s[0], recordOffset(r[9])+300, []byte("garbage"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := openLog(t, dir, 4096)
			recs := appendRecords(t, l, 0, 10, []int{200})
			mustClose(t, l)
			tc.hurt(t, recs, segmentFiles(t, dir))

			l, lb := openLog(t, dir, 4096)
			checkRecords(t, replayAll(t, l, 0), recs[:tc.keep])
			if !strings.Contains(lb.String(), "effectlog: cut damaged log tail") || strings.Count(lb.String(), "\n") != 1 {
				t.Fatalf("Open logged %q, want one cut line", lb.String())
			}
			if tc.keep < len(recs) && l.End() != recs[tc.keep].start {
				t.Fatalf("End %d, want %d (the start of the first cut record)", l.End(), recs[tc.keep].start)
			}
			if want := fmt.Sprintf("offset=%d ", headerSize+l.End()); !strings.Contains(lb.String(), want) {
				t.Fatalf("cut line %q does not say %q", lb.String(), want)
			}
			if want := fmt.Sprintf("bytes=%d ", tc.bytes); tc.bytes != 0 && !strings.Contains(lb.String(), want) {
				t.Fatalf("cut line %q does not say %q", lb.String(), want)
			}
			more := appendRecords(t, l, 100, 1, []int{200})
			mustClose(t, l)

			l, lb = openLog(t, dir, 4096)
			defer l.Close()
			checkRecords(t, replayAll(t, l, 0), append(recs[:tc.keep:tc.keep], more...))
			if lb.String() != "" {
				t.Fatalf("second Open logged %q", lb.String())
			}
		})
	}
}

// TestGarbagePastHoles: bytes far past the last record, beyond blocks the
// log ever reserved (Open reads only the file's data extents, not its
// holes), are still found, cut and reported, in the last kept segment and
// in a segment after it.
func TestGarbagePastHoles(t *testing.T) {
	const segSize = 16 << 20
	dir := t.TempDir()
	l, _ := openLog(t, dir, segSize)
	recs := appendRecords(t, l, 0, 3, []int{200})
	mustClose(t, l)
	segs := segmentFiles(t, dir)
	last := recordOffset(recs[2]) + int64(frameHeader+200)
	patchFile(t, segs[0], 12<<20, []byte("garbage"))
	stray := filepath.Join(dir, segmentName(7))
	if err := os.WriteFile(stray, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	patchFile(t, stray, 9<<20, []byte("more"))

	l, lb := openLog(t, dir, segSize)
	defer l.Close()
	checkRecords(t, replayAll(t, l, 0), recs)
	want := fmt.Sprintf("bytes=%d ", 12<<20+7-last+9<<20+4)
	if !strings.Contains(lb.String(), want) {
		t.Fatalf("Open logged %q, want a cut line saying %q", lb.String(), want)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := nonzeroEnd(b); n != int(last) {
		t.Fatalf("segment's last nonzero byte ends at %d after Open, want %d (its records' end)", n, last)
	}
}

// TestDamagedSegments damages a log of five segments (four records each).
func TestDamagedSegments(t *testing.T) {
	tests := []struct {
		name  string
		keep  int // records that survive
		files int // segment files left
		warn  bool
		hurt  damage
	}{
		{"header shorter than a header", 16, 4, true, func(t *testing.T, r []rec, s []string) {
			if err := os.Truncate(s[4], 10); err != nil {
				t.Fatal(err)
			}
		}},
		{"unused prepared segment", 20, 5, false, func(t *testing.T, r []rec, s []string) {
			if err := os.WriteFile(filepath.Join(filepath.Dir(s[0]), segmentName(5)), make([]byte, 4096), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty file", 20, 5, false, func(t *testing.T, r []rec, s []string) {
			if err := os.WriteFile(filepath.Join(filepath.Dir(s[0]), segmentName(9)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l, _ := openLog(t, dir, 4096)
			recs := appendRecords(t, l, 0, 20, []int{1000})
			mustClose(t, l)
			segs := segmentFiles(t, dir)
			if len(segs) != 5 {
				t.Fatalf("%d segment files, want 5", len(segs))
			}
			tc.hurt(t, recs, segs)

			l, lb := openLog(t, dir, 4096)
			checkRecords(t, replayAll(t, l, 0), recs[:tc.keep])
			if got := strings.Contains(lb.String(), "cut damaged log tail"); got != tc.warn {
				t.Fatalf("Open logged %q, want a cut line: %v", lb.String(), tc.warn)
			}
			if got := len(segmentFiles(t, dir)); got != tc.files {
				t.Fatalf("%d segment files after Open, want %d", got, tc.files)
			}
			more := appendRecords(t, l, 100, 6, []int{1000})
			mustClose(t, l)
			l, lb = openLog(t, dir, 4096)
			defer l.Close()
			checkRecords(t, replayAll(t, l, 0), append(recs[:tc.keep:tc.keep], more...))
			if lb.String() != "" {
				t.Fatalf("second Open logged %q", lb.String())
			}
		})
	}
}
