package persist

import (
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestStoreOpenFullDisk: on a disk with no room, Open does not wait for
// it: the store opens read-only, Load gives what was saved and logged,
// Err reports the disk (the server refuses writes), and a checkpoint is
// refused. Reopen opens it for writing once there is room; nothing was
// lost, and what is written after is kept.
func TestStoreOpenFullDisk(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("saved"), 0, []byte("1")) })
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	b.PutString(0, []byte("saved"), 0, []byte("1"))
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, nil); err != nil {
		t.Fatal(err)
	}
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("logged"), 0, []byte("2")) })
	if err := s.SyncAll(); err != nil {
		t.Fatal(err)
	}
	s.Close() // "logged" is only in the log: the start replays it

	full := &atomic.Bool{}
	full.Store(true)
	opened := make(chan *Store, 1)
	var lb *logBuf
	go func() {
		var s *Store
		s, lb = openTest(t, dir, Options{FS: failFS{vfs.Default, full}})
		opened <- s
	}()
	select {
	case s = <-opened:
	case <-time.After(10 * time.Second):
		full.Store(false) // let the test end
		t.Fatal("Open waited for the full disk")
	}
	if !s.ReadOnly() {
		t.Fatal("ReadOnly() = false on a full disk")
	}
	if got := Strerror(s.Err()); got != "No space left on device" {
		t.Fatalf("Err() = %v", s.Err())
	}
	if got, want := strings.Join(dump(t, s), " "), `0/"saved"=s:0:"1"`; got != want {
		t.Fatalf("loaded %s, want %s", got, want)
	}
	if got, want := strings.Join(replayed(t, s), " "), `put 0/"logged"=s:0:"2"`; got != want {
		t.Fatalf("replayed %s, want %s", got, want)
	}
	if _, err := s.BeginCheckpoint(); err == nil {
		t.Fatal("a checkpoint began on the read-only store")
	}
	if err := s.Reopen(); err != nil || !s.ReadOnly() {
		t.Fatalf("Reopen on the full disk: %v, ReadOnly %v", err, s.ReadOnly())
	}
	if _, err := os.Stat(dir + "/" + DirName + "/" + probeName); !os.IsNotExist(err) {
		t.Fatalf("the probe file is left: %v", err)
	}

	full.Store(false)
	if err := s.Reopen(); err != nil {
		t.Fatalf("Reopen with room: %v", err)
	}
	if s.ReadOnly() || s.Err() != nil {
		t.Fatalf("after Reopen: ReadOnly %v, Err %v", s.ReadOnly(), s.Err())
	}
	if !strings.Contains(lb.String(), "disk works again") {
		t.Fatalf("log:\n%s", lb.String())
	}
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("after"), 0, []byte("3")) })
	from, err = s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	b = s.NewBatch()
	for _, kv := range [][2]string{{"saved", "1"}, {"logged", "2"}, {"after", "3"}} {
		b.PutString(0, []byte(kv[0]), 0, []byte(kv[1]))
	}
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, _ := openTest(t, dir, Options{})
	want := `0/"after"=s:0:"3" 0/"logged"=s:0:"2" 0/"saved"=s:0:"1"`
	if got := strings.Join(dump(t, s2), " "); got != want {
		t.Fatalf("after the checkpoint: %s, want %s", got, want)
	}
}

// TestStoreCreateFullDisk: a new store on a disk with no room cannot be
// created; Open says so at once rather than waiting.
func TestStoreCreateFullDisk(t *testing.T) {
	full := &atomic.Bool{}
	full.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := Open(t.TempDir(), Options{FS: failFS{vfs.Default, full}, Logger: slog.New(slog.DiscardHandler)})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no room") || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("Open = %v", err)
		}
	case <-time.After(10 * time.Second):
		full.Store(false)
		t.Fatal("Open waited for the full disk")
	}
}

// noPreallocFS is a file system that cannot reserve blocks ahead
// (Preallocate fails with EOPNOTSUPP), as some network file systems.
type noPreallocFS struct{ vfs.FS }

type noPreallocFile struct{ vfs.File }

func (fs noPreallocFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return noPreallocFile{f}, nil
}

func (noPreallocFile) Preallocate(off, n int64) error { return syscall.EOPNOTSUPP }

// TestStoreOpenNoPreallocate: a file system without Preallocate is not
// taken for a full disk.
func TestStoreOpenNoPreallocate(t *testing.T) {
	s, _ := openTest(t, t.TempDir(), Options{FS: noPreallocFS{vfs.Default}})
	if s.ReadOnly() || s.Err() != nil {
		t.Fatalf("ReadOnly %v, Err %v", s.ReadOnly(), s.Err())
	}
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("k"), 0, []byte("v")) })
	if _, err := s.BeginCheckpoint(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreSizesDoNotWait: while a Reopen (or a Close) holds the store,
// perhaps waiting for the disk, LogSize and SnapshotSize give their last
// answers at once: INFO does not wait with it.
func TestStoreSizesDoNotWait(t *testing.T) {
	s, _ := openTest(t, t.TempDir(), Options{})
	commit(t, s, func(b *Batch) { b.PutString(0, []byte("k"), 0, []byte("v")) })
	logSize, snapSize := s.LogSize(), s.SnapshotSize()
	if logSize == 0 || snapSize == 0 {
		t.Fatalf("sizes %d, %d", logSize, snapSize)
	}
	s.mu.Lock()
	done := make(chan [2]uint64, 1)
	go func() { done <- [2]uint64{uint64(s.LogSize()), s.SnapshotSize()} }()
	select {
	case got := <-done:
		if got != [2]uint64{uint64(logSize), snapSize} {
			t.Errorf("while held: %v, want %d, %d", got, logSize, snapSize)
		}
	case <-time.After(5 * time.Second):
		s.mu.Unlock()
		t.Fatal("LogSize or SnapshotSize waited for the store")
	}
	s.mu.Unlock()
}

// TestStoreOpenFullDiskOlderFormat: on a full disk a store of an older
// format that reads as it is opens read-only unchanged and is upgraded by
// Reopen; one of format 2, whose keys must be rewritten first, is refused
// with a message that says why.
func TestStoreOpenFullDiskOlderFormat(t *testing.T) {
	for _, tt := range []struct {
		ver     string
		refused bool
	}{{"3", false}, {"2", true}} {
		t.Run("format "+tt.ver, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := openTest(t, dir, Options{})
			records(t, s, func(b *Batch) { b.PutInt(0, []byte("k"), 0, 3) })
			if err := s.setDurable(versionKey, []byte(tt.ver)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			full := &atomic.Bool{}
			full.Store(true)
			o := Options{FS: failFS{vfs.Default, full}, Logger: slog.New(slog.DiscardHandler)}
			s, err := Open(dir, o)
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), "must be upgraded from format 2, which needs room") {
					t.Fatalf("Open = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, _ := state(t, s); got != `0/"k"=i:0:""3` {
				t.Fatalf("read-only: %s", got)
			}
			if v, closer, err := s.db.Get(versionKey); err != nil || string(v) != tt.ver {
				t.Fatalf("read-only version %q, %v", v, err)
			} else {
				closer.Close()
			}
			full.Store(false)
			if err := s.Reopen(); err != nil || s.ReadOnly() {
				t.Fatalf("Reopen: %v, ReadOnly %v", err, s.ReadOnly())
			}
			checkFormatVersion(t, s)
		})
	}
}
