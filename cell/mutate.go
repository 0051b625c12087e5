package cell

import "github.com/cellserver/cellserver/resp"

// The keyspace mutation API. Every write to a key goes through one of the
// functions below, and each of them ends in wrote(), wroteOver() or
// wroteInt(): where WATCH invalidation, the changes-since-save count
// (counted) and the persistence effect log (persist.go) hook in. A handler
// that changes a value in place (APPEND, ZADD into an existing set) calls
// touched() when it is done.
//
// All of them require the key's shard to be locked by dispatch.

// lookup returns key's live entry or nil. An expired entry is deleted on
// the way, as Redis's expireIfNeeded does on every access.
func (x *Ctx) lookup(key []byte) *Entry {
	s, h := x.srv.ks.locate(x.db, key)
	e := s.keys.getH(h, key)
	if e == nil {
		return nil
	}
	if e.expired(x.now) {
		if x.srv.store != nil {
			s.noteExpired(key, e)
		}
		x.srv.ks.expire(s, string(key), e)
		return nil
	}
	return e
}

// lookupString returns key's string entry, or nil if missing. ok is false,
// with WRONGTYPE already replied, if the key holds another type.
func (x *Ctx) lookupString(key []byte) (e *Entry, ok bool) {
	e = x.lookup(key)
	if e != nil && !e.isString() {
		x.Error(ErrWrongType)
		return nil, false
	}
	return e, true
}

// setString stores a string value under key, replacing whatever the key
// held, with absolute expiry exp (0: none). The value is copied.
func (x *Ctx) setString(key, val []byte, exp int64) *Entry {
	s, h := x.srv.ks.locate(x.db, key)
	e := s.keys.getH(h, key)
	wide := isWide(e)
	if v, ok := resp.ParseInt(val); ok {
		return x.storeInt(s, h, e, key, v, exp, wide)
	}
	if e == nil {
		var buf []byte
		e, buf = s.newEntry(h, key, len(val)) // entry_alloc.go
		if buf == nil {
			buf = make([]byte, 0, len(val))
		}
		e.setStr(append(buf, val...))
	} else {
		var old []byte
		if e.hasBytes() {
			old = e.strBytes()[:0]
		}
		e.setStr(append(old, val...))
		e.setStrEnc(encAuto)
	}
	s.setExp(e, exp)
	x.wroteOver(s, key, wide)
	return e
}

// setInt stores the string value of v's decimal form under key, as
// setString would, without formatting it: it is kept as the number.
func (x *Ctx) setInt(key []byte, v, exp int64) *Entry {
	s, h := x.srv.ks.locate(x.db, key)
	e := s.keys.getH(h, key)
	return x.storeInt(s, h, e, key, v, exp, isWide(e))
}

// setIntOn is setInt for key's live string entry e, just looked up: it
// spares the second lookup (CL.THROTTLE's write-back).
func (x *Ctx) setIntOn(key []byte, e *Entry, v, exp int64) {
	s := x.srv.ks.shardOf(x.db, key)
	e.setStrEnc(encAuto)
	e.setInt(v)
	s.setExp(e, exp)
	x.wroteInt(s, key, e, false)
}

// storeInt is setInt once key's entry e (nil: none) is looked up in s
// by its keyHash h.
func (x *Ctx) storeInt(s *Shard, h uint32, e *Entry, key []byte, v, exp int64, wide bool) *Entry {
	if e == nil {
		e, _ = s.newEntry(h, key, 0)
	} else {
		e.setStrEnc(encAuto)
	}
	e.setInt(v)
	s.setExp(e, exp)
	x.wroteInt(s, key, e, wide)
	return e
}

// setObject stores an aggregate value under key, replacing what it held.
func (x *Ctx) setObject(key []byte, obj any, exp int64) *Entry {
	s, h := x.srv.ks.locate(x.db, key)
	e := s.keys.getH(h, key)
	wide := isWide(e)
	if e == nil {
		e, _ = s.newEntry(h, key, 0)
	}
	e.setObj(obj)
	s.setExp(e, exp)
	x.wroteOver(s, key, wide)
	return e
}

