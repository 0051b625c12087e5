package cell

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

// Sorted-set commands. Each handler follows Redis 7.0's t_zset.c in the
// order of its checks (options, then scores or ranges, then WRONGTYPE, then
// the work), because that order decides which error a client sees for a
// bad command on a bad key. A set whose last member goes is deleted at
// once; in-place changes keep the TTL and go through touched() only when
// something changed, which is when Redis signals the key to WATCH.
//
// Replies are written straight from zsetlite's walks: a Visitor's member
// aliases the set's storage and is copied only into the reply buffer, so a
// range reply allocates nothing per member. Scores print as Redis 7.0's
// addReplyDouble does (resp.Writer.Double: %.17g, a bulk string in RESP2
// and a double in RESP3). WITHSCORES pairs are flat in RESP2 and one
// two-element array per pair in RESP3.

func init() {
	const wr, ro = FlagWrite, FlagReadonly
	const fast = FlagFast
	z := func(name string, arity int, flags Flag, ks KeyFlag, h Handler, summary, since, complexity string) *Command {
		return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: 1, LastKey: 1, Handler: h,
			ACL:      ACLSortedSet,
			KeySpecs: []KeySpec{{Flags: ks, BeginIndex: 1, KeyStep: 1}},
			Doc:      &CommandDoc{summary, since, "sorted-set", complexity}}
	}
	const (
		roAccess = KeyRO | KeyAccess
		logN     = "O(log(N)) with N being the number of elements in the sorted set."
		rngM     = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."
		rngMc    = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."
		remM     = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."
		popM     = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."
	)
	rangestore := z("zrangestore", -5, wr|FlagDenyOOM, 0, zrangestore,
		"Store a range of members from sorted set into another key", "6.2.0",
		"O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
	rangestore.LastKey = 2
	rangestore.KeySpecs = []KeySpec{
		{Flags: KeyOW | KeyUpdate, BeginIndex: 1, KeyStep: 1},
		{Flags: roAccess, BeginIndex: 2, KeyStep: 1},
	}
	randmember := z("zrandmember", -2, ro, roAccess, zrandmember,
		"Get one or multiple random elements from a sorted set", "6.2.0", "O(N) where N is the number of elements returned")
	randmember.Tips = []string{"nondeterministic_output"}
	zscanCmd := z("zscan", -3, ro, roAccess, zscan, "Incrementally iterate sorted sets elements and associated scores", "2.8.0",
		"O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
	zscanCmd.Tips = []string{"nondeterministic_output"}
	register(
		z("zadd", -4, wr|FlagDenyOOM|fast, KeyRW|KeyUpdate, zadd,
			"Add one or more members to a sorted set, or update its score if it already exists", "1.2.0",
			"O(log(N)) for each item added, where N is the number of elements in the sorted set."),
		z("zincrby", 4, wr|FlagDenyOOM|fast, KeyRW|KeyAccess|KeyUpdate, zincrby,
			"Increment the score of a member in a sorted set", "1.2.0",
			"O(log(N)) where N is the number of elements in the sorted set."),
		z("zrem", -3, wr|fast, KeyRW|KeyDelete, zrem,
			"Remove one or more members from a sorted set", "1.2.0",
			"O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed."),
		z("zcard", 2, ro|fast, KeyRO, zcard, "Get the number of members in a sorted set", "1.2.0", "O(1)"),
		z("zcount", 4, ro|fast, roAccess, zcount,
			"Count the members in a sorted set with scores within the given values", "2.0.0", logN),
		z("zlexcount", 4, ro|fast, roAccess, zlexcount,
			"Count the number of members in a sorted set between a given lexicographical range", "2.8.9", logN),
		z("zscore", 3, ro|fast, roAccess, zscore, "Get the score associated with the given member in a sorted set", "1.2.0", "O(1)"),
		z("zmscore", -3, ro|fast, roAccess, zmscore, "Get the score associated with the given members in a sorted set", "6.2.0",
			"O(N) where N is the number of members being requested."),
		z("zrank", 3, ro|fast, roAccess, zrank, "Determine the index of a member in a sorted set", "2.0.0", "O(log(N))"),
		z("zrevrank", 3, ro|fast, roAccess, zrevrank,
			"Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", "O(log(N))"),
		z("zrange", -4, ro, roAccess, zrange, "Return a range of members in a sorted set", "1.2.0", rngM),
		z("zrangebyscore", -4, ro, roAccess, zrangebyscore, "Return a range of members in a sorted set, by score", "1.0.5", rngMc),
		z("zrevrangebyscore", -4, ro, roAccess, zrevrangebyscore,
			"Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", rngMc),
		z("zrevrange", -4, ro, roAccess, zrevrange,
			"Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", rngM),
		z("zrangebylex", -4, ro, roAccess, zrangebylex,
			"Return a range of members in a sorted set, by lexicographical range", "2.8.9", rngMc),
		z("zrevrangebylex", -4, ro, roAccess, zrevrangebylex,
			"Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", rngMc),
		rangestore,
		z("zremrangebyscore", 4, wr, KeyRW|KeyDelete, zremrangebyscore,
			"Remove all members in a sorted set within the given scores", "1.2.0", remM),
		z("zremrangebyrank", 4, wr, KeyRW|KeyDelete, zremrangebyrank,
			"Remove all members in a sorted set within the given indexes", "2.0.0", remM),
		z("zremrangebylex", 4, wr, KeyRW|KeyDelete, zremrangebylex,
			"Remove all members in a sorted set between the given lexicographical range", "2.8.9", remM),
		z("zpopmin", -2, wr|fast, KeyRW|KeyAccess|KeyDelete, zpopmin,
			"Remove and return members with the lowest scores in a sorted set", "5.0.0", popM),
		z("zpopmax", -2, wr|fast, KeyRW|KeyAccess|KeyDelete, zpopmax,
			"Remove and return members with the highest scores in a sorted set", "5.0.0", popM),
		randmember,
		zscanCmd,
		&Command{Name: "zmpop", Arity: -4, Flags: FlagWrite | FlagMovableKeys, Keys: numkeysKeys(1, false), Handler: zmpop,
			ACL:      ACLSortedSet,
			KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, NumStep: 1}},
			Doc: &CommandDoc{"Remove and return members with scores in a sorted set", "7.0.0", "sorted-set",
				"O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped."}},
		setOp("zunionstore", zunionstore, true, "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
			"O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."),
		setOp("zinterstore", zinterstore, true, "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
			"O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."),
		setOp("zdiffstore", zdiffstore, true, "Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0",
			"O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."),
		setOp("zunion", zunion, false, "Add multiple sorted sets", "6.2.0",
			"O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."),
		setOp("zinter", zinter, false, "Intersect multiple sorted sets", "6.2.0",
			"O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."),
		setOp("zdiff", zdiff, false, "Subtract multiple sorted sets", "6.2.0",
			"O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."),
		setOp("zintercard", zintercard, false, "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0",
			"O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets."),
	)
}

