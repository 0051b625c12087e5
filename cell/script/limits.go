package script

import (
	lua "github.com/yuin/gopher-lua"
)

// Limits that hold inside the Go functions a script calls.
//
// gopher-lua checks the run's context between Lua instructions only, so a
// builtin that loops long (a gsub over a big string, a table.concat of a
// million items) would run to its end after SCRIPT KILL, and one that
// allocates much would do so before the memory watcher could look. Such
// builtins call checkStop in their long loops and reserve before a large
// allocation. Builtins that return many values refuse past Lua's C stack
// limit, as C Lua does, instead of growing the stack to any size.

// luaMaxCStack is Lua 5.1's LUAI_MAXCSTACK: the most stack slots a C
// function may hold, its arguments included.
const luaMaxCStack = 8000

// reserveFrom is the allocation size from which a builtin reserves it.
const reserveFrom = 1 << 20

const (
	msgStringTooLarge   = "resulting string too large"
	msgTooManyToUnpack  = "too many results to unpack"
	msgSliceTooLong     = "stack overflow (string slice too long)"
	msgMsgpackTooMany   = "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"
	msgMsgpackArray     = "stack overflow (in function mp_decode_to_lua_array)"
	msgMsgpackUnpackAll = "stack overflow (in function mp_unpack_full)"
)

// MemoryGuard may be implemented by the context a script runs under.
// Reserve reports whether the heap may grow by n more bytes within the
// run's memory limit; when it may not, it stops the run, so that its
// context's Err says why.
type MemoryGuard interface {
	Reserve(n int64) bool
}

// checkStop raises the error the VM raises between instructions once the
// run has been stopped (SCRIPT KILL, the memory limit); the error handler
// turns it into the stop's reply.
func (st *state) checkStop(L *lua.LState) {
	ctx := st.ctx
	if ctx == nil {
		return
	}
	select {
	case <-ctx.Done():
		L.RaiseError("%s", ctx.Err().Error())
	default:
	}
}

// reserve asks the run for n bytes about to be allocated.
func (st *state) reserve(L *lua.LState, n int) {
	st.checkStop(L)
	if g, ok := st.ctx.(MemoryGuard); ok && !g.Reserve(int64(n)) {
		st.checkStop(L)
		L.RaiseError(msgStringTooLarge) // a guard that refused without stopping
	}
}

// checkResults refuses n results from a Go function when they would not
// fit in C Lua's stack beside its arguments.
func checkResults(L *lua.LState, n int, msg string) {
	if n <= 0 || L.GetTop()+n > luaMaxCStack {
		L.RaiseError("%s", msg)
	}
}

// luaUnpack is Lua 5.1's unpack(t [, i [, j]]).
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := int64(1)
	if L.Get(2) != lua.LNil {
		i = int64(checkInt(L, 2, "unpack"))
	}
	var e int64
	if L.Get(3) != lua.LNil {
		e = int64(checkInt(L, 3, "unpack"))
	} else {
		e = int64(t.Len())
	}
	if i > e {
		return 0
	}
	n := e - i + 1
	if n > luaMaxCStack {
		L.RaiseError(msgTooManyToUnpack)
	}
	checkResults(L, int(n), msgTooManyToUnpack)
	for ; i <= e; i++ {
		L.Push(t.RawGetInt(int(i)))
	}
	return int(n)
}
