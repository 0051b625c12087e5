package cell

import (
	"math/rand/v2"
	"slices"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Set commands. Each handler follows Redis 7.0's t_set.c in the order of
// its checks (argument parsing, WRONGTYPE, the work), since that order
// decides which error a client sees. A set whose last member goes is
// deleted at once. Replies that are sets (SMEMBERS, SINTER, SPOP with a
// count, ...) are RESP3 sets (~); SRANDMEMBER with a count is an array, as
// in Redis. A change in place is logged as the whole set, and streamed to
// replicas as the members it added or removed (NoteSetMember).

func init() {
	const wr, ro = FlagWrite, FlagReadonly
	const fast = FlagFast
	s := func(name string, arity int, flags Flag, first, last int, h Handler) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: 1, Handler: h, ACL: ACLSet}
	}
	srandCmd := s("srandmember", -2, ro, 1, 1, srandmember)
	srandCmd.Tips = []string{"nondeterministic_output"}
	spopCmd := s("spop", -2, wr|fast, 1, 1, spop)
	spopCmd.Tips = []string{"nondeterministic_output"}
	sscanCmd := s("sscan", -3, ro, 1, 1, sscan)
	sscanCmd.Tips = []string{"nondeterministic_output"}
	register(
		s("sadd", -3, wr|FlagDenyOOM|fast, 1, 1, sadd),
		s("srem", -3, wr|fast, 1, 1, srem),
		s("smove", 4, wr|fast, 1, 2, smove),
		s("sismember", 3, ro|fast, 1, 1, sismember),
		s("smismember", -3, ro|fast, 1, 1, smismember),
		s("scard", 2, ro|fast, 1, 1, scard),
		spopCmd,
		srandCmd,
		s("smembers", 2, ro, 1, 1, smembers),
		s("sinter", -2, ro, 1, -1, sinter),
		s("sinterstore", -3, wr|FlagDenyOOM, 1, -1, sinterstore),
		s("sunion", -2, ro, 1, -1, sunion),
		s("sunionstore", -3, wr|FlagDenyOOM, 1, -1, sunionstore),
		s("sdiff", -2, ro, 1, -1, sdiff),
		s("sdiffstore", -3, wr|FlagDenyOOM, 1, -1, sdiffstore),
		&Command{Name: "sintercard", Arity: -3, Flags: ro | FlagMovableKeys, Keys: numkeysKeys(1, false), Handler: sintercard, ACL: ACLSet,
			KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, NumStep: 1}}},
		sscanCmd,
	)
}

// setMaxInts is set-max-intset-entries now: Redis reads it at every
// insert, so a CONFIG SET applies to existing sets too.
func (x *Ctx) setMaxInts() int { return int(x.srv.live.setMaxIntsetEntries.Load()) }

// sadd is SADD key member [member ...]: the number of members added.
func sadd(x *Ctx) {
	key := x.Args[1]
	s, ok := x.lookupSet(key)
	if !ok {
		return
	}
	created := s == nil
	if created {
		s = keyspace.NewSet()
	}
	limit := x.setMaxInts()
	var n int64
	for _, m := range x.Args[2:] {
		if s.Add(m, limit) {
			n++
			if !created {
				x.NoteSetMember(s, m)
			}
		}
	}
	if created {
		x.SetObject(key, s, 0)
	} else if n > 0 {
		x.TouchedNoted(key)
	}
	x.W.Int(n)
}

// srem is SREM key member [member ...]: the number removed; the key goes
// with its last member.
func srem(x *Ctx) {
	key := x.Args[1]
	s, ok := x.lookupSet(key)
	if !ok {
		return
	}
	if s == nil {
		x.W.Int(0)
		return
	}
	var n int64
	for _, m := range x.Args[2:] {
		if s.Remove(m) {
			n++
			x.NoteSetMember(s, m)
			if s.Len() == 0 {
				break
			}
		}
	}
	x.RemovedFromNoted(key, s.Len(), n > 0)
	x.W.Int(n)
}

// smove is SMOVE source destination member: 1 if moved. A missing source
// answers 0 before the destination's type is looked at, as in Redis.
func smove(x *Ctx) {
	src, dst, m := x.Args[1], x.Args[2], x.Args[3]
	se := x.Lookup(src)
	de := x.Lookup(dst)
	if se == nil {
		x.W.Int(0)
		return
	}
	ss, ok := se.Obj().(*keyspace.Set)
	if !ok {
		x.Error(ErrWrongType)
		return
	}
	var ds *keyspace.Set
	if de != nil {
		if ds, ok = de.Obj().(*keyspace.Set); !ok {
			x.Error(ErrWrongType)
			return
		}
	}
	if ss == ds {
		x.W.Int(b2i(ss.Has(m)))
		return
	}
	if !ss.Remove(m) {
		x.W.Int(0)
		return
	}
	x.NoteSetMember(ss, m)
	x.RemovedFromNoted(src, ss.Len(), true)
	if ds == nil {
		ds = keyspace.NewSet()
		ds.Add(m, x.setMaxInts())
		x.SetObject(dst, ds, 0)
	} else if ds.Add(m, x.setMaxInts()) {
		x.NoteSetMember(ds, m)
		x.TouchedNoted(dst)
	}
	x.W.Int(1)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func sismember(x *Ctx) {
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	x.W.Int(b2i(s != nil && s.Has(x.Args[2])))
}

// smismember replies 1 or 0 per member; a missing key is an empty set.
func smismember(x *Ctx) {
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		x.W.Int(b2i(s != nil && s.Has(m)))
	}
}

