package persist

import (
	"encoding/binary"
	"errors"
	"math"
)

// Kind is the type tag of a stored value. The tags are part of the on-disk
// format: never renumber them, only add.
type Kind byte

const (
	KindString Kind = 's' // Str holds the bytes
	KindList   Kind = 'l' // Items holds the elements, head first
	KindHash   Kind = 'h' // Items holds field, value, field, value, ...
	// KindSet is a set: Items holds its members, each once.
	KindSet Kind = 'e'
	// KindZSet is a sorted set in one record: Items holds member, score,
	// member, score, ... with each score the 8 bytes of EncodeScore.
	KindZSet Kind = 'z'
	// KindZSetWide is the head record of a sorted set stored as one record
	// per member (AppendMemberKey), so that the sliding-window changes
	// (ZADD at the tail, ZREMRANGEBYSCORE of a prefix) cost one record per
	// member touched instead of a rewrite of the whole set. Decode returns
	// the head with no Items; Store.Load gathers the member records into
	// Items as KindZSet has them (with Value.Wide set). The server uses
	// this form for large sets (cell/zset_persist.go).
	KindZSetWide Kind = 'w'
	// KindZSetInts is a sorted set whose every member is the decimal text
	// of an int64 equal to its score (a sliding window of timestamps):
	// the payload is the count and the integers in order, the first as a
	// varint and each next one as the varint of its difference from the
	// one before, a byte or two where KindZSet takes 23 per entry.
	// ZSetInts writes it; Decode checks it and returns it with the
	// payload in Str, which EachZSetInt reads.
	KindZSetInts Kind = 'n'
	// KindInt is a string that is the decimal form of an int64 (what
	// Redis keeps with its int encoding: counters, CL.THROTTLE's TAT),
	// stored as a varint in Int rather than as text, so that writing it
	// formats nothing.
	KindInt Kind = 'i'
	// KindGone is a key record saying the key does not exist, whatever
	// the base (base.go) holds for it: a key deleted since the last
	// rewrite. Only the snapshot holds it, never the effect log.
	KindGone Kind = 'x'
	// KindListAt is a list whose head element sits at position Pos of
	// the list's own numbering (the payload starts with varint(Pos)),
	// which the effect log's list changes name elements by
	// (Batch.ListSpan): each LPUSH takes the position before the head,
	// each LPOP moves the head one on. Decode returns it as a KindList
	// with Pos set, and AppendValue writes a KindList with a Pos this way.
	KindListAt Kind = 'a'
	// The kinds below are the effect log's only (format 5): the head of
	// a change in place of a hash or a list, and a change in place of a
	// string. Decode returns the heads with no payload, as KindZSetWide.
	//
	// KindHashHead says the key is a hash (an empty one if it held
	// anything else or nothing) with expiry Exp; the field changes that
	// follow it (opHeadSet, opHeadDelete) are the hash's.
	KindHashHead Kind = 'H'
	// KindListHead says the key is a list (an empty one at position 0 if
	// it held anything else or nothing) with expiry Exp; the opListSpan
	// and opListSet ops that follow it are the list's.
	KindListHead Kind = 'L'
	// KindStrPatch is a change in place of a string (APPEND, SETRANGE):
	// its payload is uvarint(length) | uvarint(offset) | bytes, and it
	// makes the string length bytes long (cutting it, or padding it with
	// zero bytes) and then puts bytes at offset. walkEffects reads it
	// (EffectPatch); Decode refuses it.
	KindStrPatch Kind = 'p'
	// KindWindow is a CL.WINDOW sliding-window log: its payload is runs
	// of uvarint(time - the previous run's time) | uvarint(count), in
	// ascending time, the first time from 0 (AppendWindow). Decode checks
	// it and returns it in Str.
	KindWindow Kind = 'W'
)

// Value is one key's stored state: its kind, its absolute expiry in Unix ms
// (0: none) and its contents. Decoded values alias the bytes they were
// decoded from.
type Value struct {
	Kind  Kind
	Exp   int64
	Str   []byte
	Int   int64 // KindInt's value
	Items [][]byte
	// Wide: a KindZSet that Load gathered from a KindZSetWide head and
	// its member records, so a delete of the key must be a range delete.
	Wide bool
	// Over: Load read a key record over a base (base.go): it replaces
	// what the base gave the key, if anything.
	Over bool
	// Pos is a list's head position (KindListAt); 0 for the rest.
	Pos int64
}

