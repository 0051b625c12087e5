package zsetlite

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// Config holds the encoding thresholds, Redis's zset-max-listpack-entries and
// zset-max-listpack-value. The zero Config is valid and means "never packed",
// as setting both to 0 does in Redis; use DefaultConfig for Redis's defaults.
type Config struct {
	// MaxListpackEntries is the most entries a packed set holds; inserting
	// one more converts it (default 128).
	MaxListpackEntries int
	// MaxListpackValue is the longest member, in bytes, a packed set holds;
	// inserting a longer one converts it (default 64).
	MaxListpackValue int
}

// DefaultConfig returns Redis 7.0's defaults: 128 entries, 64-byte members.
func DefaultConfig() Config {
	return Config{MaxListpackEntries: 128, MaxListpackValue: 64}
}

// Encoding names, as OBJECT ENCODING reports them.
const (
	EncodingListpack = "listpack"
	EncodingSkiplist = "skiplist"
)

// Set is a sorted set of distinct binary members, each with a float64 score,
// ordered by score and then by member bytes. The zero Set is not usable; call
// New. A Set is not safe for concurrent use.
type Set struct {
	packed     []byte // the packed encoding, while big == nil
	pn         int32  // entries in packed (at most maxEntries); int32 keeps a Set in 48 bytes
	maxEntries int32
	maxValue   int32
	// selfKeyed holds while every packed entry's member is the decimal text
	// of its score, as in the window pattern (ZADD k now now). Then a
	// member can only be at its own score, and a member past the last
	// entry is new without a scan: ZADD at the tail is O(1).
	selfKeyed bool
	big       *large // the large encoding, once converted
}

// large is the encoding past the thresholds: the B+tree of packed leaves
// for order and rank (and the only copy of every member), the index for
// member -> score.
type large struct {
	tree btree
	// idx is nil while the set is self-keyed (every member is the decimal
	// text of its score, see Set.selfKeyed): a member's score is then its
	// value and the tree alone answers, in O(log n), which saves the
	// index's 12-24 bytes per member on big windows. The first member that
	// breaks the rule builds the index.
	idx *index
}

// SelfKeyed reports whether every member is the canonical decimal text of
// an int64 whose value is its score, as in the window pattern (ZADD k now
// now): the set is then fully described by those integers, in order.
func (s *Set) SelfKeyed() bool {
	if s.big != nil {
		return s.big.idx == nil
	}
	return s.selfKeyed
}

// AppendIntDeltas gives a self-keyed set as its integers, without
// formatting members as text (a checkpoint stores a window that way): it
// appends each member's integer, in order, as a signed varint
// (binary.AppendVarint) of its difference from the one before (the first
// from 0), and reports true. When the set is not SelfKeyed, or a score
// would not come back bit for bit as its member's integer, it returns dst
// as it was and false.
func (s *Set) AppendIntDeltas(dst []byte) ([]byte, bool) {
	if !s.SelfKeyed() {
		return dst, false
	}
	start := len(dst)
	var ok bool
	switch {
	case s.big != nil && s.big.tree.root == nil: // emptied: no root
		ok = true
	case s.big != nil:
		dst, _, ok = s.big.tree.root.appendIntDeltas(dst, 0)
	default:
		dst, _, ok = appendIntDeltas(s.packed, dst, 0)
	}
	if !ok {
		return dst[:start], false
	}
	return dst, true
}

// AddInts adds, for each v of vs, the member that is v's canonical
// decimal text at score v: what Put of each would do, but an empty set
// given vs ascending, few enough to stay packed, is written in one pass,
// its entries end to end, without a member's text to format and parse
// back or a place to search. A checkpointed window (AppendIntDeltas) loads
// that way.
func (s *Set) AddInts(vs []int64) {
	if s.addIntsPacked(vs) {
		return
	}
	var buf [20]byte
	for _, v := range vs {
		s.Put(strconv.AppendInt(buf[:0], v, 10), float64(v))
	}
}

// addIntsPacked is AddInts's one pass; it reports false, having changed
// nothing, when the set is not empty or would not be packed, or when
// the scores do not rise strictly (two integers past 2^53 may share one).
func (s *Set) addIntsPacked(vs []int64) bool {
	const maxDigits = 20 // "-9223372036854775808"
	if s.big != nil || s.pn != 0 || len(vs) > int(s.maxEntries) || s.maxValue < maxDigits {
		return false
	}
	size := 0
	for i, v := range vs {
		if i > 0 && float64(v) <= float64(vs[i-1]) {
			return false
		}
		k, skind, iv := intEntry(v)
		size += entrySize(&k, skind, iv)
	}
	p := make([]byte, size, allocSize(size))
	off := 0
	for _, v := range vs {
		k, skind, iv := intEntry(v)
		n := entrySize(&k, skind, iv)
		putEntry(p[off:off+n], &k, float64(v), skind, iv)
		off += n
	}
	s.packed, s.pn, s.selfKeyed = p, int32(len(vs)), true
	return true
}

