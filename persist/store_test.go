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

	"github.com/cockroachdb/pebble/v2"
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

// replayed lists the effects Replay gives, one string each.
func replayed(t *testing.T, s *Store) []string {
	t.Helper()
	var out []string
	_, bad, err := s.Replay(func(e *Effect) error {
		if e.Kind != EffectEnd {
			out = append(out, effectString(e))
		}
		return nil
	})
	if err != nil || bad != 0 {
		t.Fatalf("Replay: %d corrupt, %v", bad, err)
	}
	return out
}

func effectString(e *Effect) string {
	switch e.Kind {
	case EffectPut:
		var items []string
		for _, it := range e.Value.Items {
			items = append(items, fmt.Sprintf("%q", it))
		}
		return fmt.Sprintf("put %d/%q=%c:%d:%q%s", e.DB, e.Key, e.Value.Kind, e.Value.Exp, e.Value.Str, strings.Join(items, ","))
	case EffectPutMember:
		return fmt.Sprintf("zput %d/%q %q=%g", e.DB, e.Key, e.Member, e.Score)
	case EffectDeleteMember:
		return fmt.Sprintf("zdel %d/%q %q", e.DB, e.Key, e.Member)
	case EffectDelete:
		return fmt.Sprintf("del %d/%q", e.DB, e.Key)
	case EffectFlushDB:
		return fmt.Sprintf("flushdb %d", e.DB)
	case EffectPutField:
		return fmt.Sprintf("hset %d/%q %q=%q", e.DB, e.Key, e.Member, e.Data)
	case EffectDeleteField:
		return fmt.Sprintf("hdel %d/%q %q", e.DB, e.Key, e.Member)
	case EffectListSpan:
		return fmt.Sprintf("lspan %d/%q [%d,+%d)", e.DB, e.Key, e.Pos, e.Len)
	case EffectListSet:
		return fmt.Sprintf("lset %d/%q %d=%q", e.DB, e.Key, e.Pos, e.Data)
	case EffectPatch:
		return fmt.Sprintf("patch %d/%q exp %d len %d at %d=%q", e.DB, e.Key, e.Value.Exp, e.Len, e.Pos, e.Data)
	case EffectPutLibrary:
		return fmt.Sprintf("lib %d/%q=%q", e.DB, e.Key, e.Data)
	case EffectDeleteLibrary:
		return fmt.Sprintf("libdel %d/%q", e.DB, e.Key)
	case EffectFlushLibraries:
		return fmt.Sprintf("libflush %d", e.DB)
	}
	return fmt.Sprintf("kind %d", e.Kind)
}

func joined(l []string) string { return strings.Join(l, "\n") }

