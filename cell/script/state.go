package script

import (
	"context"
	gomath "math"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/cellserver/cellserver/resp"
)

// state is one Lua interpreter with Redis's sandbox.
//
// Read-only globals: gopher-lua has no read-only tables, so scripts never
// see the real tables. _G and every library global are empty proxies whose
// __index is the real table and whose __newindex raises Redis's error. The
// real globals table has an __index that raises the "nonexistent global"
// error, so a miss falls through the proxy into it. rawset, rawget,
// setmetatable and getmetatable are wrapped so that they cannot reach past
// a proxy.
type state struct {
	e       *Engine
	L       *lua.LState
	gen     int64
	fns     map[string]*lua.LFunction
	globals *lua.LTable                 // the real _G
	env     *lua.LTable                 // the proxy scripts see as _G
	fast    *lua.LTable                 // the globals for scripts that assign none (fastenv.go)
	real    map[*lua.LTable]*lua.LTable // proxy -> real table
	proxyOf map[*lua.LTable]*lua.LTable // real table -> proxy
	errFn   *lua.LFunction
	pcallFn *lua.LFunction // pcall's message handler (pcallHandler)
	// counted holds the error tables made from failed commands' replies
	// during a run: those failures are in the statistics already (Redis's
	// ignore_stats_update, kept out of the table here).
	counted map[*lua.LTable]bool
	// ctorHint holds the size hints of the tables this run's constructors
	// made (luaorder.go).
	ctorHint map[*lua.LTable]int
	out      Outcome
	null     *lua.LUserData // cjson.null

	// Set for the duration of one run.
	inRun   bool
	ctx     context.Context
	host    Host
	resp    int // redis.setresp: how replies reach Lua
	scratch *resp.Writer

	// libs holds the closures of the libraries this state has run, for
	// FCALL (function.go), valid while libGen is the engine's.
	libs   map[*Library]map[string]*lua.LFunction
	libGen int64

	// Reused from run to run (args.go).
	keys, argv argTable
	fillBuf    []byte
	callArgs   argBuffer
	box        boxes
}

func newState(e *Engine) *state {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       20000, // Lua 5.1's LUAI_MAXCALLS
		MinimizeStackMemory: true,
		RegistrySize:        256,
		RegistryMaxSize:     1024 * 1024 * 2,
	})
	st := &state{
		e:       e,
		L:       L,
		gen:     e.gen.Load(),
		fns:     map[string]*lua.LFunction{},
		real:    map[*lua.LTable]*lua.LTable{},
		proxyOf: map[*lua.LTable]*lua.LTable{},
		scratch: resp.NewWriter(),
		counted: map[*lua.LTable]bool{},

		ctorHint: map[*lua.LTable]int{},
	}
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{"", lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	G := L.G.Global
	st.globals = G
	for _, name := range []string{"dofile", "loadfile", "print", "_printregs", "getfenv", "setfenv",
		"newproxy", "module", "require", "_GOPHER_LUA_VERSION"} {
		G.RawSetString(name, lua.LNil)
	}
	st.patchBase()
	st.patchLibs()
	G.RawSetString("redis", st.redisLib())
	for field, hidden := range redisFields {
		G.RawSetString(hidden, G.RawGetString("redis").(*lua.LTable).RawGetString(field))
	}
	G.RawSetString(redisVoidFields["call"], L.NewFunction(func(L *lua.LState) int { return st.call(L, true, true) }))
	G.RawSetString(redisVoidFields["pcall"], L.NewFunction(func(L *lua.LState) int { return st.call(L, false, true) }))
	G.RawSetString("cjson", st.cjsonLib())
	G.RawSetString("struct", st.structLib())
	G.RawSetString("bit", st.bitLib())
	G.RawSetString("cmsgpack", st.cmsgpackLib())
	G.RawSetString("__redis__err__handler", L.NewFunction(st.errorHandler))
	st.errFn = L.NewFunction(st.errorHandler)
	st.pcallFn = L.NewFunction(pcallHandler)

	// Missing arguments are "no value" in Lua's messages, not nil.
	for _, name := range []string{"string", "table", "math", "coroutine", "cjson", "struct", "bit", "cmsgpack"} {
		if t, ok := G.RawGetString(name).(*lua.LTable); ok {
			wrapArgErrors(L, t)
		}
	}
	wrapArgErrors(L, G)

	// Protect every library table, then _G itself.
	for _, name := range []string{"string", "table", "math", "coroutine", "redis", "cjson", "struct", "bit", "cmsgpack"} {
		if t, ok := G.RawGetString(name).(*lua.LTable); ok {
			G.RawSetString(name, st.protect(t))
		}
	}
	missing := L.CreateTable(0, 1)
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s%s'", msgNoGlobal, L.ToStringMeta(L.Get(2)).String())
		return 0
	}))
	L.SetMetatable(G, missing)
	st.env = st.protect(G)
	smt := L.CreateTable(0, 1)
	smt.RawSetString("__index", G.RawGetString("string"))
	L.SetMetatable(lua.LString(""), smt)
	G.RawSetString("_G", st.env)
	L.Env = st.env
	st.makeFastEnv()
	return st
}