// setExpire changes the expiry of a live entry (0 removes it).
func (x *Ctx) setExpire(key []byte, e *Entry, exp int64) {
	s := x.srv.ks.shardOf(x.db, key)
	s.setExp(e, exp)
	x.wrote(s, key)
}

// touched records an in-place change of key's value.
func (x *Ctx) touched(key []byte) {
	x.wrote(x.srv.ks.shardOf(x.db, key), key)
}

// remove deletes key and reports whether it existed (expired keys do not
// count, as in Redis).
func (x *Ctx) remove(key []byte) bool {
	e := x.lookup(key)
	if e == nil {
		return false
	}
	s := x.srv.ks.shardOf(x.db, key)
	s.drop(string(key))
	x.wroteOver(s, key, isWide(e))
	return true
}

// rename moves the live entry e of src, with its expiry, to dst, replacing
// whatever dst held (RENAME keeps the source's TTL). Both keys' shards must
// be locked; src and dst differ.
func (x *Ctx) rename(src, dst []byte, e *Entry) {
	ss := x.srv.ks.shardOf(x.db, src)
	ds := x.srv.ks.shardOf(x.db, dst)
	dstWide := isWide(ds.keys.get(dst))
	ss.drop(string(src))
	ds.drop(string(dst))
	// The key lives in the entry's allocation: the value moves to a new
	// entry made for dst.
	ds.adopt(dst, e)
	x.wroteOver(ss, src, isWide(e))
	x.wroteOver(ds, dst, dstWide)
}

// wrote is the hook of a change in place (an expiry, INCR, ZADD into an
// existing set); wroteOver of a replacement or a delete, wide when the
// value replaced was stored as several records (persist.go). Every
// mutation reaches one of them.
func (x *Ctx) wrote(s *Shard, key []byte) { x.changed(s, key, false, false) }

func (x *Ctx) wroteOver(s *Shard, key []byte, wide bool) { x.changed(s, key, wide, true) }

// wroteInt is wroteOver for key's entry e, which now holds an int:
// CL.THROTTLE's and SET's hot path. Its record is encoded at once rather
// than noted (logInt), which spares the commit a lookup of the key.
func (x *Ctx) wroteInt(s *Shard, key []byte, e *Entry, wide bool) {
	if wide || x.srv.store == nil {
		x.wroteOver(s, key, wide)
		return
	}
	x.counted(s, key)
	x.cl.logInt(s, x.db, key, e)
}

// changed counts the write, breaks the key's WATCHes and notes it for
// the effect log.
func (x *Ctx) changed(s *Shard, key []byte, wide, full bool) {
	x.counted(s, key)
	x.persistNote(s, key, wide, full)
}

// counted counts a write of key and breaks its WATCHes.
func (x *Ctx) counted(s *Shard, key []byte) {
	s.dirty++
	if len(s.watchers) != 0 {
		s.touchWatchers(string(key))
	}
}

// persistNote gives the change to the effect log, if there is one.
func (x *Ctx) persistNote(s *Shard, key []byte, wide, full bool) {
	if x.srv.store != nil {
		x.cl.noteDirty(s, x.db, key, wide, full)
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
	s.drop(key)
	s.expired++
	s.dirty++
	if len(s.watchers) != 0 {
		s.touchWatchers(key)
	}
}

// touchWatchers fails the transactions of clients WATCHing key.
func (s *Shard) touchWatchers(key string) {
	for _, c := range s.watchers[key] {
		c.watchDirty.Store(true)
	}
}

// flushDB deletes every key of db. Every shard of db must be locked. WATCHes
// on keys that existed are broken, as Redis's FLUSHDB/FLUSHALL do.
func (x *Ctx) flushDB(db int) {
	if x.srv.store != nil {
		x.cl.noteFlush(db)
	}
	for i := range x.srv.ks.dbs[db].shards {
		s := &x.srv.ks.dbs[db].shards[i]
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
