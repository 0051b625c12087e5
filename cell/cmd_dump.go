package cell

import (
	"encoding/binary"
	"hash/crc64"
	"math"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/zsetlite"

	"github.com/cellserver/cellserver/resp"
)

// DUMP and RESTORE, with Redis 7.0's arguments, checks and error texts, so
// keys can be moved between nodes (cellserver migrate) with their values
// exactly, a CL.THROTTLE TAT included; the TTL travels beside the payload,
// as with Redis (PEXPIRETIME, then RESTORE ... ABSTTL).
//
// The payload is ours, not Redis's RDB encoding: a value written by DUMP
// here restores only here, and a payload from Redis is refused with Redis's
// "DUMP payload version or checksum are wrong". Its layout:
//
//	type byte | body | format version (2 bytes LE) | CRC-64/ECMA of all before (8 bytes LE)
//
// Bodies use unsigned varints for lengths and counts:
//
//	string: len bytes
//	list:   n, then n times len bytes
//	hash:   n, then n times field, value (each len bytes)
//	zset:   n, then n times member (len bytes), score (float64 bits, 8 bytes LE)
//
// Redis's trailer has the same shape (RDB version, CRC-64/Jones); our
// version number and CRC polynomial both differ from Redis's, so neither
// side mistakes the other's payload for its own.

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

const (
	dumpString byte = 0
	dumpList   byte = 1
	dumpZset   byte = 3
	dumpHash   byte = 4

	dumpVersion = 0xCE01 // ours; Redis 7.0 writes RDB version 10
)

var dumpCRC = crc64.MakeTable(crc64.ECMA)

// encodeDump serializes e's value; ok is false for a type it cannot write.
func encodeDump(e *keyspace.Entry) (out []byte, ok bool) {
	putBytes := func(b []byte) { out = binary.AppendUvarint(out, uint64(len(b))); out = append(out, b...) }
	switch v := e.Obj().(type) {
	case nil:
		out = append(out, dumpString)
		putBytes(e.Str())
	case *keyspace.List:
		out = append(out, dumpList)
		out = binary.AppendUvarint(out, uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			putBytes(v.At(i))
		}
	case *keyspace.Hash:
		out = append(out, dumpHash)
		out = binary.AppendUvarint(out, uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			f, val := v.At(i)
			putBytes([]byte(f))
			putBytes(val)
		}
	case *keyspace.ZSet:
		out = append(out, dumpZset)
		out = binary.AppendUvarint(out, uint64(v.Len()))
		v.Range(0, v.Len()-1, false, func(m []byte, score float64) bool {
			putBytes(m)
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(score))
			return true
		})
	default:
		return nil, false
	}
	out = binary.LittleEndian.AppendUint16(out, dumpVersion)
	return binary.LittleEndian.AppendUint64(out, crc64.Checksum(out, dumpCRC)), true
}

// verifyDump checks the trailer and returns the type byte and body.
func verifyDump(p []byte) (body []byte, ok bool) {
	if len(p) < 11 {
		return nil, false
	}
	n := len(p) - 10
	if binary.LittleEndian.Uint16(p[n:]) != dumpVersion {
		return nil, false
	}
	if binary.LittleEndian.Uint64(p[n+2:]) != crc64.Checksum(p[:n+2], dumpCRC) {
		return nil, false
	}
	return p[:n], true
}

// dumpReader reads a body, failing (not panicking) on any truncation.
type dumpReader struct {
	b   []byte
	bad bool
}

func (r *dumpReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *dumpReader) bytes() []byte {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return v
}

// count reads an element count no bigger than the bytes left could hold
// (every element takes at least one byte), so a forged count cannot make
// us allocate.
func (r *dumpReader) count() int {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return 0
	}
	return int(n)
}

// score reads a float64; NaN is refused as Redis's RDB loader does.
func (r *dumpReader) score() float64 {
	if r.bad || len(r.b) < 8 {
		r.bad = true
		return 0
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	if math.IsNaN(f) {
		r.bad = true
	}
	return f
}

// decodeDump rebuilds a value: a string (obj nil) or an object. zcfg
// is the sorted sets' encoding thresholds.
func decodeDump(body []byte, zcfg zsetlite.Config) (str []byte, obj any, ok bool) {
	r := &dumpReader{b: body[1:]}
	switch body[0] {
	case dumpString:
		str = r.bytes()
		if str == nil {
			str = []byte{}
		}
	case dumpList:
		l := keyspace.NewList()
		for n := r.count(); n > 0 && !r.bad; n-- {
			l.PushBack(r.bytes())
		}
		if l.Len() == 0 {
			return nil, nil, false
		}
		obj = l
	case dumpHash:
		h := keyspace.NewHash()
		for n := r.count(); n > 0 && !r.bad; n-- {
			f := r.bytes()
			h.Set(f, r.bytes())
		}
		if h.Len() == 0 {
			return nil, nil, false
		}
		obj = h
	case dumpZset:
		// Read whole first: the set is sized as Redis sizes a loaded one
		// (zsetlite's Reserve).
		var ms [][]byte
		var scores []float64
		maxLen := 0
		for n := r.count(); n > 0 && !r.bad; n-- {
			m := r.bytes()
			if sc := r.score(); !r.bad {
				ms, scores = append(ms, m), append(scores, sc)
				maxLen = max(maxLen, len(m))
			}
		}
		z := keyspace.NewZSet(zcfg)
		z.Reserve(len(ms), maxLen)
		for i, m := range ms {
			z.Put(m, scores[i])
		}
		if z.Len() == 0 {
			return nil, nil, false
		}
		obj = z
	default:
		return nil, nil, false
	}
	if r.bad || len(r.b) != 0 {
		return nil, nil, false
	}
	return str, obj, true
}

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
	body, ok := verifyDump(x.Args[3])
	if !ok {
		x.Error(ErrDumpPayload)
		return
	}
	str, obj, ok := decodeDump(body, x.zsetConfig())
	if !ok {
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
