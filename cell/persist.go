package cell

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/resp"
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

// Fsync policies, as appendfsync spells them.
const (
	FsyncAlways   = "always"
	FsyncEverySec = "everysec"
	FsyncNo       = "no"
)

// dirtyKey is a key an execution changed; its bytes are in Client.dirtyBuf.
type dirtyKey struct {
	s      *Shard
	db     int
	off, n int
	// wide: the key held a value stored as several records (a sorted set)
	// at some point of the execution, and it was deleted or replaced, so
	// the snapshot must remove the member records too.
	wide bool
	// full: the key was replaced or deleted, not only changed in place,
	// so its log record is its whole value (or a delete).
	full bool
}

// wideValue is implemented by values that may be stored as a head record
// plus one record per member (persist.KindZSetWide): large sorted sets
// (zset_persist.go). Deleting or replacing such a key is a range delete,
// which the wide flag of dirtyKey carries to the commit.
type wideValue interface {
	storedWide() bool
	eachMember(fn func(member []byte, score float64))
}

// storedValue is implemented by aggregate values (hashes, lists) that are
// stored as one record: appendStored appends their encoding
// (persist.AppendAggregate, AppendItem) to dst.
type storedValue interface {
	appendStored(dst []byte, exp int64) []byte
}

func (h *Hash) appendStored(dst []byte, exp int64) []byte {
	dst = persist.AppendAggregate(dst, persist.KindHash, exp, 2*len(h.pairs))
	for i := range h.pairs {
		dst = persist.AppendItem(dst, h.pairs[i].field)
		dst = persist.AppendItem(dst, h.pairs[i].value)
	}
	return dst
}

func (z *ZSet) appendStored(dst []byte, exp int64) []byte {
	if z.Set.SelfKeyed() {
		// A window of timestamps: its integers, a byte or two each
		// (ZSetInts's members are AppendIntDeltas's encoding:
		// TestWindowIntDeltas). A member that would not give its score
		// back bit for bit (which SelfKeyed rules out) falls back to the
		// general form rather than make a wrong record.
		var w persist.ZSetInts
		if out, ok := z.Set.AppendIntDeltas(w.Head(dst, exp, z.Len())); ok {
			return out
		}
	}
	dst = persist.AppendAggregate(dst, persist.KindZSet, exp, 2*z.Len())
	z.Range(0, -1, false, func(m []byte, score float64) bool {
		sc := persist.EncodeScore(score)
		dst = persist.AppendItem(dst, m)
		dst = persist.AppendItem(dst, sc[:])
		return true
	})
	return dst
}

func (l *List) appendStored(dst []byte, exp int64) []byte {
	dst = persist.AppendAggregate(dst, persist.KindList, exp, l.n)
	for i := 0; i < l.n; i++ {
		dst = persist.AppendItem(dst, l.At(i))
	}
	return dst
}

// isWide reports whether e is stored as several records.
func isWide(e *Entry) bool {
	if e == nil || e.isString() {
		return false
	}
	w, ok := e.obj().(wideValue)
	return ok && w.storedWide()
}

// noteDirty records that key of db, in shard s, changed: in place, or
// replaced or deleted (full).
func (c *Client) noteDirty(s *Shard, db int, key []byte, wide, full bool) {
	if n := len(c.dirty); n > 0 {
		last := &c.dirty[n-1]
		if last.db == db && string(c.dirtyBuf[last.off:last.off+last.n]) == string(key) {
			last.wide = last.wide || wide
			last.full = last.full || full
			return
		}
	}
	// Field by field into the new element: a composite literal is built
	// on the stack and copied, and the copy's wide loads of the narrow
	// stores just made stall (store forwarding), a cost W1's profile shows.
	c.dirty = append(c.dirty, dirtyKey{})
	d := &c.dirty[len(c.dirty)-1]
	d.s, d.db, d.off, d.n, d.wide, d.full = s, db, len(c.dirtyBuf), len(key), wide, full
	c.dirtyBuf = append(c.dirtyBuf, key...)
}

// noteFlush records that db was emptied: at once, so that the records
// logInt encoded before it stay before it, and those after it after it.
func (c *Client) noteFlush(db int) {
	c.effects().DeleteDB(db)
	c.srv.flushedDBs[db].Store(true)
}

// logInt encodes the record of db's key, whose entry e (in s) now holds
// an int, straight into the execution's batch, and flags e for the next
// checkpoint. A later change of the key in the same execution is either
// another such record or noted, and the noted keys' records come last
// (commit), so the log still ends each execution with each key's final
// state.
func (c *Client) logInt(s *Shard, db int, key []byte, e *Entry) {
	s.noteChanged(key, e, false)
	v, _ := e.intVal()
	c.effects().PutInt(db, key, e.Exp, v)
}

