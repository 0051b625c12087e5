package script

import (
	"math"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// string.find, match, gmatch and gsub on the matcher of pattern.go, and
// string.byte and string.char with Lua 5.1's argument rules and stack
// limit. They replace gopher-lua's versions (see pattern.go for why).

// patchPatterns installs the pattern functions into the string library.
func (st *state) patchPatterns(str *lua.LTable) {
	L := st.L
	str.RawSetString("find", L.NewFunction(func(L *lua.LState) int { return st.findAux(L, true) }))
	str.RawSetString("match", L.NewFunction(func(L *lua.LState) int { return st.findAux(L, false) }))
	gmatch := L.NewFunction(st.strGmatch)
	str.RawSetString("gmatch", gmatch)
	str.RawSetString("gfind", gmatch) // Lua 5.1's compatibility name
	str.RawSetString("gsub", L.NewFunction(st.strGsub))
	str.RawSetString("byte", L.NewFunction(strByte))
	str.RawSetString("char", L.NewFunction(strChar))
}

// checkStr is luaL_checkstring: a string, or a number in Lua's "%.14g".
func checkStr(L *lua.LState, n int, fn string) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return fmt14(float64(v))
	default:
		argTypeError(L, n, fn, "string", v)
	}
	return ""
}

// checkInteger is luaL_checkinteger: a number or a numeric string,
// truncated toward zero.
func checkInteger(L *lua.LState, n int, fn string) int64 {
	v := L.Get(n)
	f, ok := toNumber(v)
	if !ok {
		argTypeError(L, n, fn, "number", v)
	}
	switch {
	case f != f:
		return math.MinInt64 // what x86's conversion gives
	case f >= 1<<63:
		return math.MinInt64
	case f < -(1 << 63):
		return math.MinInt64
	}
	return int64(f)
}

// checkInt is luaL_checkint: checkInteger cut to a C int.
func checkInt(L *lua.LState, n int, fn string) int {
	return int(int32(checkInteger(L, n, fn)))
}

// optInteger is luaL_optinteger: def when the argument is none or nil.
func optInteger(L *lua.LState, n int, fn string, def int64) int64 {
	if L.Get(n) == lua.LNil {
		return def
	}
	return checkInteger(L, n, fn)
}

// posrelat is Lua 5.1 lstrlib's: a negative position counts from the end,
// and what is still negative becomes 0.
func posrelat(pos int64, n int) int64 {
	if pos < 0 {
		pos += int64(n) + 1
	}
	return max(pos, 0)
}

// hasSpecials is strpbrk(p, SPECIALS): the search stops at a NUL byte.
func hasSpecials(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == 0 {
			return false
		}
		if strings.IndexByte(specials, c) >= 0 {
			return true
		}
	}
	return false
}

// findAux is str_find_aux: string.find (positions, then captures) and
// string.match (captures).
func (st *state) findAux(L *lua.LState, find bool) int {
	name := "match"
	if find {
		name = "find"
	}
	s := checkStr(L, 1, name)
	p := checkStr(L, 2, name)
	init := posrelat(optInteger(L, 3, name, 1), len(s)) - 1
	if init < 0 {
		init = 0
	} else if init > int64(len(s)) {
		init = int64(len(s))
	}
	if find && (lua.LVAsBool(L.Get(4)) || !hasSpecials(p)) {
		if i := strings.Index(s[init:], p); i >= 0 {
			start := int(init) + i
			L.Push(smallNumber(start + 1))
			L.Push(smallNumber(start + len(p)))
			return 2
		}
		L.Push(lua.LNil)
		return 1
	}
	m := newMatcher(st, L, s, p)
	pi, anchored := 0, len(m.pat) > 0 && m.pat[0] == '^'
	if anchored {
		pi = 1
	}
	start, end := m.find(int(init), pi, anchored)
	if start < 0 {
		L.Push(lua.LNil)
		return 1
	}
	if find {
		L.Push(smallNumber(start + 1))
		L.Push(smallNumber(end))
		return m.pushCaptures(start, end, false) + 2
	}
	return m.pushCaptures(start, end, true)
}

// strGmatch is string.gmatch: an iterator over the matches, each found
// when the loop asks for it. As in Lua 5.1, '^' has no special meaning
// here.
func (st *state) strGmatch(L *lua.LState) int {
	s := checkStr(L, 1, "gmatch")
	p := checkStr(L, 2, "gmatch")
	m := newMatcher(st, L, s, p)
	pos := 0
	L.Push(L.NewFunction(func(L *lua.LState) int {
		m.L = L
		for ; pos <= len(s); pos++ {
			m.level = 0
			if e := m.match(pos, 0); e >= 0 {
				start := pos
				pos = e
				if e == start {
					pos++ // an empty match: move on at least one
				}
				return m.pushCaptures(start, e, true)
			}
		}
		return 0
	}))
	return 1
}

// strGsub is string.gsub. The result is built once, in a buffer that
// asks the run before it grows large (gsubBuffer).
func (st *state) strGsub(L *lua.LState) int {
	src := checkStr(L, 1, "gsub")
	p := checkStr(L, 2, "gsub")
	repl := L.Get(3)
	switch repl.(type) {
	case lua.LNumber, lua.LString, *lua.LFunction, *lua.LTable:
	default:
		argError(L, 3, "gsub", "string/function/table expected")
	}
	maxN := optInteger(L, 4, "gsub", int64(len(src))+1)
	m := newMatcher(st, L, src, p)
	b := gsubBuffer{st: st, L: L}
	b.grow(len(src))
	var n int64
	s := 0
	if text, plain := st.plainGsub(m, repl); plain {
		// Plain text for plain text: search, no matcher.
		for n < maxN {
			i := strings.Index(src[s:], m.pat)
			if i < 0 {
				break
			}
			b.add(src[s : s+i])
			b.add(text)
			s += i + len(m.pat)
			n++
			if n%patternCheckSteps == 0 {
				st.checkStop(L)
			}
		}
	} else {
		pi, anchored := 0, len(m.pat) > 0 && m.pat[0] == '^'
		if anchored {
			pi = 1
		}
		for n < maxN {
			m.level = 0
			e := m.match(s, pi)
			if e >= 0 {
				n++
				st.gsubValue(m, &b, s, e, repl)
			}
			if e > s {
				s = e
			} else if s < len(src) {
				b.addByte(src[s])
				s++
			} else {
				break
			}
			if anchored {
				break
			}
		}
	}
	b.add(src[s:])
	L.Push(b.result())
	L.Push(lua.LNumber(n))
	return 2
}

