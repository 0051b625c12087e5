package persist

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// logBuf collects a store's log lines for assertions.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func openTest(t *testing.T, dir string, o Options) (*Store, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(lb, nil))
	}
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, lb
}

// dump loads every key as "db/key=kind:exp:contents", sorted.
func dump(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	bad, err := s.Load(func(db int, key []byte, v Value) error {
		var items []string
		for _, it := range v.Items {
			items = append(items, fmt.Sprintf("%q", it))
		}
		out = append(out, fmt.Sprintf("%d/%q=%c:%d:%q%s", db, key, v.Kind, v.Exp, v.Str, strings.Join(items, ",")))
		return nil
	})
	if err != nil || bad != 0 {
		t.Fatalf("Load: %d corrupt, %v", bad, err)
	}
	sort.Strings(out)
	return out
}

func commit(t *testing.T, s *Store, fill func(b *Batch)) uint64 {
	t.Helper()
	b := s.NewBatch()
	fill(b)
	n, err := s.Commit(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	commit(t, s, func(b *Batch) {
		b.PutString(0, []byte("counter"), 0, []byte("41"))
		b.PutString(0, []byte("counter"), 0, []byte("42")) // the later write wins
		b.PutString(15, []byte{0, 0xff}, 1_900_000_000_000, []byte("bin"))
		b.Put(1, []byte("h"), Value{Kind: KindHash, Items: [][]byte{[]byte("f"), []byte("v")}})
		b.Put(1, []byte("l"), Value{Kind: KindList, Items: [][]byte{[]byte("x"), []byte("y")}})
		b.Put(2, []byte("z"), Value{Kind: KindZSetWide})
		b.PutMember(2, []byte("z"), []byte("m1"), 1.5)
		b.PutMember(2, []byte("z"), []byte("m2"), 2)
		b.PutString(2, []byte("z2"), 0, []byte("after the set"))
		b.PutString(3, []byte("gone"), 0, []byte("x"))
	})
	commit(t, s, func(b *Batch) {
		b.Delete(3, []byte("gone"))
		b.DeleteMember(2, []byte("z"), []byte("m1"))
	})
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`0/"counter"=s:0:"42"`,
		`1/"h"=h:0:""` + `"f","v"`,
		`1/"l"=l:0:""` + `"x","y"`,
		`15/"\x00\xff"=s:1900000000000:"bin"`,
		`2/"z"=z:0:""` + `"m2","@\x00\x00\x00\x00\x00\x00\x00"`,
		`2/"z2"=s:0:"after the set"`,
	}
	check := func(s *Store) {
		t.Helper()
		if got := dump(t, s); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check(s)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, _ := openTest(t, dir, Options{})
	check(s2)

	// DeleteKey takes the members along; DeleteDB a whole database only.
	commit(t, s2, func(b *Batch) {
		b.DeleteKey(2, []byte("z"))
		b.DeleteDB(1)
	})
	want = []string{want[0], want[3], want[5]}
	check(s2)
}

func TestStoreSecondOpenRefused(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, Options{})
	_, err := Open(dir, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "in use by another cellserver") {
		t.Fatalf("second Open: %v", err)
	}
}

// newestLog is the store's newest WAL file.
func newestLog(t *testing.T, dir string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, DirName, "*.log"))
	if len(logs) == 0 {
		t.Fatal("no log file")
	}
	sort.Strings(logs)
	return logs[len(logs)-1]
}

// lastRecord returns where the newest log's last record starts and where
// the records end (the EOF trailer Close wrote starts there).
func lastRecord(t *testing.T, dir string) (start, end int64) {
	t.Helper()
	logs, err := wal.Scan(wal.Dir{FS: vfs.Default, Dirname: filepath.Join(dir, DirName)})
	if err != nil || len(logs) == 0 {
		t.Fatalf("no logs: %v", err)
	}
	r := logs[len(logs)-1].OpenForRead()
	defer r.Close()
	for {
		rec, off, err := r.NextRecord()
		if err != nil {
			return start, off.Physical
		}
		io.Copy(io.Discard, rec)
		start = off.Physical
	}
}

