package script

import (
	"math"
	"strconv"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// Log levels and replication flags, as redis.LOG_* and redis.REPL_*.
const (
	LogDebug   = 0
	LogVerbose = 1
	LogNotice  = 2
	LogWarning = 3
)

// redisLib builds the redis table.
func (st *state) redisLib() *lua.LTable {
	L := st.L
	t := L.CreateTable(0, 16)
	fns := map[string]lua.LGFunction{
		"call":         func(L *lua.LState) int { return st.call(L, true, false) },
		"pcall":        func(L *lua.LState) int { return st.call(L, false, false) },
		"error_reply":  st.errorReply,
		"status_reply": st.statusReply,
		"sha1hex":      sha1hex,
		"log":          st.logFn,
		"setresp":      st.setresp,
		"set_repl":     setRepl,
		"replicate_commands": func(L *lua.LState) int {
			L.Push(lua.LTrue)
			return 1
		},
		"breakpoint": func(L *lua.LState) int {
			L.Push(lua.LFalse)
			return 1
		},
		"debug":         func(L *lua.LState) int { return 0 },
		"acl_check_cmd": st.aclCheckCmd,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{
		"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice, "LOG_WARNING": LogWarning,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(st.e.version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(st.e.versionNum))
	return t
}

// errTable is Redis's luaPushErrorBuff: "-CODE msg" keeps its code, a text
// without a leading '-' gets "ERR ", and line ends are trimmed.
func errTable(L *lua.LState, s string) *lua.LTable {
	code, msg := "ERR", s
	if strings.HasPrefix(s, "-") {
		if c, m, ok := strings.Cut(s[1:], " "); ok {
			code, msg = c, m
		} else {
			msg = s[1:]
		}
	}
	msg = strings.Trim(msg, "\r\n")
	t := L.CreateTable(0, 1)
	t.RawSetString("err", lua.LString(code+" "+msg))
	return t
}

// raise throws an error table; the error handler adds where it happened.
func raise(L *lua.LState, t *lua.LTable) int {
	L.Error(t, 0)
	return 0
}

// call is redis.call (raise) and redis.pcall. void is a call whose
// results the script drops (a call statement): unless the reply is an
// error, it is not turned into Lua values at all.
func (st *state) call(L *lua.LState, raiseErr, void bool) int {
	if !st.inRun {
		return raise(L, errTable(L, msgCallOutside))
	}
	fail := func(t *lua.LTable) int {
		if raiseErr {
			return raise(L, t)
		}
		L.Push(t)
		return 1
	}
	n := L.GetTop()
	if n == 0 {
		return fail(errTable(L, msgNoArgs))
	}
	a := &st.callArgs
	a.reset()
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			a.addString(string(v))
		case lua.LNumber:
			a.addNumber(float64(v))
		default:
			return fail(errTable(L, msgArgsType))
		}
	}
	args := a.list()
	if st.ctx.Err() != nil {
		return raise(L, errTable(L, "-"+killText(st.ctx)))
	}
	w := st.scratch
	w.Reset()
	w.SetProto(st.resp)
	st.host.Call(args, w)
	if void && (w.Len() == 0 || w.Bytes()[0] != '-') {
		return 0
	}
	p := replyParser{st: st, b: w.Bytes()}
	v := p.value(0)
	if t, ok := v.(*lua.LTable); ok && p.topError {
		return fail(t)
	}
	L.Push(v)
	return 1
}

func (st *state) errorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errTable(L, msgWrongArgsOrType))
		return 1
	}
	if !strings.HasPrefix(string(s), "-") {
		s = "-" + s
	}
	L.Push(errTable(L, string(s)))
	return 1
}

func (st *state) statusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errTable(L, msgWrongArgsOrType))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func sha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, errTable(L, msgWrongArgs))
	}
	var b []byte
	switch v := L.Get(1).(type) {
	case lua.LString:
		b = []byte(v)
	case lua.LNumber:
		b = []byte(fmt14(float64(v)))
	}
	L.Push(lua.LString(SHA1Hex(b)))
	return 1
}