func scard(x *Ctx) {
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(s.Len()))
}

// writeMembers replies the whole of s as a set, in s's order.
func writeMembers(x *Ctx, s *keyspace.Set) {
	x.W.Set(s.Len())
	var buf [64]byte
	for i := range s.Len() {
		x.W.Bulk(s.AppendAt(buf[:0], i))
	}
}

func smembers(x *Ctx) {
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Set(0)
		return
	}
	writeMembers(x, s)
}

// spop is SPOP key [count]. Without a count: one random member, or null.
// With one: up to count distinct members as a set; the key goes when the
// last one does.
func spop(x *Ctx) {
	key := x.Args[1]
	if len(x.Args) > 3 {
		x.Error(ErrSyntax)
		return
	}
	if len(x.Args) == 2 {
		s, ok := x.lookupSet(key)
		if !ok {
			return
		}
		if s == nil {
			x.W.Null()
			return
		}
		i := rand.IntN(s.Len())
		var buf [64]byte
		m := s.AppendAt(buf[:0], i)
		x.W.Bulk(m)
		x.NoteSetMember(s, m)
		s.RemoveAt(i)
		x.RemovedFromNoted(key, s.Len(), true)
		return
	}
	n, ok := resp.ParseInt(x.Args[2])
	if !ok || n < 0 {
		x.Error(ErrMustBePositive)
		return
	}
	s, ok := x.lookupSet(key)
	if !ok {
		return
	}
	if s == nil || n == 0 {
		x.W.Set(0)
		return
	}
	if n >= int64(s.Len()) {
		writeMembers(x, s)
		x.Remove(key)
		return
	}
	x.W.Set(int(n))
	var buf [64]byte
	for range n {
		i := rand.IntN(s.Len())
		m := s.AppendAt(buf[:0], i)
		x.W.Bulk(m)
		x.NoteSetMember(s, m)
		s.RemoveAt(i)
	}
	if int64(s.Len())*spopMoveStrategyMul <= n {
		s.ToIntset(x.setMaxInts())
	}
	x.RemovedFromNoted(key, s.Len(), true)
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: when fewer than
// count/5 members stay, Redis builds them into a new set (an intset if
// they allow) rather than removing the popped ones from the old.
const spopMoveStrategyMul = 5

// maxSetRandReply bounds SRANDMEMBER's reply with a negative count, as
// maxRandReply does HRANDFIELD's: Redis would build it until the client's
// output limit closes the connection.
func setRandReplyFits(s *keyspace.Set, n int64) bool {
	longest := 20
	if !s.IsIntset() {
		for i := range s.Len() {
			longest = max(longest, len(s.At(i)))
		}
	}
	return n <= maxRandReply/int64(longest+16)
}

// srandmember is SRANDMEMBER key [count]. Without a count: one random
// member, or null. With count >= 0: distinct members (all of them when
// count >= the size); with a negative count, |count| members drawn
// independently. A missing key with a count is an empty array.
func srandmember(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(ErrSyntax)
		return
	}
	var buf [64]byte
	if len(x.Args) == 2 {
		s, ok := x.lookupSet(x.Args[1])
		if !ok {
			return
		}
		if s == nil {
			x.W.Null()
			return
		}
		x.W.Bulk(s.AppendAt(buf[:0], rand.IntN(s.Len())))
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
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	if s == nil || l == 0 {
		x.W.Array(0)
		return
	}
	size := s.Len()
	switch {
	case l < 0:
		if !setRandReplyFits(s, -l) {
			x.Error(ErrReplyTooLarge)
			return
		}
		x.W.Array(int(-l))
		for range -l {
			x.W.Bulk(s.AppendAt(buf[:0], rand.IntN(size)))
		}
	case l >= int64(size):
		x.W.Array(size)
		for i := range size {
			x.W.Bulk(s.AppendAt(buf[:0], i))
		}
	default:
		// A partial Fisher-Yates shuffle of the positions picks l
		// distinct members.
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		x.W.Array(int(l))
		for i := range int(l) {
			j := i + rand.IntN(size-i)
			idx[i], idx[j] = idx[j], idx[i]
			x.W.Bulk(s.AppendAt(buf[:0], idx[i]))
		}
	}
}

// setOpKind is which of SINTER, SUNION, SDIFF.
type setOpKind int

const (
	setInter setOpKind = iota
	setUnion
	setDiff
)

// setSources looks up keys as sets (nil for a missing key). ok is false,
// with WRONGTYPE replied, if any holds another type: Redis checks every
// key before it computes anything.
func setSources(x *Ctx, keys [][]byte) (sets []*keyspace.Set, ok bool) {
	sets = make([]*keyspace.Set, len(keys))
	for i, k := range keys {
		if sets[i], ok = x.lookupSet(k); !ok {
			return nil, false
		}
	}
	return sets, true
}

// setCompute builds the result of op over sets. limit > 0 stops an
// intersection at that many members (SINTERCARD).
func setCompute(x *Ctx, op setOpKind, sets []*keyspace.Set, limit int) *keyspace.Set {
	out := keyspace.NewSet()
	max := x.setMaxInts()
	var buf [64]byte
	switch op {
	case setInter:
		if slices.Contains(sets, nil) {
			return out
		}
		// The smallest set first, as Redis does: every candidate comes
		// from it.
		order := slices.Clone(sets)
		slices.SortStableFunc(order, func(a, b *keyspace.Set) int { return a.Len() - b.Len() })
		first := order[0]
	members:
		for i := range first.Len() {
			m := first.AppendAt(buf[:0], i)
			for _, o := range order[1:] {
				if !o.Has(m) {
					continue members
				}
			}
			out.Add(m, max)
			if limit > 0 && out.Len() >= limit {
				break
			}
		}
	case setUnion:
		for _, s := range sets {
			if s == nil {
				continue
			}
			for i := range s.Len() {
				out.Add(s.AppendAt(buf[:0], i), max)
			}
		}
	case setDiff:
		first := sets[0]
		if first == nil {
			return out
		}
	diff:
		for i := range first.Len() {
			m := first.AppendAt(buf[:0], i)
			for _, o := range sets[1:] {
				if o != nil && o.Has(m) {
					continue diff
				}
			}
			out.Add(m, max)
		}
	}
	return out
}

// setOpGeneric runs op over keys and replies the result as a set, or
// stores it under dst and replies its size (a result that is empty
// deletes dst).
func setOpGeneric(x *Ctx, op setOpKind, keys [][]byte, dst []byte) {
	sets, ok := setSources(x, keys)
	if !ok {
		return
	}
	out := setCompute(x, op, sets, 0)
	if dst == nil {
		writeMembers(x, out)
		return
	}
	if out.Len() == 0 {
		x.Remove(dst)
		x.W.Int(0)
		return
	}
	x.SetObject(dst, out, 0)
	x.W.Int(int64(out.Len()))
}

func sinter(x *Ctx)      { setOpGeneric(x, setInter, x.Args[1:], nil) }
func sunion(x *Ctx)      { setOpGeneric(x, setUnion, x.Args[1:], nil) }
func sdiff(x *Ctx)       { setOpGeneric(x, setDiff, x.Args[1:], nil) }
func sinterstore(x *Ctx) { setOpGeneric(x, setInter, x.Args[2:], x.Args[1]) }
func sunionstore(x *Ctx) { setOpGeneric(x, setUnion, x.Args[2:], x.Args[1]) }
func sdiffstore(x *Ctx)  { setOpGeneric(x, setDiff, x.Args[2:], x.Args[1]) }

// Redis's errors of SINTERCARD's arguments.
const (
	errNumkeysPositive = "ERR numkeys should be greater than 0"
	errNumkeysTooMany  = "ERR Number of keys can't be greater than number of args"
	errLimitNegative   = "ERR LIMIT can't be negative"
)

// sintercard is SINTERCARD numkeys key [key ...] [LIMIT limit].
func sintercard(x *Ctx) {
	numkeys, ok := resp.ParseInt(x.Args[1])
	if !ok || numkeys < 1 {
		x.Error(errNumkeysPositive)
		return
	}
	if numkeys > int64(len(x.Args)-2) {
		x.Error(errNumkeysTooMany)
		return
	}
	var limit int64
	for j := 2 + int(numkeys); j < len(x.Args); j++ {
		if optIs(x.Args[j], "limit") && j+1 < len(x.Args) {
			j++
			if limit, ok = resp.ParseInt(x.Args[j]); !ok || limit < 0 {
				x.Error(errLimitNegative)
				return
			}
			continue
		}
		x.Error(ErrSyntax)
		return
	}
	sets, ok := setSources(x, x.Args[2:2+numkeys])
	if !ok {
		return
	}
	out := setCompute(x, setInter, sets, int(min(limit, 1<<31)))
	x.W.Int(int64(out.Len()))
}

// sscan is SSCAN key cursor [MATCH pattern] [COUNT count]: an intset, or
// a set of at most COUNT members, comes whole with cursor 0, as Redis
// replies; a larger one in pages (elemScan.pick).
func sscan(x *Ctx) {
	if !elemScanCursor(x) {
		return
	}
	s, ok := x.lookupSet(x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		// Redis answers a missing key before it reads the options.
		emptyElemScan(x)
		return
	}
	o, ok := parseElemScan(x)
	if !ok {
		return
	}
	cursor, _ := parseCursor(x.Args[2])
	var buf []byte
	idx, next := o.pick(s.Len(), s.IsIntset(), cursor, func(i int) []byte {
		buf = s.AppendAt(buf[:0], i)
		return buf
	})
	writeElemScanHead(x, next, len(idx))
	for _, i := range idx {
		buf = s.AppendAt(buf[:0], i)
		x.W.Bulk(buf)
	}
}
