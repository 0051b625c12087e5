package cell

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unsafe"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
)

// Writing the keyspace as a Redis RDB file: SAVE, BGSAVE and SHUTDOWN SAVE
// write <dir>/<dbfilename> (after the store's checkpoint, when there is a
// store), and SYNC sends the same bytes to `redis-cli --rdb`. The file is
// written under a temporary name, synced and renamed over the old one, so
// a crash leaves the old file or the new one, never a part.
//
// The keyspace is written a shard at a time under that shard's lock, as
// Redis writes a forked copy: each key is written as it was at one
// moment, but keys of different shards may be written at different
// moments while clients keep writing (Redis's copy is one moment for all).
// Keys already expired are left out, as Redis leaves them out.

// saveWithRDB is a save (SAVE's, BGSAVE's, a save point's, SHUTDOWN
// SAVE's): with a store, its checkpoint (syncCheckpoint) and then the RDB
// file; without one, the file alone. Once the file is written it counts as
// Redis counts a save: LASTSAVE, the changes since, and a good status
// for the last background save (which lifts MISCONF, save_rules.go).
func (s *Server) saveWithRDB() error {
	dirty := s.totalDirty()
	if s.store != nil {
		if err := s.syncCheckpoint(); err != nil {
			return err
		}
	}
	if err := s.writeRDB(); err != nil {
		return err
	}
	s.lastSave.Store(time.Now().Unix())
	s.dirtyAtSave.Store(dirty)
	s.saves.Add(1)
	s.bgsaveFailed.Store(false)
	return nil
}

// writeRDB writes the keyspace to <dir>/<dbfilename> atomically.
func (s *Server) writeRDB() (err error) {
	s.rdbMu.Lock()
	defer s.rdbMu.Unlock()
	start := time.Now()
	path := s.rdbPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("rdb: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	keys, err := s.encodeRDB(f)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("rdb: writing %s: %w", path, err)
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync() // the rename itself durable
		d.Close()
	}
	s.log.Info("rdb: saved", "file", path, "keys", keys, "ms", time.Since(start).Milliseconds())
	return nil
}

// encodeRDB writes the keyspace in RDB format to out.
func (s *Server) encodeRDB(out io.Writer) (keys int, err error) {
	now := time.Now()
	w := rdb.NewWriter(out, "redis-ver", s.cfg.Version, "redis-bits", strconv.Itoa(strconv.IntSize),
		"ctime", strconv.FormatInt(now.Unix(), 10), "aof-base", "0")
	nowMs := now.UnixMilli()
	// Function libraries come before the databases, as in Redis's files.
	for _, l := range s.functions.list() {
		if err = w.Function(l.Code); err != nil {
			return 0, err
		}
	}
	for db := 0; db < s.ks.DBs() && err == nil; db++ {
		if s.ks.DBSize(db) == 0 {
			continue
		}
		w.SelectDB(db, uint64(s.ks.DBSize(db)), 0)
		s.ks.Each(db, func(key string, e *keyspace.Entry) {
			if err != nil || e.Exp != 0 && e.Exp <= nowMs {
				return
			}
			v, ok := entryValue(e)
			if !ok {
				return // a CL.WINDOW window: Redis has no type for it (README)
			}
			// The key is only read, before the shard's lock is let go.
			err = w.Key(unsafe.Slice(unsafe.StringData(key), len(key)), &v, e.Exp)
			keys++
		})
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return keys, err
}
