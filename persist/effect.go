package persist

import (
	"encoding/binary"
	"fmt"
	"strconv"
)

// The effect log's record: one Batch, as Commit appends it.
//
//	record   = op*
//	op       = kind byte | uvarint(len(key)) | key [ | uvarint(len(val)) | val ]
//	         | kind byte | varint(n)      (opHeadSetInt, opHeadDeleteInt)
//	         | kind byte | varint(pos) | uvarint(n)             (opListSpan)
//	         | kind byte | varint(pos) | uvarint(len(v)) | v    (opListSet)
//
// key is a Pebble key of record.go; val is present for opSet (a value of
// record.go, or a member's score) and opDeleteRange (the range's end).
// The opHead ops name a member of the sorted set whose KindZSetWide head
// is the op before them (or before their run): key is the member, val its
// score, or n is a member that is n's decimal text with score n
// (batch.go). After a KindHashHead, opHeadSet and opHeadDelete name a
// field of the hash instead (val its value); after a KindListHead, the
// list ops change the list. A KindStrPatch value changes a string in
// place. Those are format 5's, the changes in place of big values.
//
// Replaying a record never runs a command: each op sets, or deletes, the
// state of one key, one sorted-set member, or one database, to what it was
// after the execution. That makes replay idempotent over any snapshot
// taken after the replay's starting point (checkpoint.go in cell relies on
// it): a key whose record comes later is overwritten by it, and a key with
// no later record already holds its final state in the snapshot. The
// changes in place keep that: a member, field or list position is set to
// its final state, a list's span is set, not moved, and a string patch
// sets the length (which only grows between two whole records of the
// key) and the bytes it wrote; whatever an older change puts over a later
// state is put right by the later changes of the same positions.

// EffectKind is what an Effect does.
type EffectKind uint8

const (
	// EffectPut makes the key hold Value, whatever it held. A Value of
	// KindZSetWide instead says the key is a sorted set (an empty one if
	// it held anything else or nothing) with expiry Value.Exp, and the
	// EffectPutMember and EffectDeleteMember effects on it that follow
	// are its changed members.
	EffectPut EffectKind = iota + 1
	EffectPutMember
	EffectDeleteMember
	EffectDelete  // the key is gone
	EffectFlushDB // every key of DB is gone
	// EffectEnd ends a record (an execution): a sorted set, hash or list
	// it left empty is gone, as the keyspace never holds one.
	EffectEnd
	// EffectPutField sets field Member of the hash of the KindHashHead
	// before it to Data; EffectDeleteField removes field Member.
	EffectPutField
	EffectDeleteField
	// EffectListSpan makes the list of the KindListHead before it hold
	// the positions [Pos, Pos+Len); EffectListSet puts Data at Pos.
	EffectListSpan
	EffectListSet
	// EffectPatch makes the string key Len bytes long (cut, or padded
	// with zero bytes), puts Data at Pos, and sets its expiry to
	// Value.Exp; a key that holds no string becomes one.
	EffectPatch
	// The function libraries' effects (library.go), with DB -1:
	// EffectPutLibrary makes library Key hold the code Data,
	// EffectDeleteLibrary removes library Key, EffectFlushLibraries
	// removes them all.
	EffectPutLibrary
	EffectDeleteLibrary
	EffectFlushLibraries
)

// Effect is one op of a logged record, decoded. Its slices alias the
// record and are valid during the Replay callback only.
type Effect struct {
	Kind   EffectKind
	DB     int
	Key    []byte
	Member []byte
	Value  Value
	Score  float64
	Pos    int64
	Len    int64
	Data   []byte
	num    [20]byte // Member's bytes when the record held it as an integer
}

// InPlace reports whether e changes a value in place (a head, a member,
// a field, a list position, a string patch) rather than set a new state
// of its key.
func (e *Effect) InPlace() bool {
	switch e.Kind {
	case EffectPut:
		k := e.Value.Kind
		return k == KindZSetWide || k == KindHashHead || k == KindListHead
	case EffectPutMember, EffectDeleteMember, EffectPutField, EffectDeleteField,
		EffectListSpan, EffectListSet, EffectPatch:
		return true
	}
	return false
}

// decodeEffects calls fn for each op of a log record, in order. A record
// that does not decode is reported whole, before any of its ops are
// applied, so that an execution is replayed entirely or not at all.
// e is where each effect is decoded (the caller's, so that decoding a
// record allocates nothing).
func decodeEffects(rec []byte, e *Effect, fn func(e *Effect) error) error {
	if err := walkEffects(rec, e, noEffect); err != nil {
		return err
	}
	return walkEffects(rec, e, fn)
}

func noEffect(*Effect) error { return nil }

