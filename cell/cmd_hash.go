package cell

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Hash commands. Each handler follows Redis 7.0's t_hash.c in the order of
// its checks (argument parsing, WRONGTYPE, the work), because that order
// decides which error a client sees for a bad command on a bad key. A hash
// whose last field goes is deleted at once; an in-place change keeps the
// key's TTL and goes through touched() so WATCH and persistence see it.

func init() {
	const wr, ro = FlagWrite, FlagReadonly
	const dfast = FlagDenyOOM | FlagFast
	register(
		&Command{Name: "hset", Arity: -4, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: hset},
		&Command{Name: "hmset", Arity: -4, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: hmset},
		&Command{Name: "hsetnx", Arity: 4, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: hsetnx},
		&Command{Name: "hget", Arity: 3, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: hget},
		&Command{Name: "hmget", Arity: -3, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: hmget},
		&Command{Name: "hdel", Arity: -3, Flags: wr | FlagFast, FirstKey: 1, LastKey: 1, Handler: hdel},
		&Command{Name: "hgetall", Arity: 2, Flags: ro, FirstKey: 1, LastKey: 1, Handler: hgetall},
		&Command{Name: "hkeys", Arity: 2, Flags: ro, FirstKey: 1, LastKey: 1, Handler: hkeys},
		&Command{Name: "hvals", Arity: 2, Flags: ro, FirstKey: 1, LastKey: 1, Handler: hvals},
		&Command{Name: "hexists", Arity: 3, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: hexists},
		&Command{Name: "hlen", Arity: 2, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: hlen},
		&Command{Name: "hstrlen", Arity: 3, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: hstrlen},
		&Command{Name: "hincrby", Arity: 4, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: hincrby},
		&Command{Name: "hincrbyfloat", Arity: 4, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: hincrbyfloat},
		&Command{Name: "hrandfield", Arity: -2, Flags: ro, FirstKey: 1, LastKey: 1, Handler: hrandfield},
		&Command{Name: "hscan", Arity: -3, Flags: ro, FirstKey: 1, LastKey: 1, Handler: hscan},
	)
}

// hashForWrite is Redis's hashTypeLookupWriteOrCreate: key's hash, or a
// new empty one that the caller must store with setObject once it holds a
// field. created says which.
func (x *Ctx) hashForWrite(key []byte) (h *keyspace.Hash, created, ok bool) {
	h, ok = x.lookupHash(key)
	if !ok || h != nil {
		return h, false, ok
	}
	return keyspace.NewHash(), true, true
}

// commitHash records a write to a hash: a new hash is stored, an existing
// one was changed in place, in the fields the caller gave NoteHashField.
func (x *Ctx) commitHash(key []byte, h *keyspace.Hash, created bool) {
	if created {
		x.SetObject(key, h, 0)
		return
	}
	x.TouchedNoted(key)
}

// setHashField is h.Set for a handler that changes one field and then
// calls commitHash.
func (x *Ctx) setHashField(h *keyspace.Hash, created bool, field, value []byte) {
	h.Set(field, value)
	if !created {
		x.NoteHashField(h, field)
	}
}

// hsetPairs stores the field/value pairs of HSET and HMSET and returns how
// many fields were new. An odd count of pairs is an arity error, as in
// Redis, and not a syntax error.
func hsetPairs(x *Ctx) (added int64, ok bool) {
	if len(x.Args)%2 == 1 {
		x.Error(errArity(x.cmd.Name))
		return 0, false
	}
	key := x.Args[1]
	h, created, ok := x.hashForWrite(key)
	if !ok {
		return 0, false
	}
	for i := 2; i < len(x.Args); i += 2 {
		if h.Set(x.Args[i], x.Args[i+1]) {
			added++
		}
		if !created {
			x.NoteHashField(h, x.Args[i])
		}
	}
	x.commitHash(key, h, created)
	return added, true
}

// hset is HSET key field value [field value ...]: the number of new fields.
func hset(x *Ctx) {
	if n, ok := hsetPairs(x); ok {
		x.W.Int(n)
	}
}

// hmset is HSET's deprecated twin that replies +OK.
func hmset(x *Ctx) {
	if _, ok := hsetPairs(x); ok {
		x.W.OK()
	}
}

// hsetnx is HSETNX key field value: 1 if the field was set, 0 if it existed
// (and then nothing is written).
func hsetnx(x *Ctx) {
	key := x.Args[1]
	h, created, ok := x.hashForWrite(key)
	if !ok {
		return
	}
	if h.Has(x.Args[2]) {
		x.W.Int(0)
		return
	}
	x.setHashField(h, created, x.Args[2], x.Args[3])
	x.commitHash(key, h, created)
	x.W.Int(1)
}

