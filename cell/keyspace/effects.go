package keyspace

import (
	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

// Effects collects what one execution (a command, an EXEC, a script)
// changed, for the effect log: every write of a Tx notes its key here
// (noteDirty), and Commit turns the notes into one record of the log,
// with each key's final state, while the execution's shards are still
// locked. Commit also marks what the next checkpoint must write
// (checkpoint.go). A connection owns one Effects and reuses it.
//
// The log is its one consumer today; a replication stream would read the
// same records.
type Effects struct {
	store    *persist.Store
	dirty    []dirtyKey
	dirtyBuf []byte
	seen     map[dbKey]int
	zrec     zsetRec  // sorted-set members changed in place (zset_persist.go)
	drec     deltaRec // strings, hashes and lists changed in place (delta_persist.go)
	batch    *persist.Batch
	jr       *Journal // replication (journal.go); nil: none
}

// NewEffects returns the effects of executions logged to st.
func NewEffects(st *persist.Store) Effects { return Effects{store: st} }

// dirtyKey is a key an execution changed; its bytes are in Effects.dirtyBuf.
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
	// plain: a change in place that the delta recorder did not see
	// (delta_persist.go): the record is the whole value then too,
	// except for a sorted set, which has its own recorder.
	plain bool
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

func (s *Set) appendStored(dst []byte, exp int64) []byte {
	dst = persist.AppendAggregate(dst, persist.KindSet, exp, s.Len())
	var buf [20]byte
	for i := range s.Len() {
		dst = persist.AppendItem(dst, s.AppendAt(buf[:0], i))
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
	if l.pos != 0 {
		dst = persist.AppendListAt(dst, exp, l.pos, l.n)
	} else {
		dst = persist.AppendAggregate(dst, persist.KindList, exp, l.n)
	}
	for i := 0; i < l.n; i++ {
		dst = persist.AppendItem(dst, l.At(i))
	}
	return dst
}

// isWide reports whether e is stored as several records.
func isWide(e *Entry) bool {
	if e == nil || e.IsString() {
		return false
	}
	w, ok := e.Obj().(wideValue)
	return ok && w.storedWide()
}

// noteDirty records that key of db, in shard s, changed: in place (plain
// if not through the delta recorder), or replaced or deleted (full).
func (c *Effects) noteDirty(s *Shard, db int, key []byte, wide, full, plain bool) {
	if c.jr != nil {
		c.jr.note(db, key, full, plain, false)
	}
	if c.store == nil {
		return
	}
	if n := len(c.dirty); n > 0 {
		last := &c.dirty[n-1]
		if last.db == db && string(c.dirtyBuf[last.off:last.off+last.n]) == string(key) {
			last.wide = last.wide || wide
			last.full = last.full || full
			last.plain = last.plain || plain
			return
		}
	}
	// Field by field into the new element: a composite literal is built
	// on the stack and copied, and the copy's wide loads of the narrow
	// stores just made stall (store forwarding), a cost W1's profile shows.
	c.dirty = append(c.dirty, dirtyKey{})
	d := &c.dirty[len(c.dirty)-1]
	d.s, d.db, d.off, d.n, d.wide, d.full, d.plain = s, db, len(c.dirtyBuf), len(key), wide, full, plain
	c.dirtyBuf = append(c.dirtyBuf, key...)
}

// noteFlush records that db was emptied: at once, so that the records
// logInt encoded before it stay before it, and those after it after it.
func (c *Effects) noteFlush(db int) {
	if c.jr != nil {
		c.jr.flush(db)
	}
	if c.store == nil {
		return
	}
	c.effects().DeleteDB(db)
}

// logInt encodes the record of db's key, whose entry e (in s) now holds
// an int, straight into the execution's batch, and flags e for the next
// checkpoint. A later change of the key in the same execution is either
// another such record or noted, and the noted keys' records come last
// (commit), so the log still ends each execution with each key's final
// state.
func (c *Effects) logInt(s *Shard, db int, key []byte, e *Entry) {
	if c.jr != nil {
		c.jr.note(db, key, true, false, false)
	}
	if c.store == nil {
		return
	}
	s.noteChanged(key, e, false)
	v, _ := e.IntVal()
	c.effects().PutInt(db, key, e.Exp, v)
}

// effects is the running execution's batch.
func (c *Effects) effects() *persist.Batch {
	if c.batch == nil {
		c.batch = c.store.NewBatch()
	}
	return c.batch
}

// Commit writes what the execution changed as one record of the effect
// log. l is the execution's lock set, still locked. The error is the
// store's: the record may be lost, the execution's effects stay in memory.
func (c *Effects) Commit(l *LockSet) (err error) {
	if c.store != nil && (len(c.dirty) != 0 || c.batch != nil && !c.batch.Empty()) {
		err = c.commit(c.store, l)
	}
	if len(c.zrec.attached) != 0 {
		c.zrec.reset()
	}
	if len(c.drec.ents) != 0 {
		c.drec.reset()
	}
	return err
}

func (c *Effects) commit(st *persist.Store, l *LockSet) error {
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
		if !d.full && !d.plain && c.drec.log(b, d.db, key, e) {
			continue
		}
		logEntry(b, d.db, key, e)
	}
	n, err := st.Commit(b)
	for _, s := range l.shards {
		s.lastCommit = n
	}
	c.dirty, c.dirtyBuf = c.dirty[:0], c.dirtyBuf[:0]
	return err
}

// logEntry adds to b the record that makes db's key hold e (nil: no key)
// in the effect log: the whole value, whatever its size or stored form.
func logEntry(b *persist.Batch, db int, key []byte, e *Entry) {
	if e == nil {
		b.Delete(db, key)
		return
	}
	putWhole(b, db, key, e)
}

// valueSink takes whole values: a persist.Batch, as key records, or a
// rewrite's persist.BaseWriter.
type valueSink interface {
	PutInt(db int, key []byte, exp, v int64)
	PutString(db int, key []byte, exp int64, val []byte)
	PutEncoded(db int, key, val []byte)
	Scratch() []byte
}

// putWhole adds to b the one record that holds e's whole value. Every
// aggregate is a storedValue: setObj takes no other.
func putWhole(b valueSink, db int, key []byte, e *Entry) {
	switch v := e.Obj().(type) {
	case nil:
		if n, ok := e.IntVal(); ok {
			b.PutInt(db, key, e.Exp, n)
		} else {
			b.PutString(db, key, e.Exp, e.StrBytes())
		}
	case storedValue:
		b.PutEncoded(db, key, v.appendStored(b.Scratch(), e.Exp))
	}
}

// logZSetDelta adds to b, for a sorted set changed in place, its expiry
// and the changes the execution made to its members, in order, and
// reports whether it could: the set must be one this client's writers
// held (zsetRec), and the changes no more than the set's size, or the
// whole set is the smaller record. Replay applies the changes in order
// and drops a set left empty at the end of the record
// (persist_replay.go).
func (c *Effects) logZSetDelta(b *persist.Batch, db int, key []byte, e *Entry) bool {
	if e == nil {
		return false
	}
	z, ok := e.Obj().(*ZSet)
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
func (c *Effects) dedupeDirty() {
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
			out[i].plain = out[i].plain || d.plain
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
func storeEntry(b *persist.Batch, db int, key []byte, e *Entry, wasWide bool) {
	if z, ok := e.Obj().(*ZSet); ok {
		storeZSet(b, db, key, z, e.Exp, wasWide)
		return
	}
	if wasWide {
		b.DeleteKey(db, key)
	}
	putWhole(b, db, key, e)
}

// expired notes that key's entry e, in s, expired and is being deleted
// by the execution: for the snapshot (noteExpired) and, as Redis
// propagates an expired key, for replication as a delete.
func (c *Effects) expired(s *Shard, db int, key []byte, e *Entry) {
	if c.jr != nil {
		c.jr.note(db, key, true, false, false)
	}
	if c.store != nil {
		s.noteExpired(key, e)
	}
}

// persistEviction commits the deletion of db's key, evicted under
// maxmemory. The shard must be locked; evictions run one at a time (under
// the memory state's lock), so they share one batch.
func (c *Effects) persistEviction(sh *Shard, db int, key string) error {
	b := c.effects()
	sh.noteChanged([]byte(key), nil, isWide(sh.keys.getS(key)))
	b.Delete(db, []byte(key))
	n, err := c.store.Commit(b)
	sh.lastCommit = n
	return err
}

// entryFromLoaded is entryFromStored for db's key as Load gives it: a
// set it gathered from member records knows it is stored that way.
func entryFromLoaded(db int, key []byte, v persist.Value, cfg zsetlite.Config) (*Entry, bool) {
	e, ok := entryFromStored(v, cfg)
	if !ok {
		return nil, false
	}
	if z, isSet := e.Obj().(*ZSet); isSet && v.Wide {
		z.setStoredWide(db, key)
	}
	return e, true
}

// entryFromStored makes a keyspace entry from a stored value; the bytes
// are copied out of the store's buffers.
func entryFromStored(v persist.Value, cfg zsetlite.Config) (*Entry, bool) {
	switch v.Kind {
	case persist.KindInt:
		e := &Entry{Exp: v.Exp}
		e.SetInt(v.Int)
		return e, true
	case persist.KindString:
		e := &Entry{Exp: v.Exp}
		if n, ok := resp.ParseInt(v.Str); ok {
			e.SetInt(n)
		} else {
			e.SetStr(append(make([]byte, 0, len(v.Str)), v.Str...))
		}
		return e, true
	}
	if obj, ok := objectFromStored(v, cfg); ok {
		e := &Entry{Exp: v.Exp}
		e.SetObj(obj)
		return e, true
	}
	return nil, false
}

// objectFromStored builds an aggregate value from its stored form (the
// items are copied). An empty one is refused: the keyspace never holds an
// empty hash, list or sorted set.
func objectFromStored(v persist.Value, cfg zsetlite.Config) (any, bool) {
	if v.Kind == persist.KindZSetInts {
		// A window: its timestamps, ascending (EachZSetInt checks), make
		// the set in one pass (AddInts).
		var buf [128]int64
		vs := buf[:0]
		if persist.EachZSetInt(v.Str, func(n int64) { vs = append(vs, n) }) != nil || len(vs) == 0 {
			return nil, false
		}
		z := newZSet(cfg)
		z.AddInts(vs)
		return z, true
	}
	if v.Kind == persist.KindWindow {
		return windowFromStored(v.Str)
	}
	if len(v.Items) == 0 {
		return nil, false
	}
	switch v.Kind {
	case persist.KindZSet:
		z := newZSet(cfg)
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
	case persist.KindSet:
		s := NewSet()
		for _, it := range v.Items {
			if !s.Add(it, setMaxIntsLoaded) {
				return nil, false
			}
		}
		return s, true
	case persist.KindList:
		l := newListSized(len(v.Items))
		for _, it := range v.Items {
			l.PushBack(it)
		}
		l.pos = v.Pos
		return l, true
	}
	return nil, false
}