// TestStoreTornTail damages the newest log as a crash or a bad disk would:
// the store opens, keeps every record before the damage and logs the cut.
func TestStoreTornTail(t *testing.T) {
	tests := []struct {
		name string
		tear func(t *testing.T, f *os.File, start, end int64)
		keep int
	}{
		{"cut mid-record", func(t *testing.T, f *os.File, start, end int64) {
			f.Truncate(start + (end-start)/2)
		}, 19},
		{"garbage over the last record", func(t *testing.T, f *os.File, start, end int64) {
			f.Truncate(end)
			f.WriteAt(bytes.Repeat([]byte{0x5a}, int(end-start)-3), start+3)
		}, 19},
		{"garbage after the records", func(t *testing.T, f *os.File, start, end int64) {
			f.Truncate(end)
			f.WriteAt(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 100), end)
		}, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := openTest(t, dir, Options{})
			for i := range 20 {
				n := commit(t, s, func(b *Batch) {
					b.PutString(0, fmt.Appendf(nil, "k%02d", i), 0, bytes.Repeat([]byte{'v'}, 10))
				})
				// One log record per key: commit each group at once.
				s.mu.RLock()
				err := s.commitPending(n)
				s.mu.RUnlock()
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			start, end := lastRecord(t, dir)
			f, err := os.OpenFile(newestLog(t, dir), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			tt.tear(t, f, start, end)
			f.Close()
			s2, lb := openTest(t, dir, Options{})
			if got := dump(t, s2); len(got) != tt.keep {
				t.Fatalf("recovered %d keys, want %d:\n%s", len(got), tt.keep, strings.Join(got, "\n"))
			}
			if !strings.Contains(lb.String(), "cut the torn tail") {
				t.Fatalf("no log line about the cut; log:\n%s", lb.String())
			}
		})
	}
}

// failFS makes write-side operations fail with ENOSPC while full is set.
type failFS struct {
	vfs.FS
	full *atomic.Bool
}

type failFile struct {
	vfs.File
	full *atomic.Bool
}

var errNoSpace = &os.PathError{Op: "write", Path: "wal", Err: syscall.ENOSPC}

func (fs failFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return failFile{f, fs.full}, nil
}

func (fs failFS) ReuseForWrite(o, n string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(o, n, cat)
	if err != nil {
		return nil, err
	}
	return failFile{f, fs.full}, nil
}

func (f failFile) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, errNoSpace
	}
	return f.File.Write(p)
}

func (f failFile) Sync() error {
	if f.full.Load() {
		return errNoSpace
	}
	return f.File.Sync()
}

func (f failFile) SyncData() error {
	if f.full.Load() {
		return errNoSpace
	}
	return f.File.SyncData()
}

// TestStoreDiskFull: a failing disk is reported by Err with C's wording,
// holds Sync back instead of failing it, and nothing is lost once the
// disk works again.
func TestStoreDiskFull(t *testing.T) {
	dir := t.TempDir()
	full := &atomic.Bool{}
	s, lb := openTest(t, dir, Options{FS: failFS{vfs.Default, full}})
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("before"), 0, []byte("1")) })
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	n := commit(t, s, func(b *Batch) { b.PutString(0, []byte("during"), 0, []byte("2")) })
	synced := make(chan error, 1)
	go func() { synced <- s.Sync(n) }()
	deadline := time.Now().Add(5 * time.Second)
	for s.Err() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the disk error was not reported")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := Strerror(s.Err()); got != "No space left on device" {
		t.Fatalf("Strerror = %q", got)
	}
	select {
	case err := <-synced:
		t.Fatalf("Sync returned %v while the disk was full", err)
	case <-time.After(50 * time.Millisecond):
	}
	full.Store(false)
	select {
	case err := <-synced:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sync did not finish once the disk worked")
	}
	if s.Err() != nil {
		t.Fatalf("Err still %v", s.Err())
	}
	if !strings.Contains(lb.String(), "disk works again") {
		t.Fatalf("log:\n%s", lb.String())
	}
	s.Close()
	s2, _ := openTest(t, dir, Options{})
	if got := dump(t, s2); len(got) != 2 {
		t.Fatalf("after reopen: %v", got)
	}
}

func TestStrerror(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("wrapped: %w", syscall.ENOSPC), "No space left on device"},
		{syscall.EIO, "Input/output error"},
		{syscall.EROFS, "Read-only file system"},
		{errors.New("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := Strerror(tt.err); got != tt.want {
			t.Errorf("Strerror(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
