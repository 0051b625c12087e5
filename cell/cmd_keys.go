package cell

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cellserver/cellserver/resp"
)

// Generic key commands: existence, type, iteration, renaming and expiry,
// for keys of every type (db.c and expire.c in Redis).

func init() {
	register(
		&Command{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Handler: del},
		&Command{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Handler: del},
		&Command{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Handler: exists},
		&Command{Name: "type", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: typeCmd},
		&Command{Name: "keys", Arity: 2, Flags: FlagReadonly | flagWholeDB | flagShardAtATime, Handler: keys},
		&Command{Name: "scan", Arity: -2, Flags: FlagReadonly | flagWholeDB | flagShardAtATime, Handler: scan},
		&Command{Name: "randomkey", Arity: 1, Flags: FlagReadonly | flagWholeDB, Handler: randomkey},
		&Command{Name: "rename", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 2, Handler: rename},
		&Command{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Handler: renamenx},
		&Command{Name: "expire", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: expire},
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

// del is DEL and UNLINK: the number of keys that existed. Freeing is the
// collector's job either way.
func del(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.remove(k) {
			n++
		}
	}
	x.W.Int(n)
}

// exists counts keys with repetition: EXISTS a a is 2 if a exists.
func exists(x *Ctx) {
	var n int64
	for _, k := range x.Args[1:] {
		if x.lookup(k) != nil {
			n++
		}
	}
	x.W.Int(n)
}

func typeCmd(x *Ctx) {
	e := x.lookup(x.Args[1])
	if e == nil {
		x.W.Status("none")
		return
	}
	x.W.Status(e.Type())
}

// keys lists the live keys matching a glob pattern, in no particular
// order. Expired keys are skipped, not deleted, as in Redis. It walks
// each shard scanStep keys per hold of its lock, so that other clients
// of the database wait for one step at most, not for the whole listing.
// The answer holds every key present from its start to its end, once
// (keyIndex.scan); a key added or deleted meanwhile may or may not be in
// it, as if Redis had run the command at some moment in between.
func keys(x *Ctx) {
	pat := x.Args[1]
	all := len(pat) == 1 && pat[0] == '*'
	shards := x.srv.ks.dbs[x.db].shards
	var out []string
	take := func(e *Entry) {
		if k := e.key(); !e.expired(x.now) && (all || globMatch(pat, bytesOf(k))) {
			out = append(out, k)
		}
	}
	for i := range shards {
		s := &shards[i]
		for from := uint64(0); from < hashEnd; {
			if !x.lockShard(s) {
				return
			}
			from = s.keys.scan(from, scanStep, take)
			x.unlockShard()
		}
	}
	x.W.Array(len(out))
	for _, k := range out {
		x.W.BulkString(k)
	}
}

// SCAN's cursor is a position in the selected database: a shard, and a
// key hash within that shard's index (keyIndex.scan). With S = 2^b
// shards, cursor c names shard c&(S-1) and hash c>>b: the keys of that
// shard whose index hash is at or above it are still to come, then every
// key of the shards after it. A call walks keys in that order until it has
// looked at COUNT of them (before MATCH and TYPE filter them, as in
// Redis), and stops at a hash boundary, where the next call starts. A key's
// hash never changes while the server runs, so a key present from the
// first call to the last is returned exactly once, whatever is added,
// deleted, grown or shrunk meanwhile (keys added or deleted during the
// scan may or may not appear, as in Redis, whose reverse-binary cursor
// promises at least once). Cursor 0 starts and ends a scan. Index hashes
// have 32 bits, so cursors stay below 2^(32+b): below 2^53 for up to 2^21
// shards a database, so clients and scripts that keep them as doubles
// (JavaScript, Lua) do not corrupt them.
//
// A call costs about COUNT keys of work, whatever the shard's size, and
// returns about COUNT keys before filtering (a few more: it ends where the
// index has an empty slot). However large COUNT is, it holds a shard's
// lock for scanStep keys at a time, as KEYS does.
const scanStep = 1024

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
	ks := x.srv.ks
	shards := ks.dbs[x.db].shards
	shardBits := uint(bits.OnesCount64(ks.mask))
	shard, from := cursor&ks.mask, cursor>>shardBits
	var out []string
	var step []*Entry
	collect := func(e *Entry) { step = append(step, e) }
	for left := count; left > 0; {
		s := &shards[shard]
		if !x.lockShard(s) {
			return
		}
		step = step[:0]
		from = s.keys.scan(from, int(min(left, scanStep)), collect)
		left -= int64(len(step))
		for _, e := range step {
			k := e.key()
			if usePat && !globMatch(pat, bytesOf(k)) {
				continue
			}
			if e.expired(x.now) {
				x.lookup(bytesOf(k)) // deletes it, as Redis's SCAN does
				continue
			}
			if useType && !strings.EqualFold(typ, e.Type()) {
				continue
			}
			out = append(out, k)
		}
		x.unlockShard()
		if from >= hashEnd { // this shard is done: on to the next one, or the end
			shard, from = shard+1, 0
			if shard > ks.mask {
				shard = 0
				break
			}
		}
	}
	x.W.Array(2)
	var buf [20]byte
	x.W.Bulk(strconv.AppendUint(buf[:0], from<<shardBits|shard, 10))
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

// randomkey picks a live key at random: a shard with probability by its
// size, then the first key at or after a random slot of its index. Expired keys
// met on the way are deleted, as Redis does, until a live one turns up.
func randomkey(x *Ctx) {
	shards := x.srv.ks.dbs[x.db].shards
	for {
		total := 0
		for i := range shards {
			total += shards[i].keys.len()
		}
		if total == 0 {
			x.W.Null()
			return
		}
		r := rand.IntN(total)
		var s *Shard
		for i := range shards {
			if r < shards[i].keys.len() {
				s = &shards[i]
				break
			}
			r -= shards[i].keys.len()
		}
		for k := range s.keys.from(rand.Uint64()) {
			if x.lookup([]byte(k)) != nil {
				x.W.BulkString(k)
				return
			}
			break
		}
	}
}

func rename(x *Ctx)   { renameKey(x, false) }
func renamenx(x *Ctx) { renameKey(x, true) }

// renameKey moves a key with its TTL. A missing source is an error even
// when it equals the destination; renaming a key to itself changes
// nothing.
func renameKey(x *Ctx, nx bool) {
	src, dst := x.Args[1], x.Args[2]
	e := x.lookup(src)
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
	if x.lookup(dst) != nil && nx {
		x.W.Int(0)
		return
	}
	x.rename(src, dst, e)
	if nx {
		x.W.Int(1)
	} else {
		x.W.OK()
	}
}

func expire(x *Ctx)    { expireGeneric(x, x.now, true) }
func pexpire(x *Ctx)   { expireGeneric(x, x.now, false) }
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
	e := x.lookup(key)
	if e == nil {
		x.W.Int(0)
		return
	}
	cur := e.Exp // 0: none
	if nx && cur != 0 || xx && cur == 0 || gt && (cur == 0 || when <= cur) || lt && cur != 0 && when >= cur {
		x.W.Int(0)
		return
	}
	if when <= x.now {
		x.remove(key)
	} else {
		x.setExpire(key, e, when)
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
	e := x.lookup(x.Args[1])
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
		t -= x.now
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
	e := x.lookup(key)
	if e == nil || e.Exp == 0 {
		x.W.Int(0)
		return
	}
	x.setExpire(key, e, 0)
	x.W.Int(1)
}

// objectLookup finds OBJECT's key, replying nil if it is missing.
func objectLookup(x *Ctx) *Entry {
	e := x.lookup(x.Args[2])
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
func encodingOf(e *Entry) string {
	if !e.isString() {
		if o, ok := e.obj().(interface{ Encoding() string }); ok {
			return o.Encoding()
		}
		return "unknown"
	}
	var buf [20]byte
	v := e.strTo(&buf)
	n := len(v)
	switch {
	case e.strEnc() == encRaw:
		return "raw"
	case e.strEnc() == encAuto && n <= 20 && isInt(v):
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

// objectFreq: access frequencies are tracked only under an LFU maxmemory
// policy, which cellserver does not have.
func objectFreq(x *Ctx) {
	if objectLookup(x) != nil {
		x.Error(ErrNoLFU)
	}
}

// objectIdletime is an approximation: access times are not tracked, so
// every key reads as just used.
func objectIdletime(x *Ctx) {
	if objectLookup(x) != nil {
		x.W.Int(0)
	}
}

// objectRefcount mimics Redis's shared integers: values 0..9999 stored as
// "int" are one shared object with the maximum refcount; the rest have 1.
func objectRefcount(x *Ctx) {
	e := objectLookup(x)
	if e == nil {
		return
	}
	if e.isString() && encodingOf(e) == "int" {
		if v, _ := resp.ParseInt(e.str()); v >= 0 && v < 10000 {
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
