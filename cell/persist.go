package cell

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/persist"
)

// Persistence glue: how the keyspace reaches persist.Store.
//
// Every mutation ends in wrote() or wroteOver(), which note the (db, key)
// on the client. When the command (or a whole EXEC or script) has run, and
// while its shards are still locked, commitEffects serialises the new
// state of each noted key into one record of the effect log: its whole
// value, a delete, or, for a sorted set changed in place, its expiry and
// the members that changed (zsetRec), which keeps a sliding window's
// record at two members instead of the whole window. A key set to an int
// (CL.THROTTLE's TAT, SET of a number, INCR) skips the note: wroteInt
// encodes its record at once (logInt), ahead of the noted keys' final
// states. The record is in the kernel's page cache before any reply
// leaves (persist.Store.Commit), so a crash of the process loses nothing
// acknowledged under any policy. Two clients writing one key hold its
// shard in turn, so their records reach the log in the same order as their
// effects reached memory. FLUSHDB and FLUSHALL become one range delete per
// database, encoded where they run, so after the records encoded before
// them and before the keys the same execution wrote afterwards. The commit
// also marks what the next checkpoint must write to the snapshot
// (checkpoint.go).
//
// Under appendfsync always, a client's replies wait in flush() until the
// last batch that changed any shard its commands held is synced: its own
// writes, and the unsynced writes of others that it may have read. So no
// reply reveals data a crash could lose, while a read of shards nobody
// wrote lately never waits (and keeps working while the disk fails). The
// waits of all clients share fsyncs (persist.Store.Sync). Under everysec
// a ticker syncs once a second; under no, the kernel writes the pages back
// when it decides.
//
// With --appendonly no there is no store: s.store is nil and each hook is
// one nil check.

// persistState is the Server's persistence: the store, the checkpoints'
// schedule and state, the saves' figures and what loading keeps aside.
type persistState struct {
	// store is the durable keyspace (effect log and snapshot); nil with
	// appendonly no, or for servers made by New.
	store *persist.Store
	// Checkpoints (persist_checkpoint.go): one at a time under ckptMu;
	// ckptFull after one failed (the next rewrites); overKeys the key
	// records written over the base since it was; ckptBase the store's
	// size after the last one; replayed the log records replayed at
	// start; ckptBatch the
	// batch checkpoints gather what they write in, kept from one to the
	// next so that its few megabytes are not garbage each time.
	ckptMu   sync.Mutex
	ckptFull bool
	// rdbMu serialises writes of the RDB file (rdb_save.go); memOnly
	// marks a server made by New, which writes no file at all.
	rdbMu     sync.Mutex
	memOnly   bool
	ckptBatch *persist.Batch
	overKeys  int64
	foreign   map[dbKey][]byte // keepForeign's keys and encoded values
	// foreignSets: the sets among them the log's replay changes, decoded
	// until it ends; foreignEmpty: those the current record left empty.
	foreignSets  map[dbKey]*foreignSet
	foreignEmpty []dbKey
	// expiredSets: loadStore's expired sorted sets, until the log's
	// replay has seen whether it changes them (keepExpiredSet).
	expiredSets map[dbKey]expiredSet
	// Rewrites done since start and the last one's duration (INFO's
	// aof_rewrites, aof_last_rewrite_time_sec; -1: none).
	rewrites    atomic.Int64
	lastRewrite atomic.Int64
	ckptBase    atomic.Int64
	replayed    int
	// The appendfsync policy, live (CONFIG SET appendfsync).
	fsyncAlways   atomic.Bool
	fsyncEverySec atomic.Bool
	evictFx       *keyspace.Effects // maxmemory's deletions, under ops.mem.mu
	lastSave      atomic.Int64      // Unix s of the last save (LASTSAVE)
	lastBgsaveTry atomic.Int64      // Unix s the last background save started
	dirtyAtSave   atomic.Int64      // totalDirty() at that save
	saves         atomic.Int64      // saves done (rdb_saves)
	checkpoints   atomic.Int64      // checkpoints done, saves' and the log's
	bgsave        atomic.Bool       // a BGSAVE is running
	// rewriting: the running background save is a checkpoint of our own
	// (after a replay, or for the log's size), Redis's AOF rewrite: SAVE
	// waits for it instead of refusing.
	rewriting     atomic.Bool
	bgsaveStart   atomic.Int64 // Unix s it started
	bgsaveSecs    atomic.Int64 // how long the last one took, -1: none yet
	bgsaveFailed  atomic.Bool  // the last one failed
	ckptNs        atomic.Int64 // how long the last checkpoint took, ns (/metrics)
	lastFsync     atomic.Int64 // Unix ns of the last fsync of the whole log that succeeded
	loading       atomic.Bool  // loading the store at start (INFO loading, -LOADING)
	loadProgress  loadProgress // its progress (loading.go)
	loadedKeys    int64        // keys loaded at start
	loadedExpired int64        // keys found expired at start
	// What the start dropped as damaged: records of the snapshot or log
	// that did not decode, and what effectlog-load-damaged skip skipped
	// of the log (persist_damage.go).
	loadCorrupt int64
	loadDamage  persist.LogDamage
	// libs: the function libraries' durability (functions_persist.go).
	libs libraryState
}

