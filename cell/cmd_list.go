package cell

import (
	"bytes"
	"strings"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// List commands. Each handler follows Redis 7.0's t_list.c in the order of
// its checks, which differs per command: LRANGE, LTRIM and LREM parse their
// integers before looking at the key, LINDEX and LSET look at the key first
// (section 1.5 of the spec). A list whose last element goes is deleted at
// once; in-place changes keep the TTL and go through touched().

func init() {
	const wr, ro = FlagWrite, FlagReadonly
	const dfast = FlagDenyOOM | FlagFast
	register(
		&Command{Name: "lpush", Arity: -3, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: lpush},
		&Command{Name: "rpush", Arity: -3, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: rpush},
		&Command{Name: "lpushx", Arity: -3, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: lpushx},
		&Command{Name: "rpushx", Arity: -3, Flags: wr | dfast, FirstKey: 1, LastKey: 1, Handler: rpushx},
		&Command{Name: "lpop", Arity: -2, Flags: wr | FlagFast, FirstKey: 1, LastKey: 1, Handler: lpop},
		&Command{Name: "rpop", Arity: -2, Flags: wr | FlagFast, FirstKey: 1, LastKey: 1, Handler: rpop},
		&Command{Name: "llen", Arity: 2, Flags: ro | FlagFast, FirstKey: 1, LastKey: 1, Handler: llen},
		&Command{Name: "lindex", Arity: 3, Flags: ro, FirstKey: 1, LastKey: 1, Handler: lindex},
		&Command{Name: "lset", Arity: 4, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: lset},
		&Command{Name: "lrange", Arity: 4, Flags: ro, FirstKey: 1, LastKey: 1, Handler: lrange},
		&Command{Name: "ltrim", Arity: 4, Flags: wr, FirstKey: 1, LastKey: 1, Handler: ltrim},
		&Command{Name: "lrem", Arity: 4, Flags: wr, FirstKey: 1, LastKey: 1, Handler: lrem},
		&Command{Name: "linsert", Arity: 5, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 1, Handler: linsert},
		&Command{Name: "lpos", Arity: -3, Flags: ro, FirstKey: 1, LastKey: 1, Handler: lpos},
		&Command{Name: "lmove", Arity: 5, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 2, Handler: lmove},
		&Command{Name: "rpoplpush", Arity: 3, Flags: wr | FlagDenyOOM, FirstKey: 1, LastKey: 2, Handler: rpoplpush},
		&Command{Name: "lmpop", Arity: -4, Flags: wr | FlagMovableKeys, Keys: numkeysKeys(1, false), Handler: lmpop},
	)
}

func lpush(x *Ctx)  { push(x, true, false) }
func rpush(x *Ctx)  { push(x, false, false) }
func lpushx(x *Ctx) { push(x, true, true) }
func rpushx(x *Ctx) { push(x, false, true) }

// push adds every value in argument order (so LPUSH k a b c leaves c at
// the head) and replies the new length. The X variants push only onto an
// existing list and reply 0 otherwise.
func push(x *Ctx, front, onlyExisting bool) {
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	created := l == nil
	if created {
		if onlyExisting {
			x.W.Int(0)
			return
		}
		l = keyspace.NewList()
	}
	for _, v := range x.Args[2:] {
		if front {
			l.PushFront(v)
		} else {
			l.PushBack(v)
		}
		if !created {
			x.NoteListPush(l, front)
		}
	}
	if created {
		x.SetObject(key, l, 0)
	} else {
		x.TouchedNoted(key)
	}
	x.W.Int(int64(l.Len()))
}

func lpop(x *Ctx) { pop(x, true) }
func rpop(x *Ctx) { pop(x, false) }

// pop is LPOP/RPOP key [count]. Without count: one bulk, or null. With
// count: an array in popping order, an empty array for count 0, and a null
// array for a missing key. A bad count is reported as out of range whether
// or not it parses, as Redis does.
func pop(x *Ctx, front bool) {
	if len(x.Args) > 3 {
		x.Error(errArity(x.cmd.Name))
		return
	}
	hasCount := len(x.Args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = resp.ParseInt(x.Args[2]); !ok || count < 0 {
			x.Error(ErrMustBePositive)
			return
		}
	}
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	if l == nil {
		if hasCount {
			x.W.NullArray()
		} else {
			x.W.Null()
		}
		return
	}
	popOne := l.PopBack
	if front {
		popOne = l.PopFront
	}
	switch {
	case !hasCount:
		x.W.Bulk(popOne())
	case count == 0:
		x.W.Array(0)
		return
	default:
		n := min(count, int64(l.Len()))
		x.W.Array(int(n))
		for range n {
			x.W.Bulk(popOne())
		}
	}
	x.RemovedFromNoted(key, l.Len(), true)
}

func llen(x *Ctx) {
	l, ok := x.lookupList(x.Args[1])
	if !ok {
		return
	}
	if l == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(l.Len()))
}