func hget(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h != nil {
		if v, found := h.Get(x.Args[2]); found {
			x.W.Bulk(v)
			return
		}
	}
	x.W.Null()
}

// hmget replies one value or null per field; a missing key is a hash with
// no fields.
func hmget(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	fields := x.Args[2:]
	x.W.Array(len(fields))
	for _, f := range fields {
		if h != nil {
			if v, found := h.Get(f); found {
				x.W.Bulk(v)
				continue
			}
		}
		x.W.Null()
	}
}

// hdel removes fields and replies how many existed; the key goes with its
// last field.
func hdel(x *Ctx) {
	key := x.Args[1]
	h, ok := x.lookupHash(key)
	if !ok {
		return
	}
	if h == nil {
		x.W.Int(0)
		return
	}
	var n int64
	for _, f := range x.Args[2:] {
		if h.Delete(f) {
			n++
			if h.Len() == 0 {
				break
			}
			x.NoteHashField(h, f)
		}
	}
	x.RemovedFromNoted(key, h.Len(), n > 0)
	x.W.Int(n)
}

// hgetall is a flat field/value array in RESP2 and a map in RESP3.
func hgetall(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil {
		x.W.Map(0)
		return
	}
	x.W.Map(h.Len())
	for i := 0; i < h.Len(); i++ {
		f, v := h.At(i)
		x.W.BulkString(f)
		x.W.Bulk(v)
	}
}

func hkeys(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil {
		x.W.Array(0)
		return
	}
	x.W.Array(h.Len())
	for i := 0; i < h.Len(); i++ {
		f, _ := h.At(i)
		x.W.BulkString(f)
	}
}

func hvals(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil {
		x.W.Array(0)
		return
	}
	x.W.Array(h.Len())
	for i := 0; i < h.Len(); i++ {
		_, v := h.At(i)
		x.W.Bulk(v)
	}
}

func hexists(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h != nil && h.Has(x.Args[2]) {
		x.W.Int(1)
		return
	}
	x.W.Int(0)
}

func hlen(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(h.Len()))
}

// hstrlen is the length of a field's value, 0 for a missing field or key.
func hstrlen(x *Ctx) {
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	var n int
	if h != nil {
		v, _ := h.Get(x.Args[2])
		n = len(v)
	}
	x.W.Int(int64(n))
}

// hincrby adds an integer to a field (0 if missing). The increment is
// parsed before the key's type is checked; the stored value must itself be
// a strict integer.
func hincrby(x *Ctx) {
	incr, ok := resp.ParseInt(x.Args[3])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	key := x.Args[1]
	h, created, ok := x.hashForWrite(key)
	if !ok {
		return
	}
	var cur int64
	if v, found := h.Get(x.Args[2]); found {
		if cur, ok = resp.ParseInt(v); !ok {
			x.Error(ErrHashNotInt)
			return
		}
	}
	sum := cur + incr
	if (incr < 0 && cur < 0 && sum >= 0) || (incr > 0 && cur > 0 && sum < 0) {
		x.Error(ErrOverflow)
		return
	}
	var buf [20]byte
	x.setHashField(h, created, x.Args[2], strconv.AppendInt(buf[:0], sum, 10))
	x.commitHash(key, h, created)
	x.W.Int(sum)
}

// hincrbyfloat adds a float to a field in long double arithmetic, as Redis
// does, stores the result as text and replies that text. An infinite
// increment is refused before the key is looked at; a sum that overflows is
// refused after.
func hincrbyfloat(x *Ctx) {
	incr, ok := resp.ParseLongDouble(x.Args[3])
	if !ok {
		x.Error(ErrNotFloat)
		return
	}
	if incr.IsInf() {
		x.Error(ErrIncrNaNOrInf)
		return
	}
	key := x.Args[1]
	h, created, ok := x.hashForWrite(key)
	if !ok {
		return
	}
	sum := incr
	if v, found := h.Get(x.Args[2]); found {
		cur, ok := resp.ParseLongDouble(v)
		if !ok {
			x.Error(ErrHashNotFloat)
			return
		}
		if sum, ok = resp.AddLongDouble(cur, incr); !ok {
			x.Error(ErrIncrFloatNaN)
			return
		}
	}
	txt := resp.AppendLongDouble(nil, sum)
	x.setHashField(h, created, x.Args[2], txt)
	x.commitHash(key, h, created)
	x.W.Bulk(txt)
}

