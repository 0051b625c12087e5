package cell

import (
	"math"
	"strconv"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
)

// The replication stream carries effects, as Redis 7 replicates scripts:
// for every key an execution changed (keyspace.Journal), the commands
// that make a replica's key what the master's key is now, read from the
// keyspace while the execution's shards are still locked. So a
// redis-server replica, which has no CL.THROTTLE, holds what the throttle
// wrote. More than one command from one execution is wrapped in
// MULTI/EXEC.
//
// A key changed in place is streamed as the parts that changed, each in
// its state now (keyspace.Effects.AppendChanges, changeCmds): a sorted
// set's ZADD of the members added or rescored and ZREM of those removed,
// a hash's HSET/HDEL, a set's SADD/SREM, a big string's SETRANGE of the
// bytes written, a list's LPUSH/RPUSH of its new ends, LTRIM of what
// was popped and LSET of what was set in between (listCmds), and
// PEXPIREAT or PERSIST if its expiry changed. A sliding window's write is
// then two or three short commands, whatever the window's size. A key
// replaced or deleted, or a change about as big as the value, is streamed
// whole (effectCmds): a string is a SET (PXAT
// for its expiry), a missing key a DEL (expired keys too, as Redis 7
// propagates them), a hash, list, set or sorted set a DEL and its rebuild
// (HSET, RPUSH, SADD, ZADD) then PEXPIREAT, a CL.WINDOW window (a module
// value, rdb_value.go) a RESTORE ... REPLACE ABSTTL of its DUMP payload,
// after a DEL when it replaced a value the execution found there (a
// redis-server replica refuses the RESTORE, and must not keep the old
// value).
//
// Every command states the final state of what it names, so replaying a
// stretch of the stream twice over ends where the master is. A full
// resync sends a snapshot taken a shard at a time while clients keep
// writing, so the stream from the snapshot's offset may replay changes
// the snapshot already holds, and a change in place replayed over a later
// state could empty a key on the replica that the master never emptied
// (losing its TTL there). So while a snapshot is being taken every key is
// streamed whole (replMaster.syncing), and once it is done the replica is
// where the master was and changes in place apply on top.

// replCmd appends args as one RESP array.
func replCmd(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = replBulk(b, a)
	}
	return b
}

func replBulk(b, a []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(a)), 10)
	b = append(b, '\r', '\n')
	b = append(b, a...)
	return append(b, '\r', '\n')
}

// replHeader starts a RESP array of n elements.
func replHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// appendScore appends a score as a replica parses it back bit for bit. A
// whole number below 2^53 (a sliding window's timestamps) is written as
// an integer: exact, shorter than the 1.7327e+12 form of 'g', and several
// times cheaper than the shortest-float search, which was a tenth of
// what streaming a W1 write cost the master. -0 keeps its sign by 'g'.
func appendScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// effectCmds appends the commands that make db's key hold e (nil: no
// key), and returns how many it appended. replaced: the key held another
// value before the execution.
func effectCmds(b []byte, key []byte, e *keyspace.Entry, replaced bool) ([]byte, int) {
	if e == nil {
		return replCmd(b, []byte("DEL"), key), 1
	}
	v, ok := entryValue(e)
	if !ok {
		return replCmd(b, []byte("DEL"), key), 1
	}
	var exp []byte
	if e.Exp != 0 {
		exp = strconv.AppendInt(nil, e.Exp, 10)
	}
	if v.Type == rdb.TypeModule {
		// A CL.WINDOW window: no command rebuilds it, so its DUMP payload
		// does. ABSTTL with the absolute expiry, or 0 for none (RESTORE
		// reads ttl 0 as no expiry, ABSTTL or not). redis-server refuses
		// the payload (it has no such module type): a DEL first of the
		// value the window replaced leaves it without the key rather than
		// with a stale value.
		p, err := rdb.EncodeDump(&v)
		if err != nil { // entryValue's module values always encode
			return replCmd(b, []byte("DEL"), key), 1
		}
		if exp == nil {
			exp = []byte("0")
		}
		n := 1
		if replaced {
			b = replCmd(b, []byte("DEL"), key)
			n++
		}
		return replCmd(b, []byte("RESTORE"), key, exp, p, []byte("REPLACE"), []byte("ABSTTL")), n
	}
	if v.Type == rdb.TypeString {
		if exp != nil {
			return replCmd(b, []byte("SET"), key, v.Str, []byte("PXAT"), exp), 1
		}
		return replCmd(b, []byte("SET"), key, v.Str), 1
	}
	b = replCmd(b, []byte("DEL"), key)
	n := 2
	switch v.Type {
	case rdb.TypeHash, rdb.TypeList, rdb.TypeSet:
		name := []byte("RPUSH")
		switch v.Type {
		case rdb.TypeHash:
			name = []byte("HSET") // Elems alternate field, value
		case rdb.TypeSet:
			name = []byte("SADD")
		}
		b = replHeader(b, 2+len(v.Elems))
		b = replBulk(b, name)
		b = replBulk(b, key)
		for _, el := range v.Elems {
			b = replBulk(b, el)
		}
	case rdb.TypeZSet:
		b = replHeader(b, 2+2*len(v.Elems))
		b = replBulk(b, []byte("ZADD"))
		b = replBulk(b, key)
		for i, el := range v.Elems {
			var sb [32]byte
			b = replBulk(b, appendScore(sb[:0], v.Scores[i]))
			b = replBulk(b, el)
		}
	}
	if exp != nil {
		b = replCmd(b, []byte("PEXPIREAT"), key, exp)
		n++
	}
	return b, n
}

