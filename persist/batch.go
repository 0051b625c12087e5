package persist

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// Batch collects the effects of one command, EXEC or expiry pass for the
// effect log (Store.Commit), or one slice of a checkpoint for the snapshot
// (Store.WriteSnapshot). It is reused: Commit and WriteSnapshot empty it.
//
// Its records are Pebble operations on the layout of record.go, held in
// the log's encoding (effect.go) as they are added: Commit copies that
// into the log as it is, a checkpoint applies the operations to Pebble,
// and replay gives them the same meaning.
type Batch struct {
	wire []byte // the records, encoded
	n    int    // how many
	kbuf []byte // the key being added
	vbuf []byte // the value being added
}

// opKind is a record's operation.
type opKind uint8

const (
	opSet opKind = iota + 1
	opDelete
	opDeleteRange // key is the start, value the exclusive end
	// The ops below change a member of the sorted set whose head (an
	// opSet of a KindZSetWide value) came last in the record; only the
	// effect log holds them (Batch.PutHeadMember, DeleteHeadMember), and
	// walkEffects reads them as that set's member effects. Not repeating
	// the set's key shrinks a window's record from about 120 bytes to
	// about 45.
	opHeadSet       // key: the member; value: its score (EncodeScore)
	opHeadDelete    // key: the member; no value
	opHeadSetInt    // varint v: member FormatInt(v) with score float64(v)
	opHeadDeleteInt // varint v: member FormatInt(v) goes
	// The list ops (format 5) change the list whose KindListHead came
	// last in the record, naming its elements by position
	// (KindListAt). Each says what the list is after the change, not
	// what the change was, so that replaying it over a later state of
	// the list (a checkpoint's, persist/effect.go) ends in the same
	// state: an LPUSH is a span one longer at the head and the new
	// element's position and bytes, not "push".
	opListSpan // varint(pos) | uvarint(n): the list is the positions [pos, pos+n)
	opListSet  // varint(pos) | uvarint(len) | bytes: the element at pos
)

// add appends one record. A delete has no value.
func (b *Batch) add(op opKind, key, val []byte) {
	b.wire = append(b.wire, byte(op))
	b.wire = binary.AppendUvarint(b.wire, uint64(len(key)))
	b.wire = append(b.wire, key...)
	if op != opDelete {
		b.wire = binary.AppendUvarint(b.wire, uint64(len(val)))
		b.wire = append(b.wire, val...)
	}
	b.n++
}

func (b *Batch) reset() { b.wire, b.n = b.wire[:0], 0 }

// NewBatch makes an empty batch for s.
func (s *Store) NewBatch() *Batch { return &Batch{} }

// Reset empties the batch and keeps its buffer, for a batch reused across
// writes that may have stopped halfway (a checkpoint that failed).
func (b *Batch) Reset() { b.reset() }

// Empty reports whether the batch holds nothing to commit.
func (b *Batch) Empty() bool { return b.n == 0 }

// Len is the number of records in the batch.
func (b *Batch) Len() int { return b.n }

// Size is the bytes the batch's records hold.
func (b *Batch) Size() int { return len(b.wire) }

// Encoded is the batch's records as the effect log holds them, valid
// until the batch changes: what two ways of building a record are compared
// by.
func (b *Batch) Encoded() []byte { return b.wire }

// The puts of every write's hot path (PutString, PutInt, a KindZSetWide
// head, Delete) encode straight into the record, their lengths worked out
// first, rather than through kbuf and vbuf as add does; the bytes are the
// same (TestBatchDirectEncoding).

// addKey appends a record's op and key: AppendKey's encoding of db's key,
// its length first.
func (b *Batch) addKey(op opKind, db int, key []byte) {
	n := 1 + uvarintLen(uint64(db)) + uvarintLen(uint64(len(key))) + len(key)
	b.wire = append(b.wire, byte(op))
	b.wire = binary.AppendUvarint(b.wire, uint64(n))
	b.wire = AppendKey(b.wire, db, key)
	b.n++
}

// uvarintLen is the length of binary.AppendUvarint's encoding of x.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// PutString stores db's key as a string value.
func (b *Batch) PutString(db int, key []byte, exp int64, val []byte) {
	b.addKey(opSet, db, key)
	b.wire = binary.AppendUvarint(b.wire, uint64(1+uvarintLen(uint64(exp))+len(val)))
	b.wire = AppendString(b.wire, exp, val)
}

