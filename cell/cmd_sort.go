package cell

import (
	"bytes"
	"math"
	"slices"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
	"github.com/cellserver/cellserver/zsetlite"
)

// SORT and SORT_RO, as Redis 7.0's sort.c: the elements of a list, set
// or sorted set, ordered by their own value or by the value of keys a BY
// pattern names ("weight_*", "h_*->field"), numerically or with ALPHA
// byte-wise, cut by LIMIT, replied or with STORE saved as a list, each
// element replaced by what GET patterns name. A BY pattern without '*'
// sorts nothing. Patterns reach any key of the database, so a SORT with
// BY or GET holds every shard of it (sortReachesDB).

func init() {
	register(
		&Command{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyOOM | FlagMovableKeys, FirstKey: 1, LastKey: 1,
			Keys: sortKeys, KeyFlags: sortKeyFlags, ReachesWholeDB: sortReachesDB, Handler: sortCmd},
		&Command{Name: "sort_ro", Arity: -2, Flags: FlagReadonly, FirstKey: 1, LastKey: 1,
			ReachesWholeDB: sortReachesDB, Handler: sortRO},
	)
}

// sortKeys is sortGetKeys: the sorted key and the last STORE's key,
// skipping the arguments of LIMIT, GET and BY.
func sortKeys(args [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case optIs(a, "limit"):
			i += 2
		case optIs(a, "get"), optIs(a, "by"):
			i++
		case optIs(a, "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store != 0 {
		keys = append(keys, store)
	}
	return keys
}

// sortKeyFlags: the sorted key is read, STORE's written over.
func sortKeyFlags(_ [][]byte, i int) KeyFlag {
	if i == 1 {
		return KeyRO | KeyAccess
	}
	return KeyOW | KeyUpdate
}

// sortReachesDB says whether a SORT reads keys through patterns: a BY or
// GET word followed by an argument.
func sortReachesDB(args [][]byte) bool {
	for i := 2; i+1 < len(args); i++ {
		if optIs(args[i], "by") || optIs(args[i], "get") {
			return true
		}
	}
	return false
}

// sortElem is one element being sorted: its value, and what it sorts by.
type sortElem struct {
	v     []byte
	score float64
	cmp   []byte // ALPHA with BY: the pattern's value (nil: none)
}

// sortOpts is SORT's parsed options.
type sortOpts struct {
	desc, alpha, dontsort bool
	start, count          int64
	by, store             []byte
	gets                  [][]byte
}

func sortCmd(x *Ctx) { sortGeneric(x, false) }
func sortRO(x *Ctx)  { sortGeneric(x, true) }

// parseSort reads SORT's options as sortCommandGeneric does, failing at
// the first bad one (its error replied).
func parseSort(x *Ctx, ro bool) (o sortOpts, ok bool) {
	o.count = -1
	args := x.Args
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case optIs(a, "asc"):
			o.desc = false
		case optIs(a, "desc"):
			o.desc = true
		case optIs(a, "alpha"):
			o.alpha = true
		case optIs(a, "limit") && left >= 2:
			var ok1, ok2 bool
			o.start, ok1 = resp.ParseInt(args[j+1])
			if ok1 {
				o.count, ok2 = resp.ParseInt(args[j+2])
			}
			if !ok1 || !ok2 {
				x.Error(ErrNotInteger)
				return o, false
			}
			j += 2
		case !ro && optIs(a, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case optIs(a, "by") && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte([]byte(cstring(o.by)), '*') < 0 {
				o.dontsort = true
			} else if x.srv.clusterOn {
				x.Error(ErrSortByCluster)
				return o, false
			} else if !x.fullKeyAccess() {
				x.Error(ErrSortByACL)
				return o, false
			}
			j++
		case optIs(a, "get") && left >= 1:
			if x.srv.clusterOn {
				x.Error(ErrSortGetCluster)
				return o, false
			}
			if !x.fullKeyAccess() {
				x.Error(ErrSortGetACL)
				return o, false
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			x.Error(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// fullKeyAccess says whether the client's user may read every key with
// the running command, as SORT's BY and GET patterns require (Redis's
// ACLUserCheckCmdWithUnrestrictedKeyAccess with CMD_KEY_ACCESS): a
// selector that allows the command and reads all keys. A script's
// commands run with its caller's user.
func (x *Ctx) fullKeyAccess() bool {
	if x.cl == nil || x.cl.user == nil || x.cl.user.open.Load() {
		return true
	}
	return x.cl.user.rules.Load().unrestrictedKeyAccess(x.cmd, x.Args, aclPermRead)
}

// sortGeneric is SORT (STORE allowed) and SORT_RO.
func sortGeneric(x *Ctx, ro bool) {
	o, ok := parseSort(x, ro)
	if !ok {
		return
	}
	e := x.Lookup(x.Args[1])
	var obj any
	n := 0
	if e != nil {
		switch v := e.Obj().(type) {
		case *keyspace.List:
			obj, n = v, v.Len()
		case *keyspace.Set:
			obj, n = v, v.Len()
		case *keyspace.ZSet:
			obj, n = v, v.Len()
		default:
			x.Error(ErrWrongType)
			return
		}
	}
	// A set has no order of its own: stored or in a script, nosort
	// sorts, so that replicas and replays agree.
	if _, isSet := obj.(*keyspace.Set); isSet && o.dontsort && (o.store != nil || x.inScript) {
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	start := max(o.start, 0)
	end := int64(n) - 1
	if o.count >= 0 {
		end = start + min(o.count, math.MaxInt64-start) - 1 // Redis's sum does not wrap
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	end = min(end, int64(n)-1)

	var elems []sortElem
	switch v := obj.(type) {
	case *keyspace.List:
		if o.dontsort {
			for i := start; i <= end; i++ {
				at := i
				if o.desc {
					at = int64(n) - 1 - i
				}
				elems = append(elems, sortElem{v: v.At(int(at))})
			}
			end -= start
			start = 0
		} else {
			for i := range n {
				elems = append(elems, sortElem{v: v.At(i)})
			}
		}
	case *keyspace.Set:
		for i := range n {
			elems = append(elems, sortElem{v: v.AppendAt(nil, i)})
		}
	case *keyspace.ZSet:
		visit := func(m []byte, _ float64) bool {
			elems = append(elems, sortElem{v: bytes.Clone(m)})
			return true
		}
		if o.dontsort {
			if start <= end {
				v.Range(int(start), int(end), o.desc, zsetlite.Visitor(visit))
			}
			end -= start
			start = 0
		} else {
			v.Range(0, -1, false, zsetlite.Visitor(visit))
		}
	}

	convErr := false
	if !o.dontsort {
		for i := range elems {
			el := &elems[i]
			by := el.v
			if o.by != nil {
				var found bool
				if by, found = x.sortLookup(o.by, el.v); !found {
					continue
				}
			}
			if o.alpha {
				if o.by != nil {
					el.cmp = by
				}
				continue
			}
			score, ok := resp.ParseStrtod(by)
			if !ok {
				convErr = true
			}
			el.score = score
		}
		cmp := sortCompare(o, o.store != nil)
		slices.SortStableFunc(elems, func(a, b sortElem) int {
			if o.desc {
				return -cmp(&a, &b)
			}
			return cmp(&a, &b)
		})
	}

	count := end - start + 1
	if len(o.gets) > 0 {
		count *= int64(len(o.gets))
	}
	if convErr {
		x.Error(ErrSortScore)
		return
	}
	if o.store == nil {
		x.W.Array(int(count))
		for j := start; j <= end; j++ {
			if len(o.gets) == 0 {
				x.W.Bulk(elems[j].v)
			}
			for _, g := range o.gets {
				if v, ok := x.sortLookup(g, elems[j].v); ok {
					x.W.Bulk(v)
				} else {
					x.W.Null()
				}
			}
		}
		return
	}
	l := keyspace.NewList()
	for j := start; j <= end; j++ {
		if len(o.gets) == 0 {
			l.PushBack(elems[j].v)
		}
		for _, g := range o.gets {
			v, _ := x.sortLookup(g, elems[j].v)
			l.PushBack(v)
		}
	}
	if count > 0 {
		x.SetObject(o.store, l, 0)
	} else {
		x.Remove(o.store)
	}
	x.W.Int(count)
}

// sortCompare is sortCompare of sort.c, ascending: numbers by score,
// ties by the elements' bytes; ALPHA by the BY values (none first) or the
// elements, as C strings (strcoll in the C locale) unless storing, where
// Redis compares the whole bytes.
func sortCompare(o sortOpts, store bool) func(a, b *sortElem) int {
	text := func(a, b []byte) int {
		if store {
			return bytes.Compare(a, b)
		}
		return bytes.Compare([]byte(cstring(a)), []byte(cstring(b)))
	}
	switch {
	case !o.alpha:
		return func(a, b *sortElem) int {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare(a.v, b.v)
		}
	case o.by != nil:
		return func(a, b *sortElem) int {
			switch {
			case a.cmp == nil && b.cmp == nil:
				return 0
			case a.cmp == nil:
				return -1
			case b.cmp == nil:
				return 1
			}
			return text(a.cmp, b.cmp)
		}
	}
	return func(a, b *sortElem) int { return text(a.v, b.v) }
}

// sortLookup is lookupKeyByPattern: "#" is the element itself; else the
// first '*' of pat is replaced by elem and the key read, as a string, or
// with "->field" after the '*' as that field of a hash. found is false
// when there is no such key, field or '*', or the key has another type.
func (x *Ctx) sortLookup(pat, elem []byte) (v []byte, found bool) {
	if len(pat) > 0 && pat[0] == '#' && (len(pat) == 1 || pat[1] == 0) {
		return elem, true
	}
	cpat := cstring(pat)
	star := bytes.IndexByte([]byte(cpat), '*')
	if star < 0 {
		return nil, false
	}
	post := pat[star+1:]
	var field []byte
	if f := bytes.Index([]byte(cpat[star+1:]), []byte("->")); f >= 0 && f+2 < len(cpat)-star-1 {
		field = post[f+2:]
		post = post[:f]
	}
	key := make([]byte, 0, star+len(elem)+len(post))
	key = append(append(append(key, pat[:star]...), elem...), post...)
	e := x.Lookup(key)
	if e == nil {
		return nil, false
	}
	if field != nil {
		h, ok := e.Obj().(*keyspace.Hash)
		if !ok {
			return nil, false
		}
		return h.Get(field)
	}
	if !e.IsString() {
		return nil, false
	}
	return e.Str(), true
}
