package script

import (
	"bytes"
	"context"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/cellserver/cellserver/resp"
)

// Functions (Redis 7.0's FUNCTION LOAD and FCALL).
//
// A library is Lua code with a "#!lua name=<lib>" first line. Loading runs
// it once in a narrow environment whose only global is a redis table
// holding register_function, log and the version fields; the functions it
// registers are the library's. Their callbacks are closures of that run,
// and see the full environment of scripts when called.
//
// Lua states are pooled (engine.go), so each state runs a library's code
// itself the first time it calls one of its functions, and keeps the
// closures until the set of libraries changes. Library-level locals are
// therefore per state, where Redis has one Lua state for all functions;
// a library whose functions keep state in such locals between calls sees
// them start afresh now and then.

const funcChunkName = "user_function"

// loadTimeout bounds a library's load run, as Redis's LOAD_TIMEOUT_MS.
const loadTimeout = 500 * time.Millisecond

// Library is a loaded library: its code and the functions it registered,
// in registration order. Immutable once loaded.
type Library struct {
	Name  string
	Code  []byte
	Funcs []*Function
	proto *lua.FunctionProto
}

// Function is one registered function.
type Function struct {
	Name    string
	Desc    string
	HasDesc bool
	Flags   Flags
	Lib     *Library
	Notes   ShardNotes // the host's (see Script.Notes)
}