// protect returns the read-only proxy of t.
func (st *state) protect(t *lua.LTable) *lua.LTable {
	if p := st.proxyOf[t]; p != nil {
		return p
	}
	L := st.L
	// The proxy stays empty (a miss on it is then a nil check, not a
	// hash lookup); small tables keep an idle state small, which every
	// GC cycle scans.
	p := L.CreateTable(0, 0)
	mt := L.CreateTable(0, 2)
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(msgReadonlyTable)
		return 0
	}))
	L.SetMetatable(p, mt)
	st.real[p] = t
	st.proxyOf[t] = p
	return p
}

// patchBase replaces the base functions whose Redis behaviour differs from
// gopher-lua's: number formatting, pcall's handling of error tables, and
// the functions that could reach through a read-only proxy.
func (st *state) patchBase() {
	G := st.globals
	L := st.L
	origSetmt := G.RawGetString("setmetatable").(*lua.LFunction)
	readonly := func(L *lua.LState) {
		L.Error(lua.LString(msgReadonlyTable), 0)
	}
	set := func(name string, fn lua.LGFunction) { G.RawSetString(name, L.NewFunction(fn)) }
	set("unpack", luaUnpack)
	set("tostring", func(L *lua.LState) int {
		v := L.CheckAny(1)
		if n, ok := v.(lua.LNumber); ok {
			L.Push(lua.LString(fmt14(float64(n))))
			return 1
		}
		L.Push(L.ToStringMeta(v))
		return 1
	})
	set("rawset", func(L *lua.LState) int {
		t := L.CheckTable(1)
		if st.isProtected(t) {
			readonly(L)
		}
		L.RawSet(t, L.CheckAny(2), L.CheckAny(3))
		L.SetTop(1)
		return 1
	})
	set("rawget", func(L *lua.LState) int {
		t := L.CheckTable(1)
		if r := st.real[t]; r != nil {
			t = r
		}
		L.Push(L.RawGet(t, L.CheckAny(2)))
		return 1
	})
	set("setmetatable", func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && st.isProtected(t) {
			readonly(L)
		}
		if _, ok := L.Get(1).(*lua.LTable); !ok {
			argTypeError(L, 1, "setmetatable", "table", L.Get(1))
		}
		// Called in place, so that its errors name it as Lua does.
		return origSetmt.GFunction(L)
	})
	set("getmetatable", func(L *lua.LState) int {
		v := L.CheckAny(1)
		mt, ok := L.GetMetatable(v).(*lua.LTable)
		if !ok {
			L.Push(lua.LNil)
			return 1
		}
		if t, isTable := v.(*lua.LTable); isTable && !st.isProtected(t) {
			L.Push(mt)
			return 1
		}
		// The metatables of the sandbox itself and of strings are
		// shared by every script: hand out a read-only view.
		L.Push(st.protect(mt))
		return 1
	})
	set("error", func(L *lua.LState) int {
		v := L.Get(1)
		level := L.OptInt(2, 1)
		switch x := v.(type) {
		case lua.LString:
			if level > 0 {
				v = lua.LString(where(L, level) + string(x))
			}
		case lua.LNumber:
			if level > 0 {
				v = lua.LString(where(L, level) + fmt14(float64(x)))
			}
		}
		L.Error(v, 0)
		return 0
	})
	set("pcall", st.pcall)
	set("xpcall", func(L *lua.LState) int {
		fn, h := L.CheckAny(1), L.CheckAny(2)
		if _, ok := fn.(*lua.LFunction); !ok && L.GetMetaField(fn, "__call") == lua.LNil {
			// Lua calls the handler with the call error, which has no
			// position: the call happens in C.
			L.Push(lua.LFalse)
			L.Push(h)
			L.Push(lua.LString("attempt to call a " + fn.Type().String() + " value"))
			L.Call(1, 1)
			return 2
		}
		handler := L.NewFunction(func(L *lua.LState) int {
			v := L.Get(1)
			if s, ok := v.(lua.LString); ok {
				v = lua.LString(luaMessage(string(s), luaFrame(L)))
			}
			L.Push(h)
			L.Push(v)
			L.Call(1, 1)
			return 1
		})
		L.SetTop(0)
		L.Push(fn)
		if err := L.PCall(0, lua.MultRet, handler); err != nil {
			obj := lua.LValue(lua.LString(err.Error()))
			if ae, ok := err.(*lua.ApiError); ok {
				obj = ae.Object
			}
			L.Push(lua.LFalse)
			L.Push(obj)
			return 2
		}
		n := L.GetTop()
		L.Insert(lua.LTrue, 1)
		return n + 1
	})
	// next and pairs see through the read-only proxies, so that
	// pairs(_G) or pairs(string) enumerate as in Redis; the hidden
	// concatenation helper stays hidden.
	next := func(L *lua.LState) int {
		t := L.CheckTable(1)
		if r := st.real[t]; r != nil {
			t = r
		}
		k, v := t.Next(L.Get(2))
		for isHidden(k) {
			k, v = t.Next(k)
		}
		if k == lua.LNil {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(k)
		L.Push(v)
		return 2
	}
	nextFn := L.NewFunction(next)
	G.RawSetString("next", nextFn)
	set("pairs", func(L *lua.LState) int {
		t := L.CheckAny(1)
		if mm := L.GetMetaField(t, "__pairs"); mm != lua.LNil && st.real[t.(*lua.LTable)] == nil {
			L.Push(mm)
			L.Push(t)
			L.Call(1, 3)
			return 3
		}
		L.CheckTable(1)
		L.Push(nextFn)
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	})
	origToNumber := G.RawGetString("tonumber").(*lua.LFunction)
	set("tonumber", func(L *lua.LState) int {
		// Base 10 is C's strtod: exponents, "inf", "nan", hex.
		if L.GetTop() <= 1 || L.Get(2) == lua.LNil || L.Get(2) == lua.LNumber(10) {
			switch v := L.CheckAny(1).(type) {
			case lua.LNumber:
				L.Push(v)
			case lua.LString:
				if n, ok := decimalInteger(string(v)); ok {
					L.Push(st.box.number(float64(n)))
				} else if f, ok := strtodLua(string(v)); ok {
					L.Push(st.box.number(f))
				} else {
					L.Push(lua.LNil)
				}
			default:
				L.Push(lua.LNil)
			}
			return 1
		}
		return origToNumber.GFunction(L)
	})
	set("collectgarbage", func(L *lua.LState) int {
		switch L.OptString(1, "collect") {
		case "count":
			L.Push(lua.LNumber(float64(st.e.MemoryUsed()) / 1024))
		default:
			L.Push(lua.LNumber(0))
		}
		return 1
	})
	set("gcinfo", func(L *lua.LState) int {
		L.Push(lua.LNumber(st.e.MemoryUsed() / 1024))
		return 1
	})
	G.RawSetString(concatName, L.NewFunction(st.luaConcat))
	G.RawSetString(ctorName, L.NewFunction(st.luaCtor))
	G.RawSetString(unmName, L.NewFunction(st.luaUnm))
	G.RawSetString(mulName, L.NewFunction(st.luaMul))
	G.RawSetString(divName, L.NewFunction(st.luaDiv))
}