// changeCmds appends the commands that apply chs, the changes in place
// of key's value, of type typ, and its expiry exp (0: none) if expChanged,
// and returns how many it appended. Additions come before removals, so
// the key never goes empty on the way (which would drop its TTL on a
// replica).
func changeCmds(b []byte, key []byte, typ rdb.Type, chs []keyspace.Change, exp int64, expChanged bool) ([]byte, int) {
	n := 0
	var num [32]byte // a number's text, on the stack
	if typ == rdb.TypeString {
		for _, ch := range chs {
			b = replCmd(b, []byte("SETRANGE"), key, strconv.AppendInt(num[:0], ch.Off, 10), ch.Val)
			n++
		}
	} else {
		add, del := changeNames(typ)
		puts, dels := 0, 0
		for i := range chs {
			if chs[i].Del {
				dels++
			} else {
				puts++
			}
		}
		if puts > 0 {
			per := 1 + b2i(typ == rdb.TypeZSet || typ == rdb.TypeHash)
			b = replHeader(b, 2+int(per)*puts)
			b = replBulk(b, add)
			b = replBulk(b, key)
			for i := range chs {
				ch := &chs[i]
				switch {
				case ch.Del:
				case typ == rdb.TypeZSet:
					b = replBulk(b, appendScore(num[:0], ch.Score))
					b = replBulk(b, ch.Item)
				case typ == rdb.TypeHash:
					b = replBulk(b, ch.Item)
					b = replBulk(b, ch.Val)
				default:
					b = replBulk(b, ch.Item)
				}
			}
			n++
		}
		if dels > 0 {
			b = replHeader(b, 2+dels)
			b = replBulk(b, del)
			b = replBulk(b, key)
			for i := range chs {
				if chs[i].Del {
					b = replBulk(b, chs[i].Item)
				}
			}
			n++
		}
	}
	if expChanged {
		if exp != 0 {
			b = replCmd(b, []byte("PEXPIREAT"), key, strconv.AppendInt(num[:0], exp, 10))
		} else {
			b = replCmd(b, []byte("PERSIST"), key)
		}
		n++
	}
	return b, n
}

// changeNames are the commands that add and remove the parts of a value
// of type typ.
func changeNames(typ rdb.Type) (add, del []byte) {
	switch typ {
	case rdb.TypeZSet:
		return []byte("ZADD"), []byte("ZREM")
	case rdb.TypeHash:
		return []byte("HSET"), []byte("HDEL")
	}
	return []byte("SADD"), []byte("SREM")
}

// valueType is the type of e's value as changeCmds names it; ok is false
// for a value whose changes in place are not streamed as parts.
func valueType(e *keyspace.Entry) (typ rdb.Type, ok bool) {
	switch e.Obj().(type) {
	case nil:
		return rdb.TypeString, true
	case *keyspace.ZSet:
		return rdb.TypeZSet, true
	case *keyspace.Hash:
		return rdb.TypeHash, true
	case *keyspace.Set:
		return rdb.TypeSet, true
	case *keyspace.List:
		return rdb.TypeList, true
	}
	return 0, false
}