// Fsync policies, as appendfsync spells them.
const (
	FsyncAlways   = "always"
	FsyncEverySec = "everysec"
	FsyncNo       = "no"
)

// loadStore fills the keyspace from the store at start. Keys already
// expired are dropped from memory; the next rewrite drops them from the
// store.
func (s *Server) loadStore() error {
	// Nearly everything the snapshot's load allocates stays live, so a
	// collection during it finds little to free: pausing the collector
	// cuts the load time by about a third. Not during the log's replay,
	// which replaces values as often as the log changed them: its garbage
	// is as large as the log, which may be as large as the data
	// (TestReplayCollectsGarbage). With no log to replay the pause goes
	// on after the load, as an RDB load's does (load_gc.go), so the
	// first collection, a pass over all that was loaded, waits until
	// memory grows.
	beginLoadGC()
	gcOn := false
	defer func() {
		if !gcOn {
			endLoadGC(false)
		}
	}()
	start := time.Now()
	now := start.UnixMilli()
	s.presizeShards()
	var loaded, expired, skipped int
	// With no log to replay (a clean stop checkpoints it all), no record
	// can take back an expired set (keepExpiredSet).
	replaying := s.store.LogSize() != 0
	bad, err := s.store.Load(func(db int, key []byte, v persist.Value) error {
		if v.Over {
			s.overKeys++
		}
		if db >= s.ks.DBs() {
			s.keepForeign(db, key, v)
			return nil
		}
		if len(s.expiredSets) != 0 {
			delete(s.expiredSets, dbKey{db, string(key)}) // a later state
		}
		if s.ks.LoadDrop(db, key) {
			// A later state of the key: a record over the base, or a
			// rewrite's visit that wrote the key again after it changed.
			// The lookup costs little: the insert below reads the same
			// tags.
			loaded--
		}
		if v.Kind == persist.KindGone {
			return nil
		}
		if v.Exp != 0 && now > v.Exp {
			expired++
			if replaying {
				s.keepExpiredSet(db, key, v)
			}
			return nil
		}
		s.loadProgress.record() // loading.go
		if !s.ks.LoadPut(db, key, v, s.zsetConfig()) {
			skipped++
			s.log.Warn("persistence: skipping a key of a type this build does not know",
				"db", db, "key", fmt.Sprintf("%q", key), "type", string(rune(v.Kind)))
			return nil
		}
		loaded++
		return nil
	})
	if err != nil {
		return err
	}
	// The collector comes back for the replay; with none, it stays off
	// after the load until memory grows.
	gcOn = true
	endLoadGC(!replaying)
	s.loadProgress.snapDone.Store(true)
	if err := s.loadLibraries(); err != nil { // functions_persist.go
		return err
	}
	records, logBad, err := s.replayLog()
	s.expiredSets = nil
	if err != nil {
		return err
	}
	if err := s.linkLibraries(); err != nil {
		return err
	}
	s.replayed = records
	s.loadedKeys, s.loadedExpired = int64(loaded), int64(expired)
	s.noteLoadDamage(bad + logBad)
	if skipped > 0 {
		s.log.Warn("persistence: keys of unknown types skipped", "count", skipped)
	}
	if len(s.foreign) > 0 {
		s.log.Warn("persistence: keys of databases beyond --databases are kept on disk, not served", "count", len(s.foreign))
	}
	// keys: what the keyspace holds now (DBSIZE's sum), the snapshot's
	// keys and those the log's replay added or removed; snapshot_keys:
	// the snapshot's alone.
	s.log.Info("persistence: loaded", "dir", s.store.Path(), "keys", s.loadedTotal(), "snapshot_keys", loaded,
		"expired_dropped", expired, "corrupt_skipped", s.loadCorrupt, "log_records_replayed", records,
		"ms", time.Since(start).Milliseconds())
	return nil
}

