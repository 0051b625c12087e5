package cell

import (
	"math"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
	"github.com/cellserver/cellserver/resp"
)

// DUMP and RESTORE, with Redis 7.0's arguments, checks, error texts and
// payload: a value in RDB encoding, the RDB version and a CRC-64 (package
// rdb). A key DUMPed here RESTOREs in redis-server and the other way round,
// so MIGRATE and migration tools move keys between the two; a CL.THROTTLE
// TAT is a plain string and travels as one. The TTL travels beside the
// payload, as with Redis (PEXPIRETIME, then RESTORE ... ABSTTL).
//
// A CL.WINDOW window is DUMPed as a module value (rdb_value.go), which
// RESTOREs here and which redis-server refuses as a module's it lacks.
// RESTORE refuses what the keyspace cannot hold (streams, other modules'
// values, a forged window) with Redis's "Bad data format", as Redis
// answers a payload of a module it has not loaded.

func init() {
	register(
		&Command{Name: "dump", Arity: 2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Handler: dump,
			ACL: ACLKeyspace, Tips: []string{"nondeterministic_output"},
			Doc: &CommandDoc{"Return a serialized version of the value stored at the specified key.", "2.6.0", "generic", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."}},
		&Command{Name: "restore", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: restore,
			ACL: ACLKeyspace | ACLDangerous, KeySpecs: restoreKeySpecs,
			Doc: &CommandDoc{"Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", "generic", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."}},
	)
}

// restoreKeySpecs is RESTORE's (and RESTORE-ASKING's) key: overwritten.
var restoreKeySpecs = []KeySpec{{Flags: KeyOW | KeyUpdate, BeginIndex: 1, LastKey: 0, KeyStep: 1}}

func dump(x *Ctx) {
	e := x.Lookup(x.Args[1])
	if e == nil {
		x.W.Null()
		return
	}
	p, ok := encodeDump(e)
	if !ok {
		x.Error(ErrDumpType)
		return
	}
	x.W.Bulk(p)
}

// encodeDump is e's DUMP payload; ok is false for a type rdb cannot write.
func encodeDump(e *keyspace.Entry) ([]byte, bool) {
	v, ok := entryValue(e)
	if !ok {
		return nil, false
	}
	p, err := rdb.EncodeDump(&v)
	return p, err == nil
}

// restore is RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f],
// checking in Redis's order: options, BUSYKEY, ttl, payload. IDLETIME and
// FREQ are checked and ignored (no LRU or LFU here).
func restore(x *Ctx) {
	replace, absttl := false, false
	idle, freq := false, false
	for j := 4; j < len(x.Args); j++ {
		a, more := x.Args[j], j+1 < len(x.Args)
		switch {
		case optIs(a, "replace"):
			replace = true
		case optIs(a, "absttl"):
			absttl = true
		case optIs(a, "idletime") && more && !freq:
			n, ok := resp.ParseInt(x.Args[j+1])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			if n < 0 {
				x.Error(ErrInvalidIdletime)
				return
			}
			idle = true
			j++
		case optIs(a, "freq") && more && !idle:
			n, ok := resp.ParseInt(x.Args[j+1])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			if n < 0 || n > 255 {
				x.Error(ErrInvalidFreq)
				return
			}
			freq = true
			j++
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	key := x.Args[1]
	if !replace && x.Lookup(key) != nil {
		x.Error(ErrBusyKey)
		return
	}
	ttl, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if ttl < 0 {
		x.Error(ErrInvalidTTL)
		return
	}
	v, err := rdb.DecodeDump(x.Args[3])
	if err == rdb.ErrDumpPayload {
		x.Error(ErrDumpPayload)
		return
	}
	str, obj, ok := valueObject(&v, x.zsetConfig(), x.setMaxInts())
	if err != nil || !ok {
		x.Error(ErrBadDataFormat)
		return
	}
	if replace {
		x.Remove(key)
	}
	if ttl != 0 && !absttl {
		if ttl > math.MaxInt64-x.Now() {
			ttl = math.MaxInt64
		} else {
			ttl += x.Now()
		}
	}
	if ttl != 0 && ttl <= x.Now() {
		// Already expired: nothing is created (a replaced key is gone).
		x.W.OK()
		return
	}
	if obj == nil {
		x.SetString(key, str, ttl)
	} else {
		x.SetObject(key, obj, ttl)
	}
	x.W.OK()
}
