package zsetlite

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
)

// The packed encoding: one []byte holding every entry in order, each laid out
// as
//
//	header | [extended length] | member | score | backlen
//
// header bits 7-6 say how the score is stored; bits 5-0 how the member is.
// backlen is the length of everything before it in the entry, written so that
// it reads backwards from the entry's end (like listpack's), which gives O(1)
// access to the last entry (the tail-append fast path) and reverse walks.
//
// Scores that are integers in [-2^47, 2^47) are stored as 1, 4 or 6 byte
// little-endian integers, other scores as the 8 bytes of the float64.
// Members that are canonical decimal int64s ("0", "-12", "1700000000000",
// never "012", "+1" or "-0") are stored as 1 to 8 byte integers, other
// members as their bytes. A member that is the integer of its own integer
// score, as in the window pattern (ZADD k now now), is stored once, as the
// score (descriptor memSelf): a millisecond timestamp then takes 8 bytes
// per entry, against 20 in a Redis listpack.
//
// Storing an integer score drops the sign of -0, which is what Redis's
// listpack does too (it stores scores as text written by d2string, which
// prints -0 as "0"); see normScore.
const (
	scoreF64 = 0 << 6
	scoreI8  = 1 << 6
	scoreI32 = 2 << 6
	scoreI48 = 3 << 6

	memRawInline = 56                 // raw members of 0..56 bytes: the length is the descriptor
	memRawExt    = 57                 // raw member, length-57 follows as a uvarint
	memSelf      = 58                 // the member is the score's integer, stored once as the score
	noSelf       = scoreF64 | memSelf // a header no entry has
	memI8        = 59
	memI16       = 60
	memI32       = 61
	memI48       = 62
	memI64       = 63
)

var scoreSize = [4]int{8, 1, 4, 6}
var memIntSize = [5]int{1, 2, 4, 6, 8}

// pentry is one decoded packed entry.
type pentry struct {
	off, end int    // the entry is p[off:end], backlen included
	raw      []byte // the member when stored as bytes
	ival     int64  // the member when stored as an integer
	isInt    bool
	score    float64
}

// member returns the member's bytes, formatting an integer member into
// scratch; with no scratch, an integer member is nil (see
// Set.DeleteRangeByScoreVisit).
func (e *pentry) member(scratch *[20]byte) []byte {
	if e.isInt {
		if scratch == nil {
			return nil
		}
		return strconv.AppendInt(scratch[:0], e.ival, 10)
	}
	return e.raw
}

// memberKey is a member encoded for the packed form, so that finding it is a
// comparison of descriptors and bodies without decoding entries' members.
type memberKey struct {
	desc  byte
	isInt bool
	ival  int64
	raw   []byte
	body  [8]byte // the little-endian integer body
	nbody int
	ibody uint64 // body as a word (raw: its first 8 bytes), and the mask of its nbody bytes
	mask  uint64
	// selfHdr is the header of the member's entry at its own score (an
	// integer member in int48 range stored as memSelf), and selfBody and
	// selfMask that entry's body as a word; selfHdr is noSelf, which no
	// entry has, when there is no such entry.
	selfHdr  byte
	selfBody uint64
	selfMask uint64
}

func makeMemberKey(m []byte) memberKey {
	if v, ok := parseCanonicalInt(m); ok {
		return intMemberKey(v)
	}
	var k memberKey
	k.selfHdr = noSelf
	k.raw = m
	if len(m) >= 8 {
		k.ibody = binary.LittleEndian.Uint64(m)
	}
	if len(m) <= memRawInline {
		k.desc = byte(len(m))
	} else {
		k.desc = memRawExt
	}
	return k
}

// intMemberKey is makeMemberKey of v's canonical decimal text.
func intMemberKey(v int64) memberKey {
	var k memberKey
	k.isInt, k.ival = true, v
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		k.desc, k.nbody = memI8, 1
	case v >= math.MinInt16 && v <= math.MaxInt16:
		k.desc, k.nbody = memI16, 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		k.desc, k.nbody = memI32, 4
	case v >= -1<<47 && v < 1<<47:
		k.desc, k.nbody = memI48, 6
	default:
		k.desc, k.nbody = memI64, 8
	}
	binary.LittleEndian.PutUint64(k.body[:], uint64(v))
	k.mask = 1<<(8*k.nbody) - 1
	if k.nbody == 8 {
		k.mask = ^uint64(0)
	}
	k.ibody = uint64(v) & k.mask
	k.selfHdr = noSelf
	if skind, _ := scoreKind(float64(v)); skind != scoreF64 {
		k.selfHdr = skind | memSelf
		k.selfMask = 1<<(8*scoreSize[skind>>6]) - 1
		k.selfBody = uint64(v) & k.selfMask
	}
	return k
}