// toNumber is lua_tonumber: numbers and numeric strings convert.
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return parseLuaNumber(string(x))
	}
	return 0, false
}

// parseLuaNumber is Lua 5.1's string-to-number rule: strtod or a hex
// integer, surrounded by optional whitespace.
func parseLuaNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 64)
		return float64(n), err == nil
	}
	if strings.ContainsAny(s, "_pP") || strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "+-")), "0x") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func (st *state) logFn(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, errTable(L, msgLogArgs))
	}
	lv, ok := toNumber(L.Get(1))
	if !ok {
		return raise(L, errTable(L, msgLogLevelType))
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		return raise(L, errTable(L, msgLogLevel))
	}
	var parts []string
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			parts = append(parts, string(v))
		case lua.LNumber:
			parts = append(parts, fmt14(float64(v)))
		}
	}
	if h, ok := st.host.(LogHost); ok {
		h.Log(level, strings.Join(parts, " "))
	} else {
		st.e.log(level, strings.Join(parts, " "))
	}
	return 0
}

func (st *state) setresp(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, errTable(L, msgSetrespArgs))
	}
	v, _ := toNumber(L.Get(1))
	if v != 2 && v != 3 {
		return raise(L, errTable(L, msgSetrespVersion))
	}
	st.resp = int(v)
	return 0
}

func setRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, errTable(L, msgSetReplArgs))
	}
	v, _ := toNumber(L.Get(1))
	if int64(v)&^3 != 0 {
		return raise(L, errTable(L, msgSetReplFlags))
	}
	return 0
}

// Checker is an optional Host method for redis.acl_check_cmd: whether args
// name a known command.
type Checker interface {
	CommandExists(name []byte) bool
}

func (st *state) aclCheckCmd(L *lua.LState) int {
	if L.GetTop() == 0 {
		return raise(L, errTable(L, msgNoArgs))
	}
	name, ok := L.Get(1).(lua.LString)
	c, isChecker := st.host.(Checker)
	if !ok || (isChecker && !c.CommandExists([]byte(name))) {
		return raise(L, errTable(L, msgACLCommand))
	}
	L.Push(lua.LTrue)
	return 1
}

// rand48 is the generator behind Redis's math.random (redisLrand48): the
// 48-bit linear congruential generator of POSIX lrand48, shared by every
// script of the server and never reseeded per script (Redis 7.0).
type rand48 struct {
	mu sync.Mutex
	x  uint64
}

const (
	rand48A    = 0x5DEECE66D
	rand48C    = 0xB
	rand48Mask = 1<<48 - 1
	lrand48Max = math.MaxInt32
	// rand48Initial is the state before any seeding: the X0, X1, X2
	// words 0x330E, 0xABCD, 0x1234 of Redis's rand.c (and of POSIX).
	rand48Initial = 0x1234ABCD330E
)

func (r *rand48) seed(s int32) {
	r.mu.Lock()
	r.x = (uint64(uint32(s))<<16 | 0x330E) & rand48Mask
	r.mu.Unlock()
}

func (r *rand48) next() int32 {
	r.mu.Lock()
	r.x = (rand48A*r.x + rand48C) & rand48Mask
	v := int32(r.x >> 17)
	r.mu.Unlock()
	return v
}

func (st *state) mathRandom(L *lua.LState) int {
	if !st.inRun {
		L.RaiseError(msgRandomOutside)
	}
	r := float64(st.e.rng.next()%lrand48Max) / float64(lrand48Max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			argError(L, 1, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l := L.CheckInt(1)
		u := L.CheckInt(2)
		if l > u {
			argError(L, 2, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError(msgWrongArgs)
	}
	return 1
}

func (st *state) mathRandomseed(L *lua.LState) int {
	if !st.inRun {
		L.RaiseError(msgRandomOutside)
	}
	st.e.rng.seed(int32(L.CheckInt(1)))
	return 0
}