// dbKey names a key of one database, as a map key.
type dbKey struct {
	db  int
	key string
}

// keepExpiredSet holds on to a stored sorted set found expired, until
// the log has been replayed: a record of the log may change the set in
// place, and so show it was alive when the snapshot's copy of its expiry
// passed (a W1 block's EXPIRE rides on the set's changes, persist's
// KindZSetWide head). Replay then takes it back (reviveExpiredSet) and
// applies the changes to its members, not to an empty set. It keeps the
// set's encoding, not the set: after a long stop every window has
// expired, and few, if any, are taken back. The same holds for the
// strings, hashes and lists the log changes in place
// (keyspace/delta_persist.go).
func (s *Server) keepExpiredSet(db int, key []byte, v persist.Value) {
	switch v.Kind {
	case persist.KindZSet, persist.KindZSetInts, persist.KindHash, persist.KindList:
	case persist.KindString:
		if len(v.Str) < keyspace.PatchedMin {
			return // no patch changes it: the many short ones cost nothing here
		}
	default:
		return // Load gives a set stored member by member as a KindZSet
	}
	if s.expiredSets == nil {
		s.expiredSets = map[dbKey]expiredSet{}
	}
	s.expiredSets[dbKey{db, string(key)}] = expiredSet{persist.AppendValue(nil, v), v.Wide}
}

// expiredSet is a sorted set keepExpiredSet kept: its encoding, and
// whether it is stored member by member.
type expiredSet struct {
	enc  []byte
	wide bool
}

// keepForeign holds on to a stored key of a database beyond --databases,
// which the server does not serve, so that rewrites keep it on disk for a
// server started with more databases (Redis refuses to start instead).
func (s *Server) keepForeign(db int, key []byte, v persist.Value) {
	if s.foreign == nil {
		s.foreign = map[dbKey][]byte{}
	}
	id := dbKey{db, string(key)}
	if v.Kind == persist.KindGone {
		delete(s.foreign, id)
		return
	}
	s.foreign[id] = persist.AppendValue(nil, v)
}

// writeForeign puts the keys keepForeign kept into a rewrite's base.
func (s *Server) writeForeign(w *persist.BaseWriter) {
	for id, val := range s.foreign {
		w.PutEncoded(id.db, []byte(id.key), val)
	}
}

// keyCountsMeta names the store's hint of how many keys each database held
// at the last save: loading sizes the shards' maps from it, which spares
// the rehashing of maps grown one doubling at a time (a third of the load
// time of a million keys).
const keyCountsMeta = "keys-per-db"

// saveKeyCounts records keyCountsMeta for the next load.
func (s *Server) saveKeyCounts() error {
	var hint []byte
	for d := range s.ks.DBs() {
		n := s.ks.CountKeys(d)
		if d > 0 {
			hint = append(hint, ',')
		}
		hint = strconv.AppendInt(hint, int64(n), 10)
	}
	return s.store.PutMeta(keyCountsMeta, hint)
}

// presizeShards makes the shards' maps the size keyCountsMeta says.
func (s *Server) presizeShards() {
	hint, ok := s.store.Meta(keyCountsMeta)
	if !ok {
		return
	}
	for d, f := range strings.Split(string(hint), ",") {
		n, err := strconv.Atoi(f)
		if err != nil || d >= s.ks.DBs() || n <= 0 {
			continue
		}
		s.ks.Reserve(d, n)
	}
}