// isHidden reports a global of the compiler's rewrites (concat.go,
// luaorder.go, negzero.go): their names start with a NUL byte, which no
// identifier can spell, and pairs(_G) does not show them.
func isHidden(k lua.LValue) bool {
	s, ok := k.(lua.LString)
	return ok && len(s) > 0 && s[0] == 0
}

// where is luaL_where: "user_script:N: " for the Lua function level
// levels up from the caller of the current Go function, "" if not Lua.
func where(L *lua.LState, level int) string {
	dbg, ok := L.GetStack(level)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.CurrentLine <= 0 {
		return ""
	}
	return dbg.Source + ":" + itoa(dbg.CurrentLine) + ": "
}

func (st *state) isProtected(t *lua.LTable) bool {
	return st.real[t] != nil || st.proxyOf[t] != nil
}

// pcall is Redis's replacement of Lua's pcall: an error table caught is
// returned as its err string.
func (st *state) pcall(L *lua.LState) int {
	fn := L.CheckAny(1)
	if _, ok := fn.(*lua.LFunction); !ok && L.GetMetaField(fn, "__call") == lua.LNil {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + fn.Type().String() + " value"))
		return 2
	}
	nargs := L.GetTop() - 1
	top := L.GetTop()
	if err := L.PCall(nargs, lua.MultRet, st.pcallFn); err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if s, ok := t.RawGetString("err").(lua.LString); ok {
				obj = s
			}
		} else if ae, ok := err.(*lua.ApiError); ok && isOverflow(ae) {
			obj = lua.LString(chunkName + ":" + overflowLine(ae) + ": stack overflow")
		}
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	n := L.GetTop() - (top - nargs - 1)
	L.Insert(lua.LTrue, L.GetTop()-n+1)
	return n + 1
}