// intEntry is what entrySize and putEntry need of v's text at score v: an
// entry that is its score alone (isSelf) needs no more of the member's key
// than the integer.
func intEntry(v int64) (k memberKey, skind byte, iv int64) {
	skind, iv = scoreKind(float64(v))
	if skind != scoreF64 {
		return memberKey{isInt: true, ival: v}, skind, iv
	}
	return intMemberKey(v), skind, iv
}

// appendIntDeltas is AppendIntDeltas over one packed run of entries,
// prev being the integer before its first. It reads only what an integer
// member's entry holds, and steps by entryLen. A score stored as an
// integer is the member's (SelfKeyed); one stored as a float (past 2^47)
// is checked.
//
// It is a checkpoint's inner loop over every window's entries, so it
// writes the varints into room made once (an entry takes 3 bytes at the
// least, its varint 10 at the most) and reads a timestamp's entry (an
// int48 memSelf entry) without the general decode.
func appendIntDeltas(p, dst []byte, prev int64) ([]byte, int64, bool) {
	dst = slices.Grow(dst, (len(p)/3+1)*binary.MaxVarintLen64)
	out := dst[len(dst):cap(dst)]
	w := 0
	const tsLen = 8 // entryLen[scoreI48|memSelf]
	for off := 0; off < len(p); {
		h := p[off]
		var v int64
		switch d := h & 0x3f; {
		case h == scoreI48|memSelf:
			// A constant step: the next entry's load need not wait
			// for this one's header.
			v = int48(p[off+1:])
			off += tsLen
		case d == memSelf:
			sc, _ := readScore(h, p, off+1)
			v = int64(sc)
			off += int(entryLen[h])
		case d < memI8:
			return dst[:len(dst)+w], prev, false
		default:
			var i int
			v, i = readIntMember(d, p, off+1)
			if h&0xc0 == scoreF64 {
				if sc, _ := readScore(h, p, i); math.Float64bits(sc) != math.Float64bits(float64(v)) {
					return dst[:len(dst)+w], prev, false
				}
			}
			off += int(entryLen[h])
		}
		delta := v - prev
		ux := uint64(delta<<1) ^ uint64(delta>>63) // binary.AppendVarint's zigzag
		for ux >= 0x80 {
			out[w] = byte(ux) | 0x80
			ux >>= 7
			w++
		}
		out[w] = byte(ux)
		w++
		prev = v
	}
	return dst[:len(dst)+w], prev, true
}

// selfKeyedPair reports whether member is the canonical decimal text of
// score.
func selfKeyedPair(member []byte, score float64) bool {
	v, ok := parseCanonicalInt(member)
	return ok && float64(v) == score
}

// score returns member's score.
func (b *large) score(member []byte) (float64, bool) {
	_, sc, ok := b.locate(member, false)
	return sc, ok
}

// locate returns member's score, and its rank when withRank (the tree
// finds both in one descent).
func (b *large) locate(member []byte, withRank bool) (int, float64, bool) {
	q := b.probe(member)
	for b.next(&q) {
		if r, sc, ok := b.tree.findRank(&q.p, withRank); ok {
			return r, sc, true
		}
	}
	return 0, 0, false
}

// probe walks the places a member can be at, each a key pred for one tree
// descent that both confirms the place and does the caller's work: each
// index pair with the member's tag names a candidate score, and a
// self-keyed set's member can only be at its own value.
type probe struct {
	p    pred   // the key, at the current candidate's score
	tag  uint32 // the member's tag, when indexed
	i    uint32 // the next slot to look at
	slot int    // the current candidate's slot; -1 when self-keyed
	done bool
}

func (b *large) probe(member []byte) probe {
	v, isInt := parseCanonicalInt(member)
	q := probe{p: pred{op: predLessEq, member: member, keyInt: v, keyIsInt: isInt}, slot: -1}
	if x := b.idx; x != nil {
		q.tag = tagOf(member)
		q.i = q.tag & uint32(len(x.tags)-1)
	} else {
		q.p.score = float64(v)
		q.done = !isInt
	}
	return q
}

