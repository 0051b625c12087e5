package cell

import (
	"bytes"
	"math"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

// COPY, MOVE and TOUCH (db.c in Redis 7.0). COPY with DB and MOVE reach a
// database other than the selected one, so dispatch, EXEC and scripts
// lock every database for them (Command.ReachesAllDBs); the copy goes
// through the execution's Tx in the target database, so the effect log,
// WATCH and the changes count see it as any write there.

func init() {
	register(
		&Command{Name: "copy", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 2, Handler: copyCmd,
			ReachesAllDBs: copyReachesDB},
		&Command{Name: "move", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: move,
			ReachesAllDBs: func([][]byte) bool { return true }},
		&Command{Name: "touch", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Handler: touch},
	)
}

// copyReachesDB: COPY names another database only with a DB option.
func copyReachesDB(args [][]byte) bool {
	for _, a := range args[3:] {
		if optIs(a, "db") {
			return true
		}
	}
	return false
}

// targetDB parses a database index as Redis's getIntFromObjectOrReply
// then selectDb do: not an integer, not a 32-bit one, then out of range.
func targetDB(x *Ctx, arg []byte) (int, bool) {
	n, ok := resp.ParseInt(arg)
	if !ok {
		x.Error(ErrNotInteger)
		return 0, false
	}
	if n != int64(int32(n)) {
		x.Error(ErrInt32Range)
		return 0, false
	}
	if n < 0 || n >= int64(x.srv.ks.DBs()) {
		x.Error(ErrDBIndex)
		return 0, false
	}
	return int(n), true
}

// copyCmd is COPY source destination [DB db] [REPLACE]: options first,
// then the cluster and same-object checks, then the source (missing: 0),
// then the destination (present without REPLACE: 0). The copy keeps the
// source's expiry.
func copyCmd(x *Ctx) {
	src, dst := x.Args[1], x.Args[2]
	srcDB, dstDB := x.DB(), x.DB()
	replace := false
	for j := 3; j < len(x.Args); j++ {
		a := x.Args[j]
		switch {
		case optIs(a, "replace"):
			replace = true
		case optIs(a, "db") && j+1 < len(x.Args):
			n, ok := targetDB(x, x.Args[j+1])
			if !ok {
				return
			}
			dstDB = n
			j++
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if x.srv.clusterOn && (srcDB != 0 || dstDB != 0) {
		x.Error(ErrCopyCluster)
		return
	}
	if srcDB == dstDB && bytes.Equal(src, dst) {
		x.Error(ErrSameObject)
		return
	}
	e := x.Lookup(src)
	if e == nil {
		x.W.Int(0)
		return
	}
	x.SetDB(dstDB)
	defer x.SetDB(srcDB)
	if x.Lookup(dst) != nil && !replace {
		x.W.Int(0)
		return
	}
	if !storeCopy(x, dst, e) {
		x.Error(ErrDumpType)
		return
	}
	x.W.Int(1)
}

// storeCopy stores a copy of e's value, with its expiry, under key in the
// selected database, replacing what key held. false: a type that cannot
// be copied (none so far). The copy keeps the value's encoding, as
// Redis's dupStringObject, setTypeDup, hashTypeDup and zsetDup do (and
// MOVE, which moves the object), whatever the thresholds are now: a raw
// string (a bitmap, an APPEND's) stays raw, an intset stays one, a
// hashtable of integers stays a hashtable, a large hash or sorted set
// stays large however small it has become.
func storeCopy(x *Ctx, key []byte, e *keyspace.Entry) bool {
	switch o := e.Obj().(type) {
	case *keyspace.Set:
		x.SetObject(key, o.Clone(), e.Exp)
		return true
	case *keyspace.Hash:
		x.SetObject(key, o.Clone(), e.Exp)
		return true
	}
	v, ok := entryValue(e)
	if !ok {
		return false
	}
	zcfg := x.zsetConfig()
	built := zcfg
	if z, ok := e.Obj().(*keyspace.ZSet); ok {
		built = zsetlite.Config{} // large from the first member
		if z.Encoding() == zsetlite.EncodingListpack {
			built = zsetlite.Config{MaxListpackEntries: math.MaxInt32, MaxListpackValue: math.MaxInt32}
		}
	}
	str, obj, ok := valueObject(&v, built, x.setMaxInts())
	if !ok {
		return false
	}
	if z, ok := obj.(*keyspace.ZSet); ok {
		z.SetConfig(zcfg) // later inserts check today's thresholds
	}
	if obj == nil {
		x.SetString(key, str, e.Exp).SetStrEnc(e.StrEnc())
	} else {
		x.SetObject(key, obj, e.Exp)
	}
	return true
}

// move is MOVE key db: the database index, then the same-database check,
// then the key (missing: 0), then the target (key present there: 0).
func move(x *Ctx) {
	if x.srv.clusterOn {
		x.Error(ErrMoveCluster)
		return
	}
	key := x.Args[1]
	srcDB := x.DB()
	dstDB, ok := targetDB(x, x.Args[2])
	if !ok {
		return
	}
	if dstDB == srcDB {
		x.Error(ErrSameObject)
		return
	}
	e := x.Lookup(key)
	if e == nil {
		x.W.Int(0)
		return
	}
	x.SetDB(dstDB)
	if x.Lookup(key) != nil || !storeCopy(x, key, e) {
		x.SetDB(srcDB)
		x.W.Int(0)
		return
	}
	x.SetDB(srcDB)
	x.Remove(key)
	x.W.Int(1)
}

// touch counts the keys that exist, as EXISTS does but once per
// argument; access times are not tracked, so it changes nothing else.
func touch(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Lookup(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}
