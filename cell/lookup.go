package cell

import "github.com/cellserver/cellserver/cell/keyspace"

// Lookup returns key's live entry or nil (keyspace.Tx.Lookup), counting
// a hit or a miss for INFO as Redis's lookupKeyRead does: for commands
// that do not write. Walks over the keyspace (SCAN) call x.Tx.Lookup and
// count nothing, as in Redis.
func (x *Ctx) Lookup(key []byte) *keyspace.Entry {
	e := x.Tx.Lookup(key)
	if x.cmd != nil && x.cmd.Flags&FlagWrite == 0 && x.cl != nil {
		if e == nil {
			x.cl.tally.misses++
		} else {
			x.cl.tally.hits++
		}
	}
	return e
}

// Typed lookups: a handler asks for a key's value as the type its command
// works on, and a key of another type is answered WRONGTYPE here, once.

// lookupAs returns key's value as a T, or the zero T if the key is
// missing. ok is false, with WRONGTYPE already replied, if the key holds
// another type.
func lookupAs[T *keyspace.Hash | *keyspace.List | *keyspace.ZSet | *keyspace.Set](x *Ctx, key []byte) (v T, ok bool) {
	e := x.Lookup(key)
	if e == nil {
		return v, true
	}
	if v, ok := e.Obj().(T); ok {
		noteList(x, v)
		return v, true
	}
	x.Error(ErrWrongType)
	return v, false
}

// noteList notes where a list looked up stands before the command runs
// (keyspace.Tx.NoteListSpan), so that the replication stream can say how
// it changed as pushes, a trim and sets rather than the whole list. Every
// command that changes a list looks it up here or in firstHolding.
func noteList(x *Ctx, v any) {
	if l, ok := v.(*keyspace.List); ok {
		x.NoteListSpan(l)
	}
}

func (x *Ctx) lookupHash(key []byte) (*keyspace.Hash, bool) { return lookupAs[*keyspace.Hash](x, key) }
func (x *Ctx) lookupList(key []byte) (*keyspace.List, bool) { return lookupAs[*keyspace.List](x, key) }
func (x *Ctx) lookupZSet(key []byte) (*keyspace.ZSet, bool) { return lookupAs[*keyspace.ZSet](x, key) }
func (x *Ctx) lookupSet(key []byte) (*keyspace.Set, bool)   { return lookupAs[*keyspace.Set](x, key) }

// lookupString returns key's string entry, or nil if missing. ok is false,
// with WRONGTYPE already replied, if the key holds another type.
func (x *Ctx) lookupString(key []byte) (e *keyspace.Entry, ok bool) {
	e = x.Lookup(key)
	if e != nil && !e.IsString() {
		x.Error(ErrWrongType)
		return nil, false
	}
	return e, true
}

// firstHolding looks at keys in order, as the multi-key pops do (LMPOP,
// BLPOP, BZMPOP, ...): the first key that exists is returned with its
// value if it is a T; of another type, it stops the walk with WRONGTYPE
// (ok false). A nil key means every key is missing.
func firstHolding[T *keyspace.List | *keyspace.ZSet](x *Ctx, keys [][]byte) (key []byte, v T, ok bool) {
	for _, k := range keys {
		e := x.Lookup(k)
		if e == nil {
			continue
		}
		if v, ok := e.Obj().(T); ok {
			noteList(x, v)
			return k, v, true
		}
		x.Error(ErrWrongType)
		return nil, v, false
	}
	return nil, v, true
}

// firstZSet is firstHolding for sorted sets that are about to change:
// their changes are recorded member by member (lookupZSetW).
func firstZSet(x *Ctx, keys [][]byte) (key []byte, z *keyspace.ZSet, ok bool) {
	key, z, ok = firstHolding[*keyspace.ZSet](x, keys)
	if key != nil {
		x.Recording(z)
	}
	return key, z, ok
}
