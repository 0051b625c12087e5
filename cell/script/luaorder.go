package script

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Redis's cjson.encode and its map and set replies list a table's keys in
// the order Lua 5.1's next visits them: the order of the nodes of the
// table's hash part. Lua 5.1 hashes strings without a random seed, so that
// order is deterministic: it follows from the keys, the order they were
// inserted in and the size the table started with. gopher-lua iterates in
// insertion order instead, so for tables whose keys are all strings the
// node layout of C Lua's ltable.c is replayed here (main positions,
// collisions moved to the free slot found from the end, rehash to the next
// power of two reinserting old nodes from the last). Tables with other keys
// keep gopher-lua's order; so do scripts that delete keys, which Lua leaves
// behind as dead nodes.
//
// A table constructor with n named fields starts with n nodes (rounded up
// to a power of two), one built by assignment with none, and the layouts
// differ. So the compiler wraps each constructor with named fields in a
// call that notes its size hint for the run (ctorName).

const ctorName = "\x00ctor"

// rewriteCtors wraps the constructors of chunk that have named fields.
func rewriteCtors(chunk []ast.Stmt) {
	rewriteExprs(chunk, func(e ast.Expr) ast.Expr {
		te, ok := e.(*ast.TableExpr)
		if !ok {
			return e
		}
		named := 0
		for _, f := range te.Fields {
			if f.Key != nil {
				named++
			}
		}
		if named == 0 {
			return e
		}
		n := &ast.NumberExpr{Value: itoa(named)}
		n.SetLine(te.Line())
		n.SetLastLine(te.LastLine())
		return helperCall(te, ctorName, te, n)
	})
}

// luaCtor notes the size hint of the table a constructor made.
func (st *state) luaCtor(L *lua.LState) int {
	t := L.CheckTable(1)
	if st.inRun {
		st.ctorHint[t] = L.CheckInt(2)
	}
	L.Push(t)
	return 1
}

// luaKeyOrder lists t's keys as Lua 5.1's next would, when they are all
// strings; ok is false otherwise (or when t is empty).
func (st *state) luaKeyOrder(t *lua.LTable) (keys []lua.LValue, ok bool) {
	var names []string
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		s, isString := k.(lua.LString)
		if !isString {
			return nil, false
		}
		names = append(names, string(s))
	}
	if len(names) < 2 {
		return nil, false
	}
	h := newLuaHash(st.ctorHint[t])
	for _, s := range names {
		h.insert(s)
	}
	for _, n := range h.nodes {
		if n.used {
			keys = append(keys, lua.LString(n.key))
		}
	}
	return keys, true
}

// luaHash is the hash part of a Lua 5.1 table holding string keys.
type luaHash struct {
	nodes    []luaNode
	lastFree int
	count    int
}

type luaNode struct {
	key  string
	used bool
	next int // the next node of the collision chain, or -1
}

func newLuaHash(size int) *luaHash {
	h := &luaHash{}
	h.alloc(size)
	return h
}

// alloc is setnodevector: size rounded up to a power of two (0 stays 0).
func (h *luaHash) alloc(size int) {
	n := 0
	if size > 0 {
		n = 1
		for n < size {
			n <<= 1
		}
	}
	h.nodes = make([]luaNode, n)
	for i := range h.nodes {
		h.nodes[i].next = -1
	}
	h.lastFree = n
}

// luaStringHash is the string hash of Redis's Lua 5.1 (luaS_newlstr):
// seeded with the length, over every character from the last. (Stock 5.1
// samples at most 32 characters of a long string; Redis's copy hashes them
// all, as its replies show.)
func luaStringHash(s string) uint32 {
	h := uint32(len(s))
	for i := len(s); i > 0; i-- {
		h ^= (h << 5) + (h >> 2) + uint32(s[i-1])
	}
	return h
}

func (h *luaHash) mainPosition(s string) int {
	return int(luaStringHash(s) & uint32(len(h.nodes)-1))
}

func (h *luaHash) freePosition() int {
	for h.lastFree > 0 {
		h.lastFree--
		if !h.nodes[h.lastFree].used {
			return h.lastFree
		}
	}
	return -1
}

// insert is newkey for a key not yet in the table.
func (h *luaHash) insert(key string) {
	if len(h.nodes) == 0 {
		h.rehash(key)
		return
	}
	mp := h.mainPosition(key)
	if h.nodes[mp].used {
		free := h.freePosition()
		if free < 0 {
			h.rehash(key)
			return
		}
		other := h.mainPosition(h.nodes[mp].key)
		if other != mp {
			// The colliding node is not in its main position: move it
			// to the free slot and take its place.
			for h.nodes[other].next != mp {
				other = h.nodes[other].next
			}
			h.nodes[other].next = free
			h.nodes[free] = h.nodes[mp]
			h.nodes[mp] = luaNode{next: -1}
		} else {
			h.nodes[free].next = h.nodes[mp].next
			h.nodes[mp].next = free
			mp = free
		}
	}
	h.nodes[mp].key, h.nodes[mp].used = key, true
	h.count++
}

// rehash grows the table to hold its keys and key, reinserting the old
// nodes from the last one, then inserts key.
func (h *luaHash) rehash(key string) {
	old := h.nodes
	h.alloc(h.count + 1)
	h.count = 0
	for i := len(old) - 1; i >= 0; i-- {
		if old[i].used {
			h.insert(old[i].key)
		}
	}
	h.insert(key)
}
