package persist

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"
)

// Function libraries (FUNCTION LOAD) beside the keyspace (format 6).
//
// A library's record is
//
//	nsLib | name  ->  its code, as FUNCTION LOAD took it
//
// in the snapshot and, as the same Pebble operations, in the effect log:
// a LOAD or a RESTORE puts each library it adds or replaces, a DELETE
// deletes one, a FLUSH (or RESTORE FLUSH) deletes the namespace's range.
// Like every effect, each sets a state, so replaying the log over a
// snapshot taken after its position ends where the server was. A
// checkpoint writes the whole set again (a range delete and every
// library) when it changed since the last one: libraries are few and
// small, and changing them is rare.
//
// Replay does not check a library against the others (a function name
// taken twice): an intermediate state of a fuzzy snapshot may hold two
// that never lived together. The server links the final set, after the
// replay.

// nsLib is the namespace of the function libraries.
const nsLib byte = 0x03

// libKey is the Pebble key of library name.
func libKey(dst []byte, name []byte) []byte { return append(append(dst, nsLib), name...) }

// libRange is the namespace's range: its start and exclusive end.
var libRange = [2][]byte{{nsLib}, {nsLib + 1}}

// PutLibrary makes library name hold code.
func (b *Batch) PutLibrary(name, code []byte) {
	b.kbuf = libKey(b.kbuf[:0], name)
	b.add(opSet, b.kbuf, code)
}

// DeleteLibrary removes library name.
func (b *Batch) DeleteLibrary(name []byte) {
	b.kbuf = libKey(b.kbuf[:0], name)
	b.add(opDelete, b.kbuf, nil)
}

// DeleteLibraries removes every library: one range tombstone.
func (b *Batch) DeleteLibraries() { b.add(opDeleteRange, libRange[0], libRange[1]) }

// isLibKey reports whether a record's Pebble key is a library's.
func isLibKey(k []byte) bool { return len(k) > 0 && k[0] == nsLib }

// libraryEffect decodes into e an op on the libraries' namespace; e.DB is
// -1, as no database is involved.
func libraryEffect(op opKind, k, v []byte, e *Effect) error {
	e.DB = -1
	switch op {
	case opSet:
		if len(k) < 2 {
			return ErrCorrupt
		}
		e.Kind, e.Key, e.Data = EffectPutLibrary, k[1:], v
	case opDelete:
		if len(k) < 2 {
			return ErrCorrupt
		}
		e.Kind, e.Key = EffectDeleteLibrary, k[1:]
	case opDeleteRange:
		if string(k) != string(libRange[0]) || string(v) != string(libRange[1]) {
			return ErrCorrupt
		}
		e.Kind = EffectFlushLibraries
	default:
		return ErrCorrupt
	}
	return nil
}

// Libraries calls fn with each library the snapshot holds, by name; the
// slices are valid during the call only. The server calls it after Load
// and before Replay.
func (s *Store) Libraries(fn func(name, code []byte) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: libRange[0], UpperBound: libRange[1]})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		code, err := it.ValueAndErr()
		if err != nil {
			return errors.Join(err, it.Close())
		}
		if err := fn(it.Key()[1:], code); err != nil {
			return errors.Join(err, it.Close())
		}
	}
	return errors.Join(it.Error(), it.Close())
}