// setFsync applies an appendfsync policy; CONFIG SET may change it live.
func (s *Server) setFsync(policy string) {
	s.fsyncAlways.Store(policy == FsyncAlways)
	s.fsyncEverySec.Store(policy == FsyncEverySec)
}

// fsyncPolicy is the appendfsync policy in force.
func (s *Server) fsyncPolicy() string {
	switch {
	case s.fsyncAlways.Load():
		return FsyncAlways
	case s.fsyncEverySec.Load():
		return FsyncEverySec
	}
	return FsyncNo
}

// fsyncLoop syncs the log once a second under appendfsync everysec. Under
// no the kernel writes the log's pages back on its own schedule, as it
// does Redis's AOF; a sync every 30 seconds (the kernel's own writeback
// age, dirty_expire_centisecs) only lets the log unmap the files it has
// moved past. Either way it releases the memory of the log pages written
// each second (persist.Store.TrimLog).
func (s *Server) fsyncLoop() {
	defer s.bg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for tick := 1; ; tick++ {
		select {
		case <-s.done:
			return
		case <-t.C:
			if s.fsyncEverySec.Load() || (!s.fsyncAlways.Load() && tick%30 == 0) {
				// SyncAll trims the log's mapping too.
				if err := s.store.SyncAll(); err != nil && err != persist.ErrClosed {
					s.log.Error("persistence: fsync failed", "err", err)
				} else if err == nil {
					s.lastFsync.Store(time.Now().UnixNano())
				}
				continue
			}
			s.store.TrimLog()
		}
	}
}

// commitEffects writes what the execution changed as one record of the
// effect log (keyspace.Effects). l is the execution's lock set, still
// locked. Under appendfsync always it also notes which record the
// replies must wait for.
func (c *Client) commitEffects(l *keyspace.LockSet) {
	if c.srv.commitEffects(&c.fx, l) && c.srv.fsyncAlways.Load() {
		c.syncTo = max(c.syncTo, l.LastCommit())
	}
}

// commitEffects hands what fx noted, with l's shards still locked, to the
// replication stream (its journal, if any) and to the effect log; false
// when there is no store.
func (s *Server) commitEffects(fx *keyspace.Effects, l *keyspace.LockSet) bool {
	if fx.Journal() != nil {
		s.propagate(fx) // repl_master.go
	}
	if s.store == nil {
		if fx.Journal() != nil {
			fx.Commit(l) // resets what the effects noted
		}
		return false
	}
	if err := fx.Commit(l); err != nil {
		s.log.Error("persistence: commit failed", "err", err)
	}
	return true
}

// waitDurable holds c's replies until the batches they may reveal are on
// disk (appendfsync always). false: they never will be; the caller must
// drop the replies.
func (c *Client) waitDurable() bool {
	if c.syncTo == 0 || c.srv.store == nil || c.srv.store.Synced(c.syncTo) {
		return true
	}
	if err := c.srv.store.Sync(c.syncTo); err != nil {
		c.srv.log.Error("persistence: replies dropped, their effects could not be synced", "id", c.id, "err", err)
		return false
	}
	return true
}

// writesDenied is Redis's MISCONF reply while the disk is failing, or "".
func (s *Server) writesDenied() string {
	if msg := s.bgsaveMisconf(); msg != "" { // save_rules.go
		return msg
	}
	if s.store == nil {
		return ""
	}
	if err := s.store.Err(); err != nil {
		return misconfPrefix + persist.Strerror(err)
	}
	return ""
}

// syncCheckpoint makes everything durable and runs a checkpoint: the
// store's snapshot. A save (rdb_save.go) is one and the RDB file.
func (s *Server) syncCheckpoint() error {
	if err := s.store.SyncAll(); err != nil {
		return err
	}
	s.lastFsync.Store(time.Now().UnixNano())
	return s.checkpoint()
}

// totalDirty is Redis's server.dirty: the writes since start.
func (s *Server) totalDirty() int64 { return s.ks.Dirty() }