// patchLibs shapes string, table and math as Redis's Lua 5.1 has them.
func (st *state) patchLibs() {
	L := st.L
	G := st.globals
	str := G.RawGetString("string").(*lua.LTable)
	// C Lua's string metatable is a table of its own with __index=string;
	// gopher-lua makes the library its own __index, which would expose it.
	str.RawSetString("__index", lua.LNil)
	// Lua's own conversion of a number subject ("%.14g") for the string
	// functions whose first argument is the string worked on.
	for _, name := range []string{"byte", "find", "format", "gmatch", "gfind", "gsub", "len", "lower", "match", "rep", "reverse", "sub", "upper"} {
		if fn, ok := str.RawGetString(name).(*lua.LFunction); ok {
			str.RawSetString(name, L.NewFunction(numberSubject(fn)))
		}
	}
	str.RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("unable to dump given function")
		return 0
	}))
	origRep := str.RawGetString("rep").(*lua.LFunction)
	str.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		s := L.CheckString(1)
		n := L.CheckInt(2)
		// Guard memory before gopher-lua allocates: a Go allocation
		// failure cannot be recovered.
		if n > 0 && int64(len(s))*int64(n) > maxStringLen {
			L.RaiseError(msgStringTooLarge)
		}
		if size := len(s) * max(n, 0); size >= reserveFrom {
			st.reserve(L, size)
		}
		return origRep.GFunction(L)
	}))
	str.RawSetString("format", L.NewFunction(st.strFormat))
	st.patchPatterns(str)
	tbl := G.RawGetString("table").(*lua.LTable)
	tbl.RawSetString("concat", L.NewFunction(st.tableConcat))
	tbl.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("'setn' is obsolete")
		return 0
	}))
	tbl.RawSetString("foreach", L.NewFunction(tableForeach(false)))
	tbl.RawSetString("foreachi", L.NewFunction(tableForeach(true)))
	math := G.RawGetString("math").(*lua.LTable)
	math.RawSetString("huge", lua.LNumber(gomath.Inf(1)))
	math.RawSetString("random", L.NewFunction(st.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(st.mathRandomseed))
	st.patchMath(math)
}

// maxStringLen bounds strings built by string.rep: Redis's own limit for a
// string value (proto-max-bulk-len's default).
const maxStringLen = 512 << 20

// tableForeach is Lua 5.0's table.foreach/foreachi, still in 5.1.
func tableForeach(indexed bool) lua.LGFunction {
	return func(L *lua.LState) int {
		t := L.CheckTable(1)
		f := L.CheckFunction(2)
		call := func(k, v lua.LValue) bool {
			L.Push(f)
			L.Push(k)
			L.Push(v)
			L.Call(2, 1)
			r := L.Get(-1)
			L.Pop(1)
			if r != lua.LNil {
				L.Push(r)
				return true
			}
			return false
		}
		if indexed {
			n := t.Len()
			for i := 1; i <= n; i++ {
				if call(lua.LNumber(i), t.RawGetInt(i)) {
					return 1
				}
			}
			return 0
		}
		k, v := t.Next(lua.LNil)
		for k != lua.LNil {
			if call(k, v) {
				return 1
			}
			k, v = t.Next(k)
		}
		return 0
	}
}

// errorHandler is Redis's __redis__err__handler: it turns any error value
// into a table {err=..., source=..., line=...} naming the Lua function
// that raised it (skipping the Go function, such as error or redis.call,
// that did the raising).
func (st *state) errorHandler(L *lua.LState) int {
	obj := L.Get(1)
	where := luaFrame(L)
	var t *lua.LTable
	if st.ctx != nil && st.ctx.Err() != nil {
		// SCRIPT KILL: whatever the script was doing, say so.
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString(killText(st.ctx)))
	} else if tt, ok := obj.(*lua.LTable); ok {
		t = tt
	} else {
		msg := luaToString(L, obj)
		if _, isString := obj.(lua.LString); isString {
			msg = luaMessage(msg, where)
		}
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+msg))
	}
	if where != nil {
		t.RawSetString("source", lua.LString("@"+strings.TrimPrefix(where.Source, "@")))
		t.RawSetString("line", lua.LNumber(where.CurrentLine))
	}
	L.Push(t)
	return 1
}

