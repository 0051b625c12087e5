package cell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/rdb"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

// Loading a Redis RDB file at start: how a keyspace comes over from Redis.
// When the server starts with an empty store (one never written: no base,
// no log) or with no store at all, and <dir>/<dbfilename> exists, it is
// loaded before the server serves; with a store, a checkpoint that
// rewrites the keyspace then makes every loaded key durable, so the file
// is never loaded again over what the store holds. A store that has data
// wins over the file, as Redis's AOF wins over its RDB.
//
// The file streams through (rdb.Reader): one key at a time is decoded and
// put. A bad file fails the start with its name and the offset, and since
// nothing is served or made durable before the whole file has loaded, no
// half-loaded keyspace is ever served as complete.

// rdbPath is <dir>/<dbfilename>.
func (s *Server) rdbPath() string {
	return filepath.Join(s.cfg.Dir, configParamByName("dbfilename").value(s))
}

// rdbLoadStats is what a load found, for its log line.
type rdbLoadStats struct {
	perDB                              []int
	expired, unsupported, beyondDBs    int
	functions, moduleAux, emptySkipped int
}

// loadRDBAtStart loads the RDB file when the store is empty or absent.
func (s *Server) loadRDBAtStart() error {
	path := s.rdbPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("RDB file %s: %w", path, err)
	}
	defer f.Close()
	if s.store != nil && (s.store.HasBase() || s.store.LogSize() != 0 || s.loadedKeys != 0) {
		s.log.Info("rdb: not loading the RDB file: the store holds the data", "file", path)
		return nil
	}
	start := time.Now()
	// As loadRDBFile, through the checkpoint that makes the keys durable:
	// what it allocates is little beside the keyspace, and a collection
	// started by it would only find the keyspace live, at the cost of a
	// pass over every key before the server serves. And after, until the
	// heap has grown as GOGC lets it (load_gc.go).
	beginLoadGC()
	loaded := false
	defer func() { endLoadGC(loaded) }()
	var base *rdbBase
	if s.store != nil {
		t, err := s.store.BeginBaseTables()
		if err != nil {
			return fmt.Errorf("RDB file %s: starting the store's base: %w", path, err)
		}
		defer t.Abort()
		base = &rdbBase{t: t}
	}
	st, err := loadRDBFile(s, f, path, base)
	if err != nil {
		return err
	}
	total := 0
	attrs := []any{"file", path}
	for db, n := range st.perDB {
		if n > 0 {
			total += n
			attrs = append(attrs, fmt.Sprintf("db%d", db), n)
		}
	}
	attrs = append(attrs, "keys", total, "ms", time.Since(start).Milliseconds())
	for _, c := range []struct {
		name string
		n    int
	}{{"expired_skipped", st.expired}, {"unsupported_type_skipped", st.unsupported}, {"beyond_databases_skipped", st.beyondDBs},
		{"empty_skipped", st.emptySkipped}, {"function_libraries", st.functions}, {"module_aux_skipped", st.moduleAux}} {
		if c.n > 0 {
			attrs = append(attrs, c.name, c.n)
		}
	}
	if base != nil && (total > 0 || st.functions > 0) {
		err := base.flush()
		if err == nil && rdbCrashBeforeCheckpoint {
			err = errors.New("a crash, for the test, after the base's last ingest")
		}
		if err == nil {
			err = s.checkpointWith(&writtenBase{w: base.t.Writer(), keys: total})
		}
		if err != nil {
			return fmt.Errorf("RDB file %s: loaded, but making it durable failed: %w", path, err)
		}
		attrs = append(attrs, "durable_ms", time.Since(start).Milliseconds())
	}
	s.log.Info("rdb: loaded", attrs...)
	loaded = true
	return nil
}

// rdbBase writes the keys a load puts into the store's new base as they
// come (keyspace.PutBase): a rewrite after the load would go over every
// key again, a cache miss each, which made a durable load of a million
// keys cost a third more CPU than the load alone. The chunks go into
// sstables that Pebble ingests (persist.BaseTables), rather than through
// its memtables. The base is in force only once the checkpoint after the
// load ends (persist.EndCheckpoint): a crash before leaves a store
// without a base, which the next start finds empty, so it loads the file
// again, and its rewrite drops the chunks ingested.
type rdbBase struct{ t *persist.BaseTables }