// effects is the running execution's batch.
func (c *Client) effects() *persist.Batch {
	if c.batch == nil {
		c.batch = c.srv.store.NewBatch()
	}
	return c.batch
}

// commitEffects writes what the execution changed as one record of the
// effect log. l is the execution's lock set, still locked. Under
// appendfsync always it also notes which record the replies must wait for.
func (c *Client) commitEffects(l *lockSet) {
	st := c.srv.store
	if st == nil {
		return
	}
	if len(c.dirty) != 0 || c.batch != nil && !c.batch.Empty() {
		c.commit(st, l)
	}
	if len(c.zrec.attached) != 0 {
		c.zrec.reset()
	}
	if c.srv.fsyncAlways.Load() {
		for _, s := range l.shards {
			c.syncTo = max(c.syncTo, s.lastCommit)
		}
	}
}

func (c *Client) commit(st *persist.Store, l *lockSet) {
	b := c.effects()
	if len(c.dirty) > 1 {
		c.dedupeDirty()
	}
	for _, d := range c.dirty {
		key := c.dirtyBuf[d.off : d.off+d.n]
		e := d.s.keys.get(key)
		d.s.noteChanged(key, e, d.wide)
		if !d.full && c.logZSetDelta(b, d.db, key, e) {
			continue
		}
		logEntry(b, d.db, key, e, c.srv)
	}
	n, err := st.Commit(b)
	if err != nil {
		c.srv.log.Error("persistence: commit failed", "err", err)
	}
	for _, s := range l.shards {
		s.lastCommit = n
	}
	c.dirty, c.dirtyBuf = c.dirty[:0], c.dirtyBuf[:0]
}

// logEntry adds to b the record that makes db's key hold e (nil: no key)
// in the effect log: the whole value, whatever its size or stored form.
func logEntry(b *persist.Batch, db int, key []byte, e *Entry, srv *Server) {
	if e == nil {
		b.Delete(db, key)
		return
	}
	putWhole(b, db, key, e, srv)
}

// valueSink takes whole values: a persist.Batch, as key records, or a
// rewrite's persist.BaseWriter.
type valueSink interface {
	PutInt(db int, key []byte, exp, v int64)
	PutString(db int, key []byte, exp int64, val []byte)
	PutEncoded(db int, key, val []byte)
	Scratch() []byte
}

// putWhole adds to b the one record that holds e's whole value.
func putWhole(b valueSink, db int, key []byte, e *Entry, srv *Server) {
	switch v := e.obj().(type) {
	case nil:
		if n, ok := e.intVal(); ok {
			b.PutInt(db, key, e.Exp, n)
		} else {
			b.PutString(db, key, e.Exp, e.strBytes())
		}
	case storedValue:
		b.PutEncoded(db, key, v.appendStored(b.Scratch(), e.Exp))
	default:
		srv.log.Error("persistence: a value of this type cannot be stored", "type", fmt.Sprintf("%T", e.obj()), "key", fmt.Sprintf("%q", key))
	}
}

// logZSetDelta adds to b, for a sorted set changed in place, its expiry
// and the changes the execution made to its members, in order, and
// reports whether it could: the set must be one this client's writers
// held (zsetRec), and the changes no more than the set's size, or the
// whole set is the smaller record. Replay applies the changes in order
// and drops a set left empty at the end of the record
// (persist_replay.go).
func (c *Client) logZSetDelta(b *persist.Batch, db int, key []byte, e *Entry) bool {
	if e == nil {
		return false
	}
	z, ok := e.obj().(*ZSet)
	if !ok || !c.zrec.held(z) {
		return false
	}
	if n := c.zrec.count(z); n > 8 && n > z.Len() {
		return false
	}
	b.PutZSetHead(db, key, e.Exp)
	c.zrec.appendChanges(b, z)
	return true
}

// dedupeDirty keeps the first note of each key, carrying the wide and
// full flags of the others into it.
func (c *Client) dedupeDirty() {
	if c.seen == nil {
		c.seen = map[dbKey]int{}
	}
	clear(c.seen)
	out := c.dirty[:0]
	for _, d := range c.dirty {
		id := dbKey{d.db, string(c.dirtyBuf[d.off : d.off+d.n])}
		if i, ok := c.seen[id]; ok {
			out[i].wide = out[i].wide || d.wide
			out[i].full = out[i].full || d.full
			continue
		}
		c.seen[id] = len(out)
		out = append(out, d)
	}
	c.dirty = out
}

// dbKey names a key of one database, as a map key.
type dbKey struct {
	db  int
	key string
}