// FlagNames lists the script flags in Redis's order (FUNCTION LIST).
var FlagNames = []struct {
	Name string
	Flag Flags
}{
	{"no-writes", FlagNoWrites}, {"allow-oom", FlagAllowOOM}, {"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster}, {"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// ValidName is Redis's rule for library and function names.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// libraryMeta reads the "#!<engine> name=<lib>" line; body is the code
// after it, from its line feed on, so line numbers stay the user's.
func libraryMeta(code []byte) (engine, name string, body []byte, err error) {
	if !bytes.HasPrefix(code, []byte("#!")) {
		return "", "", nil, errorText(ErrMissingLibMeta)
	}
	end := bytes.IndexByte(code, '\n')
	if end < 0 {
		return "", "", nil, errorText(ErrInvalidLibMeta)
	}
	parts, ok := resp.SplitArgs(code[:end], nil)
	if !ok || len(parts) == 0 {
		return "", "", nil, errorText(ErrInvalidLibMeta)
	}
	engine = string(parts[0][2:])
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(string(p[:5]), "name=") {
			if named {
				return "", "", nil, errorText(ErrLibNameTwice)
			}
			name, named = string(p[5:]), true
			continue
		}
		return "", "", nil, errorText(ErrLibMetaValue + string(p))
	}
	if !named {
		return "", "", nil, errorText(ErrLibNameMissing)
	}
	return engine, name, code[end:], nil
}

// LoadLibrary compiles code and runs it to learn its functions. The error
// is Redis's reply text. The library is not stored: the caller keeps the
// set of libraries.
func (e *Engine) LoadLibrary(code []byte) (*Library, error) {
	engine, name, body, err := libraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !ValidName(name) {
		return nil, errorText(ErrLibraryName)
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, errorText("ERR Engine '" + engine + "' not found")
	}
	proto, msg := compileAs(body, funcChunkName)
	if msg != "" {
		return nil, errorText("ERR Error compiling function: " + msg)
	}
	lib := &Library{Name: name, Code: bytes.Clone(code), proto: proto}
	st := e.get()
	defer e.put(st)
	_, funcs, err := st.loadLibrary(lib, true)
	if err != nil {
		return nil, err
	}
	if len(funcs) == 0 {
		return nil, errorText(ErrNoFunctions)
	}
	lib.Funcs = funcs
	return lib, nil
}

// libEnv is the environment of one run of a library's code: during the
// load run, only the load API; afterwards (when its functions are
// called), the globals of scripts.
type libEnv struct {
	loading bool
}

// loadLibrary runs lib's code in st and returns the callbacks it
// registered, by name, and their descriptions. log: redis.log lines go
// out (the FUNCTION LOAD run); a state instantiating a library for a call
// runs it quietly.
func (st *state) loadLibrary(lib *Library, log bool) (map[string]*lua.LFunction, []*Function, error) {
	L := st.L
	env := &libEnv{loading: true}
	fns := map[string]*lua.LFunction{}
	var funcs []*Function
	register := L.NewFunction(func(L *lua.LState) int {
		if !env.loading {
			return raise(L, errTable(L, msgRegisterOutsideLoad))
		}
		f, cb, msg := readRegisterArgs(L)
		if msg == "" {
			switch {
			case !ValidName(f.Name):
				msg = msgFunctionName
			case fns[f.Name] != nil:
				msg = msgFunctionExists
			}
		}
		if msg != "" {
			return raise(L, errTable(L, msg))
		}
		f.Lib = lib
		fns[f.Name] = cb
		funcs = append(funcs, f)
		return 0
	})
	realRedis := st.real[st.globals.RawGetString("redis").(*lua.LTable)]
	api := L.CreateTable(0, 8)
	api.RawSetString("register_function", register)
	for _, k := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(k, realRedis.RawGetString(k))
	}
	L.SetMetatable(api, L.GetMetatable(st.globals)) // a miss raises Redis's error
	apiProxy := st.protect(api)
	genv := L.CreateTable(0, 0)
	mt := L.CreateTable(0, 1)
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		k := L.Get(2)
		if s, ok := k.(lua.LString); ok && isHidden(s) {
			// A name the compiler's rewrites use (rewrite.go): redis.call
			// and redis.pcall, which the load API lacks, and helpers.
			if env.loading {
				for field, hidden := range redisFields {
					if string(s) == hidden || string(s) == redisVoidFields[field] {
						L.RaiseError("%s%s'", msgNoGlobal, field)
						return 0
					}
				}
			}
			L.Push(st.globals.RawGet(s))
			return 1
		}
		if env.loading {
			if s, ok := k.(lua.LString); ok && s == "redis" {
				L.Push(apiProxy)
				return 1
			}
			L.RaiseError("%s%s'", msgNoGlobal, L.ToStringMeta(k).String())
			return 0
		}
		if s, ok := k.(lua.LString); ok && (s == "KEYS" || s == "ARGV") {
			// Functions get keys and arguments as parameters.
			L.RaiseError("%s%s'", msgNoGlobal, s)
			return 0
		}
		L.Push(L.GetField(st.env, L.ToStringMeta(k).String()))
		return 1
	}))
	L.SetMetatable(genv, mt)
	envProxy := st.protect(genv)

	fn := L.NewFunctionFromProto(lib.proto)
	fn.Env = envProxy
	savedHost := st.host
	if !log {
		st.host = quietLog{}
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), loadTimeout, errorText(msgLoadTimeout))
	defer cancel()
	st.ctx = ctx
	L.SetContext(ctx)
	L.Push(fn)
	err := L.PCall(0, 0, st.errFn)
	L.RemoveContext()
	st.ctx, st.host = nil, savedHost
	env.loading = false
	L.SetTop(0)
	if err != nil {
		return nil, nil, errorText("ERR Error registering functions: " + loadErrorText(err))
	}
	return fns, funcs, nil
}

// loadErrorText is the message of a failed load run, as Redis's
// luaExtractErrorInformation words it.
func loadErrorText(err error) string {
	ae, ok := err.(*lua.ApiError)
	if !ok {
		return "ERR " + err.Error()
	}
	if t, ok := ae.Object.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			return string(s)
		}
	}
	return "ERR " + ae.Object.String()
}

// quietLog drops redis.log lines: a state running a library's code again
// to call its functions does not repeat the lines of its load.
type quietLog struct{}

func (quietLog) Call([][]byte, *resp.Writer) {}
func (quietLog) Log(int, string)             {}