// setOp declares a set operation: numkeys sources (movable keys), after a
// destination for the store forms.
func setOp(name string, h Handler, store bool, summary, since, complexity string) *Command {
	c := &Command{Name: name, Arity: -3, Flags: FlagReadonly | FlagMovableKeys,
		Keys: numkeysKeys(1, false), Handler: h, ACL: ACLSortedSet,
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, BeginIndex: 1, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, NumStep: 1}},
		Doc:      &CommandDoc{summary, since, "sorted-set", complexity}}
	if store {
		c.Arity, c.Flags = -4, FlagWrite|FlagDenyOOM|FlagMovableKeys
		c.FirstKey, c.LastKey, c.Keys = 1, 1, numkeysKeys(2, true)
		c.KeySpecs = []KeySpec{
			{Flags: KeyOW | KeyUpdate, BeginIndex: 1, KeyStep: 1},
			{Flags: KeyRO | KeyAccess, BeginIndex: 2, KeyNum: true, KeyNumIdx: 0, FirstKey: 1, NumStep: 1},
		}
	}
	return c
}

// lookupZSetW is lookupZSet for a command that may change the set in
// place: the members it changes are recorded for the effect log
// (zset_persist.go).
func (x *Ctx) lookupZSetW(key []byte) (z *keyspace.ZSet, ok bool) {
	z, ok = x.lookupZSet(key)
	if z != nil {
		x.Recording(z)
	}
	return z, ok
}

// zaddOpts are ZADD's option words.
type zaddOpts struct {
	flags zsetlite.AddFlags
	ch    bool
}

// zadd is ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...].
func zadd(x *Ctx) { zaddGeneric(x, 0) }

// zincrby is ZINCRBY key increment member: ZADD INCR with its own name, as
// in Redis (which is why "ZINCRBY k nx m" is a syntax error: option words
// are parsed there too).
func zincrby(x *Ctx) { zaddGeneric(x, zsetlite.AddIncr) }

