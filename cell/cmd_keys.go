package cell

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Generic key commands: existence, type, iteration, renaming and expiry,
// for keys of every type (db.c and expire.c in Redis).

func init() {
	register(
		&Command{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Handler: delCmd},
		&Command{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Handler: delCmd},
		&Command{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Handler: exists},
		&Command{Name: "type", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: typeCmd},
		&Command{Name: "keys", Arity: 2, Flags: FlagReadonly | flagWholeDB, Handler: keysCmd},
		&Command{Name: "scan", Arity: -2, Flags: FlagReadonly | flagWholeDB, Handler: scan},
		&Command{Name: "randomkey", Arity: 1, Flags: FlagReadonly | flagWholeDB, Handler: randomkey},
		&Command{Name: "rename", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 2, Handler: renameCmd},
		&Command{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Handler: renamenx},
		&Command{Name: "expire", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: expireCmd},
		&Command{Name: "pexpire", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: pexpire},
		&Command{Name: "expireat", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: expireat},
		&Command{Name: "pexpireat", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: pexpireat},
		&Command{Name: "ttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: ttl},
		&Command{Name: "pttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: pttl},
		&Command{Name: "expiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: expiretime},
		&Command{Name: "pexpiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: pexpiretime},
		&Command{Name: "persist", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: persistCmd},
		&Command{Name: "object", Arity: -2},
		&Command{Name: "object|encoding", Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Handler: objectEncoding},
		&Command{Name: "object|freq", Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Handler: objectFreq},
		&Command{Name: "object|idletime", Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Handler: objectIdletime},
		&Command{Name: "object|refcount", Arity: 3, Flags: FlagReadonly, FirstKey: 2, LastKey: 2, Handler: objectRefcount},
		&Command{Name: "object|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: objectHelp},
	)
}

// delCmd is DEL and UNLINK: the number of keys that existed. Freeing is the
// collector's job either way.
func delCmd(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Remove(k) {
			n++
		}
	}
	x.W.Int(n)
}

// exists counts keys with repetition: EXISTS a a is 2 if a exists.
func exists(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.Lookup(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}

func typeCmd(x *Ctx) {
	e := x.Lookup(x.Args[1])
	if e == nil {
		x.W.Status("none")
		return
	}
	x.W.Status(e.Type())
}

// keysCmd is KEYS: it lists the live keys matching a glob pattern, in no particular
// order. Expired keys are skipped, not deleted, as in Redis. It walks the
// database scanStep keys per hold of a shard's lock, so that other
// clients wait for one step at most, not for the whole listing. The
// answer holds every key present from its start to its end, once
// (keyspace.Scan); a key added or deleted meanwhile may or may not be in
// it, as if Redis had run the command at some moment in between.
func keysCmd(x *Ctx) {
	pat := x.Args[1]
	all := len(pat) == 1 && pat[0] == '*'
	now := x.Now()
	var out []string
	take := func(k string, e *keyspace.Entry) {
		if !e.Expired(now) && (all || globMatch(pat, bytesOf(k))) {
			out = append(out, k)
		}
	}
	for sc := x.Keyspace().StartScan(x.DB(), 0); !sc.Done(); {
		if !x.lockShard(sc.Shard()) {
			return
		}
		sc.Step(scanStep, take)
		x.unlockShard()
	}
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// scanStep is the most keys SCAN and KEYS take per hold of a shard's
// lock: about 100 µs of work, however large COUNT or the database is.
const scanStep = 1024

// scan is SCAN: a call walks about COUNT keys from the cursor on (before
// MATCH and TYPE filter them, as in Redis), a step per shard lock, and
// returns the cursor where it stopped (keyspace.Scan says what the cursor
// guarantees).
func scan(x *Ctx) {
	cursor, ok := parseCursor(x.Args[1])
	if !ok {
		x.Error(ErrInvalidCursor)
		return
	}
	count := int64(10)
	var pat []byte
	var typ string
	usePat, useType := false, false
	for i := 2; i < len(x.Args); i += 2 {
		a, more := x.Args[i], i+1 < len(x.Args)
		switch {
		case optIs(a, "count") && more:
			n, ok := resp.ParseInt(x.Args[i+1])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			if n < 1 {
				x.Error(ErrSyntax)
				return
			}
			count = n
		case optIs(a, "match") && more:
			pat = x.Args[i+1]
			usePat = !(len(pat) == 1 && pat[0] == '*')
		case optIs(a, "type") && more:
			typ, useType = cstring(x.Args[i+1]), true
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	now := x.Now()
	var out, step []string
	var entries []*keyspace.Entry
	collect := func(k string, e *keyspace.Entry) {
		step, entries = append(step, k), append(entries, e)
	}
	sc := x.Keyspace().StartScan(x.DB(), cursor)
	for left := count; left > 0 && !sc.Done(); {
		if !x.lockShard(sc.Shard()) {
			return
		}
		step, entries = step[:0], entries[:0]
		left -= int64(sc.Step(int(min(left, scanStep)), collect))
		for i, k := range step {
			e := entries[i]
			if usePat && !globMatch(pat, bytesOf(k)) {
				continue
			}
			if e.Expired(now) {
				x.Tx.Lookup(bytesOf(k)) // deletes it, as Redis's SCAN does; no hit counted
				continue
			}
			if useType && !strings.EqualFold(typ, e.Type()) {
				continue
			}
			out = append(out, k)
		}
		x.unlockShard()
	}
	x.W.Array(2)
	var buf [20]byte
	x.W.Bulk(strconv.AppendUint(buf[:0], sc.Cursor(), 10))
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// bytesOf is a key string as the byte slice lookups and globMatch take,
// without copying it; neither writes to it.
func bytesOf(k string) []byte { return unsafe.Slice(unsafe.StringData(k), len(k)) }

// parseCursor reads a SCAN cursor as Redis does, with C's strtoul: an
// optional sign (a negative value wraps), decimal digits, no leading
// whitespace, nothing after (the string ends at its first NUL, and an
// empty string is 0), no overflow.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) > 0 && (b[0] == ' ' || b[0]-'\t' <= '\r'-'\t') {
		return 0, false
	}
	s := cstring(b)
	if s == "" {
		return 0, true
	}
	i := 0
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v uint64
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if neg {
		v = -v
	}
	return v, true
}

// randomkey picks a live key at random (keyspace.Tx.RandomKey).
func randomkey(x *Ctx) {
	k, ok := x.RandomKey()
	if !ok {
		x.W.Null()
		return
	}
	x.W.BulkString(k)
}

func renameCmd(x *Ctx) { renameKey(x, false) }
func renamenx(x *Ctx)  { renameKey(x, true) }

// renameKey moves a key with its TTL. A missing source is an error even
// when it equals the destination; renaming a key to itself changes
// nothing.
func renameKey(x *Ctx, nx bool) {
	src, dst := x.Args[1], x.Args[2]
	e := x.Lookup(src)
	if e == nil {
		x.Error(ErrNoSuchKey)
		return
	}
	if bytes.Equal(src, dst) {
		if nx {
			x.W.Int(0)
		} else {
			x.W.OK()
		}
		return
	}
	if x.Lookup(dst) != nil && nx {
		x.W.Int(0)
		return
	}
	x.Rename(src, dst, e)
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

func expireCmd(x *Ctx) { expireGeneric(x, x.Now(), true) }
func pexpire(x *Ctx)   { expireGeneric(x, x.Now(), false) }
func expireat(x *Ctx)  { expireGeneric(x, 0, true) }
func pexpireat(x *Ctx) { expireGeneric(x, 0, false) }

// expireGeneric is EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT with NX, XX, GT
// and LT: options first, then the time, then the key. A time at or before
// now deletes the key (and still replies 1). For GT and LT a key without a
// TTL counts as expiring never.
func expireGeneric(x *Ctx, base int64, seconds bool) {
	var nx, xx, gt, lt bool
	for _, a := range x.Args[3:] {
		switch {
		case optIs(a, "nx"):
			nx = true
		case optIs(a, "xx"):
			xx = true
		case optIs(a, "gt"):
			gt = true
		case optIs(a, "lt"):
			lt = true
		default:
			x.Error(errUnsupportedOption(a))
			return
		}
	}
	if nx && (xx || gt || lt) {
		x.Error(ErrExpireNXCompat)
		return
	}
	if gt && lt {
		x.Error(ErrExpireGTLT)
		return
	}
	when, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			x.Error(errInvalidExpire(x.cmd.Name))
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		x.Error(errInvalidExpire(x.cmd.Name))
		return
	}
	when += base
	key := x.Args[1]
	e := x.Lookup(key)
	if e == nil {
		x.W.Int(0)
		return
	}
	cur := e.Exp // 0: none
	if nx && cur != 0 || xx && cur == 0 || gt && (cur == 0 || when <= cur) || lt && cur != 0 && when >= cur {
		x.W.Int(0)
		return
	}
	if when <= x.Now() {
		x.Remove(key)
	} else {
		x.SetExpire(key, e, when)
	}
	x.W.Int(1)
}

func ttl(x *Ctx)         { ttlGeneric(x, false, false) }
func pttl(x *Ctx)        { ttlGeneric(x, true, false) }
func expiretime(x *Ctx)  { ttlGeneric(x, false, true) }
func pexpiretime(x *Ctx) { ttlGeneric(x, true, true) }

// ttlGeneric replies -2 for a missing key, -1 for no TTL, else the time
// left (or the absolute expiry); seconds are rounded to the nearest.
func ttlGeneric(x *Ctx, ms, abs bool) {
	e := x.Lookup(x.Args[1])
	if e == nil {
		x.W.Int(-2)
		return
	}
	if e.Exp == 0 {
		x.W.Int(-1)
		return
	}
	t := e.Exp
	if !abs {
		t -= x.Now()
	}
	t = max(t, 0)
	if !ms {
		// (t+500)/1000 without overflowing at PEXPIREAT 2^63-1.
		t = t/1000 + (t%1000+500)/1000
	}
	x.W.Int(t)
}

// persistCmd is PERSIST: it removes a TTL; a key without one is not modified (WATCH does not
// see it).
func persistCmd(x *Ctx) {
	key := x.Args[1]
	e := x.Lookup(key)
	if e == nil || e.Exp == 0 {
		x.W.Int(0)
		return
	}
	x.SetExpire(key, e, 0)
	x.W.Int(1)
}

// objectLookup finds OBJECT's key, replying nil if it is missing.
func objectLookup(x *Ctx) *keyspace.Entry {
	e := x.Lookup(x.Args[2])
	if e == nil {
		x.W.Null()
	}
	return e
}

func objectEncoding(x *Ctx) {
	if e := objectLookup(x); e != nil {
		x.W.BulkString(encodingOf(e))
	}
}

// encodingOf names the encoding Redis would use for e's value.
func encodingOf(e *keyspace.Entry) string {
	if !e.IsString() {
		if o, ok := e.Obj().(interface{ Encoding() string }); ok {
			return o.Encoding()
		}
		return "unknown"
	}
	var buf [20]byte
	v := e.StrTo(&buf)
	n := len(v)
	switch {
	case e.StrEnc() == keyspace.EncRaw:
		return "raw"
	case e.StrEnc() == keyspace.EncAuto && n <= 20 && isInt(v):
		return "int"
	case n <= 44:
		return "embstr"
	}
	return "raw"
}

func isInt(b []byte) bool {
	_, ok := resp.ParseInt(b)
	return ok
}

// objectFreq and objectIdletime answer as Redis 7.0 does under the
// maxmemory policy in force: under an LFU policy FREQ has a value and
// IDLETIME refuses, under the others the other way round. cellserver
// tracks neither accesses nor their times (an Entry has no room for
// Redis's 24-bit clock), so the values are those of a key just made: the
// LFU counter a new key starts with (LFU_INIT_VAL) and an idle time of 0.
func objectFreq(x *Ctx) {
	if objectLookup(x) == nil {
		return
	}
	if !x.srv.lfuPolicy() {
		x.Error(ErrNoLFU)
		return
	}
	x.W.Int(lfuInitVal)
}

func objectIdletime(x *Ctx) {
	if objectLookup(x) == nil {
		return
	}
	if x.srv.lfuPolicy() {
		x.Error(ErrLFUIdle)
		return
	}
	x.W.Int(0)
}

// lfuInitVal is the LFU counter of a key just made (Redis's LFU_INIT_VAL).
const lfuInitVal = 5

// objectRefcount mimics Redis's shared integers: values 0..9999 stored as
// "int" are one shared object with the maximum refcount; the rest have 1.
func objectRefcount(x *Ctx) {
	e := objectLookup(x)
	if e == nil {
		return
	}
	if e.IsString() && encodingOf(e) == "int" {
		if v, _ := resp.ParseInt(e.Str()); v >= 0 && v < 10000 {
			x.W.Int(math.MaxInt32)
			return
		}
	}
	x.W.Int(1)
}

var objectHelpLines = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func objectHelp(x *Ctx) {
	x.W.Array(len(objectHelpLines))
	for _, l := range objectHelpLines {
		x.W.Status(l)
	}
}