// next moves q to the next candidate and reports whether there was one.
func (b *large) next(q *probe) bool {
	if q.done {
		return false
	}
	x := b.idx
	if x == nil {
		q.done = true
		return true
	}
	mask := uint32(len(x.tags) - 1)
	for ; x.tags[q.i] != 0; q.i = (q.i + 1) & mask {
		if x.tags[q.i] == q.tag {
			q.slot, q.p.score = int(q.i), x.scores[q.i]
			q.i = (q.i + 1) & mask
			return true
		}
	}
	q.done = true
	return false
}

// materialize builds the index when the set stops being self-keyed.
func (b *large) materialize() {
	if b.idx != nil {
		return
	}
	x := newIndex(b.tree.n + 1)
	if b.tree.root != nil {
		var scratch [20]byte
		b.tree.root.ascend(0, func(m []byte, sc float64) bool {
			x.add(tagOf(m), sc)
			return true
		}, &scratch)
	}
	b.idx = x
}

// New returns an empty set using cfg's thresholds. It starts packed; as in
// Redis, the first insert converts it at once when cfg does not allow it to
// be packed.
func New(cfg Config) *Set {
	s := &Set{selfKeyed: true}
	s.SetConfig(cfg)
	return s
}

// SetConfig changes the thresholds that later inserts check, as CONFIG SET
// does in Redis. It converts nothing by itself. Values are clamped to
// [0, 2^31-1]; larger ones would never be reached by a packed set anyway.
func (s *Set) SetConfig(cfg Config) {
	s.maxEntries = clamp32(cfg.MaxListpackEntries)
	s.maxValue = clamp32(cfg.MaxListpackValue)
}

func clamp32(v int) int32 {
	return int32(min(max(v, 0), math.MaxInt32))
}

// Reserve readies an empty set to take n members, the longest maxLen
// bytes, as Redis loads a sorted set from RDB or RESTORE: in the large
// encoding at once when either would be past the thresholds, so that
// every member keeps what only that encoding keeps (a -0 score's sign),
// not only those inserted after the conversion. A set that is not empty
// is left as it is.
func (s *Set) Reserve(n, maxLen int) {
	if s.big == nil && s.pn == 0 && (n > int(s.maxEntries) || maxLen > int(s.maxValue)) {
		s.convert()
	}
}

// Len returns the number of members, in O(1).
func (s *Set) Len() int {
	if s.big != nil {
		return s.big.tree.n
	}
	return int(s.pn)
}

// Encoding returns "listpack" or "skiplist", what Redis 7.0 would report for
// the same operations: packed until an insert crosses a threshold, and never
// back (ZREM, ZREMRANGEBY*, ZPOP* and ZINCRBY do not convert back in Redis).
func (s *Set) Encoding() string {
	if s.big != nil {
		return EncodingSkiplist
	}
	return EncodingListpack
}

// Visitor receives one member and its score. member aliases the set's own
// storage: it is valid only during the call and must not be modified or
// retained, and the set must not be changed during the walk. Returning false
// stops the walk.
type Visitor func(member []byte, score float64) bool

// Score returns member's score.
func (s *Set) Score(member []byte) (float64, bool) {
	if s.big != nil {
		return s.big.score(member)
	}
	k := makeMemberKey(member)
	e, ok := packedFind(s.packed, &k)
	return e.score, ok
}

// AddFlags select ZADD's options for Add.
type AddFlags uint8

const (
	AddNX   AddFlags = 1 << iota // only add new members
	AddXX                        // only update existing members
	AddGT                        // only update when the new score is greater
	AddLT                        // only update when the new score is less
	AddIncr                      // score is an increment to the current score (or 0)
)

// AddResult says what Add did, as Redis's zsetAdd out flags.
type AddResult uint8

const (
	// Unchanged: the member exists and already has the resulting score.
	// ZADD INCR replies the score; CH does not count it.
	Unchanged AddResult = iota
	// Added: a new member was inserted.
	Added
	// Updated: an existing member's score changed.
	Updated
	// Skipped: NX, XX, GT or LT prevented the change (ZADD_OUT_NOP); ZADD
	// INCR replies nil.
	Skipped
	// NotANumber: with AddIncr the result would be NaN; nothing changed.
	NotANumber
)

