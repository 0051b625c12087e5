package persist

// Batch collects the effects of one command, EXEC or expiry pass for the
// effect log (Store.Commit), or one slice of a checkpoint for the snapshot
// (Store.WriteSnapshot). It is reused: Commit and WriteSnapshot empty it.
//
// Its records are Pebble operations on the layout of record.go, so that a
// checkpoint applies them to Pebble as they are and the log replays them
// with the same meaning (effect.go).
type Batch struct {
	records
	kbuf []byte // the key being added
	vbuf []byte // the value being added
	wire []byte // the log encoding, built by Commit
}

// opKind is a record's operation.
type opKind uint8

const (
	opSet opKind = iota + 1
	opDelete
	opDeleteRange // key is the start, value the exclusive end
)

// rec is one record: its key is buf[k0:k1] and its value buf[k1:v1].
type rec struct {
	op         opKind
	k0, k1, v1 uint32
}

// records is a list of records over one byte buffer.
type records struct {
	buf  []byte
	recs []rec
}

func (r *records) add(op opKind, key, val []byte) {
	k0 := len(r.buf)
	r.buf = append(r.buf, key...)
	k1 := len(r.buf)
	r.buf = append(r.buf, val...)
	r.recs = append(r.recs, rec{op, uint32(k0), uint32(k1), uint32(len(r.buf))})
}

func (r *records) reset() { r.buf, r.recs = r.buf[:0], r.recs[:0] }

func (r *records) key(x rec) []byte { return r.buf[x.k0:x.k1] }
func (r *records) val(x rec) []byte { return r.buf[x.k1:x.v1] }

// NewBatch makes an empty batch for s.
func (s *Store) NewBatch() *Batch { return &Batch{} }

// Empty reports whether the batch holds nothing to commit.
func (b *Batch) Empty() bool { return len(b.recs) == 0 }

// Len is the number of records in the batch.
func (b *Batch) Len() int { return len(b.recs) }

// Size is the bytes the batch's records hold.
func (b *Batch) Size() int { return len(b.buf) }

// PutString stores db's key as a string value.
func (b *Batch) PutString(db int, key []byte, exp int64, val []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.vbuf = AppendString(b.vbuf[:0], exp, val)
	b.add(opSet, b.kbuf, b.vbuf)
}

// Put stores db's key as v. For a KindZSetWide head, the caller also
// calls PutMember for the members and, in a snapshot, must have called
// DeleteKey first if the key held anything else. In the effect log a
// KindZSetWide head followed by member records is a change of a sorted
// set in place (effect.go).
func (b *Batch) Put(db int, key []byte, v Value) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.vbuf = AppendValue(b.vbuf[:0], v)
	b.add(opSet, b.kbuf, b.vbuf)
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
	b.kbuf = append(b.kbuf, member...)
	sc := EncodeScore(score)
	b.add(opSet, b.kbuf, sc[:])
}

// DeleteMember removes one member of the sorted set db's key.
func (b *Batch) DeleteMember(db int, key, member []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.kbuf = append(b.kbuf, member...)
	b.add(opDelete, b.kbuf, nil)
}

// Delete removes db's key when it is known to have one record only (a
// string, list, hash or sorted set in one record): a point delete, much
// cheaper in Pebble than DeleteKey.
func (b *Batch) Delete(db int, key []byte) {
	b.kbuf = AppendKey(b.kbuf[:0], db, key)
	b.add(opDelete, b.kbuf, nil)
}

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

func (b *Batch) reset() {
	b.records.reset()
	b.wire = b.wire[:0]
}