// TestStoreLogAndCheckpoint: committed batches come back from Replay, in
// order, after a reopen; a checkpoint moves them to the snapshot (Load)
// and Replay then starts after it.
func TestStoreLogAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{LogSegmentSize: 64 << 10})
	commit(t, s, func(b *Batch) {
		b.PutString(0, []byte("counter"), 0, []byte("41"))
		b.PutString(15, []byte{0, 0xff}, 1_900_000_000_000, []byte("bin"))
		b.Put(1, []byte("h"), Value{Kind: KindHash, Items: [][]byte{[]byte("f"), []byte("v")}})
		b.Put(2, []byte("z"), Value{Kind: KindZSetWide, Exp: 7})
		b.PutMember(2, []byte("z"), []byte("m1"), 1.5)
	})
	commit(t, s, func(b *Batch) {
		b.DeleteMember(2, []byte("z"), []byte("m1"))
		b.Delete(3, []byte("gone"))
		b.DeleteKey(2, []byte("w"))
		b.DeleteDB(4)
	})
	want := []string{
		`put 0/"counter"=s:0:"41"`,
		`put 15/"\x00\xff"=s:1900000000000:"bin"`,
		`put 1/"h"=h:0:""` + `"f","v"`,
		`put 2/"z"=w:7:""`,
		`zput 2/"z" "m1"=1.5`,
		`zdel 2/"z" "m1"`,
		`del 3/"gone"`,
		`del 2/"w"`,
		`flushdb 4`,
	}
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, _ = openTest(t, dir, Options{LogSegmentSize: 64 << 10})
	if got := replayed(t, s); joined(got) != joined(want) {
		t.Fatalf("replay after reopen:\n%s\nwant\n%s", joined(got), joined(want))
	}
	// Many records, so that the log spans several files.
	for i := range 2000 {
		commit(t, s, func(b *Batch) { b.PutString(5, fmt.Appendf(nil, "k%d", i%10), 0, bytes.Repeat([]byte{'x'}, 100)) })
	}
	if s.LogSize() < 200_000 {
		t.Fatalf("LogSize %d after 2000 records of 100 bytes", s.LogSize())
	}

	// A checkpoint: the snapshot gets the state, the log before it goes.
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("after"), 0, []byte("1")) })
	snap := s.NewBatch()
	snap.PutString(0, []byte("counter"), 0, []byte("41"))
	snap.Put(2, []byte("z"), Value{Kind: KindZSetWide})
	snap.PutMember(2, []byte("z"), []byte("m2"), 2)
	if err := s.WriteSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, nil); err != nil {
		t.Fatal(err)
	}
	if n := s.LogSize(); n > 1000 {
		t.Fatalf("LogSize %d after the checkpoint", n)
	}
	files, _ := filepath.Glob(filepath.Join(dir, DirName, LogDirName, "*"))
	s.Close()
	s, _ = openTest(t, dir, Options{LogSegmentSize: 64 << 10})
	if got, want := joined(replayed(t, s)), `put 0/"after"=s:0:"1"`; got != want {
		t.Fatalf("replay after the checkpoint: %s (log files %v)", got, files)
	}
	wantSnap := []string{
		`0/"counter"=s:0:"41"`,
		`2/"z"=z:0:""` + `"m2","@\x00\x00\x00\x00\x00\x00\x00"`,
	}
	if got := dump(t, s); joined(got) != joined(wantSnap) {
		t.Fatalf("snapshot:\n%s\nwant\n%s", joined(got), joined(wantSnap))
	}
	// DeleteKey takes a set's members along; DeleteDB a whole database.
	snap.DeleteKey(2, []byte("z"))
	snap.PutString(3, []byte("x"), 0, []byte("y"))
	snap.DeleteDB(3)
	if err := s.WriteSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, s); joined(got) != wantSnap[0] {
		t.Fatalf("snapshot after deletes: %s", joined(got))
	}
}

