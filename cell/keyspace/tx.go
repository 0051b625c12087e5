package keyspace

import (
	"unsafe"

	"github.com/cellserver/cellserver/resp"
)

// Tx is one execution's access to the keyspace: a command, a whole EXEC
// or a script. Every read and write of a key goes through its methods, and
// every write ends in wrote(), wroteOver() or wroteInt(): where WATCH
// invalidation, the changes-since-save count (counted) and the execution's
// Effects (effects.go) hook in. A handler that changes a value in place
// (APPEND, ZADD into an existing set) calls Touched when it is done.
//
// All of them require the key's shard to be locked by the caller (the
// server's dispatch, through a LockSet).
type Tx struct {
	ks *Keyspace
	// fx collects what the execution changed, for the effect log; nil
	// when nothing consumes effects (no persistence).
	fx  *Effects
	db  int
	now int64
	// ready notes the keys that get a list or sorted set while clients
	// wait on keys (ready.go); nil: not noted.
	ready *Ready
	// known is a key whose KeyHash, knownHash, the caller computed
	// already (KnowHash): the very slice, not a copy of its bytes.
	known     []byte
	knownHash uint64
}

// KnowHash tells the execution that key's KeyHash is h, so that its
// lookups and writes of that slice of bytes (the same memory, not merely
// equal bytes) do not hash it again; nil forgets. The slice's bytes must
// not change while it is known.
func (x *Tx) KnowHash(key []byte, h uint64) { x.known, x.knownHash = key, h }

// KnownHash is what KnowHash was told last, for an execution inside this
// one that works on the same keys (a script's calls).
func (x *Tx) KnownHash() ([]byte, uint64) { return x.known, x.knownHash }

// locate is Keyspace.locate in the execution's database, without hashing
// the known key again.
func (x *Tx) locate(key []byte) (*Shard, uint32) {
	if k := x.known; k != nil && len(key) == len(k) && unsafe.SliceData(key) == unsafe.SliceData(k) {
		return x.ks.locateHash(x.db, key, x.knownHash)
	}
	return x.ks.locate(x.db, key)
}

// shardOf is the shard of key in the execution's database, without
// hashing the known key again.
func (x *Tx) shardOf(key []byte) *Shard {
	if k := x.known; k != nil && len(key) == len(k) && unsafe.SliceData(key) == unsafe.SliceData(k) {
		return x.ks.ShardOfHash(x.db, key, x.knownHash)
	}
	return x.ks.shardOf(x.db, key)
}

// Begin starts an execution on ks's database db at now (Unix ms), its
// changes collected in fx (nil: not collected).
func (x *Tx) Begin(ks *Keyspace, fx *Effects, db int, now int64) {
	x.ks, x.fx, x.db, x.now = ks, fx, db, now
	x.known = nil
}

// DB is the selected database.
func (x *Tx) DB() int { return x.db }

// SetDB selects database db (SELECT, and a script's own SELECT).
func (x *Tx) SetDB(db int) { x.db = db }

// Now is the execution's frozen time in Unix ms: expiry is decided by it.
func (x *Tx) Now() int64 { return x.now }

// SetNow moves the execution's clock (a script's command reads its own).
func (x *Tx) SetNow(now int64) { x.now = now }

// Keyspace is the keyspace the execution works on.
func (x *Tx) Keyspace() *Keyspace { return x.ks }

// Effects is where the execution's changes are collected (nil: nowhere).
func (x *Tx) Effects() *Effects { return x.fx }

// Lookup returns key's live entry or nil. An expired entry is deleted on
// the way, as Redis's expireIfNeeded does on every access.
func (x *Tx) Lookup(key []byte) *Entry {
	s, h := x.locate(key)
	e := s.keys.getH(h, key)
	if e == nil {
		return nil
	}
	if e.Expired(x.now) {
		if x.fx != nil {
			x.fx.expired(s, x.db, key, e)
		}
		x.ks.expire(s, string(key), e)
		return nil
	}
	return e
}

// SetString stores a string value under key, replacing whatever the key
// held, with absolute expiry exp (0: none). The value is copied.
func (x *Tx) SetString(key, val []byte, exp int64) *Entry { return x.setString(key, val, exp, false) }

// SetStringOwned is SetString for a value the caller hands over, which
// is kept instead of copied: a big argument that the connection read
// into a buffer of its own, so that it is in memory once, not twice.
func (x *Tx) SetStringOwned(key, val []byte, exp int64) *Entry {
	return x.setString(key, val, exp, true)
}