// listCmds appends the commands that change key's list l as lc and sets
// say (keyspace.AppendListChanges), and its expiry exp if expChanged, and
// returns how many it appended: LPUSH of the new head elements, RPUSH of
// the new tail, LTRIM of what went at either end, LSET of the elements
// changed in between.
func listCmds(b []byte, key []byte, l *keyspace.List, lc keyspace.ListChange, sets []keyspace.Change, exp int64, expChanged bool) ([]byte, int) {
	n := 0
	var num, num2 [24]byte
	if lc.Front > 0 {
		b = replHeader(b, 2+lc.Front)
		b = replBulk(b, []byte("LPUSH"))
		b = replBulk(b, key)
		for i := lc.Front - 1; i >= 0; i-- {
			b = replBulk(b, l.At(i))
		}
		n++
	}
	if lc.Back > 0 {
		b = replHeader(b, 2+lc.Back)
		b = replBulk(b, []byte("RPUSH"))
		b = replBulk(b, key)
		for i := l.Len() - lc.Back; i < l.Len(); i++ {
			b = replBulk(b, l.At(i))
		}
		n++
	}
	if lc.TrimFront > 0 || lc.TrimBack > 0 {
		b = replCmd(b, []byte("LTRIM"), key, strconv.AppendInt(num[:0], int64(lc.TrimFront), 10),
			strconv.AppendInt(num2[:0], int64(-1-lc.TrimBack), 10))
		n++
	}
	for _, ch := range sets {
		b = replCmd(b, []byte("LSET"), key, strconv.AppendInt(num[:0], ch.Off, 10), ch.Val)
		n++
	}
	b, m := changeCmds(b, key, rdb.TypeList, nil, exp, expChanged)
	return b, n + m
}

// streamScratch is the buffers streamJournal reuses for the changes it
// reads.
type streamScratch struct {
	chs  []keyspace.Change
	ints []byte
}

// streamJournal appends to b the stream of what fx's journal noted, and
// returns how many commands; db is the database the stream has selected
// (-1: none), updated. whole: every key as its whole value (a snapshot
// is being taken). The keys' shards must be locked, the execution not yet
// committed (its recorders still hold what it changed).
func streamJournal(b []byte, ks *keyspace.Keyspace, fx *keyspace.Effects, db *int, whole bool, sc *streamScratch) ([]byte, int) {
	j := fx.Journal()
	cmds := 0
	for _, e := range j.Entries() {
		if e.DB != *db {
			b = replCmd(b, []byte("SELECT"), strconv.AppendInt(nil, int64(e.DB), 10))
			*db = e.DB
		}
		if e.Flush {
			b = replCmd(b, []byte("FLUSHDB"))
			cmds++
			continue
		}
		key := j.Key(e)
		ent := ks.PeekLocked(e.DB, key)
		var n int
		if typ, ok := changeable(ent, e, whole); ok {
			var chs []keyspace.Change
			if typ == rdb.TypeList {
				var lc keyspace.ListChange
				chs, lc, ok = fx.AppendListChanges(sc.chs[:0], e, ent)
				if ok {
					b, n = listCmds(b, key, ent.Obj().(*keyspace.List), lc, chs, ent.Exp, e.Exp)
				}
			} else {
				chs, sc.ints, ok = fx.AppendChanges(sc.chs[:0], sc.ints[:0], e, ent)
				if ok {
					b, n = changeCmds(b, key, typ, chs, ent.Exp, e.Exp)
				}
			}
			sc.chs = chs[:0]
			if ok {
				cmds += n
				continue
			}
		}
		b, n = effectCmds(b, key, ent, e.Whole && e.Existed)
		cmds += n
	}
	return b, cmds
}

// changeable reports whether the journal's entry je, whose key holds
// ent, may be streamed as its changes in place, and its value's type.
func changeable(ent *keyspace.Entry, je keyspace.JournalEntry, whole bool) (rdb.Type, bool) {
	if whole || je.Whole || ent == nil {
		return 0, false
	}
	return valueType(ent)
}

var (
	multiCmd = replCmd(nil, []byte("MULTI"))
	execCmd  = replCmd(nil, []byte("EXEC"))
)