// Record layout.
//
// A key record's Pebble key is
//
//	nsKey | uvarint(db) | uvarint(len(key)) | key
//
// The length prefix makes every key record prefix-free among key records,
// so the records that belong to one Redis key (the head, and for sorted
// sets its members) are exactly the Pebble keys that start with the head's
// key: a range delete of [head, PrefixEnd(head)) removes the key and
// nothing else, and a range delete of one db's prefix empties that db.
//
// A member record's key is head | member; its value is EncodeScore(score)
// (sorted sets in the KindZSetWide form).
//
// A value is
//
//	kind byte | uvarint(exp) | payload
//
// payload: a string's bytes as they are; a list's, hash's or sorted set's
// uvarint(count) then count items, each uvarint(len) | bytes; nothing for
// a KindZSetWide head.
const (
	nsMeta byte = 0x00 // format version and other server metadata
	nsKey  byte = 0x01 // the keyspace
)

// ErrCorrupt is returned for a record that does not decode. Recovery
// reports it with the record's key and refuses nothing else.
var ErrCorrupt = errors.New("persist: corrupt record")

// AppendKey appends the Pebble key of db's key to dst.
func AppendKey(dst []byte, db int, key []byte) []byte {
	dst = append(dst, nsKey)
	dst = binary.AppendUvarint(dst, uint64(db))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// AppendDBPrefix appends the prefix every key record of db starts with.
func AppendDBPrefix(dst []byte, db int) []byte {
	dst = append(dst, nsKey)
	return binary.AppendUvarint(dst, uint64(db))
}

// AppendMemberKey appends the Pebble key of a sorted-set member of the set
// whose key record is head: head, then the member. A member that is empty
// or starts with a zero byte gets a zero byte before it, so that no
// member's key is its head's (the empty member's was, up to format 2) and
// MemberOf can tell the two forms apart.
func AppendMemberKey(dst, head, member []byte) []byte {
	return appendMemberSuffix(append(dst, head...), member)
}

func appendMemberSuffix(dst, member []byte) []byte {
	if len(member) == 0 || member[0] == 0 {
		dst = append(dst, 0)
	}
	return append(dst, member...)
}

// MemberOf is the member whose AppendMemberKey suffix is suffix (DecodeKey's
// third result, not empty).
func MemberOf(suffix []byte) []byte {
	if len(suffix) > 0 && suffix[0] == 0 {
		return suffix[1:]
	}
	return suffix
}

// DecodeKey splits a key record's Pebble key into its db, its Redis key and
// the suffix after them: empty for a head, else a member's (MemberOf reads
// it). The slices alias k.
func DecodeKey(k []byte) (db int, key, suffix []byte, err error) {
	if len(k) == 0 || k[0] != nsKey {
		return 0, nil, nil, ErrCorrupt
	}
	k = k[1:]
	d, n := binary.Uvarint(k)
	if n <= 0 || d > 1<<31 {
		return 0, nil, nil, ErrCorrupt
	}
	k = k[n:]
	l, n := binary.Uvarint(k)
	if n <= 0 || l > uint64(len(k)-n) {
		return 0, nil, nil, ErrCorrupt
	}
	k = k[n:]
	return int(d), k[:l], k[l:], nil
}

// PrefixEnd returns the smallest key greater than every key starting with
// p, the exclusive end of a range delete over p. p must not be all 0xff
// bytes (ours start with a namespace byte below 0xff).
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// AppendString appends the encoding of a string value; it is the hot path
// (counters, CL.THROTTLE state) and allocates nothing.
func AppendString(dst []byte, exp int64, s []byte) []byte {
	dst = append(dst, byte(KindString))
	dst = binary.AppendUvarint(dst, uint64(exp))
	return append(dst, s...)
}

// AppendInt appends the encoding of a KindInt value: the hot path of
// counters and CL.THROTTLE, with nothing to format.
func AppendInt(dst []byte, exp, v int64) []byte {
	dst = append(dst, byte(KindInt))
	dst = binary.AppendUvarint(dst, uint64(exp))
	return binary.AppendVarint(dst, v)
}

// ZSetInts appends a KindZSetInts value: the members of a self-keyed
// sorted set as integers, ascending. Start it with Head, then Add each
// member in order.
type ZSetInts struct{ prev int64 }

// Head appends the value's kind, expiry and member count.
func (w *ZSetInts) Head(dst []byte, exp int64, count int) []byte {
	w.prev = 0
	dst = append(dst, byte(KindZSetInts))
	dst = binary.AppendUvarint(dst, uint64(exp))
	return binary.AppendUvarint(dst, uint64(count))
}

// Add appends the next member.
func (w *ZSetInts) Add(dst []byte, v int64) []byte {
	dst = binary.AppendVarint(dst, v-w.prev)
	w.prev = v
	return dst
}

// AppendValue appends the encoding of v.
func AppendValue(dst []byte, v Value) []byte {
	switch v.Kind {
	case KindString:
		return AppendString(dst, v.Exp, v.Str)
	case KindInt:
		return AppendInt(dst, v.Exp, v.Int)
	case KindList, KindHash, KindZSet, KindSet:
		if v.Kind == KindList && v.Pos != 0 {
			dst = AppendListAt(dst, v.Exp, v.Pos, len(v.Items))
		} else {
			dst = AppendAggregate(dst, v.Kind, v.Exp, len(v.Items))
		}
		for _, it := range v.Items {
			dst = AppendItem(dst, it)
		}
		return dst
	case KindZSetInts, KindWindow: // Str holds the payload, as Decode gives it
		dst = append(dst, byte(v.Kind))
		dst = binary.AppendUvarint(dst, uint64(v.Exp))
		return append(dst, v.Str...)
	default: // KindZSetWide (the members are records of their own), KindGone, the heads
		dst = append(dst, byte(v.Kind))
		return binary.AppendUvarint(dst, uint64(v.Exp))
	}
}

// AppendAggregate starts the encoding of a list or hash of count items;
// AppendItem then appends each. Types that hold their items in their own
// form (string fields, ring buffers) encode without building a Value.
func AppendAggregate(dst []byte, kind Kind, exp int64, count int) []byte {
	dst = append(dst, byte(kind))
	dst = binary.AppendUvarint(dst, uint64(exp))
	return binary.AppendUvarint(dst, uint64(count))
}

// AppendListAt starts the encoding of a list of count items whose head
// is at position pos (KindListAt); AppendItem then appends each.
func AppendListAt(dst []byte, exp, pos int64, count int) []byte {
	dst = append(dst, byte(KindListAt))
	dst = binary.AppendUvarint(dst, uint64(exp))
	dst = binary.AppendVarint(dst, pos)
	return binary.AppendUvarint(dst, uint64(count))
}

// AppendItem appends one item of a list or hash.
func AppendItem[T string | []byte](dst []byte, item T) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(item)))
	return append(dst, item...)
}