// walkEffects decodes a record's ops into e and calls fn with each.
//
// A member's whole key (opSet or opDelete of a key with a suffix) is read
// as format 2 wrote it, the suffix being the member: since format 3 the
// log only names members relative to their set's head (opHeadSet and the
// rest, Batch.PutHeadMember), and AppendMemberKey's escape is the
// snapshot's alone.
func walkEffects(rec []byte, e *Effect, fn func(e *Effect) error) error {
	var (
		head    Kind // the kind of the last op if it was a head or one of its changes, else 0
		headDB  int
		headKey []byte
	)
	return walkWire(rec, func(op opKind, k, v []byte) error {
		*e = Effect{}
		if op <= opDeleteRange && isLibKey(k) {
			head = 0
			if err := libraryEffect(op, k, v, e); err != nil {
				return err
			}
			return fn(e)
		}
		if op >= opHeadSet {
			if head == 0 {
				return fmt.Errorf("%w: a change without its value's head", ErrCorrupt)
			}
			e.DB, e.Key = headDB, headKey
			return headEffect(head, op, k, v, e, fn)
		}
		head = 0
		if op == opDeleteRange {
			if db, key, member, err := DecodeKey(k); err == nil && len(member) == 0 {
				e.Kind, e.DB, e.Key = EffectDelete, db, key
				return fn(e)
			}
			db, ok := decodeDBPrefix(k)
			if !ok {
				return ErrCorrupt
			}
			e.Kind, e.DB = EffectFlushDB, db
			return fn(e)
		}
		db, key, member, err := DecodeKey(k)
		if err != nil {
			return err
		}
		e.DB, e.Key, e.Member = db, key, member
		switch {
		case op == opDelete && len(member) == 0:
			e.Kind = EffectDelete
		case op == opDelete:
			e.Kind = EffectDeleteMember
		case len(member) != 0:
			e.Kind = EffectPutMember
			if e.Score, err = DecodeScore(v); err != nil {
				return err
			}
		case len(v) > 0 && Kind(v[0]) == KindStrPatch:
			if err := decodePatch(v[1:], e); err != nil {
				return err
			}
		default:
			e.Kind = EffectPut
			if e.Value, err = Decode(v); err != nil {
				return err
			}
			switch e.Value.Kind {
			case KindZSetWide, KindHashHead, KindListHead:
				head, headDB, headKey = e.Value.Kind, db, key
			}
		}
		return fn(e)
	})
}

// headEffect decodes into e an op that changes the value whose head (of
// kind head) came before it.
func headEffect(head Kind, op opKind, k, v []byte, e *Effect, fn func(e *Effect) error) error {
	switch {
	case head == KindHashHead && op == opHeadSet:
		e.Kind, e.Member, e.Data = EffectPutField, k, v
	case head == KindHashHead && op == opHeadDelete:
		e.Kind, e.Member = EffectDeleteField, k
	case head == KindListHead && (op == opListSpan || op == opListSet):
		pos, _ := binary.Varint(k) // walkWire checked it
		e.Pos = pos
		if op == opListSet {
			e.Kind, e.Data = EffectListSet, v
			break
		}
		n, _ := binary.Uvarint(v)
		if n > 1<<62 {
			return ErrCorrupt
		}
		e.Kind, e.Len = EffectListSpan, int64(n)
	case head != KindZSetWide || op > opHeadDeleteInt:
		return fmt.Errorf("%w: op %d after a head of kind %q", ErrCorrupt, op, rune(head))
	case op == opHeadSet:
		e.Kind, e.Member = EffectPutMember, k
		var err error
		if e.Score, err = DecodeScore(v); err != nil {
			return err
		}
	case op == opHeadDelete:
		e.Kind, e.Member = EffectDeleteMember, k
	default: // the integer ops: walkWire checked k is a varint
		n, _ := binary.Varint(k)
		e.Member = strconv.AppendInt(e.num[:0], n, 10)
		e.Kind = EffectDeleteMember
		if op == opHeadSetInt {
			e.Kind, e.Score = EffectPutMember, float64(n)
		}
	}
	return fn(e)
}

// decodePatch reads a KindStrPatch payload past its kind byte into e.
func decodePatch(b []byte, e *Effect) error {
	var f [3]uint64 // expiry, length, offset
	for i := range f {
		x, n := binary.Uvarint(b)
		if n <= 0 || x > 1<<62 {
			return ErrCorrupt
		}
		f[i], b = x, b[n:]
	}
	if f[2]+uint64(len(b)) > f[1] {
		return ErrCorrupt
	}
	e.Kind, e.Value.Exp, e.Len, e.Pos, e.Data = EffectPatch, int64(f[0]), int64(f[1]), int64(f[2]), b
	return nil
}

// walkWire splits a log record into its ops. For opHeadSetInt,
// opHeadDeleteInt and the list ops, k is the position's varint; v is the
// count's uvarint for opListSpan, the element for opListSet, else nil.
func walkWire(rec []byte, fn func(op opKind, k, v []byte) error) error {
	for len(rec) > 0 {
		op := opKind(rec[0])
		if op < opSet || op > opListSet {
			return fmt.Errorf("%w: op %d", ErrCorrupt, op)
		}
		rec = rec[1:]
		var k, v []byte
		if op >= opHeadSetInt {
			_, w := binary.Varint(rec)
			if w <= 0 {
				return ErrCorrupt
			}
			k, rec = rec[:w], rec[w:]
			var ok bool
			switch op {
			case opListSpan:
				_, w := binary.Uvarint(rec)
				if w <= 0 {
					return ErrCorrupt
				}
				v, rec = rec[:w], rec[w:]
			case opListSet:
				if v, rec, ok = cutLen(rec); !ok {
					return ErrCorrupt
				}
			}
		} else {
			var ok bool
			if k, rec, ok = cutLen(rec); !ok {
				return ErrCorrupt
			}
			if op != opDelete && op != opHeadDelete {
				if v, rec, ok = cutLen(rec); !ok {
					return ErrCorrupt
				}
			}
		}
		if err := fn(op, k, v); err != nil {
			return err
		}
	}
	return nil
}

// cutLen splits a uvarint length and that many bytes off b.
func cutLen(b []byte) (item, rest []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return nil, nil, false
	}
	b = b[w:]
	return b[:n], b[n:], true
}

// decodeDBPrefix reads the database of an AppendDBPrefix key.
func decodeDBPrefix(k []byte) (int, bool) {
	if len(k) < 2 || k[0] != nsKey {
		return 0, false
	}
	d, n := binary.Uvarint(k[1:])
	if n <= 0 || 1+n != len(k) || d > 1<<31 {
		return 0, false
	}
	return int(d), true
}