// PutInt stores db's key as the string that is v's decimal form
// (KindInt).
func (b *Batch) PutInt(db int, key []byte, exp, v int64) {
	b.addKey(opSet, db, key)
	zigzag := uint64(v<<1) ^ uint64(v>>63) // binary.AppendVarint's form
	b.wire = binary.AppendUvarint(b.wire, uint64(1+uvarintLen(uint64(exp))+uvarintLen(zigzag)))
	b.wire = AppendInt(b.wire, exp, v)
}

// Put stores db's key as v. For a KindZSetWide head, the caller also
// calls PutMember for the members and, in a snapshot, must have called
// DeleteKey first if the key held anything else. In the effect log a
// KindZSetWide head followed by member records is a change of a sorted
// set in place (effect.go).
func (b *Batch) Put(db int, key []byte, v Value) {
	if v.Kind == KindZSetWide {
		b.PutZSetHead(db, key, v.Exp)
		return
	}
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.vbuf = AppendValue(b.vbuf[:0], v)
	b.add(opSet, b.kbuf, b.vbuf)
}

// PutZSetHead is Put of a KindZSetWide head with expiry exp: a W1
// block's record starts with one, so it is encoded here directly.
func (b *Batch) PutZSetHead(db int, key []byte, exp int64) { b.putHead(KindZSetWide, db, key, exp) }

// PutHashHead starts a change in place of the hash db's key, with expiry
// exp, in the effect log (KindHashHead): PutHeadField and
// DeleteHeadField then add the fields it changed, in order.
func (b *Batch) PutHashHead(db int, key []byte, exp int64) { b.putHead(KindHashHead, db, key, exp) }

// PutListHead starts a change in place of the list db's key, with expiry
// exp, in the effect log (KindListHead): ListSpan and ListSet then add
// what changed, in order.
func (b *Batch) PutListHead(db int, key []byte, exp int64) { b.putHead(KindListHead, db, key, exp) }

func (b *Batch) putHead(kind Kind, db int, key []byte, exp int64) {
	b.addKey(opSet, db, key)
	b.wire = binary.AppendUvarint(b.wire, uint64(1+uvarintLen(uint64(exp))))
	b.wire = append(b.wire, byte(kind))
	b.wire = binary.AppendUvarint(b.wire, uint64(exp))
}

// PutHeadField says field of the hash whose head was the batch's last
// Put now holds value.
func (b *Batch) PutHeadField(field, value []byte) {
	b.wire = append(b.wire, byte(opHeadSet))
	b.wire = AppendItem(b.wire, field)
	b.wire = AppendItem(b.wire, value)
	b.n++
}

// DeleteHeadField says field of the hash whose head was the batch's last
// Put is gone.
func (b *Batch) DeleteHeadField(field []byte) {
	b.wire = append(b.wire, byte(opHeadDelete))
	b.wire = AppendItem(b.wire, field)
	b.n++
}

// ListSpan says the list whose head was the batch's last Put now holds
// the positions [pos, pos+n): elements outside go, positions not held
// before are filled by the ListSet that follow.
func (b *Batch) ListSpan(pos int64, n int) {
	b.wire = append(b.wire, byte(opListSpan))
	b.wire = binary.AppendVarint(b.wire, pos)
	b.wire = binary.AppendUvarint(b.wire, uint64(n))
	b.n++
}

// ListSet says the element at position pos of the list whose head was
// the batch's last Put is v.
func (b *Batch) ListSet(pos int64, v []byte) {
	b.wire = append(b.wire, byte(opListSet))
	b.wire = binary.AppendVarint(b.wire, pos)
	b.wire = AppendItem(b.wire, v)
	b.n++
}

// PatchString logs a change in place of the string db's key, whose
// expiry is exp (KindStrPatch): it is now length bytes long, data at off
// and the rest as it was (zero bytes where it was shorter). APPEND and
// SETRANGE on a long string cost what they add, not the whole string.
func (b *Batch) PatchString(db int, key []byte, exp, length, off int64, data []byte) {
	b.addKey(opSet, db, key)
	n := 1 + uvarintLen(uint64(exp)) + uvarintLen(uint64(length)) + uvarintLen(uint64(off)) + len(data)
	b.wire = binary.AppendUvarint(b.wire, uint64(n))
	b.wire = append(b.wire, byte(KindStrPatch))
	b.wire = binary.AppendUvarint(b.wire, uint64(exp))
	b.wire = binary.AppendUvarint(b.wire, uint64(length))
	b.wire = binary.AppendUvarint(b.wire, uint64(off))
	b.wire = append(b.wire, data...)
}