// luaFrame is the innermost Lua function on the stack, where an error
// being handled was raised (the Go functions that raise, such as error or
// redis.call, are skipped as Redis's handler skips C functions).
func luaFrame(L *lua.LState) *lua.Debug {
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return nil
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			return dbg
		}
	}
}

// pcallHandler gives errors caught by pcall Lua's wording while the frame
// that raised them is still there to name the variable.
func pcallHandler(L *lua.LState) int {
	if s, ok := L.Get(1).(lua.LString); ok {
		L.Push(lua.LString(luaMessage(string(s), luaFrame(L))))
		return 1
	}
	L.Push(L.Get(1))
	return 1
}

// killText is the error a killed script ends with: the cause SCRIPT KILL
// gave to the context.
func killText(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && c != context.Canceled {
		return c.Error()
	}
	return "ERR Script killed by user with SCRIPT KILL..."
}

// luaToString is tostring() without metamethods, with C Lua's number format.
func luaToString(L *lua.LState, v lua.LValue) string {
	switch x := v.(type) {
	case lua.LNumber:
		return fmt14(float64(x))
	case lua.LString:
		return string(x)
	}
	return L.ToStringMeta(v).String()
}

// run calls s and writes its reply.
func (st *state) run(ctx context.Context, s *Script, keys, argv [][]byte, host Host, w *resp.Writer) Outcome {
	L := st.L
	fn := st.fns[s.SHA]
	if fn == nil {
		fn = L.NewFunctionFromProto(s.proto)
		fn.Env = st.env
		if !s.assignsGlobal {
			fn.Env = st.fast
		}
		st.fns[s.SHA] = fn
	}
	st.fillArgs(keys, argv)
	st.beginRun(ctx, host)
	defer st.endRun()
	L.Push(fn)
	if err := L.PCall(0, 1, st.errFn); err != nil {
		st.writeError(s, err, w)
		return st.out
	}
	st.writeReply(w, L.Get(-1), 0)
	return st.out
}

// replyError writes an error reply and notes it for the statistics; t is
// the error table it came from, if any.
func (st *state) replyError(w *resp.Writer, msg string, t *lua.LTable) {
	w.Error(msg)
	st.out.Failed = true
	if t == nil || !st.counted[t] {
		st.out.Errors = append(st.out.Errors, msg)
	}
}

// writeError writes a script's failure in Redis 7.0's format:
// "-<err> script: <sha>, on @user_script:<line>."
func (st *state) writeError(s *Script, err error, w *resp.Writer) {
	st.writeErrorAs(s.SHA, chunkName, err, w)
}

// writeErrorAs is writeError for the script or function called name,
// compiled as chunk.
func (st *state) writeErrorAs(name, chunk string, err error, w *resp.Writer) {
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if ae, isAPI := err.(*lua.ApiError); !ok && isAPI && isOverflow(ae) {
		// The call stack filled up, so the error handler could not run:
		// report it as Lua's "stack overflow" at the deepest line.
		line := overflowLine(ae)
		st.replyError(w, "ERR "+chunk+":"+line+": stack overflow script: "+name+", on @"+chunk+":"+line+".", nil)
		return
	}
	if !ok {
		msg := luaToString(st.L, obj)
		if len(msg) > 100 {
			msg = msg[:100]
		}
		st.replyError(w, "ERR Error running script "+name+", "+strings.TrimRight(msg, "\n"), nil)
		return
	}
	msg, ok := t.RawGetString("err").(lua.LString)
	if !ok {
		// error({}) and the like crash Redis 7.0; say what happened.
		msg = msgBadErrorObject
	}
	source, sok := t.RawGetString("source").(lua.LString)
	line := t.RawGetString("line")
	if sok && line != lua.LNil {
		st.replyError(w, string(msg)+" script: "+name+", on "+string(source)+":"+luaToString(st.L, line)+".", t)
	} else {
		st.replyError(w, string(msg), t)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// numberSubject wraps a string function so that a number given as the
// string to work on is converted the way C Lua converts it.
func numberSubject(fn *lua.LFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Replace(1, lua.LString(fmt14(float64(n))))
		}
		return fn.GFunction(L)
	}
}