// Add inserts or updates member with Redis's zsetAdd semantics for flags,
// with one lookup. It returns what happened and the resulting score, which
// is meaningful for Added, Updated and Unchanged. The score returned is the
// one computed, even where a packed set stores -0 as 0, because that is what
// Redis replies. A NaN score changes nothing and gives NotANumber (the
// caller rejects NaN arguments before this; the check keeps the order sound
// whatever it passes). Incompatible flags (NX with XX, GT or LT) are the
// caller's to reject; given anyway, each one is applied.
func (s *Set) Add(member []byte, score float64, flags AddFlags) (AddResult, float64) {
	if score != score {
		return NotANumber, 0
	}
	var (
		cur   float64
		found bool
		e     pentry
		k     memberKey
	)
	if s.big != nil {
		if s.big.idx == nil && flags&(AddIncr|AddXX) == 0 && s.big.pushNewest(member, score) {
			return Added, score
		}
		cur, found = s.big.score(member)
	} else {
		k = makeMemberKey(member)
		if s.selfKeyed && k.isInt && float64(k.ival) == score && flags&AddIncr == 0 &&
			(s.pn == 0 || decode(s.packed, lastEntry(s.packed)).score < score) {
			// Self-keyed: the member could only be at score, past the end.
			found = false
		} else {
			e, found = packedFind(s.packed, &k)
			cur = e.score
		}
	}
	if !found {
		if flags&AddXX != 0 {
			return Skipped, 0
		}
		s.insertNew(member, &k, score)
		return Added, score
	}
	if flags&AddNX != 0 {
		return Skipped, 0
	}
	if flags&AddIncr != 0 {
		score += cur
		if score != score {
			return NotANumber, 0
		}
	}
	if flags&AddLT != 0 && score >= cur || flags&AddGT != 0 && score <= cur {
		return Skipped, 0
	}
	if score == cur {
		return Unchanged, score
	}
	if s.big != nil {
		s.big.update(member, cur, score)
	} else {
		s.packedRemove(e.off, e.end, 1)
		s.packedInsert(&k, score)
	}
	return Updated, score
}

// Put sets member's score, inserting it if needed, and reports whether it
// was inserted. Setting the score a member already has changes nothing.
func (s *Set) Put(member []byte, score float64) (added bool) {
	r, _ := s.Add(member, score, 0)
	return r == Added
}

// insertNew inserts a member known to be absent, converting first when Redis
// would: the set would exceed MaxListpackEntries, or the member is longer
// than MaxListpackValue. k is the member's packed key when packed.
func (s *Set) insertNew(member []byte, k *memberKey, score float64) {
	if s.big == nil {
		if s.pn >= s.maxEntries || len(member) > int(s.maxValue) {
			s.convert()
		} else {
			s.packedInsert(k, score)
			return
		}
	}
	kk := makeMemberKey(member)
	s.big.add(member, &kk, score)
}

// Delete removes member and reports whether it was there.
func (s *Set) Delete(member []byte) bool {
	if s.big != nil {
		return s.big.delete(member)
	}
	k := makeMemberKey(member)
	e, ok := packedFind(s.packed, &k)
	if ok {
		s.packedRemove(e.off, e.end, 1)
	}
	return ok
}

// Rank returns member's 0-based rank, from the highest score when reverse.
func (s *Set) Rank(member []byte, reverse bool) (int, bool) {
	var r int
	if s.big != nil {
		var ok bool
		if r, _, ok = s.big.locate(member, true); !ok {
			return 0, false
		}
	} else {
		k := makeMemberKey(member)
		p := s.packed
		found := false
		for off := 0; off < len(p); off = skip(p, off) {
			if matches(p, off, &k) {
				found = true
				break
			}
			r++
		}
		if !found {
			return 0, false
		}
	}
	if reverse {
		r = s.Len() - 1 - r
	}
	return r, true
}

// RankBounds turns ZRANGE's start and stop indexes (negative ones count from
// the end, both inclusive) into the half-open rank interval [lo, hi) they
// select in a set of n members, clamped as Redis does; lo == hi when empty.
func RankBounds(start, stop, n int) (lo, hi int) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop + 1
}

// Range visits the members ZRANGE start stop [REV] selects, in reply order,
// and returns how many it visited. With reverse, indexes count from the
// highest score.
func (s *Set) Range(start, stop int, reverse bool, fn Visitor) int {
	n := s.Len()
	lo, hi := RankBounds(start, stop, n)
	if reverse {
		lo, hi = n-hi, n-lo
	}
	return s.visit(lo, hi, reverse, fn)
}

// At returns the member of rank r (0-based, ascending), aliasing the set's
// storage like a Visitor's argument.
func (s *Set) At(r int) (member []byte, score float64, ok bool) {
	if r < 0 || r >= s.Len() {
		return nil, 0, false
	}
	if s.big != nil {
		e := s.big.tree.at(r)
		if e.isInt {
			var scratch [20]byte
			return e.member(&scratch), e.score, true // escapes: one small allocation
		}
		return e.raw, e.score, true
	}
	off := packedSeek(s.packed, r)
	e := decode(s.packed, off)
	if e.isInt {
		var scratch [20]byte
		return e.member(&scratch), e.score, true // escapes: one small allocation
	}
	return e.raw, e.score, true
}

