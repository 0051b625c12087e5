package script

import (
	lua "github.com/yuin/gopher-lua"
)

// Global reads without the read-only proxy.
//
// A script sees its globals through a proxy (state.go): an empty table
// whose __index is the real _G, so every global read costs a failed
// lookup, the metatable's __index and then the real lookup; a rate
// limiter reads a global (KEYS, ARGV, tonumber, redis.call's helper) a
// dozen times per run. The proxy is needed only against writes: gopher-lua
// assigns an existing key of a table without asking __newindex.
//
// A script that never assigns a global (no SETGLOBAL in any of its
// functions) cannot write to its environment at all: only SETGLOBAL
// writes to an environment, scripts cannot reach a function's environment
// (getfenv, setfenv and debug are gone), and chunks made by loadstring
// get the proxy (gopher-lua gives them the state's Env). Such a script
// runs with the state's fast environment instead: a table holding the
// real globals' entries itself, whose misses go on to the real _G and its
// "nonexistent global" error as before.

// assignsGlobal reports a SETGLOBAL in p or any function inside it.
func assignsGlobal(p *lua.FunctionProto) bool {
	for _, inst := range p.Code {
		if opcode(inst) == lua.OP_SETGLOBAL {
			return true
		}
	}
	for _, inner := range p.FunctionPrototypes {
		if assignsGlobal(inner) {
			return true
		}
	}
	return false
}

// makeFastEnv builds st.fast from the finished real globals.
func (st *state) makeFastEnv() {
	L := st.L
	fast := L.CreateTable(0, 64)
	st.globals.ForEach(func(k, v lua.LValue) { fast.RawSet(k, v) })
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", st.globals)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgReadonlyTable)
		return 0
	}))
	L.SetMetatable(fast, mt)
	st.fast = fast
}

// setGlobal sets a global that changes between runs (KEYS, ARGV) in the
// real globals and in the fast environment.
func (st *state) setGlobal(name string, v lua.LValue) {
	st.globals.RawSetString(name, v)
	st.fast.RawSetString(name, v)
}