// rdbBaseTable is how much of the base a load writes into one table
// before Pebble ingests it: a few ingests per load, each a few fsyncs,
// and the files waiting for it stay small. A var for the tests, which
// make a small load ingest part of its base before it fails.
var rdbBaseTable int64 = 16 << 20

// rdbCrashBeforeCheckpoint, set by tests, fails a durable load as a
// crash would between the base's last ingest and the checkpoint that puts
// it in force.
var rdbCrashBeforeCheckpoint bool

// put writes db's key, e, to the base.
func (r *rdbBase) put(db int, key []byte, e *keyspace.Entry) error {
	w := r.t.Writer()
	keyspace.PutBase(w, db, key, e)
	if !w.Full() {
		return nil
	}
	if err := r.t.Seal(); err != nil {
		return err
	}
	if r.t.Pending() < rdbBaseTable {
		return nil
	}
	return r.t.Ingest()
}

// flush ingests what is left of the base.
func (r *rdbBase) flush() error { return r.t.Ingest() }

// loadRDBFile puts every key of the file in the keyspace, and with base
// into the store's new base too.
func loadRDBFile(s *Server, f *os.File, path string, base *rdbBase) (rdbLoadStats, error) {
	st := rdbLoadStats{perDB: make([]int, s.ks.DBs())}
	// As loadStore: what a load allocates stays live, so the collector
	// would find little to free.
	beginLoadGC() // load_gc.go
	defer endLoadGC(false)
	var size int64 = -1
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	r, err := rdb.NewReader(f, size)
	if err != nil {
		return st, fmt.Errorf("RDB file %s: %w", path, err)
	}
	r.Borrow = true // putRDBKey copies what it keeps
	now := time.Now().UnixMilli()
	zcfg := s.zsetConfig()
	ahead := &rdbAhead{s: s, st: &st, path: path}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			if err := ahead.flush(); err != nil {
				return st, err
			}
			break
		}
		if err != nil {
			return st, fmt.Errorf("RDB file %s: %w", path, err)
		}
		switch rec.Kind {
		case rdb.KindResizeDB:
			if rec.DB < s.ks.DBs() && rec.Size > 0 {
				s.ks.Reserve(rec.DB, int(min(rec.Size, 1<<28)))
			}
		case rdb.KindFunction:
			if err := s.loadRDBFunction(rec.Value.Str); err != nil {
				return st, fmt.Errorf("RDB file %s: function library at offset %d: %w", path, rec.Offset, err)
			}
			st.functions++
		case rdb.KindModuleAux:
			st.moduleAux++
			s.log.Warn("rdb: skipping a module's AUX data", "file", path, "module", rec.Value.Module, "offset", rec.Offset)
		case rdb.KindKey:
			if err := putRDBKey(s, &rec, now, zcfg, &st, path, base, ahead); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// loadRDBFunction loads a library of the file (FUNCTION2 record),
// replacing one of the same name, as Redis's rdbFunctionLoad.
func (s *Server) loadRDBFunction(code []byte) error {
	lib, err := s.scripts.LoadLibrary(code)
	if err != nil {
		return err
	}
	if msg := s.functions.add([]*script.Library{lib}, true, true); msg != "" {
		return errors.New(msg)
	}
	s.scripts.LibrariesChanged()
	return nil
}

// skipLogLines is how many skipped keys of each kind get a log line of
// their own; the load's summary line counts them all.
const skipLogLines = 10

// rdbLoadAhead is how many keys a load makes (keyspace.LoadMake, which
// asks for the index lines each will be put in) before it puts the first
// into the index (LoadAdd): enough for those lines to arrive meanwhile.
const rdbLoadAhead = 8

// rdbAhead holds the keys a load made and has yet to add, oldest first.
type rdbAhead struct {
	s     *Server
	st    *rdbLoadStats
	path  string
	keys  [rdbLoadAhead]rdbStaged
	made  int // keys made; the last min(made, rdbLoadAhead) wait in keys
	added int
}

// rdbStaged is a key made, with its database and offset for the error
// that a key listed twice gets.
type rdbStaged struct {
	k   keyspace.Staged
	db  int
	off int64
}

// stage adds the oldest key waiting if the ring is full, then k.
func (a *rdbAhead) stage(k rdbStaged) error {
	if a.made-a.added == rdbLoadAhead {
		if err := a.addOldest(); err != nil {
			return err
		}
	}
	a.keys[a.made%rdbLoadAhead] = k
	a.made++
	return nil
}

// flush adds every key waiting.
func (a *rdbAhead) flush() error {
	for a.added < a.made {
		if err := a.addOldest(); err != nil {
			return err
		}
	}
	return nil
}

func (a *rdbAhead) addOldest() error {
	k := &a.keys[a.added%rdbLoadAhead]
	if !a.s.ks.LoadAdd(k.k) {
		// Redis refuses such a file too ("RDB has duplicated key").
		return fmt.Errorf("RDB file %s: key %q of db %d listed twice, at offset %d", a.path, k.k.Key(), k.db, k.off)
	}
	a.st.perDB[k.db]++
	*k = rdbStaged{}
	a.added++
	return nil
}

// putRDBKey stores one key (through ahead), or skips it (and says why)
// when it expired, lies beyond --databases, or is of a type the keyspace
// cannot hold. With base, the key goes into the store's new base as it is
// made: a key listed twice fails the whole load, so the base never
// comes into force with it.
func putRDBKey(s *Server, rec *rdb.Record, now int64, zcfg zsetlite.Config, st *rdbLoadStats, path string, base *rdbBase, ahead *rdbAhead) error {
	if rec.Expire != 0 && rec.Expire <= now {
		st.expired++ // as a Redis master loading: gone already
		return nil
	}
	if rec.DB >= s.ks.DBs() {
		if st.beyondDBs++; st.beyondDBs <= skipLogLines {
			s.log.Warn("rdb: skipping a key of a database beyond --databases", "file", path, "db", rec.DB, "key", string(rec.Key))
		}
		return nil
	}
	e := &keyspace.Entry{Exp: rec.Expire}
	if rec.Value.Type == rdb.TypeString {
		if n, ok := resp.ParseInt(rec.Value.Str); ok {
			e.SetInt(n)
		} else {
			e.SetStr(bytes.Clone(rec.Value.Str)) // borrowed from the reader
		}
	} else {
		_, obj, ok := valueObject(&rec.Value, zcfg, int(s.live.setMaxIntsetEntries.Load()))
		if !ok {
			if rec.Value.Type != rdb.TypeStream && rec.Value.Type != rdb.TypeModule && rec.Value.Len() == 0 {
				st.emptySkipped++ // Redis skips empty keys too
				return nil
			}
			if rec.Value.Type == rdb.TypeModule && rec.Value.Module == windowModule {
				return fmt.Errorf("RDB file %s: CL.WINDOW key %q of a version or data cellserver cannot read, at offset %d", path, rec.Key, rec.Offset)
			}
			if rec.Value.Type == rdb.TypeHash || rec.Value.Type == rdb.TypeZSet || rec.Value.Type == rdb.TypeSet {
				return fmt.Errorf("RDB file %s: %s %q with a duplicate field at offset %d", path, rec.Value.Type, rec.Key, rec.Offset)
			}
			if st.unsupported++; st.unsupported <= skipLogLines {
				s.log.Warn("rdb: skipping a key of a type cellserver does not hold", "file", path, "db", rec.DB,
					"key", string(rec.Key), "type", rec.Value.Type.String(), "offset", rec.Offset)
			}
			return nil
		}
		e.SetObj(obj)
	}
	staged := s.ks.LoadMake(rec.DB, rec.Key, e)
	if base != nil {
		if err := base.put(rec.DB, rec.Key, e); err != nil {
			return fmt.Errorf("RDB file %s: writing the store: %w", path, err)
		}
	}
	return ahead.stage(rdbStaged{staged, rec.DB, rec.Offset})
}