// tableConcat is table.concat with Lua's number formatting. The size is
// added up first, so that the result is reserved and allocated once.
func (st *state) tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := checkOptStr(L, 2, "concat", "")
	i := int64(1)
	if L.Get(3) != lua.LNil {
		i = int64(checkInt(L, 3, "concat"))
	}
	j := int64(t.Len())
	if L.Get(4) != lua.LNil {
		j = int64(checkInt(L, 4, "concat"))
	}
	size := 0
	for k := i; k <= j; k++ {
		s, ok := concatText(t.RawGetInt(int(k)))
		if !ok {
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", t.RawGetInt(int(k)).Type().String(), k)
		}
		size += len(s)
		if k < j {
			size += len(sep)
		}
		if size > maxStringLen {
			L.RaiseError(msgStringTooLarge)
		}
		if k%patternCheckSteps == 0 {
			st.checkStop(L)
		}
	}
	if size >= reserveFrom {
		st.reserve(L, size)
	}
	var b strings.Builder
	b.Grow(size)
	for k := i; k <= j; k++ {
		s, _ := concatText(t.RawGetInt(int(k)))
		b.WriteString(s)
		if k < j {
			b.WriteString(sep)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// checkOptStr is luaL_optstring.
func checkOptStr(L *lua.LState, n int, fn, def string) string {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkStr(L, n, fn)
}

// isOverflow recognises gopher-lua's call stack overflow, which is a Go
// panic rather than a Lua error once the stack is full.
func isOverflow(ae *lua.ApiError) bool {
	msg := ae.Object.String()
	return ae.Type == lua.ApiErrorPanic && (strings.Contains(msg, "callstack overflow") || strings.Contains(msg, "stack overflow"))
}

var traceLine = regexp.MustCompile(`(?m)^\s*(?:` + chunkName + `|` + funcChunkName + `):(\d+):`)

// overflowLine finds the innermost script line in an error's stack trace.
func overflowLine(ae *lua.ApiError) string {
	if m := traceLine.FindStringSubmatch(ae.StackTrace); m != nil {
		return m[1]
	}
	return "1"
}

// strtodLua is Lua 5.1's luaO_str2d: C strtod over the string with
// surrounding whitespace allowed, or a hex integer.
func strtodLua(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\v\f\r")
	if t == "" {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if strings.EqualFold(body, "nan") {
		return gomath.NaN(), len(t)-len(body) <= 1
	}
	if f, ok := resp.ParseFloat([]byte(t)); ok {
		return f, true
	}
	return parseLuaNumber(t)
}

var gotNil = regexp.MustCompile(`bad argument #(\d+) to (\S+) \((.*) expected, got nil\)$`)

// wrapArgErrors makes the Go functions of t report a missing argument as
// Lua does ("got no value"); gopher-lua cannot tell nil from absent.
func wrapArgErrors(L *lua.LState, t *lua.LTable) {
	var names []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if f, ok := v.(*lua.LFunction); ok && f.IsG && len(f.Upvalues) == 0 && !isHidden(k) {
			names = append(names, k)
		}
	})
	for _, k := range names {
		fn := t.RawGet(k).(*lua.LFunction).GFunction
		t.RawSet(k, L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			defer func() {
				if r := recover(); r != nil {
					if ae, ok := r.(*lua.ApiError); ok {
						if s, ok := ae.Object.(lua.LString); ok {
							if m := gotNil.FindStringSubmatchIndex(string(s)); m != nil {
								if n, _ := strconv.Atoi(string(s)[m[2]:m[3]]); n > top {
									ae.Object = lua.LString(string(s)[:m[1]-len("nil)")] + "no value)")
								}
							}
						}
					}
					panic(r)
				}
			}()
			return fn(L)
		}))
	}
}

// beginRun readies the state for one script or function call; endRun
// puts it back for the next, whatever the call did.
func (st *state) beginRun(ctx context.Context, host Host) {
	st.inRun, st.ctx, st.host, st.resp = true, ctx, host, 2
	st.out = Outcome{}
	clear(st.counted)
	st.L.SetContext(ctx)
}

func (st *state) endRun() {
	st.inRun, st.ctx, st.host = false, nil, nil
	clear(st.counted)
	if len(st.ctorHint) > 0 {
		clear(st.ctorHint)
	}
	st.L.RemoveContext()
	st.L.SetTop(0)
}