// zaddGeneric runs ZADD's checks in Redis's order (spec 2.1): the pair
// count, NX with XX, GT/LT with NX or each other, INCR with several pairs,
// every score, then WRONGTYPE; nothing is written before all have passed.
func zaddGeneric(x *Ctx, flags zsetlite.AddFlags) {
	o := zaddOpts{flags: flags}
	i := 2
	for ; i < len(x.Args); i++ {
		a := x.Args[i]
		if len(a) == 0 || !isLetter(a[0]) {
			break // every option starts with a letter; a score does not
		}
		switch {
		case optIs(a, "nx"):
			o.flags |= zsetlite.AddNX
		case optIs(a, "xx"):
			o.flags |= zsetlite.AddXX
		case optIs(a, "ch"):
			o.ch = true
		case optIs(a, "incr"):
			o.flags |= zsetlite.AddIncr
		case optIs(a, "gt"):
			o.flags |= zsetlite.AddGT
		case optIs(a, "lt"):
			o.flags |= zsetlite.AddLT
		default:
			goto parsed
		}
	}
parsed:
	pairs := x.Args[i:]
	if len(pairs) == 0 || len(pairs)%2 != 0 {
		x.Error(ErrSyntax)
		return
	}
	f := o.flags
	nx, xx, gt, lt := f&zsetlite.AddNX != 0, f&zsetlite.AddXX != 0, f&zsetlite.AddGT != 0, f&zsetlite.AddLT != 0
	incr := f&zsetlite.AddIncr != 0
	if nx && xx {
		x.Error(ErrZaddXXNX)
		return
	}
	if gt && nx || lt && nx || gt && lt {
		x.Error(ErrZaddGTLTNX)
		return
	}
	if incr && len(pairs) > 2 {
		x.Error(ErrZaddIncrPair)
		return
	}
	// Scores first, all of them: a bad one changes nothing. A small stack
	// buffer covers the usual one-pair ZADD without allocating.
	var buf [8]float64
	scores := buf[:0]
	for j := 0; j < len(pairs); j += 2 {
		s, ok := resp.ParseFloat(pairs[j])
		if !ok {
			x.Error(ErrNotFloat)
			return
		}
		scores = append(scores, s)
	}
	key := x.Args[1]
	z, ok := x.lookupZSetW(key)
	if !ok {
		return
	}
	created := false
	if z == nil {
		if xx {
			zaddNothing(x, incr)
			return
		}
		z, created = keyspace.NewZSet(x.zsetConfig()), true
	} else {
		z.SetConfig(x.zsetConfig())
	}
	var added, updated, processed int64
	var score float64
	for j, s := range scores {
		res, sc := z.Add(pairs[2*j+1], s, f)
		switch res {
		case zsetlite.Added:
			added++
			processed++
		case zsetlite.Updated:
			updated++
			processed++
		case zsetlite.Unchanged:
			processed++
		case zsetlite.NotANumber:
			// Only INCR gets here, with its single pair: nothing changed.
			x.Error(ErrZsetNaN)
			return
		}
		score = sc
	}
	switch {
	case created && z.Len() > 0: // always, as no flag can refuse a new member of a new key but XX
		x.SetObject(key, z, 0)
	case !created && (added > 0 || updated > 0):
		x.Touched(key)
	}
	switch {
	case incr && processed > 0:
		x.W.Double(score)
	case incr:
		x.W.Null()
	case o.ch:
		x.W.Int(added + updated)
	default:
		x.W.Int(added)
	}
}

// zaddNothing is ZADD's reply when XX finds no key.
func zaddNothing(x *Ctx, incr bool) {
	if incr {
		x.W.Null()
		return
	}
	x.W.Int(0)
}

// zrem is ZREM key member [member ...]: how many were removed.
func zrem(x *Ctx) {
	key := x.Args[1]
	z, ok := x.lookupZSetW(key)
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	n := 0
	for _, m := range x.Args[2:] {
		if z.Delete(m) {
			n++
			if z.Len() == 0 {
				break
			}
		}
	}
	x.RemovedFrom(key, z.Len(), n > 0)
	x.W.Int(int64(n))
}

func zcard(x *Ctx) {
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.Len()))
}

// parseScoreRange parses a score range or replies Redis's error.
func parseScoreRange(x *Ctx, min, max []byte) (zsetlite.ScoreRange, bool) {
	r, ok := resp.ParseScoreRange(min, max)
	if !ok {
		x.Error(ErrMinMaxNotFloat)
	}
	return zsetlite.ScoreRange(r), ok
}

// parseLexRange parses a lex range or replies Redis's error.
func parseLexRange(x *Ctx, min, max []byte) (zsetlite.LexRange, bool) {
	r, ok := resp.ParseLexRange(min, max)
	if !ok {
		x.Error(ErrMinMaxNotLex)
	}
	return zsetlite.LexRange(r), ok
}

// zcount parses its range before it looks at the key.
func zcount(x *Ctx) {
	r, ok := parseScoreRange(x, x.Args[2], x.Args[3])
	if !ok {
		return
	}
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.CountByScore(r)))
}

func zlexcount(x *Ctx) {
	r, ok := parseLexRange(x, x.Args[2], x.Args[3])
	if !ok {
		return
	}
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	x.W.Int(int64(z.CountByLex(r)))
}

func zscore(x *Ctx) {
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z != nil {
		if s, found := z.Score(x.Args[2]); found {
			x.W.Double(s)
			return
		}
	}
	x.W.Null()
}

// zmscore replies a score or null per member; a missing key is an empty
// set.
func zmscore(x *Ctx) {
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	members := x.Args[2:]
	x.W.Array(len(members))
	for _, m := range members {
		if z != nil {
			if s, found := z.Score(m); found {
				x.W.Double(s)
				continue
			}
		}
		x.W.Null()
	}
}

func zrank(x *Ctx)    { zrankGeneric(x, false) }
func zrevrank(x *Ctx) { zrankGeneric(x, true) }

// zrankGeneric is ZRANK and ZREVRANK of Redis 7.0 (WITHSCORE came in 7.2):
// the 0-based rank, or null for a missing member or key.
func zrankGeneric(x *Ctx, reverse bool) {
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z != nil {
		if r, found := z.Rank(x.Args[2], reverse); found {
			x.W.Int(int64(r))
			return
		}
	}
	x.W.Null()
}

// rangeKind is how a ZRANGE-family command reads its min and max.
type rangeKind uint8