// ScoreRange is a score interval; its fields match resp.ScoreRange so the
// command layer converts one into the other directly.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool // the bound is excluded
}

// LexRange is a member interval; its fields match resp.LexRange. MinInf and
// MaxInf are -1 for "-", +1 for "+" and 0 when the bound is Min or Max.
type LexRange struct {
	Min, Max       []byte
	MinEx, MaxEx   bool
	MinInf, MaxInf int8
}

// belowMin reports whether v lies before r's minimum.
func (r *LexRange) belowMin(v []byte) bool {
	switch r.MinInf {
	case -1:
		return false
	case 1:
		return true
	}
	c := bytes.Compare(v, r.Min)
	return c < 0 || c == 0 && r.MinEx
}

// notAboveMax reports whether v lies at or before r's maximum.
func (r *LexRange) notAboveMax(v []byte) bool {
	switch r.MaxInf {
	case -1:
		return false
	case 1:
		return true
	}
	c := bytes.Compare(v, r.Max)
	return c < 0 || c == 0 && !r.MaxEx
}

// scoreBounds returns the ranks [lo, hi) of the members in r.
func (s *Set) scoreBounds(r ScoreRange) (lo, hi int) {
	below := pred{op: predBelowMin, sr: &r}
	notAbove := pred{op: predNotAboveMax, sr: &r}
	if s.big != nil {
		t := &s.big.tree
		lo = t.rank(&below)
		hi = t.rank(&notAbove)
		return lo, max(lo, hi)
	}
	p := s.packed
	off := 0
	for ; off < len(p); lo++ {
		e := decode(p, off)
		if !below.holds(e.score, nil) {
			break
		}
		off = e.end
	}
	hi = lo
	for ; off < len(p); hi++ {
		e := decode(p, off)
		if !notAbove.holds(e.score, nil) {
			break
		}
		off = e.end
	}
	return lo, hi
}

// lexBounds returns the ranks [lo, hi) of the members in r. Lex ranges are
// meaningful only when all scores are equal, as in Redis; otherwise the
// result is some interval (Redis's own answer then depends on its encoding
// and on skiplist levels), the same for every lex operation.
func (s *Set) lexBounds(r LexRange) (lo, hi int) {
	if s.big != nil {
		t := &s.big.tree
		lo = t.rank(&pred{op: predLexBelowMin, lr: &r})
		hi = t.rank(&pred{op: predLexNotAboveMax, lr: &r})
		return lo, max(lo, hi)
	}
	var scratch [20]byte
	p := s.packed
	off := 0
	for ; off < len(p); lo++ {
		e := decode(p, off)
		if !r.belowMin(e.member(&scratch)) {
			break
		}
		off = e.end
	}
	hi = lo
	for ; off < len(p); hi++ {
		e := decode(p, off)
		if !r.notAboveMax(e.member(&scratch)) {
			break
		}
		off = e.end
	}
	return lo, hi
}

// limit applies LIMIT offset count to ranks [lo, hi), counting from hi when
// reverse. A negative offset selects nothing, a negative count everything
// after the offset, as in Redis.
func limit(lo, hi int, reverse bool, offset, count int) (int, int) {
	if offset < 0 {
		return lo, lo
	}
	if offset >= hi-lo {
		return lo, lo
	}
	if count < 0 || count > hi-lo-offset {
		count = hi - lo - offset
	}
	if reverse {
		return hi - offset - count, hi - offset
	}
	return lo + offset, lo + offset + count
}

// RangeByScore visits the members with scores in r, ascending (descending
// when reverse), after skipping offset of them and visiting at most count
// (negative: all); it returns how many it visited.
func (s *Set) RangeByScore(r ScoreRange, reverse bool, offset, count int, fn Visitor) int {
	lo, hi := s.scoreBounds(r)
	lo, hi = limit(lo, hi, reverse, offset, count)
	return s.visit(lo, hi, reverse, fn)
}

// RangeByLex is RangeByScore for a member interval; see lexBounds.
func (s *Set) RangeByLex(r LexRange, reverse bool, offset, count int, fn Visitor) int {
	lo, hi := s.lexBounds(r)
	lo, hi = limit(lo, hi, reverse, offset, count)
	return s.visit(lo, hi, reverse, fn)
}

