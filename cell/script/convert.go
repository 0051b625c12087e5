package script

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/cellserver/cellserver/resp"
)

// maxReplyDepth bounds the nesting of a script's reply (a table that
// contains itself would otherwise recurse forever). Redis stops at its
// Lua stack limit with an error element; so do we.
const maxReplyDepth = 1000

// writeReply is Redis's luaReplyToRedisReply: the script's return value,
// written in the client's protocol.
func (st *state) writeReply(w *resp.Writer, v lua.LValue, depth int) {
	if depth > maxReplyDepth {
		st.replyError(w, "ERR "+msgStackLimit, nil)
		return
	}
	switch x := v.(type) {
	case lua.LString:
		w.BulkString(string(x))
	case lua.LBool:
		switch {
		case st.resp == 3:
			w.Bool(bool(x))
		case bool(x):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(toInteger(float64(x)))
	case *lua.LTable:
		st.writeTable(w, x, depth)
	default:
		w.Null()
	}
}

func (st *state) writeTable(w *resp.Writer, t *lua.LTable, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		st.replyError(w, string(s), t)
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Status(string(s))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		txt := mapCRLF(string(s))
		if w.Proto() == 3 {
			w.Raw([]byte("(" + txt + "\r\n"))
		} else {
			w.BulkString(txt)
		}
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, fok := vt.RawGetString("format").(lua.LString)
		str, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok {
			if w.Proto() == 3 {
				f := string(format)
				for len(f) < 3 {
					f += " "
				}
				body := f[:3] + ":" + string(str)
				w.Raw([]byte("=" + strconv.Itoa(len(body)) + "\r\n" + body + "\r\n"))
			} else {
				w.BulkString(string(str))
			}
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		if keys, ok := st.luaKeyOrder(m); ok {
			w.Map(len(keys))
			for _, k := range keys {
				st.writeReply(w, k, depth+1)
				st.writeReply(w, m.RawGet(k), depth+1)
			}
			return
		}
		n := 0
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Map(n)
		m.ForEach(func(k, v lua.LValue) {
			st.writeReply(w, k, depth+1)
			st.writeReply(w, v, depth+1)
		})
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		if keys, ok := st.luaKeyOrder(s); ok {
			w.Set(len(keys))
			for _, k := range keys {
				st.writeReply(w, k, depth+1)
			}
			return
		}
		n := 0
		s.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Set(n)
		s.ForEach(func(k, _ lua.LValue) { st.writeReply(w, k, depth+1) })
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		st.writeReply(w, t.RawGetInt(i), depth+1)
	}
}

// statusOK is the boxed "OK" of the most common status reply.
var statusOK lua.LValue = lua.LString("OK")

func mapCRLF(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// replyParser turns a command's RESP reply into the Lua value redis.call
// returns (Redis's redisProtocolToLuaType). The replies come from our own
// writer, so the input is well-formed; a truncated one still yields nil
// rather than a panic.
type replyParser struct {
	st       *state
	b        []byte
	pos      int
	topError bool // the reply itself (not an element) was an error
}

func (p *replyParser) line() string { return string(p.lineBytes()) }

// lineBytes is the rest of the current line, in the reply's own memory.
func (p *replyParser) lineBytes() []byte {
	for i := p.pos; i+1 < len(p.b); i++ {
		if p.b[i] == '\r' && p.b[i+1] == '\n' {
			s := p.b[p.pos:i]
			p.pos = i + 2
			return s
		}
	}
	s := p.b[p.pos:]
	p.pos = len(p.b)
	return s
}

// integer reads the line as a decimal integer; ok is false if it is not one.
func (p *replyParser) integer() (int64, bool) {
	return resp.ParseInt(p.lineBytes())
}

func (p *replyParser) count() int {
	n, ok := p.integer()
	if !ok || n > int64(len(p.b)) {
		return -1
	}
	return int(n)
}

func (p *replyParser) bulk(n int) string {
	if n < 0 || p.pos+n > len(p.b) {
		p.pos = len(p.b)
		return ""
	}
	s := string(p.b[p.pos : p.pos+n])
	p.pos += n + 2
	return s
}

func (p *replyParser) value(depth int) lua.LValue {
	L := p.st.L
	if p.pos >= len(p.b) {
		return lua.LNil
	}
	kind := p.b[p.pos]
	p.pos++
	switch kind {
	case ':':
		n, _ := p.integer()
		return p.st.box.number(float64(n))
	case '$':
		n := p.count()
		if n < 0 {
			return lua.LFalse
		}
		return p.st.box.str(p.bulk(n))
	case '+':
		var ok lua.LValue = statusOK
		if s := p.lineBytes(); string(s) != "OK" {
			ok = lua.LString(s)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", ok)
		return t
	case '-':
		if depth == 0 {
			p.topError = true
		}
		t := errTable(L, "-"+p.line())
		p.st.counted[t] = true
		return t
	case '*':
		n := p.count()
		if n < 0 {
			return lua.LFalse
		}
		t := L.CreateTable(n, 0)
		for i := 1; i <= n; i++ {
			t.RawSetInt(i, p.value(depth+1))
		}
		return t
	case '_':
		p.line()
		return lua.LNil
	case ',':
		f, _ := parseDouble(p.line())
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t
	case '#':
		return lua.LBool(p.line() == "t")
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(p.line()))
		return t
	case '=':
		s := p.bulk(p.count())
		t := L.CreateTable(0, 1)
		vt := L.CreateTable(0, 1)
		if len(s) >= 4 {
			vt.RawSetString("format", lua.LString(s[:3]))
			vt.RawSetString("string", lua.LString(s[4:]))
		}
		t.RawSetString("verbatim_string", vt)
		return t
	case '%':
		n := p.count()
		m := L.CreateTable(0, 1)
		for i := 0; i < n; i++ {
			k := p.value(depth + 1)
			v := p.value(depth + 1)
			if k != lua.LNil {
				m.RawSet(k, v)
			}
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t
	case '~':
		n := p.count()
		s := L.CreateTable(0, 1)
		for i := 0; i < n; i++ {
			if k := p.value(depth + 1); k != lua.LNil {
				s.RawSet(k, lua.LTrue)
			}
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", s)
		return t
	case '|':
		// Attributes are dropped; the value follows.
		n := p.count()
		for i := 0; i < 2*n; i++ {
			p.value(depth + 1)
		}
		return p.value(depth)
	}
	p.pos = len(p.b)
	return lua.LNil
}

func parseDouble(s string) (float64, bool) {
	switch s {
	case "inf":
		s = "+Inf"
	case "-inf":
		s = "-Inf"
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}