const (
	rangeAuto rangeKind = iota // ZRANGE: chosen by BYSCORE / BYLEX, else rank
	rangeRank
	rangeScore
	rangeLex
)

// rangeDir is the direction of a ZRANGE-family command.
type rangeDir uint8

const (
	dirAuto rangeDir = iota // ZRANGE: REV may reverse it
	dirForward
	dirReverse
)

func zrange(x *Ctx)           { zrangeGeneric(x, 1, false, rangeAuto, dirAuto) }
func zrangebyscore(x *Ctx)    { zrangeGeneric(x, 1, false, rangeScore, dirForward) }
func zrevrangebyscore(x *Ctx) { zrangeGeneric(x, 1, false, rangeScore, dirReverse) }
func zrevrange(x *Ctx)        { zrangeGeneric(x, 1, false, rangeRank, dirReverse) }
func zrangebylex(x *Ctx)      { zrangeGeneric(x, 1, false, rangeLex, dirForward) }
func zrevrangebylex(x *Ctx)   { zrangeGeneric(x, 1, false, rangeLex, dirReverse) }
func zrangestore(x *Ctx)      { zrangeGeneric(x, 2, true, rangeAuto, dirAuto) }

// zrangeSpec is one parsed ZRANGE-family request.
type zrangeSpec struct {
	kind          rangeKind
	reverse       bool
	withScores    bool
	start, stop   int64 // rank form
	score         zsetlite.ScoreRange
	lex           zsetlite.LexRange
	offset, limit int64 // LIMIT; limit -1 (the default) means all
}