// storeEntry adds to b the records that make db's key hold e in the
// snapshot (checkpoint.go); wasWide: the snapshot may hold the key as a set
// stored member by member that must go first. A key past its expiry is
// written as it is: loading drops it.
func storeEntry(b *persist.Batch, db int, key []byte, e *Entry, wasWide bool, srv *Server) {
	if z, ok := e.obj().(*ZSet); ok {
		storeZSet(b, db, key, z, e.Exp, wasWide)
		return
	}
	if wasWide {
		b.DeleteKey(db, key)
	}
	putWhole(b, db, key, e, srv)
}

// persistEviction commits the deletion of db's key, evicted under
// maxmemory. The shard must be locked; evictions run one at a time (under
// the memory state's lock), so they share one batch.
func (s *Server) persistEviction(sh *Shard, db int, key string) {
	if s.evictBatch == nil {
		s.evictBatch = s.store.NewBatch()
	}
	sh.noteChanged([]byte(key), nil, isWide(sh.keys.getS(key)))
	s.evictBatch.Delete(db, []byte(key))
	n, err := s.store.Commit(s.evictBatch)
	if err != nil {
		s.log.Error("persistence: commit failed", "err", err)
	}
	sh.lastCommit = n
}

// loadStore fills the keyspace from the store at start. Keys already
// expired are dropped from memory; the next rewrite drops them from the
// store.
func (s *Server) loadStore() error {
	// Nearly everything the snapshot's load allocates stays live, so a
	// collection during it finds little to free: pausing the collector
	// cuts the load time by about a third. Not during the log's replay,
	// which replaces values as often as the log changed them: its garbage
	// is as large as the log, which may be as large as the data
	// (TestReplayCollectsGarbage).
	gcPercent := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(gcPercent)
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
		if db >= len(s.ks.dbs) {
			s.keepForeign(db, key, v)
			return nil
		}
		if len(s.expiredSets) != 0 {
			delete(s.expiredSets, dbKey{db, string(key)}) // a later state
		}
		sh := s.ks.shardOf(db, key)
		if sh.keys.get(key) != nil {
			// A later state of the key: a record over the base, or a
			// rewrite's visit that wrote the key again after it changed.
			// The lookup costs little: the insert below reads the same
			// tags.
			sh.drop(string(key))
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
		e, ok := s.entryFromLoaded(db, key, v)
		if !ok {
			skipped++
			s.log.Warn("persistence: skipping a key of a type this build does not know",
				"db", db, "key", fmt.Sprintf("%q", key), "type", string(rune(v.Kind)))
			return nil
		}
		sh.adopt(key, e)
		loaded++
		return nil
	})
	if err != nil {
		return err
	}
	if replaying {
		// Not for a start with no log: the first collection, a pass over
		// all that was loaded, can then wait until the server serves.
		debug.SetGCPercent(gcPercent)
	}
	records, logBad, err := s.replayLog()
	s.expiredSets = nil
	if err != nil {
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
	s.log.Info("persistence: loaded", "dir", s.store.Path(), "keys", loaded,
		"expired_dropped", expired, "corrupt_skipped", s.loadCorrupt, "log_records_replayed", records,
		"ms", time.Since(start).Milliseconds())
	return nil
}