// CountByScore returns how many members have scores in r (ZCOUNT), in
// O(log n) when large.
func (s *Set) CountByScore(r ScoreRange) int {
	lo, hi := s.scoreBounds(r)
	return hi - lo
}

// CountByLex returns how many members lie in r (ZLEXCOUNT).
func (s *Set) CountByLex(r LexRange) int {
	lo, hi := s.lexBounds(r)
	return hi - lo
}

// DeleteRangeByScore removes the members with scores in r and returns how
// many (ZREMRANGEBYSCORE). A prefix of a packed set goes in one memmove.
func (s *Set) DeleteRangeByScore(r ScoreRange) int {
	lo, hi := s.scoreBounds(r)
	s.deleteRanks(lo, hi)
	return hi - lo
}

// DeleteRangeByScoreVisit is DeleteRangeByScore that first shows fn each
// member it removes, in order, with one search for both (a caller that
// records what it deletes, as persistence does, would otherwise search
// twice). scratch holds a member the visit makes up (a self-keyed set's
// decimal text): the caller's own, since one made here would escape to
// the heap through fn, an allocation for every call. With scratch nil, fn
// is shown nil for a member stored as an integer, for a caller that knows
// those from their scores (a self-keyed set's, below 2^53) and would
// otherwise have the text made only to parse it back.
func (s *Set) DeleteRangeByScoreVisit(r ScoreRange, fn Visitor, scratch *[20]byte) int {
	lo, hi := s.scoreBounds(r)
	if lo < hi {
		s.visitWith(lo, hi, false, fn, scratch)
	}
	s.deleteRanks(lo, hi)
	return hi - lo
}

// DeleteRangeByLex removes the members in r and returns how many.
func (s *Set) DeleteRangeByLex(r LexRange) int {
	lo, hi := s.lexBounds(r)
	s.deleteRanks(lo, hi)
	return hi - lo
}

// DeleteRangeByRank removes the members ZREMRANGEBYRANK start stop selects
// (indexes as in RankBounds) and returns how many.
func (s *Set) DeleteRangeByRank(start, stop int) int {
	lo, hi := RankBounds(start, stop, s.Len())
	s.deleteRanks(lo, hi)
	return hi - lo
}

// PopMin visits and removes the count lowest members, lowest first, and
// returns how many; count <= 0 pops nothing. fn may stop the visit early,
// but count members are removed regardless.
func (s *Set) PopMin(count int, fn Visitor) int {
	n := min(max(count, 0), s.Len())
	s.visit(0, n, false, fn)
	s.deleteRanks(0, n)
	return n
}

// PopMax is PopMin from the highest score down.
func (s *Set) PopMax(count int, fn Visitor) int {
	l := s.Len()
	n := min(max(count, 0), l)
	s.visit(l-n, l, true, fn)
	s.deleteRanks(l-n, l)
	return n
}

// Rand is the source of randomness RandomMembers needs; *rand.Rand of
// math/rand/v2 is one.
type Rand interface {
	IntN(n int) int
}

// RandomMembers visits members picked at random, as ZRANDMEMBER count does:
// count > 0 picks min(count, Len()) distinct members, count < 0 picks -count
// members with repetition. It returns how many it visited. rnd.IntN(n) must
// return a value in [0, n).
func (s *Set) RandomMembers(rnd Rand, count int, fn Visitor) int {
	count = max(count, -math.MaxInt) // so that -count does not overflow
	n := s.Len()
	if n == 0 || count == 0 {
		return 0
	}
	if s.big == nil {
		return s.packedRandom(rnd, count, fn)
	}
	t := &s.big.tree
	visited := 0
	scratch := new([20]byte) // one per call, not per member: fn sees it
	if count < 0 {
		for ; visited < -count; visited++ {
			if !fn(memberAt(t, rnd.IntN(n), scratch)) {
				return visited + 1
			}
		}
		return visited
	}
	if count >= n {
		return s.visit(0, n, false, fn)
	}
	if count*4 < n {
		// Few of many: random ranks, rejecting repeats.
		seen := make(map[int]struct{}, count)
		for visited < count {
			r := rnd.IntN(n)
			if _, dup := seen[r]; dup {
				continue
			}
			seen[r] = struct{}{}
			visited++
			if !fn(memberAt(t, r, scratch)) {
				break
			}
		}
		return visited
	}
	// Many of many: selection sampling, one ordered pass.
	need := count
	t.root.ascend(0, func(m []byte, sc float64) bool {
		left := n
		n--
		if rnd.IntN(left) < need {
			need--
			visited++
			return fn(m, sc) && need > 0
		}
		return true
	}, scratch)
	return visited
}