// zrangeGeneric serves every ZRANGE form as Redis 7.0's
// zrangeGenericCommand does: option words (each of REV, BYSCORE and BYLEX
// only where the command leaves it open, once), then the conflicts of
// LIMIT and WITHSCORES with the range kind, then the range itself (min and
// max swapped under REV for score and lex), all before the key is looked
// at. src is the index of the source key; store is ZRANGESTORE, whose
// destination is args[1].
func zrangeGeneric(x *Ctx, src int, store bool, kind rangeKind, dir rangeDir) {
	sp := zrangeSpec{limit: -1}
	args := x.Args
	for j := src + 3; j < len(args); j++ {
		a := args[j]
		switch {
		case !store && optIs(a, "withscores"):
			sp.withScores = true
		case optIs(a, "limit") && len(args)-j-1 >= 2:
			var ok1, ok2 bool
			sp.offset, ok1 = resp.ParseInt(args[j+1])
			if ok1 {
				sp.limit, ok2 = resp.ParseInt(args[j+2])
			}
			if !ok1 || !ok2 {
				x.Error(ErrNotInteger)
				return
			}
			j += 2
		case dir == dirAuto && optIs(a, "rev"):
			dir = dirReverse
		case kind == rangeAuto && optIs(a, "bylex"):
			kind = rangeLex
		case kind == rangeAuto && optIs(a, "byscore"):
			kind = rangeScore
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if kind == rangeAuto {
		kind = rangeRank
	}
	sp.kind, sp.reverse = kind, dir == dirReverse
	if sp.limit != -1 && kind == rangeRank {
		x.Error(ErrLimitNeedsBy)
		return
	}
	if sp.withScores && kind == rangeLex {
		x.Error(ErrWithScoresLex)
		return
	}
	lo, hi := args[src+1], args[src+2]
	if sp.reverse && kind != rangeRank {
		lo, hi = hi, lo
	}
	var ok bool
	switch kind {
	case rangeRank:
		var ok1, ok2 bool
		sp.start, ok1 = resp.ParseInt(lo)
		if ok1 {
			sp.stop, ok2 = resp.ParseInt(hi)
		}
		if !ok1 || !ok2 {
			x.Error(ErrNotInteger)
			return
		}
	case rangeScore:
		if sp.score, ok = parseScoreRange(x, lo, hi); !ok {
			return
		}
	case rangeLex:
		if sp.lex, ok = parseLexRange(x, lo, hi); !ok {
			return
		}
	}
	z, ok := x.lookupZSet(args[src])
	if !ok {
		return
	}
	if store {
		zrangeStore(x, args[1], z, &sp)
		return
	}
	if z == nil {
		x.W.Array(0)
		return
	}
	n := sp.count(z)
	resp3 := x.W.Proto() == 3
	if sp.withScores && !resp3 {
		x.W.Array(2 * n)
	} else {
		x.W.Array(n)
	}
	if n == 0 {
		return
	}
	w, withScores := x.W, sp.withScores
	sp.walk(z, func(member []byte, score float64) bool {
		if withScores && resp3 {
			w.Array(2)
		}
		w.Bulk(member)
		if withScores {
			w.Double(score)
		}
		return true
	})
}

// count is how many members the request selects from z, known before the
// walk because a RESP array states its length first.
func (sp *zrangeSpec) count(z *keyspace.ZSet) int {
	switch sp.kind {
	case rangeRank:
		lo, hi := zsetlite.RankBounds(int(sp.start), int(sp.stop), z.Len())
		return hi - lo
	case rangeScore:
		return limitCount(z.CountByScore(sp.score), sp.offset, sp.limit)
	default:
		return limitCount(z.CountByLex(sp.lex), sp.offset, sp.limit)
	}
}

// walk visits the selected members in reply order.
func (sp *zrangeSpec) walk(z *keyspace.ZSet, fn zsetlite.Visitor) {
	switch sp.kind {
	case rangeRank:
		z.Range(int(sp.start), int(sp.stop), sp.reverse, fn)
	case rangeScore:
		z.RangeByScore(sp.score, sp.reverse, int(sp.offset), int(sp.limit), fn)
	default:
		z.RangeByLex(sp.lex, sp.reverse, int(sp.offset), int(sp.limit), fn)
	}
}

// limitCount applies LIMIT offset count to n matches as Redis does: a
// negative offset selects nothing, a negative count all the rest.
func limitCount(n int, offset, count int64) int {
	if offset < 0 || offset >= int64(n) {
		return 0
	}
	rest := int64(n) - offset
	if count < 0 || count > rest {
		return int(rest)
	}
	return int(count)
}

// zrangeStore is ZRANGESTORE's end: the selection becomes a new set under
// dst, replacing whatever dst held (type and TTL included); an empty
// selection deletes dst. The reply is the new set's size.
func zrangeStore(x *Ctx, dst []byte, z *keyspace.ZSet, sp *zrangeSpec) {
	var out *keyspace.ZSet
	n := 0
	if z != nil {
		n = sp.count(z)
	}
	if n > 0 {
		out = keyspace.NewZSet(x.zsetConfig())
		if sp.kind == rangeRank {
			// Redis sizes the result when it knows its length (a rank
			// range) and starts a score or lex range as a listpack.
			out.Reserve(n, 0)
		}
		// Members arrive in order, so each insert lands at the tail; the
		// new set converts exactly where Redis's would.
		sp.walk(z, func(member []byte, score float64) bool {
			out.Put(member, score)
			return true
		})
	}
	if out == nil {
		x.Remove(dst)
		x.W.Int(0)
		return
	}
	x.SetObject(dst, out, 0)
	x.W.Int(int64(out.Len()))
}

func zremrangebyscore(x *Ctx) {
	r, ok := parseScoreRange(x, x.Args[2], x.Args[3])
	if !ok {
		return
	}
	zremrange(x, func(z *keyspace.ZSet) int { return z.DeleteRangeByScore(r) })
}

func zremrangebylex(x *Ctx) {
	r, ok := parseLexRange(x, x.Args[2], x.Args[3])
	if !ok {
		return
	}
	zremrange(x, func(z *keyspace.ZSet) int { return z.DeleteRangeByLex(r) })
}

func zremrangebyrank(x *Ctx) {
	start, ok1 := resp.ParseInt(x.Args[2])
	stop, ok2 := resp.ParseInt(x.Args[3])
	if !ok1 || !ok2 {
		x.Error(ErrNotInteger)
		return
	}
	zremrange(x, func(z *keyspace.ZSet) int { return z.DeleteRangeByRank(int(start), int(stop)) })
}

// zremrange is the common end of ZREMRANGEBY*: the range is already
// parsed; del removes it from the set and says how many went.
func zremrange(x *Ctx, del func(z *keyspace.ZSet) int) {
	key := x.Args[1]
	z, ok := x.lookupZSetW(key)
	if !ok {
		return
	}
	if z == nil {
		x.W.Int(0)
		return
	}
	n := del(z)
	x.RemovedFrom(key, z.Len(), n > 0)
	x.W.Int(int64(n))
}

func zpopmin(x *Ctx) { zpop(x, false) }
func zpopmax(x *Ctx) { zpop(x, true) }

// zpop is ZPOPMIN / ZPOPMAX key [count]. A count that is not a
// non-negative integer is "out of range, must be positive", checked before
// the key; a count of 0 is checked after it (WRONGTYPE wins). The reply is
// a flat member/score array, except with a count in RESP3, where each pair
// is an array of its own (probed on 7.0.15).
func zpop(x *Ctx, max bool) {
	if len(x.Args) > 3 {
		x.Error(ErrSyntax)
		return
	}
	count := int64(1)
	withCount := len(x.Args) == 3
	if withCount {
		var ok bool
		if count, ok = resp.ParseInt(x.Args[2]); !ok || count < 0 {
			x.Error(ErrMustBePositive)
			return
		}
	}
	key := x.Args[1]
	z, ok := x.lookupZSetW(key)
	if !ok {
		return
	}
	if z == nil || count == 0 {
		x.W.Array(0)
		return
	}
	n := int(min(count, int64(z.Len())))
	nested := withCount && x.W.Proto() == 3
	if nested {
		x.W.Array(n)
	} else {
		x.W.Array(2 * n)
	}
	popPairs(x, key, z, max, n, nested)
}

// popPairs pops n members of key's set z, lowest or highest first, and
// writes each member and score, as a pair array of its own when nested.
func popPairs(x *Ctx, key []byte, z *keyspace.ZSet, max bool, n int, nested bool) {
	w := x.W
	emit := func(member []byte, score float64) bool {
		if nested {
			w.Array(2)
		}
		w.Bulk(member)
		w.Double(score)
		return true
	}
	if max {
		z.PopMax(n, emit)
	} else {
		z.PopMin(n, emit)
	}
	x.RemovedFrom(key, z.Len(), n > 0)
}

// zmpop is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] (7.0): it
// pops from the first of the keys that holds a set, stopping at the first
// key of another type with WRONGTYPE, and replies [key, [[member, score],
// ...]] in both protocols, or a null array when every key is missing.
func zmpop(x *Ctx) {
	keys, max, count, ok := parseMpop(x, "min", "max")
	if !ok {
		return
	}
	if key, z, ok := firstZSet(x, keys); !ok {
		return
	} else if key != nil {
		zmpopFrom(x, key, z, max, count)
		return
	}
	x.W.NullArray()
}

// zmpopFrom pops up to count members of key's set z and replies [key,
// [[member, score], ...]]: ZMPOP's work, and a BZMPOP's.
func zmpopFrom(x *Ctx, key []byte, z *keyspace.ZSet, max bool, count int64) {
	n := int(min(count, int64(z.Len())))
	x.W.Array(2)
	x.W.Bulk(key)
	x.W.Array(n)
	popPairs(x, key, z, max, n, true)
}

// zscan is ZSCAN key cursor [MATCH pattern] [COUNT count]. A listpack
// set, or one of at most COUNT members, comes whole with cursor 0, as
// Redis replies (so small sets reply byte for byte alike); a larger one in
// pages (elemScan.pick). The cursor is parsed first, then the key (a
// missing one replies an empty scan before any option is read), then the
// options.
//
// Scores are text, never RESP3 doubles, in the form each encoding of
// Redis holds them: a listpack stores an integral score as an integer,
// anything else as %.17g; a skiplist prints %.17g, -0 included.
func zscan(x *Ctx) {
	if !elemScanCursor(x) {
		return
	}
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z == nil {
		emptyElemScan(x)
		return
	}
	o, ok := parseElemScan(x)
	if !ok {
		return
	}
	cursor, _ := parseCursor(x.Args[2])
	// Members alias the set's storage only during the visit: one copy.
	var arena []byte
	ends := make([]int, 0, z.Len())
	scores := make([]float64, 0, z.Len())
	z.Range(0, -1, false, func(member []byte, score float64) bool {
		arena = append(arena, member...)
		ends = append(ends, len(arena))
		scores = append(scores, score)
		return true
	})
	packed := z.Encoding() == zsetlite.EncodingListpack
	member := func(i int) []byte {
		if i == 0 {
			return arena[:ends[0]]
		}
		return arena[ends[i-1]:ends[i]]
	}
	idx, next := o.pick(len(ends), packed, cursor, member)
	writeElemScanHead(x, next, 2*len(idx))
	var buf [32]byte
	for _, i := range idx {
		x.W.Bulk(member(i))
		x.W.Bulk(appendStoredScore(buf[:0], scores[i], packed))
	}
}

// appendStoredScore appends a score as Redis keeps it as text: a listpack
// holds d2string's text, an integer for an integral score within
// ±LLONG_MAX/2 (its double2ll) and %.17g otherwise; a skiplist is printed
// with %.17g.
func appendStoredScore(dst []byte, score float64, packed bool) []byte {
	const lim = float64(math.MaxInt64 / 2)
	if packed && score >= -lim && score <= lim && score == math.Trunc(score) {
		return strconv.AppendInt(dst, int64(score), 10)
	}
	return resp.AppendDouble(dst, score)
}

// maxRandReply (cmd_hash.go) bounds ZRANDMEMBER's reply with a negative
// count as it bounds HRANDFIELD's.

// zrandReplyFits reports whether n picks from z, each at most the longest
// member plus a score and framing, stay under maxRandReply.
func zrandReplyFits(z *keyspace.ZSet, n int64) bool {
	longest := 0
	z.Range(0, -1, false, func(member []byte, _ float64) bool {
		longest = max(longest, len(member))
		return true
	})
	per := int64(longest) + 64 // a member's and a score's headers, the score, a pair header
	return n <= maxRandReply/per
}

// zrandmember is ZRANDMEMBER key [count [WITHSCORES]], with HRANDFIELD's
// rules: without count one random member or null; a count >= 0 picks
// distinct members (the whole set, highest score first, when count >= its
// size); a
// negative count picks |count| members independently. A missing key with a
// count replies an empty array.
func zrandmember(x *Ctx) {
	if len(x.Args) == 2 {
		z, ok := x.lookupZSet(x.Args[1])
		if !ok {
			return
		}
		if z == nil {
			x.W.Null()
			return
		}
		w := x.W
		z.RandomMembers(globalRand{}, 1, func(member []byte, _ float64) bool {
			w.Bulk(member)
			return false
		})
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
	withScores := false
	if len(x.Args) > 4 || (len(x.Args) == 4 && !optIs(x.Args[3], "withscores")) {
		x.Error(ErrSyntax)
		return
	}
	if len(x.Args) == 4 {
		withScores = true
		if l < -(1<<63-1)/2 || l > (1<<63-1)/2 {
			x.Error(ErrOutOfRange)
			return
		}
	}
	z, ok := x.lookupZSet(x.Args[1])
	if !ok {
		return
	}
	if z == nil || l == 0 {
		x.W.Array(0)
		return
	}
	var n int
	if l < 0 {
		if !zrandReplyFits(z, -l) {
			x.Error(ErrReplyTooLarge)
			return
		}
		n = int(-l)
	} else {
		n = int(min(l, int64(z.Len())))
	}
	resp3 := x.W.Proto() == 3
	if withScores && !resp3 {
		x.W.Array(2 * n)
	} else {
		x.W.Array(n)
	}
	w := x.W
	emit := func(member []byte, score float64) bool {
		if withScores && resp3 {
			w.Array(2)
		}
		w.Bulk(member)
		if withScores {
			w.Double(score)
		}
		return true
	}
	if l >= int64(z.Len()) {
		// The whole set, as Redis 7.0 iterates it here: from the highest
		// score down (probed with both encodings).
		z.Range(0, -1, true, emit)
		return
	}
	z.RandomMembers(globalRand{}, int(l), emit)
}

// Set operations: ZUNION, ZINTER, ZDIFF, their *STORE forms, ZINTERCARD.

// zsetOp is which set operation a command runs.
type zsetOp uint8

const (
	opUnion zsetOp = iota
	opInter
	opDiff
)

// aggregate is how ZUNION and ZINTER combine a member's scores.
type aggregate uint8

const (
	aggrSum aggregate = iota
	aggrMin
	aggrMax
)

// combine is Redis's zunionInterAggregate: a sum that comes out NaN
// (+inf plus -inf) is 0.
func (a aggregate) combine(target, v float64) float64 {
	switch a {
	case aggrMin:
		if v < target {
			return v
		}
		return target
	case aggrMax:
		if v > target {
			return v
		}
		return target
	}
	s := target + v
	if s != s {
		return 0
	}
	return s
}

// numkeysKeys returns the key positions of a command whose numkeys is at
// index at and whose keys follow it, after the destination at 1 when
// withDest. A bad numkeys yields only the destination; the handler then
// fails before touching any other key, so every key it reads is locked.
func numkeysKeys(at int, withDest bool) func(args [][]byte) []int {
	return func(args [][]byte) []int {
		var keys []int
		if withDest {
			keys = append(keys, 1)
		}
		n, ok := resp.ParseInt(args[at])
		if !ok || n < 1 {
			return keys
		}
		for i := at + 1; int64(i-at) <= n && i < len(args); i++ {
			keys = append(keys, i)
		}
		return keys
	}
}

func zunionstore(x *Ctx) { zsetOpGeneric(x, opUnion, 2, true, false) }
func zinterstore(x *Ctx) { zsetOpGeneric(x, opInter, 2, true, false) }
func zdiffstore(x *Ctx)  { zsetOpGeneric(x, opDiff, 2, true, false) }
func zunion(x *Ctx)      { zsetOpGeneric(x, opUnion, 1, false, false) }
func zinter(x *Ctx)      { zsetOpGeneric(x, opInter, 1, false, false) }
func zdiff(x *Ctx)       { zsetOpGeneric(x, opDiff, 1, false, false) }
func zintercard(x *Ctx)  { zsetOpGeneric(x, opInter, 1, false, true) }

// zsetSource is one input of a set operation; a missing key is a nil z,
// an empty set.
type zsetSource struct {
	z      *keyspace.ZSet
	weight float64
}

func (s zsetSource) size() int {
	if s.z == nil {
		return 0
	}
	return s.z.Len()
}

// zsetEntry is one member of a set operation's result.
type zsetEntry struct {
	member string
	score  float64
}

// zsetOpGeneric is Redis 7.0's zunionInterDiffGenericCommand, in its order
// of checks: numkeys (an integer, at least 1, no more than the arguments
// left), the type of every source, then the options: WEIGHTS and AGGREGATE
// (not for the diff or the cardinality), WITHSCORES (replying forms only),
// LIMIT (ZINTERCARD only). Sources are taken smallest first, as Redis sorts
// them. The store forms replace dst with the result, or delete it when the
// result is empty, and reply its size.
func zsetOpGeneric(x *Ctx, op zsetOp, numkeysAt int, store, cardOnly bool) {
	args := x.Args
	setnum, ok := resp.ParseInt(args[numkeysAt])
	if !ok {
		x.Error(ErrNotInteger)
		return
	}
	if setnum < 1 {
		x.Error(errZsetNoInputKey(x.cmd.Name))
		return
	}
	if setnum > int64(len(args)-numkeysAt-1) {
		x.Error(ErrSyntax)
		return
	}
	srcs := make([]zsetSource, setnum)
	j := numkeysAt + 1
	for i := range srcs {
		z, ok := x.lookupZSet(args[j])
		if !ok {
			return
		}
		srcs[i] = zsetSource{z, 1}
		j++
	}
	aggr := aggrSum
	withScores := false
	var limit int64
	for j < len(args) {
		remaining := len(args) - j
		switch {
		case op != opDiff && !cardOnly && remaining >= len(srcs)+1 && optIs(args[j], "weights"):
			j++
			for i := range srcs {
				w, ok := resp.ParseFloat(args[j])
				if !ok {
					x.Error(ErrWeightNotFloat)
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != opDiff && !cardOnly && remaining >= 2 && optIs(args[j], "aggregate"):
			switch a := args[j+1]; {
			case optIs(a, "sum"):
				aggr = aggrSum
			case optIs(a, "min"):
				aggr = aggrMin
			case optIs(a, "max"):
				aggr = aggrMax
			default:
				x.Error(ErrSyntax)
				return
			}
			j += 2
		case !store && !cardOnly && optIs(args[j], "withscores"):
			withScores = true
			j++
		case cardOnly && remaining >= 2 && optIs(args[j], "limit"):
			var ok bool
			if limit, ok = resp.ParseInt(args[j+1]); !ok || limit < 0 {
				x.Error(ErrLimitNegative)
				return
			}
			j += 2
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if op != opDiff {
		slices.SortStableFunc(srcs, func(a, b zsetSource) int { return a.size() - b.size() })
	}
	if cardOnly {
		x.W.Int(int64(interCard(srcs, limit)))
		return
	}
	out := zsetOpResult(op, srcs, aggr)
	// Ascending by score, then member: the order Redis's result skiplist
	// has, and the order in which inserts into a new set are appends.
	slices.SortFunc(out, func(a, b zsetEntry) int {
		if c := cmp.Compare(a.score, b.score); c != 0 {
			return c
		}
		return strings.Compare(a.member, b.member)
	})
	if !store {
		resp3 := x.W.Proto() == 3
		if withScores && !resp3 {
			x.W.Array(2 * len(out))
		} else {
			x.W.Array(len(out))
		}
		for _, e := range out {
			if withScores && resp3 {
				x.W.Array(2)
			}
			x.W.BulkString(e.member)
			if withScores {
				// A skiplist keeps -0, so these replies can show it.
				x.W.Double(e.score)
			}
		}
		return
	}
	dst := args[1]
	if len(out) == 0 {
		x.Remove(dst)
		x.W.Int(0)
		return
	}
	// Redis builds the result as a skiplist and converts it to a listpack
	// if it is small (zsetConvertToListpackIfNeeded): Reserve makes the
	// same choice up front, so a large result keeps a -0 score's sign.
	z := keyspace.NewZSet(x.zsetConfig())
	maxLen := 0
	for _, e := range out {
		maxLen = max(maxLen, len(e.member))
	}
	z.Reserve(len(out), maxLen)
	for _, e := range out {
		z.Put([]byte(e.member), e.score)
	}
	x.SetObject(dst, z, 0)
	x.W.Int(int64(z.Len()))
}

// weighted is a source score times its weight, with NaN (0 times an
// infinity) taken as 0, as Redis does.
func weighted(w, s float64) float64 {
	if v := w * s; v == v {
		return v
	}
	return 0
}

// zsetOpResult computes a union, intersection or difference of srcs
// (already in Redis's order: smallest first, except for the difference).
func zsetOpResult(op zsetOp, srcs []zsetSource, aggr aggregate) []zsetEntry {
	var out []zsetEntry
	switch op {
	case opUnion:
		at := map[string]int{} // member -> index in out
		for _, s := range srcs {
			if s.z == nil {
				continue
			}
			s.z.Range(0, -1, false, func(member []byte, score float64) bool {
				v := weighted(s.weight, score)
				if i, ok := at[string(member)]; ok {
					out[i].score = aggr.combine(out[i].score, v)
					return true
				}
				m := string(member)
				at[m] = len(out)
				out = append(out, zsetEntry{m, v})
				return true
			})
		}
	case opInter:
		if srcs[0].size() == 0 {
			break
		}
		srcs[0].z.Range(0, -1, false, func(member []byte, score float64) bool {
			v := weighted(srcs[0].weight, score)
			for _, s := range srcs[1:] {
				other, found := s.z.Score(member) // sorted by size: none is nil here
				if !found {
					return true
				}
				v = aggr.combine(v, other*s.weight)
			}
			out = append(out, zsetEntry{string(member), v})
			return true
		})
	case opDiff:
		if srcs[0].size() == 0 {
			break
		}
		srcs[0].z.Range(0, -1, false, func(member []byte, score float64) bool {
			for _, s := range srcs[1:] {
				if s.z != nil {
					if _, found := s.z.Score(member); found {
						return true
					}
				}
			}
			out = append(out, zsetEntry{string(member), score})
			return true
		})
	}
	return out
}

// interCard is ZINTERCARD: how many members are in every source, counting
// stopped at limit when it is not 0.
func interCard(srcs []zsetSource, limit int64) int {
	if srcs[0].size() == 0 {
		return 0
	}
	n := 0
	srcs[0].z.Range(0, -1, false, func(member []byte, _ float64) bool {
		for _, s := range srcs[1:] {
			if _, found := s.z.Score(member); !found {
				return true
			}
		}
		n++
		return limit == 0 || int64(n) < limit
	})
	return n
}
