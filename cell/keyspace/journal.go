package keyspace

// Journal lists, in order, the keys one execution changed and the
// databases it flushed: what a replication stream needs to reproduce the
// execution's effects on a replica (the server reads each key's final
// state from the keyspace while the execution's shards are still locked).
// It is filled through the execution's Effects (SetJournal), with or
// without a store; a connection owns one and reuses it.
type Journal struct {
	ents []JournalEntry
	buf  []byte
}

// JournalEntry is one change: a key of DB changed (its bytes are
// Journal.Key), or DB was flushed (Flush).
type JournalEntry struct {
	DB    int
	Flush bool
	// Whole: the key was replaced or deleted at some point of the
	// execution (or its value changed in a way no recorder saw): only its
	// whole value says what it is now. Otherwise it changed in place, and
	// Effects.EachChange tells the members, fields or bytes it changed.
	Whole bool
	// plain: changed in place outside the delta recorder (Touched); a
	// sorted set's recorder still saw it (zsetRec), other values did not.
	plain bool
	// Exp: its expiry was set or removed in place (SetExpire).
	Exp bool
	// Existed: the key held a value (live or expired) before the
	// execution's first change of it, after any flush of its database the
	// execution made. A replica that cannot take the key's new value
	// (redis-server, a CL.WINDOW window) must drop the old one.
	Existed bool
	off, n  int
}

// Entries are the changes noted since the last Reset, in order, each key
// once (at its first change after the last flush of its database).
func (j *Journal) Entries() []JournalEntry { return j.ents }

// Key is the changed key of e (nil for a flush).
func (j *Journal) Key(e JournalEntry) []byte { return j.buf[e.off : e.off+e.n] }

// Reset empties the journal for the next execution.
func (j *Journal) Reset() { j.ents, j.buf = j.ents[:0], j.buf[:0] }

// note records a change of db's key: whole (replaced or deleted), plain
// (in place, unrecorded) or of its expiry (exp), flags that add up over
// the execution. A key first noted here existed, unless its database
// was flushed before (a key about to be created is noted first by
// created).
func (j *Journal) note(db int, key []byte, whole, plain, exp bool) {
	e, flushed := j.find(db, key)
	if e == nil {
		e = j.add(db, key, !flushed)
	}
	e.Whole, e.plain, e.Exp = e.Whole || whole, e.plain || plain, e.Exp || exp
}

// created records, before db's key is created, that it did not exist,
// unless an earlier change of the execution noted it already.
func (j *Journal) created(db int, key []byte) {
	if e, _ := j.find(db, key); e == nil {
		j.add(db, key, false)
	}
}

// find returns db's key's entry, or nil; flushed: db was flushed since
// the key's last change, or ever if it has none.
func (j *Journal) find(db int, key []byte) (e *JournalEntry, flushed bool) {
	for i := len(j.ents) - 1; i >= 0; i-- {
		e := &j.ents[i]
		if e.DB == db && e.Flush {
			return nil, true
		}
		if e.DB == db && string(j.buf[e.off:e.off+e.n]) == string(key) {
			return e, false
		}
	}
	return nil, false
}

func (j *Journal) add(db int, key []byte, existed bool) *JournalEntry {
	j.ents = append(j.ents, JournalEntry{DB: db, Existed: existed, off: len(j.buf), n: len(key)})
	j.buf = append(j.buf, key...)
	return &j.ents[len(j.ents)-1]
}

// flush records that db was emptied: the keys of db noted before it need
// no entry of their own any more.
func (j *Journal) flush(db int) {
	out := j.ents[:0]
	for _, e := range j.ents {
		if e.DB != db {
			out = append(out, e)
		}
	}
	j.ents = append(out, JournalEntry{DB: db, Flush: true})
}

// SetJournal makes c's executions note their changes in j too (nil: no
// longer).
func (c *Effects) SetJournal(j *Journal) { c.jr = j }

// Journal is where c notes changes for replication (nil: nowhere).
func (c *Effects) Journal() *Journal { return c.jr }

// SetEffects points the execution at fx, for an execution begun without
// one (Begin with nil) when replication starts later.
func (x *Tx) SetEffects(fx *Effects) { x.fx = fx }

// ExpiredHook is called, with the shard locked, for each key the active
// expiry cycle or maxmemory's eviction deletes (the replication stream's
// DEL); nil: none.
type ExpiredHook func(db int, key []byte)

// SetExpiredHook sets the function told of keys active expiry deletes.
func (ks *Keyspace) SetExpiredHook(fn ExpiredHook) { ks.onExpired.Store(&fn) }

// expiredHook is the hook in force, or nil.
func (ks *Keyspace) expiredHook() ExpiredHook {
	if p := ks.onExpired.Load(); p != nil {
		return *p
	}
	return nil
}

// PeekLocked returns db's key's entry, expired or not, or nil, for a
// caller that holds the key's shard locked (the replication stream).
func (ks *Keyspace) PeekLocked(db int, key []byte) *Entry {
	return ks.shardOf(db, key).keys.get(key)
}
