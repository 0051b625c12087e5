package effectlog

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
)

// FuzzOpen writes arbitrary bytes into one segment of a valid log (or
// replaces the file) and checks that Open and Replay survive it, and that
// the log they leave behaves: what Replay showed, plus a new record,
// comes back after a reopen, with no further cut.
func FuzzOpen(f *testing.F) {
	f.Add([]byte("garbage"), uint16(40), uint8(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint16(32), uint8(1))
	f.Add([]byte{8, 0, 0, 0, 0, 0, 0, 0}, uint16(200), uint8(2))
	f.Add(bytes.Repeat([]byte{0}, 64), uint16(0), uint8(0x81))
	f.Add([]byte("CELLELOG"), uint16(0), uint8(0x80))
	f.Fuzz(func(t *testing.T, data []byte, off uint16, which uint8) {
		dir := t.TempDir()
		quiet := slog.New(slog.NewTextHandler(discard{}, nil))
		l, err := Open(dir, Options{SegmentSize: 4096, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		appendRecords(t, l, 0, 12, []int{0, 300, 900})
		mustClose(t, l)
		segs := segmentFiles(t, dir)
		path := segs[int(which&0x7f)%len(segs)]
		if which&0x80 != 0 {
			err = os.WriteFile(path, data, 0o644)
		} else {
			var fh *os.File
			if fh, err = os.OpenFile(path, os.O_RDWR, 0); err == nil {
				_, err = fh.WriteAt(data, int64(off))
				fh.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}

		o := Options{SegmentSize: 4096, Logger: quiet}
		l, err = Open(dir, o)
		var de *DamageError
		if errors.As(err, &de) {
			o.SkipDamaged = true // damage in the middle: start as the operator would
			l, err = Open(dir, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		before := replayAll(t, l, 0)
		more := appendRecords(t, l, 50, 1, []int{len(data)})
		mustClose(t, l)
		l, lb, err := openWith(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		checkRecords(t, replayAll(t, l, 0), append(before, more...))
		if strings.Contains(lb.String(), "cut") {
			t.Fatalf("second Open logged %q", lb.String())
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