// size is the member's encoded size, descriptor byte excluded.
func (k *memberKey) size() int {
	if k.isInt {
		return k.nbody
	}
	if k.desc == memRawExt {
		return uvarintLen(uint64(len(k.raw)-memRawExt)) + len(k.raw)
	}
	return len(k.raw)
}

// parseCanonicalInt accepts exactly the strings that strconv.FormatInt can
// produce, so that storing the integer and printing it back is lossless.
func parseCanonicalInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 || n > 20 {
		return 0, false
	}
	i := 0
	neg := b[0] == '-'
	if neg {
		i = 1
		if n == 1 {
			return 0, false
		}
	}
	if b[i] == '0' {
		return 0, n == 1 // "0" only: not "-0", "00" or "01"
	}
	var u uint64
	for ; i < n; i++ {
		c := b[i] - '0'
		if c > 9 {
			return 0, false
		}
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c)
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// scoreKind picks the smallest exact encoding of f.
func scoreKind(f float64) (byte, int64) {
	if f >= -(1<<47) && f < 1<<47 && f == math.Trunc(f) {
		v := int64(f)
		switch {
		case v >= math.MinInt8 && v <= math.MaxInt8:
			return scoreI8, v
		case v >= math.MinInt32 && v <= math.MaxInt32:
			return scoreI32, v
		default:
			return scoreI48, v
		}
	}
	return scoreF64, 0
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// backlenSize is the size of the backwards length written after an entry
// body of l bytes.
func backlenSize(l int) int {
	return uvarintLen(uint64(l))
}

// putBacklen writes l into dst[:backlenSize(l)], most significant group
// first, every byte but the first flagged, so that it decodes from the end.
func putBacklen(dst []byte, l int) {
	n := backlenSize(l)
	for i := n - 1; i >= 0; i-- {
		b := byte(l & 0x7f)
		if i > 0 {
			b |= 0x80
		}
		dst[i] = b
		l >>= 7
	}
}

// readBacklen decodes the backlen ending at end, returning the entry's start.
func readBacklen(p []byte, end int) int {
	i := end - 1
	b := p[i]
	l := int(b & 0x7f)
	shift := 7
	for b&0x80 != 0 {
		i--
		b = p[i]
		l |= int(b&0x7f) << shift
		shift += 7
	}
	return i - l
}

// isSelf reports whether (k, score) is stored as a memSelf entry; skind
// and iv are what scoreKind (or leafScoreKind) chose for the score.
func isSelf(k *memberKey, skind byte, iv int64) bool {
	return k.isInt && skind != scoreF64 && iv == k.ival
}

// entrySize is the full encoded size of (k, score).
func entrySize(k *memberKey, skind byte, iv int64) int {
	l := 1 + scoreSize[skind>>6]
	if !isSelf(k, skind, iv) {
		l += k.size()
	}
	return l + backlenSize(l)
}

// putEntry writes the entry into dst, which is exactly entrySize long;
// skind and iv are what scoreKind (or leafScoreKind) chose for score.
func putEntry(dst []byte, k *memberKey, score float64, skind byte, iv int64) {
	dst[0] = skind | k.desc
	i := 1
	if isSelf(k, skind, iv) {
		dst[0] = skind | memSelf // the score below is the member
	} else if k.isInt {
		copy(dst[i:], k.body[:k.nbody])
		i += k.nbody
	} else {
		if k.desc == memRawExt {
			i += binary.PutUvarint(dst[i:], uint64(len(k.raw)-memRawExt))
		}
		i += copy(dst[i:], k.raw)
	}
	switch skind {
	case scoreF64:
		binary.LittleEndian.PutUint64(dst[i:], math.Float64bits(score))
		i += 8
	case scoreI8:
		dst[i] = byte(iv)
		i++
	case scoreI32:
		binary.LittleEndian.PutUint32(dst[i:], uint32(iv))
		i += 4
	case scoreI48:
		putInt48(dst[i:], iv)
		i += 6
	}
	putBacklen(dst[i:], i)
}

func putInt48(dst []byte, v int64) {
	_ = dst[5]
	dst[0] = byte(v)
	dst[1] = byte(v >> 8)
	dst[2] = byte(v >> 16)
	dst[3] = byte(v >> 24)
	dst[4] = byte(v >> 32)
	dst[5] = byte(v >> 40)
}

func int48(b []byte) int64 {
	_ = b[5]
	u := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40
	return int64(u<<16) >> 16
}

// decode reads the entry starting at off.
func decode(p []byte, off int) pentry {
	e := pentry{off: off}
	h := p[off]
	i := off + 1
	switch d := h & 0x3f; {
	case d <= memRawInline:
		e.raw = p[i : i+int(d) : i+int(d)]
		i += int(d)
	case d == memRawExt:
		v, n := binary.Uvarint(p[i:])
		i += n
		l := int(v) + memRawExt
		e.raw = p[i : i+l : i+l]
		i += l
	case d == memSelf:
		e.isInt = true
	default:
		e.isInt = true
		switch d {
		case memI8:
			e.ival = int64(int8(p[i]))
			i++
		case memI16:
			e.ival = int64(int16(binary.LittleEndian.Uint16(p[i:])))
			i += 2
		case memI32:
			e.ival = int64(int32(binary.LittleEndian.Uint32(p[i:])))
			i += 4
		case memI48:
			e.ival = int48(p[i:])
			i += 6
		default:
			e.ival = int64(binary.LittleEndian.Uint64(p[i:]))
			i += 8
		}
	}
	switch h & 0xc0 {
	case scoreF64:
		e.score = math.Float64frombits(binary.LittleEndian.Uint64(p[i:]))
		i += 8
	case scoreI8:
		e.score = float64(int8(p[i]))
		i++
	case scoreI32:
		e.score = float64(int32(binary.LittleEndian.Uint32(p[i:])))
		i += 4
	default:
		e.score = float64(int48(p[i:]))
		i += 6
	}
	if d := h & 0x3f; d == memSelf {
		e.ival = int64(e.score)
	}
	e.end = i + backlenSize(i-off)
	return e
}

// readIntMember reads the integer member with descriptor d (memI8 and
// up) at p[i:], and returns it and the offset after it. It and readScore
// are decode's two halves for Set.AppendIntDeltas; decode keeps them written out
// (as calls they do not inline, which cost the hot path ~5%).
func readIntMember(d byte, p []byte, i int) (int64, int) {
	switch d {
	case memI8:
		return int64(int8(p[i])), i + 1
	case memI16:
		return int64(int16(binary.LittleEndian.Uint16(p[i:]))), i + 2
	case memI32:
		return int64(int32(binary.LittleEndian.Uint32(p[i:]))), i + 4
	case memI48:
		return int48(p[i:]), i + 6
	}
	return int64(binary.LittleEndian.Uint64(p[i:])), i + 8
}

// readScore reads the score of an entry with header h at p[i:], and
// returns it and the offset after it.
func readScore(h byte, p []byte, i int) (float64, int) {
	switch h & 0xc0 {
	case scoreF64:
		return math.Float64frombits(binary.LittleEndian.Uint64(p[i:])), i + 8
	case scoreI8:
		return float64(int8(p[i])), i + 1
	case scoreI32:
		return float64(int32(binary.LittleEndian.Uint32(p[i:]))), i + 4
	}
	return float64(int48(p[i:])), i + 6
}

// entryLen gives, by header byte, the length of an entry whose length the
// header alone determines (all but extended raw members): the member scan
// then moves by one table lookup per entry.
var entryLen = func() (t [256]uint8) {
	for h := 0; h < 256; h++ {
		d := h & 0x3f
		var l int
		switch {
		case d <= memRawInline:
			l = 1 + d
		case d == memRawExt:
			continue
		case d == memSelf:
			l = 1
		default:
			l = 1 + memIntSize[d-memI8]
		}
		l += scoreSize[h>>6]
		t[h] = uint8(l + backlenSize(l))
	}
	return t
}()

// skip returns the end of the entry at off without decoding its values.
func skip(p []byte, off int) int {
	h := p[off]
	if l := entryLen[h]; l != 0 {
		return off + int(l)
	}
	i := off + 1
	switch d := h & 0x3f; {
	case d <= memRawInline:
		i += int(d)
	case d == memRawExt:
		v, n := binary.Uvarint(p[i:])
		i += n + int(v) + memRawExt
	case d == memSelf:
	default:
		i += memIntSize[d-memI8]
	}
	i += scoreSize[h>>6]
	return i + backlenSize(i-off)
}

// matchesSelf reports whether the entry at off, whose header is
// k.selfHdr, holds member k at its own score.
func matchesSelf(p []byte, off int, k *memberKey) bool {
	if off+9 <= len(p) {
		return binary.LittleEndian.Uint64(p[off+1:])&k.selfMask == k.selfBody
	}
	e := decode(p, off) // the last entry: too near the end for a word load
	return e.ival == k.ival
}

// matches reports whether the entry at off holds member k.
func matches(p []byte, off int, k *memberKey) bool {
	if p[off] == k.selfHdr {
		return matchesSelf(p, off, k)
	}
	d := p[off] & 0x3f
	if d != k.desc {
		return false
	}
	if k.isInt {
		if off+9 <= len(p) {
			// One load and a mask instead of a byte compare: an entry
			// with an integer member has at least 8 bytes after its
			// header (member, score and backlen), except possibly the
			// last one.
			v := binary.LittleEndian.Uint64(p[off+1:])
			return v&k.mask == k.ibody
		}
		return bytes.Equal(p[off+1:off+1+k.nbody], k.body[:k.nbody])
	}
	if d <= memRawInline {
		// Most different members of one length differ in their first 8
		// bytes (UUIDs, hashes): one load rejects them.
		if d >= 8 && binary.LittleEndian.Uint64(p[off+1:]) != k.ibody {
			return false
		}
		return bytes.Equal(p[off+1:off+1+int(d)], k.raw)
	}
	e := decode(p, off)
	return bytes.Equal(e.raw, k.raw)
}

// packedFind returns the entry holding member k. The loop is written out
// (header test, one word compare, table step) because it is the cost of
// every ZADD, ZSCORE and ZREM on a packed set.
func packedFind(p []byte, k *memberKey) (pentry, bool) {
	if k.selfHdr != noSelf {
		return packedFindInt(p, k)
	}
	desc, word, mask := k.desc, k.ibody, k.mask
	if !k.isInt {
		mask = ^uint64(0)
		if len(k.raw) < 8 || desc == memRawExt {
			mask = 0 // no word test: short or extended raw members compare bytes
		}
	}
	for off := 0; off < len(p); {
		h := p[off]
		if h&0x3f == desc {
			if off+9 <= len(p) {
				if binary.LittleEndian.Uint64(p[off+1:])&mask == word&mask && matches(p, off, k) {
					return decode(p, off), true
				}
			} else if matches(p, off, k) {
				return decode(p, off), true
			}
		}
		if l := entryLen[h]; l != 0 {
			off += int(l)
		} else {
			off = skip(p, off)
		}
	}
	return pentry{}, false
}

// packedFindInt is packedFind for an integer member that may be stored at
// its own score (memSelf), as every window's member is. Such a member's
// body takes at most 6 bytes, so one word loaded at an entry's header
// holds the header and the body of either form the member may take, and
// each entry costs one load and two masked compares; the last entries,
// less than a word from the end, are left to matches.
func packedFindInt(p []byte, k *memberKey) (pentry, bool) {
	selfMask, selfWord := k.selfMask<<8|0xff, k.selfBody<<8|uint64(k.selfHdr)
	intMask, intWord := k.mask<<8|0x3f, k.ibody<<8|uint64(k.desc)
	selfLen := int(entryLen[k.selfHdr])
	off := 0
	for off+8 <= len(p) {
		x := binary.LittleEndian.Uint64(p[off:])
		if x&selfMask == selfWord || x&intMask == intWord {
			return decode(p, off), true
		}
		if byte(x) == k.selfHdr {
			// A constant step while the entries look like the one
			// sought: the next load need not wait for this one.
			off += selfLen
			continue
		}
		l := int(entryLen[byte(x)])
		if l == 0 {
			l = skip(p, off) - off
		}
		off += l
	}
	for ; off < len(p); off = skip(p, off) {
		if matches(p, off, k) {
			return decode(p, off), true
		}
	}
	return pentry{}, false
}

// lastEntry returns the start of the last entry; p must not be empty.
func lastEntry(p []byte) int {
	return readBacklen(p, len(p))
}
