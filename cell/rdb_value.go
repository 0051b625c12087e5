package cell

import (
	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
	"github.com/cellserver/cellserver/zsetlite"
)

// Values between the keyspace and Redis's formats (package rdb): what DUMP,
// MIGRATE and SAVE write, and what RESTORE and loading an RDB file build.

// entryValue describes e's value for rdb. Its slices alias the keyspace,
// so it must be written out before the shard's lock is let go.
func entryValue(e *keyspace.Entry) (rdb.Value, bool) {
	switch v := e.Obj().(type) {
	case nil:
		return rdb.Value{Type: rdb.TypeString, Str: e.Str()}, true
	case *keyspace.List:
		out := rdb.Value{Type: rdb.TypeList, Elems: make([][]byte, v.Len())}
		for i := range out.Elems {
			out.Elems[i] = v.At(i)
		}
		return out, true
	case *keyspace.Hash:
		out := rdb.Value{Type: rdb.TypeHash, Elems: make([][]byte, 0, 2*v.Len())}
		for i := 0; i < v.Len(); i++ {
			f, val := v.At(i)
			out.Elems = append(out.Elems, []byte(f), val)
		}
		return out, true
	case *keyspace.Set:
		out := rdb.Value{Type: rdb.TypeSet, Elems: make([][]byte, v.Len())}
		for i := range out.Elems {
			out.Elems[i] = v.AppendAt(nil, i)
		}
		return out, true
	case *keyspace.ZSet:
		out := rdb.Value{Type: rdb.TypeZSet, Elems: make([][]byte, 0, v.Len()), Scores: make([]float64, 0, v.Len())}
		// A visited member may be a scratch buffer the next one reuses (an
		// integer member is printed into one): the members are copied, into
		// one buffer. Slices taken before it grows keep the old array.
		var buf []byte
		v.Range(0, v.Len()-1, false, func(m []byte, score float64) bool {
			at := len(buf)
			buf = append(buf, m...)
			out.Elems = append(out.Elems, buf[at:len(buf):len(buf)])
			out.Scores = append(out.Scores, score)
			return true
		})
		return out, true
	case *keyspace.Window:
		return rdb.Value{Type: rdb.TypeModule, Module: windowModule, ModuleVersion: windowModuleVersion,
			ModuleData: []rdb.ModuleItem{{Kind: rdb.ModuleString, Str: v.Encoded()}}}, true
	}
	return rdb.Value{}, false
}

// A CL.WINDOW window has no Redis type, so it travels as Redis carries a
// value of a type the core does not know: as a module value
// (RDB_TYPE_MODULE_2) of module type windowModule, its data one string,
// the window's runs in their compact encoding (keyspace.Window). The name
// is the command's, in the 9 characters of Redis's module type names
// (A-Z a-z 0-9 - _), so a redis-server shown such a value names the type
// it lacks ("no matching module type 'CL-WINDOW'") and refuses it, as it
// refuses any module's value it has not loaded. windowModuleVersion is
// the data's format (Redis's encver); a newer one is refused.
const (
	windowModule        = "CL-WINDOW"
	windowModuleVersion = 0
)

// windowValue builds a window from its module value; false for another
// module's value, another version, or data that is not a window.
func windowValue(v *rdb.Value) (*keyspace.Window, bool) {
	if v.Module != windowModule || v.ModuleVersion != windowModuleVersion ||
		len(v.ModuleData) != 1 || v.ModuleData[0].Kind != rdb.ModuleString {
		return nil, false
	}
	return keyspace.WindowFromEncoding(v.ModuleData[0].Str)
}

// valueObject builds a keyspace value: a string (obj nil) or an object.
// ok is false for what the keyspace cannot hold (streams, module
// values other than a CL.WINDOW window), an empty aggregate, or a hash field or set member twice, which
// Redis's loader refuses too. zcfg is the sorted sets' thresholds,
// setInts set-max-intset-entries: a set of integers is an intset up to it,
// as Redis's rdbLoadObject makes one, whatever encoding the payload had.
func valueObject(v *rdb.Value, zcfg zsetlite.Config, setInts int) (str []byte, obj any, ok bool) {
	switch v.Type {
	case rdb.TypeString:
		if v.Str == nil {
			return []byte{}, nil, true
		}
		return v.Str, nil, true
	case rdb.TypeList:
		if len(v.Elems) == 0 {
			return nil, nil, false
		}
		l := keyspace.NewList()
		for _, e := range v.Elems {
			l.PushBack(e)
		}
		return nil, l, true
	case rdb.TypeHash:
		if len(v.Elems) == 0 {
			return nil, nil, false
		}
		h := keyspace.NewHash()
		for i := 0; i+1 < len(v.Elems); i += 2 {
			if !h.Set(v.Elems[i], v.Elems[i+1]) {
				return nil, nil, false
			}
		}
		return nil, h, true
	case rdb.TypeSet:
		if len(v.Elems) == 0 {
			return nil, nil, false
		}
		set := keyspace.NewSet()
		for _, m := range v.Elems {
			if !set.Add(m, setInts) {
				return nil, nil, false
			}
		}
		return nil, set, true
	case rdb.TypeZSet:
		if len(v.Ints) != 0 {
			// Members that are their own scores, rising (a window of
			// timestamps): the set is built in one pass, no member parsed.
			maxLen := 0
			for _, n := range v.Ints {
				maxLen = max(maxLen, intTextLen(n))
			}
			z := keyspace.NewZSet(zcfg)
			z.Reserve(len(v.Ints), maxLen)
			z.AddInts(v.Ints)
			return nil, z, true
		}
		if len(v.Elems) == 0 {
			return nil, nil, false
		}
		// Sized as Redis sizes a loaded set (zsetlite's Reserve), so a large
		// set is large from its first member.
		maxLen := 0
		for _, m := range v.Elems {
			maxLen = max(maxLen, len(m))
		}
		z := keyspace.NewZSet(zcfg)
		z.Reserve(len(v.Elems), maxLen)
		for i, m := range v.Elems {
			if !z.Put(m, v.Scores[i]) {
				return nil, nil, false
			}
		}
		return nil, z, true
	case rdb.TypeModule:
		w, ok := windowValue(v)
		if !ok {
			return nil, nil, false
		}
		return nil, w, true
	}
	return nil, nil, false
}

// intTextLen is the length of n's decimal text.
func intTextLen(n int64) int {
	l := 1
	if n < 0 {
		l++
		n = -n // n is a member of Value.Ints: above -2^53
	}
	for ; n >= 10; n /= 10 {
		l++
	}
	return l
}
