package persist

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Starting on a full disk.
//
// Pebble's Open writes (a new MANIFEST, an OPTIONS file), so on a disk
// with no room left it would wait in stallFS, and the server would not
// listen, until the disk had room. Redis in that state starts and serves
// reads while it refuses writes with MISCONF, and so does the store: when
// Open finds no room (hasRoom), it opens Pebble read-only, which is all
// Load needs, and publishes the error, which makes the server refuse
// writes. The effect log opens as usual: it writes nothing on a full disk
// (its blocks for the next records are reserved when there is room).
// Reopen, called by the server until it succeeds, opens Pebble for writing
// once there is room; then writes are accepted and checkpoints run again.

// roomNeeded is the room a start is sure to find, with a margin: Pebble's
// new MANIFEST and OPTIONS file, and the effect log's first chunk of
// blocks (4 MB).
const roomNeeded = 8 << 20

// probeName is the file hasRoom reserves room in, then deletes.
const probeName = "space-probe"

// hasRoom reserves roomNeeded bytes of blocks in a file of dir, and
// deletes it: an error says the disk has no room (or refuses writes).
func hasRoom(fs vfs.FS, dir string) error {
	name := fs.PathJoin(dir, probeName)
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	defer fs.Remove(name)
	// The write finds a full disk where the file system cannot reserve
	// blocks ahead: Preallocate does nothing there, or fails with an
	// error that says so, which is no sign of a full disk.
	_, err = f.Write(make([]byte, 4096))
	if err == nil {
		err = f.Preallocate(0, roomNeeded)
		if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINTR) {
			err = nil
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadOnly reports whether Open found no room on the disk and Reopen has
// not yet opened the store for writing.
func (s *Store) ReadOnly() bool {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.readOnly != nil
}

// Reopen opens the snapshot for writing if the store is read-only and the
// disk has room again (ReadOnly then says so). The
// store's other calls wait while it runs, but for LogSize and SnapshotSize,
// which give their last answers.
func (s *Store) Reopen() error {
	s.failMu.Lock()
	ro := s.readOnly
	s.failMu.Unlock()
	if ro == nil {
		return nil
	}
	if hasRoom(s.fs, s.path) != nil {
		return nil // no room yet
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	s.pb.Close()
	if err := s.db.Close(); err != nil {
		s.log.Warn("persistence: closing the read-only snapshot", "err", err)
	}
	s.setReadOnly(nil)
	db, err := s.openPebble()
	if err == nil {
		s.db, s.pb = db, newSnapshotBatch(db)
		if err = s.checkVersion(); err == nil {
			s.recovered("start")
			return nil
		}
		db.Close()
	}
	// Not a full disk (stallFS waits out those): put the read-only
	// snapshot back.
	s.setReadOnly(ro)
	db, rerr := s.openPebble()
	if rerr != nil {
		// Nothing to read or write with: the store is as good as closed.
		s.closed = true
		return fmt.Errorf("reopening %s: %w; and read-only again: %w", s.path, err, rerr)
	}
	s.db, s.pb = db, newSnapshotBatch(db)
	return fmt.Errorf("reopening %s: %w", s.path, err)
}

func (s *Store) setReadOnly(err error) {
	s.failMu.Lock()
	s.readOnly = err
	s.failMu.Unlock()
}
