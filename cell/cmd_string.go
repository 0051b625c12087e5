package cell

import (
	"math"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// String commands, with Redis 7.0's option parsing, check order and
// replies (t_string.c). Values are byte strings; a value that is the
// canonical decimal form of an int64 is kept as the number and read back
// as exactly those bytes (entry_value.go).

func init() {
	register(
		&Command{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: getCmd},
		&Command{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: setCmd},
		&Command{Name: "setnx", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: setnx},
		&Command{Name: "setex", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: setex},
		&Command{Name: "psetex", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: psetex},
		&Command{Name: "getset", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: getset},
		&Command{Name: "getdel", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: getdel},
		&Command{Name: "getex", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Handler: getex},
		&Command{Name: "mget", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Handler: mget},
		&Command{Name: "mset", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Handler: mset},
		&Command{Name: "msetnx", Arity: -3, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: -1, Step: 2, Handler: msetnx},
		&Command{Name: "incr", Arity: 2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: incr},
		&Command{Name: "decr", Arity: 2, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: decr},
		&Command{Name: "incrby", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: incrby},
		&Command{Name: "decrby", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: decrby},
		&Command{Name: "incrbyfloat", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: incrbyfloat},
		&Command{Name: "append", Arity: 3, Flags: FlagWrite | FlagDenyOOM | FlagFast, FirstKey: 1, LastKey: 1, Handler: appendCmd},
		&Command{Name: "strlen", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: strlen},
		&Command{Name: "getrange", Arity: 4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Handler: getrange},
		&Command{Name: "substr", Arity: 4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Handler: getrange},
		&Command{Name: "setrange", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: setrange},
		&Command{Name: "lcs", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 2, Handler: lcs},
	)
}

// optIs reports whether the option word arg is word (lower case), in any
// letter case. Redis compares options as C strings, so "nx\x00junk" is NX.
func optIs(arg []byte, word string) bool {
	n := len(arg)
	for i, c := range arg {
		if c == 0 {
			n = i
			break
		}
	}
	if n != len(word) {
		return false
	}
	for i := 0; i < n; i++ {
		if arg[i]|0x20 != word[i] || !isLetter(arg[i]) && arg[i] != word[i] {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// Expiry option kinds of SET and GETEX.
const (
	expNone = iota
	expEX   // seconds from now
	expPX   // ms from now
	expEXAT // Unix seconds
	expPXAT // Unix ms
)

// strOpts are the options of SET and GETEX
// (parseExtendedStringArgumentsOrReply).
type strOpts struct {
	nx, xx, get, keepTTL, persist bool
	exp                           int    // expNone, expEX, ...
	expArg                        []byte // the expiry's argument, unparsed
}

// parseStrOpts reads the options from args[from:]. SET takes NX, XX, GET,
// KEEPTTL and the four expiries; GETEX (getex true) the expiries and
// PERSIST. A conflicting, unknown or incomplete option is a syntax error;
// the same expiry twice is allowed and the last one wins.
func parseStrOpts(x *Ctx, from int, getex bool) (o strOpts, ok bool) {
	args := x.Args
	for j := from; j < len(args); j++ {
		a := args[j]
		hasNext := j+1 < len(args)
		switch {
		case !getex && optIs(a, "nx") && !o.xx:
			o.nx = true
		case !getex && optIs(a, "xx") && !o.nx:
			o.xx = true
		case !getex && optIs(a, "get"):
			o.get = true
		case !getex && optIs(a, "keepttl") && o.exp == expNone:
			o.keepTTL = true
		case getex && optIs(a, "persist") && o.exp == expNone:
			o.persist = true
		default:
			kind := expKind(a)
			if kind == expNone || o.keepTTL || o.persist || (o.exp != expNone && o.exp != kind) || !hasNext {
				x.Error(ErrSyntax)
				return o, false
			}
			o.exp, o.expArg = kind, args[j+1]
			j++
		}
	}
	return o, true
}

func expKind(a []byte) int {
	switch {
	case optIs(a, "ex"):
		return expEX
	case optIs(a, "px"):
		return expPX
	case optIs(a, "exat"):
		return expEXAT
	case optIs(a, "pxat"):
		return expPXAT
	}
	return expNone
}

// expireAt turns a SET/GETEX/SETEX expiry into absolute Unix ms. The
// value must be a positive integer; seconds that overflow when made ms and
// relative times that overflow when added to now are invalid.
func expireAt(x *Ctx, kind int, arg []byte) (int64, bool) {
	v, ok := resp.ParseInt(arg)
	if !ok {
		x.Error(ErrNotInteger)
		return 0, false
	}
	seconds := kind == expEX || kind == expEXAT
	if v <= 0 || seconds && v > math.MaxInt64/1000 {
		x.Error(errInvalidExpire(x.cmd.Name))
		return 0, false
	}
	if seconds {
		v *= 1000
	}
	if kind == expEX || kind == expPX {
		v += x.Now() // wraps negative on overflow, as in Redis
	}
	if v <= 0 {
		x.Error(errInvalidExpire(x.cmd.Name))
		return 0, false
	}
	return v, true
}

// replyValue is GET's reply for a looked-up string entry.
func replyValue(x *Ctx, e *keyspace.Entry) {
	if e == nil {
		x.W.Null()
		return
	}
	var buf [20]byte
	x.W.Bulk(e.StrTo(&buf))
}

func getCmd(x *Ctx) {
	if e, ok := x.lookupString(x.Args[1]); ok {
		replyValue(x, e)
	}
}

// setCmd is SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT t|KEEPTTL]. The
// expiry is checked before anything is read; with GET the old value is
// replied (or WRONGTYPE, and nothing is set) before the NX/XX condition.
func setCmd(x *Ctx) {
	o, ok := parseStrOpts(x, 3, false)
	if !ok {
		return
	}
	var when int64
	if o.exp != expNone {
		if when, ok = expireAt(x, o.exp, o.expArg); !ok {
			return
		}
	}
	key := x.Args[1]
	var e *keyspace.Entry
	if o.get {
		if e, ok = x.lookupString(key); !ok {
			return
		}
		replyValue(x, e)
	} else {
		e = x.Lookup(key)
	}
	if o.nx && e != nil || o.xx && e == nil {
		if !o.get {
			x.W.Null()
		}
		return
	}
	if o.keepTTL && e != nil {
		when = e.Exp
	}
	x.SetString(key, x.Args[2], when)
	if !o.get {
		x.W.OK()
	}
}

func setnx(x *Ctx) {
	key := x.Args[1]
	if x.Lookup(key) != nil {
		x.W.Int(0)
		return
	}
	x.SetString(key, x.Args[2], 0)
	x.W.Int(1)
}

func setex(x *Ctx)  { setWithExpiry(x, expEX) }
func psetex(x *Ctx) { setWithExpiry(x, expPX) }

// setWithExpiry is SETEX/PSETEX key ttl value.
func setWithExpiry(x *Ctx, kind int) {
	when, ok := expireAt(x, kind, x.Args[2])
	if !ok {
		return
	}
	x.SetString(x.Args[1], x.Args[3], when)
	x.W.OK()
}

// getset replies the old value and sets the new one without a TTL.
func getset(x *Ctx) {
	key := x.Args[1]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	replyValue(x, e)
	x.SetString(key, x.Args[2], 0)
}

func getdel(x *Ctx) {
	key := x.Args[1]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	replyValue(x, e)
	if e != nil {
		x.Remove(key)
	}
}

// getex is GETEX key [EX|PX|EXAT|PXAT t|PERSIST]. As in Redis, a missing
// key replies nil before the expiry value is even parsed, and an absolute
// expiry already in the past deletes the key after replying its value.
func getex(x *Ctx) {
	o, ok := parseStrOpts(x, 2, true)
	if !ok {
		return
	}
	key := x.Args[1]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	if e == nil {
		x.W.Null()
		return
	}
	var when int64
	if o.exp != expNone {
		if when, ok = expireAt(x, o.exp, o.expArg); !ok {
			return
		}
	}
	var buf [20]byte
	x.W.Bulk(e.StrTo(&buf))
	switch {
	case (o.exp == expEXAT || o.exp == expPXAT) && when <= x.Now():
		x.Remove(key)
	case o.exp != expNone:
		x.SetExpire(key, e, when)
	case o.persist && e.Exp != 0:
		x.SetExpire(key, e, 0)
	}
}

// mget replies nil for missing keys and for keys of other types.
func mget(x *Ctx) {
	x.W.Array(len(x.Args) - 1)
	for _, k := range x.Args[1:] {
		e := x.Lookup(k)
		if e == nil || !e.IsString() {
			x.W.Null()
			continue
		}
		var buf [20]byte
		x.W.Bulk(e.StrTo(&buf))
	}
}

// msetArgs checks that MSET/MSETNX got key/value pairs; an odd count is an
// arity error in Redis too.
func msetArgs(x *Ctx) bool {
	if len(x.Args)%2 == 0 {
		x.Error(errArity(x.cmd.Name))
		return false
	}
	return true
}

func mset(x *Ctx) {
	if !msetArgs(x) {
		return
	}
	for i := 1; i < len(x.Args); i += 2 {
		x.SetString(x.Args[i], x.Args[i+1], 0)
	}
	x.W.OK()
}

// msetnx sets all the pairs, or none if any key exists.
func msetnx(x *Ctx) {
	if !msetArgs(x) {
		return
	}
	for i := 1; i < len(x.Args); i += 2 {
		if x.Lookup(x.Args[i]) != nil {
			x.W.Int(0)
			return
		}
	}
	for i := 1; i < len(x.Args); i += 2 {
		x.SetString(x.Args[i], x.Args[i+1], 0)
	}
	x.W.Int(1)
}

func incr(x *Ctx) { incrDecr(x, 1) }
func decr(x *Ctx) { incrDecr(x, -1) }

func incrby(x *Ctx) {
	if d, ok := parseDelta(x); ok {
		incrDecr(x, d)
	}
}

// decrby refuses the one delta that cannot be negated.
func decrby(x *Ctx) {
	d, ok := parseDelta(x)
	if !ok {
		return
	}
	if d == math.MinInt64 {
		x.Error(ErrDecrOverflow)
		return
	}
	incrDecr(x, -d)
}

func parseDelta(x *Ctx) (int64, bool) {
	d, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
	}
	return d, ok
}

// incrDecr adds delta to the integer stored at key (0 if missing), keeping
// its TTL.
func incrDecr(x *Ctx, delta int64) {
	key := x.Args[1]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	var v, exp int64
	if e != nil {
		if v, ok = e.IntVal(); !ok {
			v, ok = resp.ParseInt(e.Str())
		}
		if !ok {
			x.Error(ErrNotInteger)
			return
		}
		exp = e.Exp
	}
	if delta < 0 && v < 0 && delta < math.MinInt64-v || delta > 0 && v > 0 && delta > math.MaxInt64-v {
		x.Error(ErrOverflow)
		return
	}
	v += delta
	if e != nil {
		x.SetIntOn(key, e, v, exp)
	} else {
		x.SetInt(key, v, exp)
	}
	x.W.Int(v)
}

// incrbyfloat adds in x87 long double, as Redis does, and stores and
// replies the sum printed with %.17Lf, trailing zeros trimmed. The stored
// value is checked before the increment, after the type.
func incrbyfloat(x *Ctx) {
	key := x.Args[1]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	cur, _ := resp.ParseLongDouble([]byte("0"))
	var exp int64
	if e != nil {
		if cur, ok = resp.ParseLongDouble(e.Str()); !ok {
			x.Error(ErrNotFloat)
			return
		}
		exp = e.Exp
	}
	incr, ok := resp.ParseLongDouble(x.Args[2])
	if !ok {
		x.Error(ErrNotFloat)
		return
	}
	sum, ok := resp.AddLongDouble(cur, incr)
	if !ok {
		x.Error(ErrIncrFloatNaN)
		return
	}
	var buf [64]byte
	txt := resp.AppendLongDouble(buf[:0], sum)
	x.SetString(key, txt, exp).SetStrEnc(keyspace.EncNoInt)
	x.W.Bulk(txt)
}

// appendCmd is APPEND. An existing value grows in place, which Redis
// stores raw.
func appendCmd(x *Ctx) {
	key, val := x.Args[1], x.Args[2]
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	if e == nil {
		x.SetString(key, val, 0)
		x.W.Int(int64(len(val)))
		return
	}
	if !stringLengthOK(x, int64(e.StrLen()), int64(len(val))) {
		return
	}
	size := int64(e.StrLen())
	e.SetStr(append(e.MutableStr(), val...))
	e.SetStrEnc(keyspace.EncRaw)
	x.NoteStrRange(e, size, int64(len(val)))
	x.TouchedNoted(key)
	x.W.Int(int64(e.StrLen()))
}

// stringLengthOK refuses a string that would outgrow proto-max-bulk-len.
func stringLengthOK(x *Ctx, size, add int64) bool {
	if total := size + add; total > x.srv.live.protoMaxBulkLen.Load() || total < size {
		x.Error(ErrStringTooLong)
		return false
	}
	return true
}

func strlen(x *Ctx) {
	if e, ok := x.lookupString(x.Args[1]); ok {
		if e == nil {
			x.W.Int(0)
			return
		}
		x.W.Int(int64(e.StrLen()))
	}
}

// getrange is GETRANGE key start end: inclusive, negative indexes from the
// end, clamped. The indexes are parsed before the key is looked up.
func getrange(x *Ctx) {
	start, ok1 := resp.ParseInt(x.Args[2])
	end, ok2 := resp.ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.Error(ErrNotInteger)
		return
	}
	e, ok := x.lookupString(x.Args[1])
	if !ok {
		return
	}
	if e == nil {
		x.W.BulkString("")
		return
	}
	var buf [20]byte
	v := e.StrTo(&buf)
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		x.W.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		x.W.BulkString("")
		return
	}
	x.W.Bulk(v[start : end+1])
}

// setrange is SETRANGE key offset value: overwrite from offset, padding
// with zero bytes. An empty value changes nothing and creates no key.
func setrange(x *Ctx) {
	key, val := x.Args[1], x.Args[3]
	off, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if off < 0 {
		x.Error(ErrOffsetRange)
		return
	}
	e, ok := x.lookupString(key)
	if !ok {
		return
	}
	if len(val) == 0 {
		if e == nil {
			x.W.Int(0)
		} else {
			x.W.Int(int64(e.StrLen()))
		}
		return
	}
	if !stringLengthOK(x, off, int64(len(val))) {
		return
	}
	if e == nil {
		e = x.SetString(key, nil, 0)
	}
	v := e.MutableStr()
	if need := int(off) + len(val); need > len(v) {
		v = append(v, make([]byte, need-len(v))...)
	}
	copy(v[off:], val)
	e.SetStr(v)
	e.SetStrEnc(keyspace.EncRaw)
	x.NoteStrRange(e, off, int64(len(val)))
	x.TouchedNoted(key)
	x.W.Int(int64(len(v)))
}

// lcs is LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN], as
// Redis 7.0's lcsCommand: the keys' types first (a missing key is an empty
// string), then the options, then the table's size against
// proto-max-bulk-len. The table is the textbook dynamic programme; the
// walk back from its corner emits the matching ranges last first, with
// Redis's quirks kept: a match that does not extend the current range
// ends it and is itself not part of any range.
func lcs(x *Ctx) {
	ea, eb := x.Lookup(x.Args[1]), x.Lookup(x.Args[2])
	if ea != nil && !ea.IsString() || eb != nil && !eb.IsString() {
		x.Error(ErrLcsNotString)
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Str()
	}
	if eb != nil {
		b = eb.Str()
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(x.Args); j++ {
		opt := x.Args[j]
		switch {
		case optIs(opt, "idx"):
			getIdx = true
		case optIs(opt, "len"):
			getLen = true
		case optIs(opt, "withmatchlen"):
			withMatchLen = true
		case optIs(opt, "minmatchlen") && j+1 < len(x.Args):
			n, ok := resp.ParseInt(x.Args[j+1])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		x.Error(ErrLcsLenAndIdx)
		return
	}
	alen, blen := len(a), len(b)
	if uint64(alen) >= math.MaxUint32-1 || uint64(blen) >= math.MaxUint32-1 {
		x.Error(ErrLcsTooLong)
		return
	}
	if cells := uint64(alen+1) * uint64(blen+1); cells*4 > uint64(x.srv.live.protoMaxBulkLen.Load()) {
		x.Error(ErrLcsMemory)
		return
	}
	w := blen + 1
	t := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			} else {
				t[i*w+j] = max(t[(i-1)*w+j], t[i*w+j-1])
			}
		}
	}
	total := int(t[alen*w+blen])
	if getLen {
		x.W.Int(int64(total))
		return
	}
	result := make([]byte, total)
	type match struct{ as, ae, bs, be int }
	var matches []match
	idx := total
	as, ae, bs, be := alen, 0, 0, 0 // as == alen: no range yet
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			switch {
			case as == alen:
				as, ae, bs, be = i-1, i-1, j-1, j-1
			case as == i && bs == j:
				as--
				bs--
			default:
				emit = true
			}
			if as == 0 || bs == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			if as != alen {
				emit = true
			}
		}
		if emit {
			if n := int64(ae - as + 1); minMatchLen == 0 || n >= minMatchLen {
				matches = append(matches, match{as, ae, bs, be})
			}
			as = alen
		}
	}
	if !getIdx {
		x.W.Bulk(result)
		return
	}
	x.W.Map(2)
	x.W.BulkString("matches")
	x.W.Array(len(matches))
	for _, m := range matches {
		if withMatchLen {
			x.W.Array(3)
		} else {
			x.W.Array(2)
		}
		x.W.Array(2)
		x.W.Int(int64(m.as))
		x.W.Int(int64(m.ae))
		x.W.Array(2)
		x.W.Int(int64(m.bs))
		x.W.Int(int64(m.be))
		if withMatchLen {
			x.W.Int(int64(m.ae - m.as + 1))
		}
	}
	x.W.BulkString("len")
	x.W.Int(int64(total))
}
