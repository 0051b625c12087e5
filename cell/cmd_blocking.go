package cell

import (
	"math"
	"math/big"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// The blocking pops (t_list.c's and t_zset.c's blocking commands in Redis
// 7.0). Each parses its timeout first (BLMPOP and BZMPOP after the rest
// of their arguments), then looks at its keys in order:
// the first key holding a value of the command's type is popped at once,
// the first holding another type answers WRONGTYPE; with every key
// missing the client blocks (blocking.go), or, inside MULTI/EXEC,
// answers at once as a timeout does. Scripts may not call them
// (noscript, as in Redis 7.0).

func init() {
	const wr = FlagWrite | FlagBlocking | FlagNoScript
	register(
		&Command{Name: "blpop", Arity: -3, Flags: wr, FirstKey: 1, LastKey: -2, Step: 1, Handler: blpop},
		&Command{Name: "brpop", Arity: -3, Flags: wr, FirstKey: 1, LastKey: -2, Step: 1, Handler: brpop},
		&Command{Name: "brpoplpush", Arity: 4, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Handler: brpoplpush},
		&Command{Name: "blmove", Arity: 6, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 2, Step: 1, Handler: blmove},
		&Command{Name: "blmpop", Arity: -5, Flags: wr | FlagMovableKeys, Keys: numkeysKeys(2, false), Handler: blmpop},
		&Command{Name: "bzpopmin", Arity: -3, Flags: wr | FlagFast, FirstKey: 1, LastKey: -2, Step: 1, Handler: bzpopmin},
		&Command{Name: "bzpopmax", Arity: -3, Flags: wr | FlagFast, FirstKey: 1, LastKey: -2, Step: 1, Handler: bzpopmax},
		&Command{Name: "bzmpop", Arity: -5, Flags: wr | FlagMovableKeys, Keys: numkeysKeys(2, false), Handler: bzmpop},
	)
}

// parseBlockTimeout parses a timeout in seconds as Redis 7.0's
// getTimeoutFromObjectOrReply: a long double, times 1000 rounded up to
// whole milliseconds (so a positive timeout below 1 ms still ends);
// beyond what a long long holds is negative, as the x86 conversion
// makes it. 0 is no timeout.
func parseBlockTimeout(x *Ctx, arg []byte) (time.Duration, bool) {
	f, ok := resp.ParseLongDouble(arg)
	if !ok {
		x.Error(ErrTimeoutNotFloat)
		return 0, false
	}
	ms := int64(math.MinInt64)
	if !f.IsInf() {
		v := new(big.Float).SetPrec(64).Mul(f, big.NewFloat(1000))
		i, acc := v.Int(nil)
		if acc == big.Below { // Int truncated a positive value: ceil
			i.Add(i, big.NewInt(1))
		}
		if i.IsInt64() {
			ms = i.Int64()
		}
	}
	if ms < 0 {
		x.Error(ErrTimeoutNegative)
		return 0, false
	}
	const maxMs = int64(math.MaxInt64 / time.Millisecond)
	return time.Duration(min(ms, maxMs)) * time.Millisecond, true
}

func blpop(x *Ctx) { blockingPop(x, true) }
func brpop(x *Ctx) { blockingPop(x, false) }

// blockingPop is BLPOP/BRPOP key [key ...] timeout: [key, element].
func blockingPop(x *Ctx, front bool) {
	keys := x.Args[1 : len(x.Args)-1]
	timeout, ok := parseBlockTimeout(x, x.Args[len(x.Args)-1])
	if !ok {
		return
	}
	if key, l, ok := firstHolding[*keyspace.List](x, keys); !ok {
		return
	} else if key != nil {
		popReplyWithKey(x, key, l, front)
		return
	}
	blockOr(x, &waiter{kind: blockPop, keys: keyStrings(keys), front: front, timeout: timeout}, x.W.NullArray)
}

// popReplyWithKey pops one element of key's list l and replies [key,
// element].
func popReplyWithKey(x *Ctx, key []byte, l *keyspace.List, front bool) {
	x.W.Array(2)
	x.W.Bulk(key)
	if front {
		x.W.Bulk(l.PopFront())
	} else {
		x.W.Bulk(l.PopBack())
	}
	x.RemovedFromNoted(key, l.Len(), true)
}

// blockOr blocks x's client on w, or, where it may not block, replies as
// noBlock does (null or a null array).
func blockOr(x *Ctx, w *waiter, noBlock func()) {
	if !x.mayBlock() {
		noBlock()
		return
	}
	x.block(w)
}

func keyStrings(keys [][]byte) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

// brpoplpush is BLMOVE source destination RIGHT LEFT timeout.
func brpoplpush(x *Ctx) { blockingMove(x, false, true, x.Args[3]) }

// blmove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout: the
// ends are parsed before the timeout.
func blmove(x *Ctx) {
	if from, to, ok := listEnds(x); ok {
		blockingMove(x, from, to, x.Args[5])
	}
}

// blockingMove moves an element as LMOVE does once source holds one; in
// MULTI or a script, a missing source is a null.
func blockingMove(x *Ctx, from, to bool, timeoutArg []byte) {
	timeout, ok := parseBlockTimeout(x, timeoutArg)
	if !ok {
		return
	}
	src, dst := x.Args[1], x.Args[2]
	l, ok := x.lookupList(src)
	if !ok {
		return
	}
	if l != nil {
		moveElement(x, src, dst, from, to)
		return
	}
	w := &waiter{kind: blockMove, keys: []string{string(src)}, front: from, to: to,
		dst: append([]byte(nil), dst...), timeout: timeout}
	blockOr(x, w, x.W.Null)
}

// blmpop is BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count].
func blmpop(x *Ctx) {
	keys, right, count, ok := parseMpopAt(x, 2, "left", "right")
	if !ok {
		return
	}
	timeout, ok := parseBlockTimeout(x, x.Args[1])
	if !ok {
		return
	}
	if key, l, ok := firstHolding[*keyspace.List](x, keys); !ok {
		return
	} else if key != nil {
		lmpopFrom(x, key, l, !right, count)
		return
	}
	w := &waiter{kind: blockMPop, keys: keyStrings(keys), front: !right, count: count, timeout: timeout}
	blockOr(x, w, x.W.NullArray)
}

func bzpopmin(x *Ctx) { blockingZPop(x, false) }
func bzpopmax(x *Ctx) { blockingZPop(x, true) }

// blockingZPop is BZPOPMIN/BZPOPMAX key [key ...] timeout: [key, member,
// score].
func blockingZPop(x *Ctx, max bool) {
	keys := x.Args[1 : len(x.Args)-1]
	timeout, ok := parseBlockTimeout(x, x.Args[len(x.Args)-1])
	if !ok {
		return
	}
	if key, z, ok := firstZSet(x, keys); !ok {
		return
	} else if key != nil {
		bzpopFrom(x, key, z, max)
		return
	}
	blockOr(x, &waiter{kind: blockZPop, keys: keyStrings(keys), front: !max, timeout: timeout}, x.W.NullArray)
}

// bzpopFrom pops key's lowest (or highest) member and replies [key,
// member, score].
func bzpopFrom(x *Ctx, key []byte, z *keyspace.ZSet, max bool) {
	w := x.W
	w.Array(3)
	w.Bulk(key)
	emit := func(member []byte, score float64) bool {
		w.Bulk(member)
		w.Double(score)
		return true
	}
	if max {
		z.PopMax(1, emit)
	} else {
		z.PopMin(1, emit)
	}
	x.RemovedFrom(key, z.Len(), true)
}

// bzmpop is BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].
func bzmpop(x *Ctx) {
	keys, max, count, ok := parseMpopAt(x, 2, "min", "max")
	if !ok {
		return
	}
	timeout, ok := parseBlockTimeout(x, x.Args[1])
	if !ok {
		return
	}
	if key, z, ok := firstZSet(x, keys); !ok {
		return
	} else if key != nil {
		zmpopFrom(x, key, z, max, count)
		return
	}
	w := &waiter{kind: blockZMPop, keys: keyStrings(keys), front: !max, count: count, timeout: timeout}
	blockOr(x, w, x.W.NullArray)
}