func (x *Tx) setString(key, val []byte, exp int64, own bool) *Entry {
	s, h := x.locate(key)
	e := s.keys.getH(h, key)
	wide := isWide(e)
	if e == nil {
		x.created(key)
	}
	if v, ok := resp.ParseInt(val); ok {
		return x.storeInt(s, h, e, key, v, exp, wide)
	}
	if own {
		if e == nil {
			e, _ = s.newEntry(h, key, 0)
		}
		e.SetStr(val)
		e.SetStrEnc(EncAuto)
	} else if e == nil {
		var buf []byte
		e, buf = s.newEntry(h, key, len(val)) // entry_alloc.go
		if buf == nil {
			buf = make([]byte, 0, len(val))
		}
		e.SetStr(append(buf, val...))
	} else {
		var old []byte
		if e.HasBytes() {
			old = e.StrBytes()[:0]
		}
		e.SetStr(append(old, val...))
		e.SetStrEnc(EncAuto)
	}
	s.setExp(e, exp)
	x.wroteOver(s, key, wide)
	return e
}

// SetInt stores the string value of v's decimal form under key, as
// SetString would, without formatting it: it is kept as the number.
func (x *Tx) SetInt(key []byte, v, exp int64) *Entry {
	s, h := x.locate(key)
	e := s.keys.getH(h, key)
	if e == nil {
		x.created(key)
	}
	return x.storeInt(s, h, e, key, v, exp, isWide(e))
}

// SetIntOn is setInt for key's live string entry e, just looked up: it
// spares the second lookup (CL.THROTTLE's write-back).
func (x *Tx) SetIntOn(key []byte, e *Entry, v, exp int64) {
	s := x.shardOf(key)
	e.SetStrEnc(EncAuto)
	e.SetInt(v)
	s.setExp(e, exp)
	x.wroteInt(s, key, e, false)
}

// storeInt is setInt once key's entry e (nil: none) is looked up in s
// by its keyHash h.
func (x *Tx) storeInt(s *Shard, h uint32, e *Entry, key []byte, v, exp int64, wide bool) *Entry {
	if e == nil {
		e, _ = s.newEntry(h, key, 0)
	} else {
		e.SetStrEnc(EncAuto)
	}
	e.SetInt(v)
	s.setExp(e, exp)
	x.wroteInt(s, key, e, wide)
	return e
}

// SetObject stores an aggregate value under key, replacing what it held.
func (x *Tx) SetObject(key []byte, obj any, exp int64) *Entry {
	s, h := x.locate(key)
	e := s.keys.getH(h, key)
	wide := isWide(e)
	if e == nil {
		x.created(key)
		e, _ = s.newEntry(h, key, 0)
	}
	e.SetObj(obj)
	s.setExp(e, exp)
	x.wroteOver(s, key, wide)
	x.readied(x.db, key, obj)
	return e
}

// SetExpire changes the expiry of a live entry (0 removes it). The change
// is one the effect log can give as a big value's head alone
// (delta_persist.go).
func (x *Tx) SetExpire(key []byte, e *Entry, exp int64) {
	s := x.shardOf(key)
	s.setExp(e, exp)
	if x.fx != nil && x.fx.jr != nil {
		x.fx.jr.note(x.db, key, false, false, true)
	}
	x.changed(s, key, false, false, false)
}

// Touched records an in-place change of key's value.
func (x *Tx) Touched(key []byte) {
	x.wrote(x.shardOf(key), key)
}

// TouchedNoted is Touched for a change whose every part the handler gave
// the delta recorder (NoteHashField, NoteListPush, NoteListIndex,
// NoteStrRange): the effect log can then hold what changed instead of the
// whole value (delta_persist.go).
func (x *Tx) TouchedNoted(key []byte) {
	x.changed(x.shardOf(key), key, false, false, false)
}

// RemovedFrom ends a change that removed elements from key's aggregate
// (a hash, list or sorted set), of which left remain: the key goes when
// it is empty, as the keyspace never holds an empty aggregate; else it
// changed in place if changed says so.
func (x *Tx) RemovedFrom(key []byte, left int, changed bool) {
	x.removedFrom(key, left, changed, false)
}

// RemovedFromNoted is RemovedFrom for a change the handler gave the delta
// recorder, as TouchedNoted is Touched's (HDEL, pops, LTRIM).
func (x *Tx) RemovedFromNoted(key []byte, left int, changed bool) {
	x.removedFrom(key, left, changed, true)
}

func (x *Tx) removedFrom(key []byte, left int, changed, noted bool) {
	switch {
	case left == 0:
		x.Remove(key)
	case changed:
		x.changed(x.shardOf(key), key, false, false, !noted)
	}
}

// Remove deletes key and reports whether it existed (expired keys do not
// count, as in Redis).
func (x *Tx) Remove(key []byte) bool {
	e := x.Lookup(key)
	if e == nil {
		return false
	}
	s := x.shardOf(key)
	s.drop(string(key))
	x.wroteOver(s, key, isWide(e))
	return true
}