// Decode reads a value. It checks every length against the input, so a
// corrupt record gives ErrCorrupt, never a panic or a huge allocation.
func Decode(b []byte) (Value, error) { return decodeReusing(b, nil) }

// decodeReusing is Decode with an aggregate's Items in items' array when
// it has the room. Loading decodes every key of the snapshot, each value
// used only until the next, with the collector paused (cell's loadStore):
// a new slice for each was garbage in proportion to the keys, a hash or
// list of two fields about 100 bytes.
func decodeReusing(b []byte, items [][]byte) (Value, error) {
	if len(b) == 0 {
		return Value{}, ErrCorrupt
	}
	v := Value{Kind: Kind(b[0])}
	exp, n := binary.Uvarint(b[1:])
	if n <= 0 || exp > 1<<62 {
		return Value{}, ErrCorrupt
	}
	v.Exp = int64(exp)
	b = b[1+n:]
	switch v.Kind {
	case KindString:
		v.Str = b
		return v, nil
	case KindInt:
		i, n := binary.Varint(b)
		if n <= 0 || n != len(b) {
			return Value{}, ErrCorrupt
		}
		v.Int = i
		return v, nil
	case KindZSetInts:
		if err := EachZSetInt(b, nil); err != nil {
			return Value{}, err
		}
		v.Str = b
		return v, nil
	case KindWindow:
		if !validWindow(b) {
			return Value{}, ErrCorrupt
		}
		v.Str = b
		return v, nil
	case KindZSetWide, KindGone, KindHashHead, KindListHead:
		if len(b) != 0 {
			return Value{}, ErrCorrupt
		}
		return v, nil
	case KindListAt:
		pos, n := binary.Varint(b)
		if n <= 0 {
			return Value{}, ErrCorrupt
		}
		v.Kind, v.Pos, b = KindList, pos, b[n:]
	case KindList, KindHash, KindZSet, KindSet:
	default:
		return Value{}, ErrCorrupt
	}
	count, n := binary.Uvarint(b)
	// Every item takes at least its one length byte: a count beyond the
	// remaining bytes is corrupt, and checking it first bounds the
	// allocation below by the record's size.
	if n <= 0 || count > uint64(len(b)-n) {
		return Value{}, ErrCorrupt
	}
	if (v.Kind == KindHash || v.Kind == KindZSet) && count%2 != 0 {
		return Value{}, ErrCorrupt
	}
	b = b[n:]
	if count > 0 && uint64(cap(items)) >= count {
		v.Items = items[:count]
	} else {
		v.Items = make([][]byte, count)
	}
	for i := range v.Items {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return Value{}, ErrCorrupt
		}
		v.Items[i] = b[n : n+int(l) : n+int(l)]
		b = b[n+int(l):]
	}
	if len(b) != 0 {
		return Value{}, ErrCorrupt
	}
	if v.Kind == KindZSet {
		for i := 1; i < len(v.Items); i += 2 {
			if len(v.Items[i]) != 8 {
				return Value{}, ErrCorrupt
			}
		}
	}
	return v, nil
}

