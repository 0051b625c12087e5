package cell

import (
	"math/bits"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Bitmap commands on the string type, as Redis 7.0's bitops.c: bit 0 is
// the most significant bit of the first byte, a missing key is an endless
// run of zero bits, and a write past the end grows the string with zero
// bytes. Writes change the string in place and note the bytes they wrote
// (Ctx.NoteStrRange), so the effect log gets a patch of those bytes and
// the new length, not the whole string (keyspace/delta_persist.go).

func init() {
	register(
		&Command{Name: "setbit", Arity: 4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: setbit},
		&Command{Name: "getbit", Arity: 3, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: getbit},
		&Command{Name: "bitcount", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Handler: bitcount},
		&Command{Name: "bitpos", Arity: -3, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Handler: bitpos},
		&Command{Name: "bitop", Arity: -4, Flags: FlagWrite | FlagDenyOOM, FirstKey: 2, LastKey: -1, Handler: bitop},
		&Command{Name: "bitfield", Arity: -2, Flags: FlagWrite | FlagDenyOOM, FirstKey: 1, LastKey: 1, KeyFlags: bitfieldKeyFlags, Handler: bitfield},
		&Command{Name: "bitfield_ro", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Handler: bitfieldRO},
	)
}

// parseBitOffset is getBitOffsetFromArgument: a bit offset, or with hash
// (BITFIELD) "#n", meaning n fields of width bits. Offsets whose byte is
// at or past proto-max-bulk-len are refused, as Redis refuses them.
func parseBitOffset(x *Ctx, arg []byte, hash bool, width int64) (uint64, bool) {
	usehash := hash && len(arg) > 1 && arg[0] == '#'
	if usehash {
		arg = arg[1:]
	}
	off, ok := resp.ParseInt(arg)
	if usehash {
		off *= width // wraps as Redis's long long product does
	}
	if !ok || off < 0 || off>>3 >= x.srv.live.protoMaxBulkLen.Load() {
		x.Error(ErrBitOffset)
		return 0, false
	}
	return uint64(off), true
}

// bitString returns key's string, grown with zero bytes to hold the bit
// at maxbit, creating it if missing (lookupStringForBitCommand), and its
// length before. ok is false, WRONGTYPE replied, for another type.
func (x *Ctx) bitString(key []byte, maxbit uint64) (e *keyspace.Entry, old int, ok bool) {
	e, ok = x.lookupString(key)
	if !ok {
		return nil, 0, false
	}
	need := int(maxbit>>3) + 1
	if e == nil {
		e = x.SetString(key, nil, 0)
	}
	v := e.MutableStr()
	old = len(v)
	if need > len(v) {
		v = append(v, make([]byte, need-len(v))...)
	}
	e.SetStr(v)
	e.SetStrEnc(keyspace.EncRaw)
	return e, old, true
}

// bitWritten ends a bit write to key's string e, which was old bytes long:
// the bytes [lo, hi) changed, or none when lo >= hi. A write that neither
// grew the string nor changed a byte is no write.
func (x *Ctx) bitWritten(key []byte, e *keyspace.Entry, old int, lo, hi int64) {
	if lo >= hi && e.StrLen() == old {
		return
	}
	if lo < hi {
		x.NoteStrRange(e, lo, hi-lo)
	}
	x.TouchedNoted(key)
}

// setbit is SETBIT key offset value; it replies the bit's old value.
func setbit(x *Ctx) {
	off, ok := parseBitOffset(x, x.Args[2], false, 0)
	if !ok {
		return
	}
	on, ok := resp.ParseInt(x.Args[3])
	if !ok || on&^1 != 0 {
		x.Error(ErrBitValue)
		return
	}
	key := x.Args[1]
	e, old, ok := x.bitString(key, off)
	if !ok {
		return
	}
	v := e.StrBytes()
	i, mask := off>>3, byte(1)<<(7-off&7)
	was := v[i]&mask != 0
	lo, hi := int64(i), int64(i)
	if was != (on == 1) {
		v[i] ^= mask
		hi++
	}
	x.bitWritten(key, e, old, lo, hi)
	if was {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

// getbit is GETBIT key offset: the offset is checked before the key.
func getbit(x *Ctx) {
	off, ok := parseBitOffset(x, x.Args[2], false, 0)
	if !ok {
		return
	}
	e, ok := x.lookupString(x.Args[1])
	if !ok {
		return
	}
	var bit int64
	if e != nil {
		var buf [20]byte
		if v := e.StrTo(&buf); off>>3 < uint64(len(v)) && v[off>>3]&(1<<(7-off&7)) != 0 {
			bit = 1
		}
	}
	x.W.Int(bit)
}

// bitRange is a range of BITCOUNT or BITPOS resolved to bits of a string
// n bytes long: [lo, hi], empty when lo > hi.
type bitRange struct{ lo, hi int64 }

// resolveBitRange clamps start and end as Redis does, counting in bits
// when isbit, else in bytes; the result is in bits.
func resolveBitRange(start, end, n int64, isbit bool) bitRange {
	total := n
	if isbit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return bitRange{0, -1}
	}
	if isbit {
		return bitRange{start, end}
	}
	return bitRange{start << 3, end<<3 + 7}
}

// parseBitUnit reads BITCOUNT's and BITPOS's BYTE|BIT word.
func parseBitUnit(x *Ctx, arg []byte) (isbit, ok bool) {
	switch {
	case optIs(arg, "bit"):
		return true, true
	case optIs(arg, "byte"):
		return false, true
	}
	x.Error(ErrSyntax)
	return false, false
}

// bitcount is BITCOUNT key [start end [BYTE|BIT]]. As in Redis 7.0 the key
// is looked up first: a missing key counts 0 whatever the arguments.
func bitcount(x *Ctx) {
	e, ok := x.lookupString(x.Args[1])
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(0)
		return
	}
	var buf [20]byte
	v := e.StrTo(&buf)
	r := bitRange{0, int64(len(v))<<3 - 1}
	switch len(x.Args) {
	case 2:
	case 4, 5:
		start, ok1 := resp.ParseInt(x.Args[2])
		if !ok1 {
			x.Error(ErrNotInteger)
			return
		}
		end, ok2 := resp.ParseInt(x.Args[3])
		if !ok2 {
			x.Error(ErrNotInteger)
			return
		}
		if start < 0 && end < 0 && start > end {
			x.W.Int(0)
			return
		}
		isbit := false
		if len(x.Args) == 5 {
			if isbit, ok = parseBitUnit(x, x.Args[4]); !ok {
				return
			}
		}
		r = resolveBitRange(start, end, int64(len(v)), isbit)
	default:
		x.Error(ErrSyntax)
		return
	}
	x.W.Int(countBits(v, r))
}

// countBits counts the set bits of v in r.
func countBits(v []byte, r bitRange) int64 {
	if r.lo > r.hi {
		return 0
	}
	lo, hi := r.lo>>3, r.hi>>3
	n := popcount(v[lo : hi+1])
	n -= int64(bits.OnesCount8(v[lo] & ^(0xff >> (r.lo & 7))))
	n -= int64(bits.OnesCount8(v[hi] & (0x7f >> (r.hi & 7))))
	return n
}

// popcount counts the set bits of b, eight bytes at a time.
func popcount(b []byte) int64 {
	var n int
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		n += bits.OnesCount64(w)
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return int64(n)
}

// bitpos is BITPOS key bit [start [end [BYTE|BIT]]]. The bit is checked
// first, then a missing key answers (no clear bit: 0; no set bit: -1)
// before the range is read. Looking for a clear bit with no end given,
// the string counts as followed by zeros: all ones answers the bit just
// past its end.
func bitpos(x *Ctx) {
	bit, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if bit != 0 && bit != 1 {
		x.Error(ErrBitposBit)
		return
	}
	e, ok := x.lookupString(x.Args[1])
	if !ok {
		return
	}
	if e == nil {
		x.W.Int(-bit)
		return
	}
	var buf [20]byte
	v := e.StrTo(&buf)
	n := int64(len(v))
	r := bitRange{0, n<<3 - 1}
	endGiven := false
	switch len(x.Args) {
	case 3:
	case 4, 5, 6:
		start, ok := resp.ParseInt(x.Args[3])
		if !ok {
			x.Error(ErrNotInteger)
			return
		}
		isbit := false
		if len(x.Args) == 6 {
			if isbit, ok = parseBitUnit(x, x.Args[5]); !ok {
				return
			}
		}
		end := n - 1
		if len(x.Args) >= 5 {
			if end, ok = resp.ParseInt(x.Args[4]); !ok {
				x.Error(ErrNotInteger)
				return
			}
			endGiven = true
		} else if isbit {
			end = n<<3 + 7
		}
		r = resolveBitRange(start, end, n, isbit)
	default:
		x.Error(ErrSyntax)
		return
	}
	if r.lo > r.hi {
		x.W.Int(-1)
		return
	}
	if p := findBit(v, r, bit == 1); p >= 0 {
		x.W.Int(p)
	} else if bit == 0 && !endGiven {
		x.W.Int(r.hi + 1)
	} else {
		x.W.Int(-1)
	}
}

// findBit returns the first bit in r of v that is set (set) or clear, or
// -1. Whole bytes that cannot hold it are skipped.
func findBit(v []byte, r bitRange, set bool) int64 {
	skip := byte(0)
	if !set {
		skip = 0xff
	}
	for i := r.lo; i <= r.hi; {
		if i&7 == 0 && i+7 <= r.hi && v[i>>3] == skip {
			i += 8
			continue
		}
		if v[i>>3]&(0x80>>(i&7)) != 0 == set {
			return i
		}
		i++
	}
	return -1
}

// bitop is BITOP AND|OR|XOR|NOT destkey key [key ...]: missing keys are
// empty strings, shorter ones padded with zero bytes; the result replaces
// destkey (its TTL gone) or, when empty, deletes it. It replies the
// result's length.
func bitop(x *Ctx) {
	op := x.Args[1]
	var kind byte
	switch {
	case optIs(op, "and"):
		kind = '&'
	case optIs(op, "or"):
		kind = '|'
	case optIs(op, "xor"):
		kind = '^'
	case optIs(op, "not"):
		kind = '~'
	default:
		x.Error(ErrSyntax)
		return
	}
	if kind == '~' && len(x.Args) != 4 {
		x.Error(ErrBitopNot)
		return
	}
	srcs := make([][]byte, 0, len(x.Args)-3)
	maxlen, minlen := 0, 0
	for i, k := range x.Args[3:] {
		e, ok := x.lookupString(k)
		if !ok {
			return
		}
		var v []byte
		if e != nil {
			v = e.Str()
		}
		srcs = append(srcs, v)
		maxlen = max(maxlen, len(v))
		if i == 0 || len(v) < minlen {
			minlen = len(v)
		}
	}
	dst := x.Args[2]
	if maxlen == 0 {
		x.Remove(dst)
		x.W.Int(0)
		return
	}
	res := make([]byte, maxlen)
	copy(res, srcs[0])
	switch kind {
	case '~':
		for i := range res {
			res[i] = ^res[i]
		}
	case '&':
		for _, s := range srcs[1:] {
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					res[i] = 0
				}
			}
		}
	case '|':
		for _, s := range srcs[1:] {
			for i, c := range s {
				res[i] |= c
			}
		}
	case '^':
		for _, s := range srcs[1:] {
			for i, c := range s {
				res[i] ^= c
			}
		}
	}
	x.Tx.SetStringOwned(dst, res, 0).SetStrEnc(keyspace.EncRaw)
	x.W.Int(int64(maxlen))
}

