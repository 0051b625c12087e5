package effectlog

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// rec is one replayed record.
type rec struct {
	start   uint64
	payload []byte
}

// payloadFor is record i's content: its index then bytes derived from it,
// size bytes in all (at least 4 unless size is smaller).
func payloadFor(i, size int) []byte {
	b := make([]byte, size)
	for j := range b {
		b[j] = byte(i*7 + j*13 + 1)
	}
	if size >= 4 {
		binary.LittleEndian.PutUint32(b, uint32(i))
	}
	return b
}

// logBuffer captures what the log writes to its logger.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func openLog(t testing.TB, dir string, segSize int64) (*Log, *logBuffer) {
	t.Helper()
	lb := &logBuffer{}
	l, err := Open(dir, Options{SegmentSize: segSize, Logger: slog.New(slog.NewTextHandler(lb, nil))})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l, lb
}

func mustAppend(t testing.TB, l *Log, p []byte) uint64 {
	t.Helper()
	end, err := l.Append(p)
	if err != nil {
		t.Fatalf("Append(%d bytes): %v", len(p), err)
	}
	return end
}

func mustClose(t testing.TB, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func replayAll(t testing.TB, l *Log, from uint64) []rec {
	t.Helper()
	var got []rec
	err := l.Replay(from, func(start uint64, p []byte) error {
		got = append(got, rec{start, append([]byte(nil), p...)})
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d): %v", from, err)
	}
	return got
}

// checkRecords fails unless got is want, record by record.
func checkRecords(t testing.TB, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("replayed %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].start != want[i].start || !bytes.Equal(got[i].payload, want[i].payload) {
			t.Fatalf("record %d: start %d, %d bytes; want start %d, %d bytes (or content differs)",
				i, got[i].start, len(got[i].payload), want[i].start, len(want[i].payload))
		}
	}
}

// appendRecords appends n records of the given sizes (cycled), starting
// with index first, and returns them as Replay should show them.
func appendRecords(t testing.TB, l *Log, first, n int, sizes []int) []rec {
	t.Helper()
	var out []rec
	for i := first; i < first+n; i++ {
		p := payloadFor(i, sizes[i%len(sizes)])
		start := l.End()
		end := mustAppend(t, l, p)
		if end != start+uint64(frameHeader+len(p)) {
			t.Fatalf("Append of %d bytes at %d returned end %d", len(p), start, end)
		}
		out = append(out, rec{start, p})
	}
	return out
}

func segmentFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