// listIndex turns a possibly negative index into a position, ok false if
// it falls outside the list.
func listIndex(l *keyspace.List, idx int64) (int, bool) {
	n := int64(l.Len())
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		return 0, false
	}
	return int(idx), true
}

// lindex looks at the key before the index: a missing key is null even for
// an index that is not a number.
func lindex(x *Ctx) {
	l, ok := x.lookupList(x.Args[1])
	if !ok {
		return
	}
	if l == nil {
		x.W.Null()
		return
	}
	idx, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	i, ok := listIndex(l, idx)
	if !ok {
		x.W.Null()
		return
	}
	x.W.Bulk(l.At(i))
}

func lset(x *Ctx) {
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	if l == nil {
		x.Error(ErrNoSuchKey)
		return
	}
	idx, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	i, ok := listIndex(l, idx)
	if !ok {
		x.Error(ErrIndexRange)
		return
	}
	l.Set(i, x.Args[3])
	x.NoteListIndex(l, i)
	x.TouchedNoted(key)
	x.W.OK()
}

// parseRange parses the start and stop arguments of LRANGE and LTRIM.
func parseRange(x *Ctx) (start, stop int64, ok bool) {
	if start, ok = resp.ParseInt(x.Args[2]); ok {
		stop, ok = resp.ParseInt(x.Args[3])
	}
	if !ok {
		x.Error(ErrNotInteger)
	}
	return start, stop, ok
}

// clampRange applies Redis's rules for an inclusive [start, stop] range of
// a list of length n, negative values counting from the end. It returns
// the half-open [from, to) to use, empty when start > stop or start >= n.
func clampRange(start, stop int64, n int) (from, to int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= ln {
		return 0, 0
	}
	if stop >= ln {
		stop = ln - 1
	}
	return int(start), int(stop) + 1
}

func lrange(x *Ctx) {
	start, stop, ok := parseRange(x)
	if !ok {
		return
	}
	l, ok := x.lookupList(x.Args[1])
	if !ok {
		return
	}
	if l == nil {
		x.W.Array(0)
		return
	}
	from, to := clampRange(start, stop, l.Len())
	x.W.Array(to - from)
	for i := from; i < to; i++ {
		x.W.Bulk(l.At(i))
	}
}

// ltrim keeps [start, stop]. Redis signals the key as modified even when
// nothing was dropped, so a WATCH on it fails.
func ltrim(x *Ctx) {
	start, stop, ok := parseRange(x)
	if !ok {
		return
	}
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	if l == nil {
		x.W.OK()
		return
	}
	from, to := clampRange(start, stop, l.Len())
	l.Trim(from, to)
	x.RemovedFromNoted(key, l.Len(), true)
	x.W.OK()
}

// lrem removes elements equal to the argument: the first count from the
// head (count > 0), the last -count from the tail (count < 0), or all.
func lrem(x *Ctx) {
	count, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	if l == nil {
		x.W.Int(0)
		return
	}
	elem := x.Args[3]
	limit := count
	if limit < 0 {
		limit = -limit // MinInt64 stays negative: no limit, as in Redis
	}
	var taken int64
	removed, lo, hi := l.RemoveIf(count < 0, func(v []byte) bool {
		if (limit > 0 && taken >= limit) || !bytes.Equal(v, elem) {
			return false
		}
		taken++
		return true
	})
	if removed > 0 {
		x.ListChanged(key, l, lo, hi)
	}
	x.W.Int(int64(removed))
}

// linsert is LINSERT key BEFORE|AFTER pivot element: the new length, -1 if
// the pivot is not there, 0 if the key is missing.
func linsert(x *Ctx) {
	var after bool
	switch {
	case strings.EqualFold(string(x.Args[2]), "after"):
		after = true
	case strings.EqualFold(string(x.Args[2]), "before"):
	default:
		x.Error(ErrSyntax)
		return
	}
	key := x.Args[1]
	l, ok := x.lookupList(key)
	if !ok {
		return
	}
	if l == nil {
		x.W.Int(0)
		return
	}
	pivot := x.Args[3]
	for i := 0; i < l.Len(); i++ {
		if bytes.Equal(l.At(i), pivot) {
			if after {
				i++
			}
			lo, hi := l.Insert(i, x.Args[4])
			x.ListChanged(key, l, lo, hi)
			x.W.Int(int64(l.Len()))
			return
		}
	}
	x.W.Int(-1)
}