// EachZSetInt calls fn with each integer of a KindZSetInts payload (a
// Value's Str), in order. The integers must ascend strictly, as a set's
// members in score order do; a payload that breaks that or its own
// framing is ErrCorrupt.
func EachZSetInt(b []byte, fn func(v int64)) error {
	count, n := binary.Uvarint(b)
	// Every integer takes at least one byte.
	if n <= 0 || count > uint64(len(b)-n) {
		return ErrCorrupt
	}
	b = b[n:]
	var cur int64
	for i := range count {
		d, n := binary.Varint(b)
		if n <= 0 || (i > 0 && (d <= 0 || cur+d < cur)) {
			return ErrCorrupt
		}
		b = b[n:]
		cur += d
		if fn != nil {
			fn(cur)
		}
	}
	if len(b) != 0 {
		return ErrCorrupt
	}
	return nil
}

// EncodeScore is a sorted-set member record's value: the score's IEEE 754
// bits, big-endian.
func EncodeScore(score float64) [8]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], math.Float64bits(score))
	return b
}

// DecodeScore reads EncodeScore's bytes.
func DecodeScore(b []byte) (float64, error) {
	if len(b) != 8 {
		return 0, ErrCorrupt
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// AppendWindow appends a KindWindow value whose payload is runs, as
// cell/keyspace's Window holds them.
func AppendWindow(dst []byte, exp int64, runs []byte) []byte {
	dst = append(dst, byte(KindWindow))
	dst = binary.AppendUvarint(dst, uint64(exp))
	return append(dst, runs...)
}

// validWindow reports whether b is a KindWindow payload: at least one
// run, each a time delta (positive after the first) and a positive count,
// the times within int64.
func validWindow(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	var t uint64
	for i := 0; len(b) > 0; i++ {
		d, n := binary.Uvarint(b)
		if n <= 0 || (i > 0 && d == 0) || d > math.MaxInt64-t {
			return false
		}
		c, m := binary.Uvarint(b[n:])
		if m <= 0 || c == 0 || c > math.MaxInt64 {
			return false
		}
		t += d
		b = b[n+m:]
	}
	return true
}