// memberAt returns the member and score of rank r, an integer member
// formatted into scratch.
func memberAt(t *btree, r int, scratch *[20]byte) ([]byte, float64) {
	e := t.at(r)
	return e.member(scratch), e.score
}

func (s *Set) packedRandom(rnd Rand, count int, fn Visitor) int {
	p := s.packed
	n := int(s.pn)
	var scratch [20]byte
	if count < 0 {
		offs := make([]int, 0, n)
		for off := 0; off < len(p); off = skip(p, off) {
			offs = append(offs, off)
		}
		for i := 0; i < -count; i++ {
			e := decode(p, offs[rnd.IntN(n)])
			if !fn(e.member(&scratch), e.score) {
				return i + 1
			}
		}
		return -count
	}
	need := min(count, n)
	visited := 0
	for off, left := 0, n; off < len(p) && need > 0; left-- {
		e := decode(p, off)
		off = e.end
		if rnd.IntN(left) < need {
			need--
			visited++
			if !fn(e.member(&scratch), e.score) {
				break
			}
		}
	}
	return visited
}

// visit calls fn on ranks [lo, hi), ascending, or descending when reverse,
// and returns how many it called it on.
func (s *Set) visit(lo, hi int, reverse bool, fn Visitor) int {
	var scratch [20]byte
	return s.visitWith(lo, hi, reverse, fn, &scratch)
}

// visitWith is visit with the room for made-up members given.
func (s *Set) visitWith(lo, hi int, reverse bool, fn Visitor, scratch *[20]byte) int {
	if lo >= hi {
		return 0
	}
	visited := 0
	if s.big != nil {
		root := s.big.tree.root
		if reverse {
			root.descend(hi-1, func(m []byte, sc float64) bool {
				visited++
				return fn(m, sc) && visited < hi-lo
			}, scratch)
		} else {
			root.ascend(lo, func(m []byte, sc float64) bool {
				visited++
				return fn(m, sc) && visited < hi-lo
			}, scratch)
		}
		return visited
	}
	p := s.packed
	if reverse {
		// Walk back from the end when hi is in the back half.
		var end int
		if hi > int(s.pn)/2 {
			end = len(p)
			for i := int(s.pn); i > hi; i-- {
				end = readBacklen(p, end)
			}
		} else {
			end = packedSeek(p, hi)
		}
		for visited < hi-lo {
			off := readBacklen(p, end)
			e := decode(p, off)
			visited++
			if !fn(e.member(scratch), e.score) {
				break
			}
			end = off
		}
		return visited
	}
	off := packedSeek(p, lo)
	for visited < hi-lo {
		e := decode(p, off)
		visited++
		if !fn(e.member(scratch), e.score) {
			break
		}
		off = e.end
	}
	return visited
}

// packedSeek returns the offset of the entry of rank r (len(p) for r == n).
func packedSeek(p []byte, r int) int {
	off := 0
	for ; r > 0; r-- {
		off = skip(p, off)
	}
	return off
}

// deleteRanks removes ranks [lo, hi).
func (s *Set) deleteRanks(lo, hi int) {
	if lo >= hi {
		return
	}
	if s.big != nil {
		b := s.big
		var gone Visitor // nil: self-keyed prefixes go leaf by leaf, unread
		if x := b.idx; x != nil {
			gone = func(m []byte, sc float64) bool {
				x.remove(tagOf(m), sc)
				return true
			}
		}
		b.tree.deleteRange(lo, hi, gone)
		if b.tree.n == 0 {
			b.idx = nil // empty is self-keyed again
		}
		return
	}
	a := packedSeek(s.packed, lo)
	z := a
	for i := lo; i < hi; i++ {
		z = skip(s.packed, z)
	}
	s.packedRemove(a, z, hi-lo)
}

// packedRemove cuts packed[a:z], which holds n entries, with one memmove,
// and gives memory back when the buffer has become mostly empty.
func (s *Set) packedRemove(a, z, n int) {
	s.packed = cutBytes(s.packed, a, z)
	s.pn -= int32(n)
	if s.pn == 0 {
		s.selfKeyed = true
	}
}