// readRegisterArgs reads redis.register_function's arguments: (name,
// callback) or one table of named arguments. msg is Redis's error text.
func readRegisterArgs(L *lua.LState) (f *Function, cb *lua.LFunction, msg string) {
	switch L.GetTop() {
	case 1:
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			return nil, nil, msgRegisterFirstArg
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, nil, msgRegisterSecondArg
		}
		return &Function{Name: name}, cb, ""
	default:
		return nil, nil, msgRegisterArgs
	}
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, nil, msgRegisterTable
	}
	f = &Function{}
	named := false
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaString(k)
		if !ok {
			msg = msgRegisterKey
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.Name, named = luaString(v); !named {
				msg = msgRegisterName
			}
		case "description":
			if f.Desc, f.HasDesc = luaString(v); !f.HasDesc {
				msg = msgRegisterDesc
			}
		case "callback":
			if cb, ok = v.(*lua.LFunction); !ok {
				msg = msgRegisterCallback
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = msgRegisterFlags
				return
			}
			for i := 1; ; i++ {
				fv := ft.RawGetInt(i)
				if fv == lua.LNil {
					break
				}
				name, ok := luaString(fv)
				if !ok {
					msg = msgUnknownFlag
					return
				}
				flag, known := Flags(0), false
				for _, fl := range FlagNames {
					if strings.EqualFold(fl.Name, name) {
						flag, known = fl.Flag, true
						break
					}
				}
				if !known {
					msg = msgUnknownFlag
					return
				}
				f.Flags |= flag
			}
		default:
			msg = msgRegisterUnknownArg
		}
	})
	switch {
	case msg != "":
	case !named:
		msg = msgRegisterNoName
	case cb == nil:
		msg = msgRegisterNoCallback
	}
	if msg != "" {
		return nil, nil, msg
	}
	return f, cb, ""
}

// luaString is lua_isstring plus lua_tostring: strings and numbers.
func luaString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return fmt14(float64(v)), true
	}
	return "", false
}

// RunFunction runs f with keys and args (its two parameters) and writes
// its reply, as Run does for a script.
func (e *Engine) RunFunction(ctx context.Context, f *Function, keys, argv [][]byte, host Host, w *resp.Writer) (out Outcome) {
	st := e.get()
	mark := w.Len()
	defer func() {
		if r := recover(); r != nil {
			w.Truncate(mark)
			msg := "ERR Error running script " + f.Name + ", internal error"
			w.Error(msg)
			st.L.Close()
			out = Outcome{Failed: true, Errors: []string{msg}}
			return
		}
		e.put(st)
	}()
	return st.runFunction(ctx, f, keys, argv, host, w)
}

func (st *state) runFunction(ctx context.Context, f *Function, keys, argv [][]byte, host Host, w *resp.Writer) Outcome {
	L := st.L
	if st.libGen != st.e.libGen.Load() {
		st.libs, st.libGen = nil, st.e.libGen.Load()
	}
	fns := st.libs[f.Lib]
	if fns == nil {
		var err error
		if fns, _, err = st.loadLibrary(f.Lib, false); err != nil {
			w.Error(err.Error())
			return Outcome{Failed: true, Errors: []string{err.Error()}}
		}
		if st.libs == nil {
			st.libs = map[*Library]map[string]*lua.LFunction{}
		}
		st.libs[f.Lib] = fns
	}
	st.beginRun(ctx, host)
	defer st.endRun()
	L.Push(fns[f.Name])
	L.Push(stringArray(L, keys))
	L.Push(stringArray(L, argv))
	if err := L.PCall(2, 1, st.errFn); err != nil {
		st.writeErrorAs(f.Name, funcChunkName, err, w)
		return st.out
	}
	st.writeReply(w, L.Get(-1), 0)
	return st.out
}

// stringArray is a fresh Lua array of items.
func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for _, it := range items {
		t.Append(lua.LString(it))
	}
	return t
}

// LibrariesChanged tells the states that libraries were replaced or
// removed, so that they drop the closures of the old ones.
func (e *Engine) LibrariesChanged() { e.libGen.Add(1) }