// keepExpiredSet holds on to a stored sorted set found expired, until
// the log has been replayed: a record of the log may change the set in
// place, and so show it was alive when the snapshot's copy of its expiry
// passed (a W1 block's EXPIRE rides on the set's changes, persist's
// KindZSetWide head). Replay then takes it back (reviveExpiredSet) and
// applies the changes to its members, not to an empty set. It keeps the
// set's encoding, not the set: after a long stop every window has
// expired, and few, if any, are taken back.
func (s *Server) keepExpiredSet(db int, key []byte, v persist.Value) {
	if v.Kind != persist.KindZSet && v.Kind != persist.KindZSetInts {
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
	for d := range s.ks.dbs {
		n := 0
		for i := range s.ks.dbs[d].shards {
			sh := &s.ks.dbs[d].shards[i]
			sh.mu.Lock()
			n += sh.keys.len()
			sh.mu.Unlock()
		}
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
		if err != nil || d >= len(s.ks.dbs) || n <= 0 {
			continue
		}
		shards := s.ks.dbs[d].shards
		per := n/len(shards) + n/(8*len(shards)) + 1
		for i := range shards {
			shards[i].keys.reserve(per)
		}
	}
}

// entryFromLoaded is entryFromStored for db's key as Load gives it: a
// set it gathered from member records knows it is stored that way.
func (s *Server) entryFromLoaded(db int, key []byte, v persist.Value) (*Entry, bool) {
	e, ok := s.entryFromStored(v)
	if !ok {
		return nil, false
	}
	if z, isSet := e.obj().(*ZSet); isSet && v.Wide {
		z.setStoredWide(db, key)
	}
	return e, true
}

// entryFromStored makes a keyspace entry from a stored value; the bytes
// are copied out of the store's buffers.
func (s *Server) entryFromStored(v persist.Value) (*Entry, bool) {
	switch v.Kind {
	case persist.KindInt:
		e := &Entry{Exp: v.Exp}
		e.setInt(v.Int)
		return e, true
	case persist.KindString:
		e := &Entry{Exp: v.Exp}
		if n, ok := resp.ParseInt(v.Str); ok {
			e.setInt(n)
		} else {
			e.setStr(append(make([]byte, 0, len(v.Str)), v.Str...))
		}
		return e, true
	}
	if obj, ok := s.objectFromStored(v); ok {
		e := &Entry{Exp: v.Exp}
		e.setObj(obj)
		return e, true
	}
	return nil, false
}

// objectFromStored builds an aggregate value from its stored form (the
// items are copied). An empty one is refused: the keyspace never holds an
// empty hash, list or sorted set.
func (s *Server) objectFromStored(v persist.Value) (any, bool) {
	if v.Kind == persist.KindZSetInts {
		// A window: its timestamps, ascending (EachZSetInt checks), make
		// the set in one pass (AddInts).
		var buf [128]int64
		vs := buf[:0]
		if persist.EachZSetInt(v.Str, func(n int64) { vs = append(vs, n) }) != nil || len(vs) == 0 {
			return nil, false
		}
		z := newZSet(s.zsetConfig())
		z.AddInts(vs)
		return z, true
	}
	if len(v.Items) == 0 {
		return nil, false
	}
	switch v.Kind {
	case persist.KindZSet:
		z := newZSet(s.zsetConfig())
		maxLen := 0
		for i := 0; i < len(v.Items); i += 2 {
			maxLen = max(maxLen, len(v.Items[i]))
		}
		z.Reserve(len(v.Items)/2, maxLen)
		for i := 0; i+1 < len(v.Items); i += 2 {
			score, err := persist.DecodeScore(v.Items[i+1])
			if err != nil {
				return nil, false
			}
			z.Put(v.Items[i], score)
		}
		return z, true
	case persist.KindHash:
		h := newHashSized(len(v.Items) / 2)
		for i := 0; i+1 < len(v.Items); i += 2 {
			h.Set(v.Items[i], v.Items[i+1])
		}
		return h, true
	case persist.KindList:
		l := newListSized(len(v.Items))
		for _, it := range v.Items {
			l.PushBack(it)
		}
		return l, true
	}
	return nil, false
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
				}
				continue
			}
			s.store.TrimLog()
		}
	}
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
	if s.store == nil {
		return ""
	}
	if err := s.store.Err(); err != nil {
		return misconfPrefix + persist.Strerror(err)
	}
	return ""
}

// saveNow makes everything durable and runs a checkpoint: the snapshot.
func (s *Server) saveNow() error {
	dirty := s.totalDirty()
	if err := s.store.SyncAll(); err != nil {
		return err
	}
	if err := s.checkpoint(); err != nil {
		return err
	}
	s.lastSave.Store(time.Now().Unix())
	s.dirtyAtSave.Store(dirty)
	s.saves.Add(1)
	return nil
}

// saveRuleDue reports whether a save rule ("save" seconds changes ...)
// asks for a snapshot now: its seconds have passed since the last save,
// with at least its count of changes.
func (s *Server) saveRuleDue() bool {
	rules := strings.Fields(saveParam(s))
	elapsed := time.Now().Unix() - s.lastSave.Load()
	changes := int64(-1)
	for i := 0; i+1 < len(rules); i += 2 {
		secs, err1 := strconv.ParseInt(rules[i], 10, 64)
		count, err2 := strconv.ParseInt(rules[i+1], 10, 64)
		if err1 != nil || err2 != nil || elapsed < secs {
			continue
		}
		if changes < 0 {
			changes = s.totalDirty() - s.dirtyAtSave.Load()
		}
		if changes >= count {
			return true
		}
	}
	return false
}

// totalDirty sums the shards' write counters (Redis's server.dirty), one
// shard lock at a time: a consistent total is not needed.
func (s *Server) totalDirty() int64 {
	var n int64
	for d := range s.ks.dbs {
		for i := range s.ks.dbs[d].shards {
			sh := &s.ks.dbs[d].shards[i]
			sh.mu.Lock()
			n += sh.dirty
			sh.mu.Unlock()
		}
	}
	return n
}