// lpos is LPOS key element [RANK rank] [COUNT num] [MAXLEN len]. Options
// are checked before the key. RANK picks the rank-th match, negative from
// the tail; COUNT (0 = all) turns the reply into an array; MAXLEN bounds
// how many elements are compared. RANK -9223372036854775808 negates to
// itself, as in C, and then matches the first element from the tail.
func lpos(x *Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(x.Args); j++ {
		opt := string(x.Args[j])
		more := j+1 < len(x.Args)
		switch {
		case more && strings.EqualFold(opt, "rank"):
			j++
			v, ok := resp.ParseInt(x.Args[j])
			if !ok {
				x.Error(ErrNotInteger)
				return
			}
			if v == 0 {
				x.Error(ErrLposRankZero)
				return
			}
			rank = v
		case more && strings.EqualFold(opt, "count"):
			j++
			v, ok := resp.ParseInt(x.Args[j])
			if !ok || v < 0 {
				x.Error(ErrLposCountNeg)
				return
			}
			count = v
		case more && strings.EqualFold(opt, "maxlen"):
			j++
			v, ok := resp.ParseInt(x.Args[j])
			if !ok || v < 0 {
				x.Error(ErrLposMaxlenNeg)
				return
			}
			maxlen = v
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	fromTail := false
	if rank < 0 {
		rank = -rank
		fromTail = true
	}
	l, ok := x.lookupList(x.Args[1])
	if !ok {
		return
	}
	if l == nil {
		if count != -1 {
			x.W.Array(0)
		} else {
			x.W.Null()
		}
		return
	}
	elem := x.Args[2]
	n := l.Len()
	var found []int64
	var matches int64
	for k := 0; k < n && (maxlen == 0 || int64(k) < maxlen); k++ {
		pos := k
		if fromTail {
			pos = n - 1 - k
		}
		if !bytes.Equal(l.At(pos), elem) {
			continue
		}
		matches++
		if matches < rank {
			continue
		}
		found = append(found, int64(pos))
		if count == -1 || (count > 0 && matches-rank+1 >= count) {
			break
		}
	}
	if count != -1 {
		x.W.Array(len(found))
		for _, p := range found {
			x.W.Int(p)
		}
		return
	}
	if len(found) == 0 {
		x.W.Null()
		return
	}
	x.W.Int(found[0])
}

// listEnd parses LEFT or RIGHT (LMOVE, LMPOP): front is true for LEFT.
func listEnd(x *Ctx, arg []byte) (front, ok bool) {
	switch {
	case optIs(arg, "left"):
		return true, true
	case optIs(arg, "right"):
		return false, true
	}
	x.Error(ErrSyntax)
	return false, false
}

// lmove is LMOVE source destination LEFT|RIGHT LEFT|RIGHT: both ends are
// parsed first, then the source (missing: null), then the destination's
// type, as Redis's lmoveGenericCommand. With source and destination the
// same key it rotates the list; a one-element list stays.
func lmove(x *Ctx) {
	if from, to, ok := listEnds(x); ok {
		moveElement(x, x.Args[1], x.Args[2], from, to)
	}
}

// listEnds parses LMOVE's and BLMOVE's two ends, x.Args[3] and [4].
func listEnds(x *Ctx) (from, to, ok bool) {
	if from, ok = listEnd(x, x.Args[3]); ok {
		to, ok = listEnd(x, x.Args[4])
	}
	return from, to, ok
}

// rpoplpush is LMOVE source destination RIGHT LEFT.
func rpoplpush(x *Ctx) { moveElement(x, x.Args[1], x.Args[2], false, true) }

// moveElement pops src's head (from) or tail and pushes it onto dst's head
// (to) or tail, replying the element: LMOVE's work, and a BLMOVE's.
func moveElement(x *Ctx, src, dst []byte, from, to bool) {
	l, ok := x.lookupList(src)
	if !ok {
		return
	}
	if l == nil {
		x.W.Null()
		return
	}
	d, ok := x.lookupList(dst)
	if !ok {
		return
	}
	var v []byte
	if from {
		v = l.PopFront()
	} else {
		v = l.PopBack()
	}
	created := d == nil
	if created {
		d = keyspace.NewList()
	}
	if to {
		d.PushFront(v)
	} else {
		d.PushBack(v)
	}
	if created {
		x.SetObject(dst, d, 0)
	} else {
		x.NoteListPush(d, to)
		x.TouchedNoted(dst)
	}
	if d != l {
		x.RemovedFromNoted(src, l.Len(), true)
	}
	x.W.Bulk(v)
}

// lmpop is LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] (7.0): it
// pops up to count elements from the first key holding a list, stopping
// at the first key of another type with WRONGTYPE, and replies [key,
// [element, ...]] (from the tail first for RIGHT), or a null array when
// every key is missing.
func lmpop(x *Ctx) {
	keys, right, count, ok := parseMpop(x, "left", "right")
	if !ok {
		return
	}
	if key, l, ok := firstHolding[*keyspace.List](x, keys); !ok {
		return
	} else if key != nil {
		lmpopFrom(x, key, l, !right, count)
		return
	}
	x.W.NullArray()
}

// lmpopFrom pops up to count elements of key's list l and replies [key,
// [element, ...]]: LMPOP's work, and a BLMPOP's.
func lmpopFrom(x *Ctx, key []byte, l *keyspace.List, front bool, count int64) {
	n := int(min(count, int64(l.Len())))
	x.W.Array(2)
	x.W.Bulk(key)
	x.W.Array(n)
	for range n {
		if front {
			x.W.Bulk(l.PopFront())
		} else {
			x.W.Bulk(l.PopBack())
		}
	}
	x.RemovedFromNoted(key, l.Len(), true)
}