// Scratch returns the batch's value buffer, emptied, for an encoding that
// PutEncoded then stores: the buffer is reused from put to put.
func (b *Batch) Scratch() []byte { return b.vbuf[:0] }

// PutEncoded stores val, an encoding made with AppendAggregate and
// AppendItem (or AppendValue), as db's key.
func (b *Batch) PutEncoded(db int, key, val []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.vbuf = val
	b.add(opSet, b.kbuf, val)
}

// PutMember stores one member of the sorted set db's key.
func (b *Batch) PutMember(db int, key, member []byte, score float64) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.kbuf = appendMemberSuffix(b.kbuf, member)
	sc := EncodeScore(score)
	b.add(opSet, b.kbuf, sc[:])
}

// PutHeadMember is PutMember for the set whose KindZSetWide head was the
// batch's last Put, in the effect log's shorter form: the set's key is not
// repeated, and a member that is the decimal text of its integral score
// (a window's timestamp) is that integer alone. Only Commit takes it, not
// WriteSnapshot.
func (b *Batch) PutHeadMember(member []byte, score float64) {
	if v, ok := selfKeyedMember(member); ok && math.Float64bits(float64(v)) == math.Float64bits(score) {
		b.PutHeadMemberInt(v)
		return
	}
	sc := EncodeScore(score)
	b.wire = append(b.wire, byte(opHeadSet))
	b.wire = binary.AppendUvarint(b.wire, uint64(len(member)))
	b.wire = append(b.wire, member...)
	b.wire = append(b.wire, 8)
	b.wire = append(b.wire, sc[:]...)
	b.n++
}

// PutHeadMemberInt is PutHeadMember of the member that is v's decimal
// text, at score float64(v), for a caller that holds the integer already
// (a window's timestamp): no text to parse.
func (b *Batch) PutHeadMemberInt(v int64) {
	b.wire = append(b.wire, byte(opHeadSetInt))
	b.wire = binary.AppendVarint(b.wire, v)
	b.n++
}

// DeleteHeadMember is DeleteMember in PutHeadMember's form.
func (b *Batch) DeleteHeadMember(member []byte) {
	if v, ok := selfKeyedMember(member); ok {
		b.DeleteHeadMemberInt(v)
		return
	}
	b.wire = append(b.wire, byte(opHeadDelete))
	b.wire = binary.AppendUvarint(b.wire, uint64(len(member)))
	b.wire = append(b.wire, member...)
	b.n++
}

// DeleteHeadMemberInt is DeleteHeadMember of v's decimal text.
func (b *Batch) DeleteHeadMemberInt(v int64) {
	b.wire = append(b.wire, byte(opHeadDeleteInt))
	b.wire = binary.AppendVarint(b.wire, v)
	b.n++
}

// selfKeyedMember returns the int64 whose canonical decimal text member
// is: an optional minus, no leading zero, not "-0". Replay rebuilds the
// member from it with strconv.AppendInt, byte for byte.
func selfKeyedMember(m []byte) (int64, bool) {
	neg := len(m) > 0 && m[0] == '-'
	if neg {
		m = m[1:]
	}
	if len(m) == 0 || len(m) > 19 || m[0] == '0' && (len(m) > 1 || neg) {
		return 0, false
	}
	var u uint64
	for _, c := range m {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0') // 19 digits cannot wrap a uint64
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// DeleteMember removes one member of the sorted set db's key.
func (b *Batch) DeleteMember(db int, key, member []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.kbuf = appendMemberSuffix(b.kbuf, member)
	b.add(opDelete, b.kbuf, nil)
}

// Delete removes db's key when it is known to have one record only (a
// string, list, hash or sorted set in one record): a point delete, much
// cheaper in Pebble than DeleteKey.
func (b *Batch) Delete(db int, key []byte) { b.addKey(opDelete, db, key) }

// Gone records in the snapshot that db's key does not exist, over what
// the base may hold for it (base.go): a point record, where a delete
// would let the base's show through.
func (b *Batch) Gone(db int, key []byte) { b.Put(db, key, Value{Kind: KindGone}) }

// DeleteKey removes db's key and every member record under it.
func (b *Batch) DeleteKey(db int, key []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.add(opDeleteRange, b.kbuf, PrefixEnd(b.kbuf))
}

// DeleteDB removes every key of db (FLUSHDB, FLUSHALL): one range
// tombstone, whatever the number of keys.
func (b *Batch) DeleteDB(db int) {
	b.kbuf = AppendDBPrefix(b.kbuf[:0], db)
	b.add(opDeleteRange, b.kbuf, PrefixEnd(b.kbuf))
}