// TestStoreMemberKeys: a wide set's members that are empty or start with
// a zero byte come back from the snapshot as they went in, beside their
// head (format 2 gave the empty member its head's key); the snapshot
// refuses the log's head-relative member ops.
func TestStoreMemberKeys(t *testing.T) {
	s, _ := openTest(t, t.TempDir(), Options{})
	b := s.NewBatch()
	b.Put(1, []byte("z"), Value{Kind: KindZSetWide, Exp: 5})
	for i, m := range []string{"", "\x00", "\x00\x00", "\x00m", "m"} {
		b.PutMember(1, []byte("z"), []byte(m), float64(i))
	}
	b.Put(1, []byte("y"), Value{Kind: KindZSetWide})
	b.PutMember(1, []byte("y"), []byte("a"), 1)
	b.PutMember(1, []byte("y"), []byte(""), 2)
	b.DeleteMember(1, []byte("y"), []byte(""))
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1/"y"=z:0:""` + `"a","?\xf0\x00\x00\x00\x00\x00\x00"`,
		`1/"z"=z:5:""` + `"","\x00\x00\x00\x00\x00\x00\x00\x00","\x00","?\xf0\x00\x00\x00\x00\x00\x00","\x00\x00","@\x00\x00\x00\x00\x00\x00\x00","\x00m","@\b\x00\x00\x00\x00\x00\x00","m","@\x10\x00\x00\x00\x00\x00\x00"`,
	}
	if got := dump(t, s); joined(got) != joined(want) {
		t.Fatalf("snapshot:\n%s\nwant\n%s", joined(got), joined(want))
	}
	b.Put(0, []byte("w"), Value{Kind: KindZSetWide})
	b.PutHeadMember([]byte("1"), 1)
	if err := s.WriteSnapshot(b); err == nil || !b.Empty() {
		t.Fatalf("WriteSnapshot of a log-only op: %v, batch left with %d records", err, b.Len())
	}
	if got := dump(t, s); joined(got) != joined(want) {
		t.Fatalf("snapshot changed by a refused batch:\n%s", joined(got))
	}
}

// TestStoreUpgradeFormat2: a format 2 store's member keys starting with a
// zero byte (written unescaped) read as the same members once upgraded,
// including one whose new key is another's old one.
func TestStoreUpgradeFormat2(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	head := AppendKey(nil, 1, []byte("z"))
	pb := s.db.NewBatch()
	pb.Set(head, AppendValue(nil, Value{Kind: KindZSetWide, Exp: 5}), nil)
	for i, m := range []string{"\x00", "\x00\x00", "\x00m", "m"} {
		sc := EncodeScore(float64(i))
		pb.Set(append(append([]byte(nil), head...), m...), sc[:], nil)
	}
	if err := pb.Commit(pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := s.setDurable(versionKey, []byte("2")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, _ = openTest(t, dir, Options{})
	want := `1/"z"=z:5:""` + `"\x00","\x00\x00\x00\x00\x00\x00\x00\x00","\x00\x00","?\xf0\x00\x00\x00\x00\x00\x00","\x00m","@\x00\x00\x00\x00\x00\x00\x00","m","@\b\x00\x00\x00\x00\x00\x00"`
	if got := joined(dump(t, s)); got != want {
		t.Fatalf("after the upgrade:\n%s\nwant\n%s", got, want)
	}
	checkFormatVersion(t, s)
}

// checkFormatVersion fails unless s records this build's format.
func checkFormatVersion(t *testing.T, s *Store) {
	t.Helper()
	v, closer, err := s.db.Get(versionKey)
	if err != nil || string(v) != formatVersion {
		t.Fatalf("version %q, %v", v, err)
	}
	closer.Close()
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

// TestStoreTornTail damages the newest Pebble log of a store written by
// format 1 (Pebble with its own log, before the effect log) as a crash or
// a bad disk would: the store opens, upgrades, keeps every record before
// the damage and logs the cut. The effect log's own damage is effectlog's
// tests'.
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
			s, err := pebble.Open(filepath.Join(dir, DirName), &pebble.Options{Logger: pebbleLogger{slog.New(slog.NewTextHandler(io.Discard, nil))}})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Set(versionKey, []byte("1"), pebble.Sync); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				// One Pebble log record per key.
				k := AppendKey(nil, 0, fmt.Appendf(nil, "k%02d", i))
				v := AppendString(nil, 0, bytes.Repeat([]byte{'v'}, 10))
				if err := s.Set(k, v, pebble.NoSync); err != nil {
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

// TestStoreDiskFull: a failing disk under the effect log is reported by
// Err with C's wording, holds Sync back instead of failing it, and nothing
// is lost once the disk works again; the same for the snapshot's disk and
// a checkpoint.
func TestStoreDiskFull(t *testing.T) {
	dir := t.TempDir()
	full := &atomic.Bool{}
	fault := func(op string) error {
		if full.Load() {
			return errNoSpace
		}
		return nil
	}
	s, lb := openTest(t, dir, Options{FS: failFS{vfs.Default, full}, LogFault: fault})
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("before"), 0, []byte("1")) })
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	n := commit(t, s, func(b *Batch) { b.PutString(0, []byte("during"), 0, []byte("2")) })
	synced := make(chan error, 1)
	go func() { synced <- s.Sync(n) }()
	waitErr := func() {
		t.Helper()
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
	}
	waitErr()
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

	// A checkpoint on a full disk waits for it too.
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	full.Store(true)
	done := make(chan error, 1)
	go func() {
		b := s.NewBatch()
		b.PutString(0, []byte("before"), 0, []byte("1"))
		b.PutString(0, []byte("during"), 0, []byte("2"))
		err := s.WriteSnapshot(b)
		if err == nil {
			err = s.EndCheckpoint(from, nil)
		}
		done <- err
	}()
	waitErr()
	full.Store(false)
	if err := <-done; err != nil {
		t.Fatal(err)
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
