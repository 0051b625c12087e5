package persist

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The base: the snapshot's keys in a few large records.
//
// A checkpoint that finds most keys changed rewrites the whole keyspace
// instead of writing each changed key as a record of its own (a rewrite,
// as Redis rewrites its AOF): it packs every key, one after another, into
// chunks of about baseChunkBytes, each one Pebble record under a new
// generation (BaseWriter), and EndCheckpoint then makes that generation the
// base, in one batch with the checkpoint's position, and deletes the
// previous base and every key record. Pebble's cost is per record: over a
// million CL.THROTTLE keys, its memtable inserts, flushes and compactions
// of one record per key cost more than a microsecond each, which made
// persistence cost a third of the throughput; a chunk of thousands of keys
// costs about what its bytes do.
//
// A rewrite writes a key twice when it changed while the rewrite went on
// and the visit went over its slot again (cell/checkpoint.go): the later
// entry replaces the earlier. The key records written by the checkpoints
// after a rewrite lie over the base: a key's record, or a KindGone record
// for a key deleted since, replaces whatever the base holds for it (Load
// sets Value.Over).
//
// A chunk's Pebble key is
//
//	nsBase | gen (8 bytes, big-endian) | seq (8 bytes, big-endian)
//
// and its value a run of entries, each
//
//	uvarint(db) | uvarint(len(key)) | key | uvarint(len(value)) | value
//
// with the value in record.go's encoding. The generation in force is
// genKey's; chunks of any other (a rewrite cut short by a crash) are
// ignored, and deleted by the next rewrite.

// nsBase is the namespace of the base's chunks.
const nsBase byte = 0x02

// genKey holds the generation of the base in force (uvarint); absent: no
// base.
var genKey = []byte{nsMeta, 'g', 'e', 'n'}

// baseChunkBytes is the size a chunk is sealed at. Big enough that
// Pebble's per-record costs vanish, small enough that a chunk is not a
// burst of memory of its own.
const baseChunkBytes = 256 << 10

// baseKey is the Pebble key of generation gen's chunk seq.
func baseKey(gen, seq uint64) []byte {
	k := make([]byte, 17)
	k[0] = nsBase
	binary.BigEndian.PutUint64(k[1:], gen)
	binary.BigEndian.PutUint64(k[9:], seq)
	return k
}

// BaseWriter packs a rewrite's keys into the chunks of generation gen
// (Store.BeginRewrite gives it) and hands each full chunk to a Batch for
// WriteSnapshot. Its Put methods are Batch's, for putting a whole value.
type BaseWriter struct {
	gen, seq uint64
	chunk    []byte
	vbuf     []byte
}

// NewBaseWriter starts generation gen's chunks.
func NewBaseWriter(gen uint64) *BaseWriter { return &BaseWriter{gen: gen} }

// head appends an entry's db, key and value length.
func (w *BaseWriter) head(db int, key []byte, vlen int) {
	w.chunk = binary.AppendUvarint(w.chunk, uint64(db))
	w.chunk = binary.AppendUvarint(w.chunk, uint64(len(key)))
	w.chunk = append(w.chunk, key...)
	w.chunk = binary.AppendUvarint(w.chunk, uint64(vlen))
}

// PutInt adds db's key as the string that is v's decimal form (KindInt).
func (w *BaseWriter) PutInt(db int, key []byte, exp, v int64) {
	zigzag := uint64(v<<1) ^ uint64(v>>63)
	w.head(db, key, 1+uvarintLen(uint64(exp))+uvarintLen(zigzag))
	w.chunk = AppendInt(w.chunk, exp, v)
}

// PutString adds db's key as a string.
func (w *BaseWriter) PutString(db int, key []byte, exp int64, val []byte) {
	w.head(db, key, 1+uvarintLen(uint64(exp))+len(val))
	w.chunk = AppendString(w.chunk, exp, val)
}

// Scratch returns a buffer, emptied, for an encoding PutEncoded then adds.
func (w *BaseWriter) Scratch() []byte { return w.vbuf[:0] }

// PutEncoded adds db's key with val, an encoded value (AppendValue's
// form).
func (w *BaseWriter) PutEncoded(db int, key, val []byte) {
	w.head(db, key, len(val))
	w.chunk = append(w.chunk, val...)
	w.vbuf = val
}

// Full reports whether the chunk is due to be sealed.
func (w *BaseWriter) Full() bool { return len(w.chunk) >= baseChunkBytes }

// Seal adds the chunk, if it holds anything, to b as one record.
func (w *BaseWriter) Seal(b *Batch) {
	w.seal(func(k, chunk []byte) error {
		b.add(opSet, k, chunk)
		return nil
	})
}

// seal hands the chunk, if it holds anything, to put as one record, and
// starts the next one if put succeeds.
func (w *BaseWriter) seal(put func(k, chunk []byte) error) error {
	if len(w.chunk) == 0 {
		return nil
	}
	if err := put(baseKey(w.gen, w.seq), w.chunk); err != nil {
		return err
	}
	w.seq++
	w.chunk = w.chunk[:0]
	return nil
}

// eachBaseEntry calls fn with each entry of a chunk; the slices alias it.
func eachBaseEntry(chunk []byte, fn func(db int, key, val []byte) error) error {
	for len(chunk) > 0 {
		db, n := binary.Uvarint(chunk)
		if n <= 0 || db > 1<<31 {
			return ErrCorrupt
		}
		key, rest, ok := cutLen(chunk[n:])
		if !ok {
			return ErrCorrupt
		}
		val, rest, ok := cutLen(rest)
		if !ok {
			return ErrCorrupt
		}
		chunk = rest
		if err := fn(int(db), key, val); err != nil {
			return err
		}
	}
	return nil
}

// loadBase calls fn for every key of generation gen's chunks. A chunk
// that does not decode loses the keys after the damage (logged, counted
// in skipped); the keys before it are kept.
func (s *Store) loadBase(gen uint64, fn func(db int, key []byte, v Value) error) (skipped int, err error) {
	it, err := s.db.NewIter(baseBounds(gen))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var items [][]byte // every aggregate's Items, in turn (decodeReusing)
	for it.First(); it.Valid(); it.Next() {
		chunk, err := it.ValueAndErr()
		if err != nil {
			return skipped, err
		}
		var ferr error
		derr := eachBaseEntry(chunk, func(db int, key, val []byte) error {
			v, err := decodeReusing(val, items)
			if cap(v.Items) > cap(items) {
				items = v.Items[:0]
			}
			if err != nil || v.Kind == KindZSetWide || v.Kind == KindGone {
				return ErrCorrupt
			}
			if ferr = fn(db, key, v); ferr != nil {
				return ferr
			}
			return nil
		})
		if ferr != nil {
			return skipped, ferr
		}
		if derr != nil {
			skipped++
			s.log.Warn("persistence: skipping the rest of a corrupt snapshot chunk", "chunk", fmt.Sprintf("%x", it.Key()))
		}
	}
	return skipped, it.Error()
}

// baseBounds are the iterator bounds of generation gen's chunks.
func baseBounds(gen uint64) *pebble.IterOptions {
	return &pebble.IterOptions{LowerBound: baseKey(gen, 0), UpperBound: baseKey(gen+1, 0)}
}