// plainGsub reports a gsub that needs no matcher: a non-empty pattern of
// plain characters replaced by a text without '%'.
func (st *state) plainGsub(m *matcher, repl lua.LValue) (string, bool) {
	if len(m.pat) == 0 || hasSpecials(m.pat) {
		return "", false
	}
	var text string
	switch r := repl.(type) {
	case lua.LString:
		text = string(r)
	case lua.LNumber:
		text = fmt14(float64(r))
	default:
		return "", false
	}
	return text, strings.IndexByte(text, '%') < 0
}

// gsubValue is add_value: the replacement of the match [s, e).
func (st *state) gsubValue(m *matcher, b *gsubBuffer, s, e int, repl lua.LValue) {
	L := m.L
	var v lua.LValue
	switch r := repl.(type) {
	case lua.LString:
		st.gsubText(m, b, s, e, string(r))
		return
	case lua.LNumber:
		st.gsubText(m, b, s, e, fmt14(float64(r)))
		return
	case *lua.LFunction:
		L.Push(r)
		n := m.pushCaptures(s, e, true)
		L.Call(n, 1)
		v = L.Get(-1)
		L.Pop(1)
	case *lua.LTable:
		v = L.GetTable(r, m.capture(0, s, e))
	}
	switch x := v.(type) {
	case lua.LString:
		b.add(string(x))
	case lua.LNumber:
		b.add(fmt14(float64(x)))
	default:
		if !lua.LVAsBool(v) {
			b.add(m.src[s:e]) // false or nil: keep the match
			return
		}
		L.RaiseError("invalid replacement value (a %s)", v.Type().String())
	}
}

// gsubText is add_s: a replacement text, where %0 is the match, %1-%9 a
// capture and '%' before anything else stands for that character (a
// final '%' for the NUL that ends a C string, as in Lua 5.1).
func (st *state) gsubText(m *matcher, b *gsubBuffer, s, e int, text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '%' {
			b.addByte(c)
			continue
		}
		i++
		var d byte
		if i < len(text) {
			d = text[i]
		}
		switch {
		case !isDigit(d):
			b.addByte(d)
		case d == '0':
			b.add(m.src[s:e])
		default:
			text, pos, isPos := m.captureText(int(d-'1'), s, e)
			if isPos {
				text = itoa(pos)
			}
			b.add(text)
		}
	}
}

// gsubBuffer is the result of a gsub, growing by doubling and reserving
// each large growth with the run first (limits.go).
type gsubBuffer struct {
	st  *state
	L   *lua.LState
	buf []byte
}

func (b *gsubBuffer) grow(extra int) {
	need := len(b.buf) + extra
	if need <= cap(b.buf) {
		return
	}
	size := max(2*cap(b.buf), need, 64)
	if size >= reserveFrom {
		if need > maxStringLen {
			b.L.RaiseError(msgStringTooLarge)
		}
		size = min(size, maxStringLen)
		b.st.reserve(b.L, size)
	}
	nb := make([]byte, len(b.buf), size)
	copy(nb, b.buf)
	b.buf = nb
}

func (b *gsubBuffer) add(s string) {
	if len(b.buf)+len(s) > cap(b.buf) {
		b.grow(len(s))
	}
	b.buf = append(b.buf, s...)
}

func (b *gsubBuffer) addByte(c byte) {
	if len(b.buf) == cap(b.buf) {
		b.grow(1)
	}
	b.buf = append(b.buf, c)
}

// result is the buffer as a Lua string, without a copy: nothing writes
// to the buffer afterwards.
func (b *gsubBuffer) result() lua.LValue {
	if len(b.buf) == 0 {
		return lua.LString("")
	}
	return lua.LString(unsafe.String(&b.buf[0], len(b.buf)))
}

// strByte is string.byte: Lua 5.1's positions, and at most the values
// the C stack has room for ("string slice too long").
func strByte(L *lua.LState) int {
	s := checkStr(L, 1, "byte")
	posi := posrelat(optInteger(L, 2, "byte", 1), len(s))
	pose := posrelat(optInteger(L, 3, "byte", posi), len(s))
	posi = max(posi, 1)
	pose = min(pose, int64(len(s)))
	if posi > pose {
		return 0
	}
	n := int(pose - posi + 1)
	checkResults(L, n, "stack overflow (string slice too long)")
	for i := posi - 1; i < pose; i++ {
		L.Push(smallNumber(int(s[i])))
	}
	return n
}

// strChar is string.char: every argument a number from 0 to 255.
func strChar(L *lua.LState) int {
	n := L.GetTop()
	b := make([]byte, n)
	for i := 1; i <= n; i++ {
		c := checkInt(L, i, "char")
		if c < 0 || c > 255 {
			argError(L, i, "char", "invalid value")
		}
		b[i-1] = byte(c)
	}
	if n == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	L.Push(lua.LString(unsafe.String(&b[0], n)))
	return 1
}