// maxRandReply bounds the size of HRANDFIELD's reply with a negative
// count, where fields repeat. Redis has no bound there: HRANDFIELD h
// -9223372036854775807 makes it build a reply until memory runs out. We
// refuse a count whose reply could pass 512 MB (proto-max-bulk-len) instead.
const maxRandReply = 512 << 20

// randReplyFits reports whether n picks from h, each at most the longest
// field (and value) plus framing, stay under maxRandReply.
func randReplyFits(h *keyspace.Hash, n int64, withValues bool) bool {
	longest := 0
	for i := 0; i < h.Len(); i++ {
		f, v := h.At(i)
		size := len(f)
		if withValues {
			size += len(v)
		}
		longest = max(longest, size)
	}
	per := int64(longest) + 40 // headers of a field, a value and a pair
	return n <= maxRandReply/per
}

// hrandfield is HRANDFIELD key [count [WITHVALUES]].
//
// Without count: one random field, or null. With count >= 0: distinct
// fields, all of them (in hash order) when count >= the size. With a
// negative count: |count| fields drawn independently. WITHVALUES pairs each
// field with its value: flat in RESP2, an array per pair in RESP3. A missing
// key with a count replies an empty array in both protocols.
func hrandfield(x *Ctx) {
	if len(x.Args) == 2 {
		h, ok := x.lookupHash(x.Args[1])
		if !ok {
			return
		}
		if h == nil {
			x.W.Null()
			return
		}
		f, _ := h.At(rand.IntN(h.Len()))
		x.W.BulkString(f)
		return
	}
	l, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if l == -1<<63 {
		x.Error(ErrCountRange)
		return
	}
	withValues := false
	if len(x.Args) > 4 || (len(x.Args) == 4 && !strings.EqualFold(string(x.Args[3]), "withvalues")) {
		x.Error(ErrSyntax)
		return
	}
	if len(x.Args) == 4 {
		withValues = true
		if l < -(1<<63-1)/2 || l > (1<<63-1)/2 {
			x.Error(ErrOutOfRange)
			return
		}
	}
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil || l == 0 {
		x.W.Array(0)
		return
	}
	resp3 := x.W.Proto() == 3
	pairHeader := func() {
		if withValues && resp3 {
			x.W.Array(2)
		}
	}
	replyLen := func(n int) {
		if withValues && !resp3 {
			x.W.Array(2 * n)
		} else {
			x.W.Array(n)
		}
	}
	emit := func(i int) {
		f, v := h.At(i)
		pairHeader()
		x.W.BulkString(f)
		if withValues {
			x.W.Bulk(v)
		}
	}
	size := h.Len()
	if l < 0 {
		if !randReplyFits(h, -l, withValues) {
			x.Error(ErrReplyTooLarge)
			return
		}
		n := int(-l)
		replyLen(n)
		for range n {
			emit(rand.IntN(size))
		}
		return
	}
	if l >= int64(size) {
		replyLen(size)
		for i := range size {
			emit(i)
		}
		return
	}
	// Distinct fields: a few drawn with a set of those already taken, or
	// the first n of a random permutation when n is a good part of size.
	n := int(l)
	replyLen(n)
	if n*4 < size {
		taken := make(map[int]struct{}, n)
		for len(taken) < n {
			i := rand.IntN(size)
			if _, dup := taken[i]; !dup {
				taken[i] = struct{}{}
				emit(i)
			}
		}
		return
	}
	for _, i := range rand.Perm(size)[:n] {
		emit(i)
	}
}

// hscan is HSCAN key cursor [MATCH pattern] [COUNT count], as ZSCAN: the
// cursor is parsed first, then the key (missing: an empty scan before any
// option is read), then the options; a listpack hash, or one of at most
// COUNT fields, comes whole with cursor 0, a larger one in pages
// (elemScan.pick).
func hscan(x *Ctx) {
	if !elemScanCursor(x) {
		return
	}
	h, ok := x.lookupHash(x.Args[1])
	if !ok {
		return
	}
	if h == nil {
		emptyElemScan(x)
		return
	}
	o, ok := parseElemScan(x)
	if !ok {
		return
	}
	cursor, _ := parseCursor(x.Args[2])
	idx, next := o.pick(h.Len(), h.Encoding() == "listpack", cursor, func(i int) []byte {
		f, _ := h.At(i)
		return bytesOf(f)
	})
	writeElemScanHead(x, next, 2*len(idx))
	for _, i := range idx {
		f, v := h.At(i)
		x.W.BulkString(f)
		x.W.Bulk(v)
	}
}
