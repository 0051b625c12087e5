package cell

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
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
// The file holds the keyspace as it was at one moment, as Redis's forked
// copy does, while clients keep writing: a short stop of every write marks
// each shard, and a shard is then encoded before anything changes it,
// by the first writer to take it or else by the save (keyspace.Snapshot).
// Keys already expired at that moment are left out, as Redis leaves them
// out.

// saveWithRDB is a save (SAVE's, BGSAVE's, a save point's, SHUTDOWN
// SAVE's): with a store, its checkpoint (syncCheckpoint) and then the RDB
// file; without one, the file alone. Once the file is written it counts as
// Redis counts a save: LASTSAVE, the changes since, and a good status
// for the last background save (which lifts MISCONF, save_rules.go).
func (s *Server) saveWithRDB() error {
	if s.store != nil {
		if err := s.syncCheckpoint(); err != nil {
			return err
		}
	}
	dirty, err := s.writeRDB()
	if err != nil {
		return err
	}
	s.lastSave.Store(time.Now().Unix())
	s.dirtyAtSave.Store(dirty)
	s.saves.Add(1)
	s.bgsaveFailed.Store(false)
	return nil
}

// writeRDB writes the keyspace to <dir>/<dbfilename> atomically, and
// returns the count of writes (totalDirty) at the moment it holds.
func (s *Server) writeRDB() (dirty int64, err error) {
	s.rdbMu.Lock()
	defer s.rdbMu.Unlock()
	start := time.Now()
	path := s.rdbPath()
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("temp-%d.rdb", os.Getpid()))
	f, err := os.Create(tmp)
	if err != nil {
		return 0, fmt.Errorf("rdb: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	keys, dirty, err := s.encodeRDB(f)
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
		return 0, fmt.Errorf("rdb: writing %s: %w", path, err)
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync() // the rename itself durable
		d.Close()
	}
	s.log.Info("rdb: saved", "file", path, "keys", keys, "ms", time.Since(start).Milliseconds())
	return dirty, nil
}

// encodeRDB writes the keyspace, as it was at one moment for every shard
// (keyspace.Snapshot), in RDB format to out. dirty is the keyspace's
// count of writes at that moment.
func (s *Server) encodeRDB(out io.Writer) (keys int, dirty int64, err error) {
	now := time.Now()
	nowMs := now.UnixMilli()
	libs := s.functions.list()
	var n atomic.Int64 // keys encoded, by the save or by writers
	sn := s.ks.TakeSnapshot(func(dst []byte, _ int, key string, e *keyspace.Entry) []byte {
		if e.Exp != 0 && e.Exp <= nowMs {
			return dst
		}
		v, ok := entryValue(e)
		if !ok {
			return dst // a CL.WINDOW window: Redis has no type for it (README)
		}
		// The key is only read, under the shard's lock.
		b, err := rdb.AppendKey(dst, unsafe.Slice(unsafe.StringData(key), len(key)), &v, e.Exp)
		if err != nil {
			return dst
		}
		n.Add(1)
		return b
	})
	defer sn.Release()
	w := rdb.NewWriter(out, "redis-ver", s.cfg.Version, "redis-bits", strconv.Itoa(strconv.IntSize),
		"ctime", strconv.FormatInt(now.Unix(), 10), "aof-base", "0")
	// Function libraries come before the databases, as in Redis's files.
	for _, l := range libs {
		if err = w.Function(l.Code); err != nil {
			return 0, 0, err
		}
	}
	for db := 0; db < s.ks.DBs() && err == nil; db++ {
		if sn.Keys(db) == 0 {
			continue
		}
		w.SelectDB(db, uint64(sn.Keys(db)), 0)
		for i := 0; i < s.ks.Shards() && err == nil; i++ {
			err = w.Raw(sn.Part(db, i))
		}
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return int(n.Load()), sn.Dirty(), err
}