// packedInsert inserts a member known to be absent. Past the last entry it
// appends (amortised O(1): the buffer grows by a quarter); elsewhere it scans
// for the place and opens a gap with one memmove.
func (s *Set) packedInsert(k *memberKey, score float64) {
	skind, iv := scoreKind(score)
	sz := entrySize(k, skind, iv)
	p := s.packed
	pos := len(p)
	if len(p) > 0 {
		// The member's text is needed only against an entry of the same
		// score: made then, not for every insert (a window's ZADD
		// appends a new highest score).
		var scratch, mscratch [20]byte
		var member []byte
		after := func(e *pentry) bool { // (score, member) sorts after e
			if score != e.score {
				return score > e.score
			}
			if member == nil {
				member = k.bytes(&scratch)
			}
			return bytes.Compare(member, e.member(&mscratch)) > 0
		}
		last := decode(p, lastEntry(p))
		if !after(&last) {
			for off := 0; off < len(p); {
				e := decode(p, off)
				if !after(&e) {
					pos = off
					break
				}
				off = e.end
			}
		}
	}
	s.packed = insertEntry(p, pos, sz, k, score, skind, iv)
	s.pn++
	s.selfKeyed = s.selfKeyed && k.isInt && float64(k.ival) == score
}

// bytes returns the member's bytes, formatting an integer into scratch.
func (k *memberKey) bytes(scratch *[20]byte) []byte {
	if k.isInt {
		e := pentry{isInt: true, ival: k.ival}
		return e.member(scratch)
	}
	return k.raw
}

// convert moves a packed set to the large encoding.
func (s *Set) convert() {
	b := &large{}
	if !s.selfKeyed {
		b.idx = newIndex(int(s.pn) + 1)
	}
	var scratch [20]byte
	p := s.packed
	for off := 0; off < len(p); {
		e := decode(p, off)
		m := e.member(&scratch)
		k := makeMemberKey(m)
		b.add(m, &k, e.score)
		off = e.end
	}
	s.big, s.packed, s.pn = b, nil, 0
}

// pushNewest is the window's tail fast path on a self-keyed large set: a
// member that is the text of a score above every other cannot be there
// yet (it could only be at its own score), so it is appended at once,
// without a lookup. It reports whether it did that.
func (b *large) pushNewest(member []byte, score float64) bool {
	v, ok := parseCanonicalInt(member)
	if !ok || float64(v) != score {
		return false
	}
	if last, ok := b.tree.maxScore(); ok && last >= score {
		return false
	}
	k := makeMemberKey(member)
	b.tree.push(score, member, &k)
	return true
}

// add inserts a member known to be absent; k is its key.
func (b *large) add(m []byte, k *memberKey, score float64) {
	if b.idx == nil && !selfKeyedPair(m, score) {
		b.materialize()
	}
	if b.idx != nil {
		b.idx.add(tagOf(m), score)
	}
	b.tree.insert(score, m, k)
}

// update moves member from its stored score old to score.
func (b *large) update(member []byte, old, score float64) {
	b.materialize() // a new score breaks self-keying: the old one was the member's value
	b.tree.delete(old, member)
	k := makeMemberKey(member)
	b.tree.insert(score, member, &k)
	b.idx.set(tagOf(member), old, score)
}

// delete removes member in one descent of the tree per candidate score.
func (b *large) delete(member []byte) bool {
	q := b.probe(member)
	for {
		if !b.next(&q) {
			return false
		}
		sc, ok := b.tree.deleteKey(&q.p)
		if !ok {
			continue
		}
		if x := b.idx; x != nil {
			if sameBits(x.scores[q.slot], sc) {
				x.removeSlot(q.slot)
			} else {
				// The candidate was another member's pair: 0 where
				// this member is at -0, or the reverse. Take this
				// member's own.
				x.remove(q.tag, sc)
			}
		}
		break
	}
	if b.tree.n == 0 {
		b.idx = nil
	}
	return true
}

// MemoryBytes estimates the heap bytes the set holds, its own struct
// included, for INFO and benchmarks.
func (s *Set) MemoryBytes() int {
	n := allocSize(int(unsafe.Sizeof(*s)))
	if s.big == nil {
		return n + allocSize(cap(s.packed))
	}
	b := s.big
	n += allocSize(int(unsafe.Sizeof(*b)))
	if b.tree.root != nil {
		n += b.tree.root.memory()
	}
	if b.idx != nil {
		n += b.idx.memory()
	}
	return n
}

// sizeClasses are the Go allocator's small size classes (runtime
// sizeclasses.go); an allocation takes the first class that fits.
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160,
	176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576,
	640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688,
	3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472,
	9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480,
	21760, 24576, 27264, 28672, 32768}

// allocSize is the heap an allocation of n bytes takes.
func allocSize(n int) int {
	if n == 0 {
		return 0
	}
	if n > 32768 {
		return (n + 8191) &^ 8191
	}
	lo, hi := 0, len(sizeClasses)-1
	for lo < hi {
		m := (lo + hi) / 2
		if sizeClasses[m] < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return sizeClasses[lo]
}

func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