// Bitfield operations and overflow behaviours.
const (
	bfGet = iota
	bfSet
	bfIncrBy

	bfWrap = iota
	bfSat
	bfFail
)

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD command.
type bitfieldOp struct {
	op, overflow int
	signed       bool
	width        uint
	off          uint64
	arg          int64
}

// bitfieldKeyFlags is bitfieldGetKeys: read-only when every operation is
// a GET (or OVERFLOW), else read-write, as for anything it cannot parse.
func bitfieldKeyFlags(args [][]byte, _ int) KeyFlag {
	for i := 2; i < len(args); i++ {
		rest := len(args) - i - 1
		switch a := args[i]; {
		case optIs(a, "get") && rest >= 2:
			i += 2
		case optIs(a, "overflow") && rest >= 1:
			i++
		default:
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyRO | KeyAccess
}

func bitfield(x *Ctx)   { bitfieldGeneric(x, false) }
func bitfieldRO(x *Ctx) { bitfieldGeneric(x, true) }

// parseBitfield reads BITFIELD's operations (bitfieldGeneric's first
// loop): every argument is checked, in order, before anything runs. It
// returns the operations and whether any writes.
func parseBitfield(x *Ctx, args [][]byte) (ops []bitfieldOp, writes, ok bool) {
	overflow := bfWrap
	for j := 0; j < len(args); j++ {
		rest := len(args) - j - 1
		var op int
		switch sub := args[j]; {
		case optIs(sub, "get") && rest >= 2:
			op = bfGet
		case optIs(sub, "set") && rest >= 3:
			op = bfSet
		case optIs(sub, "incrby") && rest >= 3:
			op = bfIncrBy
		case optIs(sub, "overflow") && rest >= 1:
			j++
			switch w := args[j]; {
			case optIs(w, "wrap"):
				overflow = bfWrap
			case optIs(w, "sat"):
				overflow = bfSat
			case optIs(w, "fail"):
				overflow = bfFail
			default:
				x.Error(ErrBitfieldOverflow)
				return nil, false, false
			}
			continue
		default:
			x.Error(ErrSyntax)
			return nil, false, false
		}
		signed, width, ok := parseBitfieldType(args[j+1])
		if !ok {
			x.Error(ErrBitfieldType)
			return nil, false, false
		}
		off, ok := parseBitOffset(x, args[j+2], true, int64(width))
		if !ok {
			return nil, false, false
		}
		o := bitfieldOp{op: op, overflow: overflow, signed: signed, width: width, off: off}
		if op != bfGet {
			writes = true
			if o.arg, ok = resp.ParseInt(args[j+3]); !ok {
				x.Error(ErrNotInteger)
				return nil, false, false
			}
			j++
		}
		ops = append(ops, o)
		j += 2
	}
	return ops, writes, true
}

// parseBitfieldType reads i1..i64 or u1..u63; the width is read as a C
// string (up to a NUL).
func parseBitfieldType(t []byte) (signed bool, width uint, ok bool) {
	if len(t) == 0 || t[0] != 'i' && t[0] != 'u' {
		return false, 0, false
	}
	signed = t[0] == 'i'
	n, ok := resp.ParseInt([]byte(cstring(t[1:])))
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, uint(n), true
}

// bitfieldGeneric is BITFIELD and BITFIELD_RO (ro). The operations run in
// order on the string grown to the furthest bit any write reaches; GET
// reads past the end as zeros. An INCRBY or SET that overflows under
// OVERFLOW FAIL writes nothing and replies nil.
func bitfieldGeneric(x *Ctx, ro bool) {
	ops, writes, ok := parseBitfield(x, x.Args[2:])
	if !ok {
		return
	}
	key := x.Args[1]
	var e *keyspace.Entry
	var old int
	if !writes {
		if e, ok = x.lookupString(key); !ok {
			return
		}
	} else {
		if ro {
			x.Error(ErrBitfieldRO)
			return
		}
		var maxbit uint64
		for _, o := range ops {
			if o.op != bfGet {
				maxbit = max(maxbit, o.off+uint64(o.width)-1)
			}
		}
		if e, old, ok = x.bitString(key, maxbit); !ok {
			return
		}
	}
	x.W.Array(len(ops))
	var buf [20]byte
	var v []byte
	if e != nil {
		v = e.StrTo(&buf)
	}
	lo, hi := int64(len(v)), int64(0)
	for _, o := range ops {
		if o.op == bfGet {
			val := getBitfield(v, o.off, o.width)
			if o.signed {
				x.W.Int(signExtend(val, o.width))
			} else {
				x.W.Int(int64(val))
			}
			continue
		}
		cur := getBitfield(v, o.off, o.width)
		var next uint64
		var over bool
		if o.signed {
			oldv := signExtend(cur, o.width)
			var n int64
			if o.op == bfIncrBy {
				n, over = signedOverflow(oldv, o.arg, o.width, o.overflow)
			} else {
				n, over = signedOverflow(o.arg, 0, o.width, o.overflow)
			}
			next = uint64(n)
			if !(over && o.overflow == bfFail) {
				if o.op == bfIncrBy {
					x.W.Int(n)
				} else {
					x.W.Int(oldv)
				}
			}
		} else {
			if o.op == bfIncrBy {
				next, over = unsignedOverflow(cur, o.arg, o.width, o.overflow)
			} else {
				next, over = unsignedOverflow(uint64(o.arg), 0, o.width, o.overflow)
			}
			if !(over && o.overflow == bfFail) {
				if o.op == bfIncrBy {
					x.W.Int(int64(next))
				} else {
					x.W.Int(int64(cur))
				}
			}
		}
		if over && o.overflow == bfFail {
			x.W.Null()
			continue
		}
		setBitfield(v, o.off, o.width, next)
		lo, hi = min(lo, int64(o.off>>3)), max(hi, int64((o.off+uint64(o.width)-1)>>3)+1)
	}
	if writes {
		x.bitWritten(key, e, old, lo, hi)
	}
}

// getBitfield reads the width bits at bit off of v, most significant
// first; bits past v's end read as zero.
func getBitfield(v []byte, off uint64, width uint) uint64 {
	var val uint64
	for j := uint(0); j < width; j++ {
		b := uint64(0)
		if i := off >> 3; i < uint64(len(v)) {
			b = uint64(v[i]>>(7-off&7)) & 1
		}
		val = val<<1 | b
		off++
	}
	return val
}

// setBitfield writes the low width bits of val at bit off of v, which
// holds them.
func setBitfield(v []byte, off uint64, width uint, val uint64) {
	for j := uint(0); j < width; j++ {
		mask := byte(0x80) >> (off & 7)
		if val>>(width-1-j)&1 != 0 {
			v[off>>3] |= mask
		} else {
			v[off>>3] &^= mask
		}
		off++
	}
}

// signExtend reads the low width bits of u as a two's complement number.
func signExtend(u uint64, width uint) int64 {
	if width < 64 && u&(1<<(width-1)) != 0 {
		u |= ^uint64(0) << width
	}
	return int64(u)
}

// unsignedOverflow is checkUnsignedBitfieldOverflow: value+incr in width
// bits, and whether it overflowed; the result is what the overflow
// behaviour makes of it (wrapped, saturated; FAIL's is unused).
func unsignedOverflow(value uint64, incr int64, width uint, behaviour int) (uint64, bool) {
	limit := uint64(1)<<width - 1
	maxincr := int64(limit - value)
	minincr := -int64(value)
	switch {
	case value > limit || incr > 0 && incr > maxincr:
		if behaviour == bfSat {
			return limit, true
		}
	case incr < 0 && incr < minincr:
		if behaviour == bfSat {
			return 0, true
		}
	default:
		return value + uint64(incr), false
	}
	return (value + uint64(incr)) & limit, true
}

// signedOverflow is checkSignedBitfieldOverflow for value+incr in width
// bits (up to 64), as unsignedOverflow.
func signedOverflow(value, incr int64, width uint, behaviour int) (int64, bool) {
	hi := int64(1<<(width-1) - 1)
	if width == 64 {
		hi = 1<<63 - 1
	}
	lo := -hi - 1
	maxincr := int64(uint64(hi) - uint64(value))
	minincr := lo - value
	switch {
	case value > hi || width != 64 && incr > maxincr || value >= 0 && incr > 0 && incr > maxincr:
		if behaviour == bfSat {
			return hi, true
		}
	case value < lo || width != 64 && incr < minincr || value < 0 && incr < 0 && incr < minincr:
		if behaviour == bfSat {
			return lo, true
		}
	default:
		return value + incr, false
	}
	c := uint64(value) + uint64(incr)
	if width < 64 {
		if c&(1<<(width-1)) != 0 {
			c |= ^uint64(0) << width
		} else {
			c &^= ^uint64(0) << width
		}
	}
	return int64(c), true
}