// Rename moves the live entry e of src, with its expiry, to dst, replacing
// whatever dst held (RENAME keeps the source's TTL). Both keys' shards must
// be locked; src and dst differ.
func (x *Tx) Rename(src, dst []byte, e *Entry) {
	ss := x.shardOf(src)
	ds := x.shardOf(dst)
	old := ds.keys.get(dst)
	dstWide := isWide(old)
	ss.drop(string(src))
	ds.drop(string(dst))
	// The key lives in the entry's allocation: the value moves to a new
	// entry made for dst.
	ne := ds.adopt(dst, e)
	x.wroteOver(ss, src, isWide(e))
	if old == nil {
		x.created(dst)
	}
	x.wroteOver(ds, dst, dstWide)
	x.readied(x.db, dst, ne.Obj())
}

// created notes, for the replication journal, that key did not exist
// before the change about to be made (JournalEntry.Existed).
func (x *Tx) created(key []byte) {
	if x.fx != nil && x.fx.jr != nil {
		x.fx.jr.created(x.db, key)
	}
}

// wrote is the hook of a change in place (an expiry, INCR, ZADD into an
// existing set); wroteOver of a replacement or a delete, wide when the
// value replaced was stored as several records (persist.go). Every
// mutation reaches one of them.
func (x *Tx) wrote(s *Shard, key []byte) { x.changed(s, key, false, false, true) }

func (x *Tx) wroteOver(s *Shard, key []byte, wide bool) { x.changed(s, key, wide, true, false) }

// wroteInt is wroteOver for key's entry e, which now holds an int:
// CL.THROTTLE's and SET's hot path. Its record is encoded at once rather
// than noted (logInt), which spares the commit a lookup of the key.
func (x *Tx) wroteInt(s *Shard, key []byte, e *Entry, wide bool) {
	if wide || x.fx == nil {
		x.wroteOver(s, key, wide)
		return
	}
	x.counted(s, key)
	x.fx.logInt(s, x.db, key, e)
}

// changed counts the write, breaks the key's WATCHes and notes it for
// the effect log: full for a replacement or a delete, plain for a change
// in place that the delta recorder did not see.
func (x *Tx) changed(s *Shard, key []byte, wide, full, plain bool) {
	x.counted(s, key)
	x.persistNote(s, key, wide, full, plain)
}

// counted counts a write of key and breaks its WATCHes.
func (x *Tx) counted(s *Shard, key []byte) {
	s.dirty++
	if len(s.watchers) != 0 {
		s.touchWatchers(string(key))
	}
}

// persistNote gives the change to the effect log, if there is one.
func (x *Tx) persistNote(s *Shard, key []byte, wide, full, plain bool) {
	if x.fx != nil {
		x.fx.noteDirty(s, x.db, key, wide, full, plain)
	}
}

// setExp keeps withTTL in step with the entry's expiry.
func (s *Shard) setExp(e *Entry, exp int64) {
	if e.Exp != 0 {
		s.withTTL--
	}
	if exp != 0 {
		s.withTTL++
	}
	e.Exp = exp
}

// drop deletes key from the shard's maps.
func (s *Shard) drop(key string) {
	if e := s.keys.removeS(key); e != nil && e.Exp != 0 {
		s.withTTL--
	}
}

// expire deletes an entry found expired, lazily or by the active cycle.
func (ks *Keyspace) expire(s *Shard, key string, e *Entry) {
	s.deleteGone(key)
	s.expired++
}

// deleteGone deletes key, expired or evicted: like a write, it counts as a
// change and breaks the key's WATCHes. The one deletion path of keys no
// command deleted.
func (s *Shard) deleteGone(key string) {
	s.drop(key)
	s.dirty++
	if len(s.watchers) != 0 {
		s.touchWatchers(key)
	}
}

// touchWatchers fails the transactions of clients WATCHing key.
func (s *Shard) touchWatchers(key string) {
	for _, c := range s.watchers[key] {
		c.Store(true)
	}
}

// FlushDB deletes every key of db. Every shard of db must be locked. WATCHes
// on keys that existed are broken, as Redis's FLUSHDB/FLUSHALL do.
func (x *Tx) FlushDB(db int) {
	if x.fx != nil {
		x.fx.noteFlush(db)
		if x.fx.store != nil {
			x.ks.flushed[db].Store(true)
		}
	}
	for i := range x.ks.dbs[db].shards {
		s := &x.ks.dbs[db].shards[i]
		if s.keys.len() == 0 {
			continue
		}
		if len(s.watchers) != 0 {
			for k := range s.watchers {
				if s.keys.getS(k) != nil {
					s.touchWatchers(k)
				}
			}
		}
		s.dirty += int64(s.keys.len())
		s.keys.reset()
		s.withTTL = 0
	}
}

// Recording makes the execution record the members it changes in z, a
// sorted set it may change in place, so that the effect log gets the
// changes rather than the whole set (zset_persist.go).
func (x *Tx) Recording(z *ZSet) {
	if x.fx != nil {
		x.fx.zrec.attach(z)
	}
}
