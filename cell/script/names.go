package script

import (
	"reflect"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 names the variable in its runtime errors ("attempt to perform
// arithmetic on local 'a' (a nil value)"); gopher-lua does not. The name is
// recovered the way Lua's getobjname does: from the failing instruction of
// the erroring frame, a register is a local if the debug info says so,
// otherwise whatever last loaded it (a global, a field, an upvalue, a
// method). gopher-lua keeps the frame's program counter unexported, so it
// is read through reflection (read-only, on the pinned v1.1.2).

// frameCode returns the function prototype and the index of the current
// instruction of a stack level, if it is a Lua function.
func frameCode(dbg *lua.Debug) (*lua.FunctionProto, int, bool) {
	defer func() { recover() }() // a layout change must not break error replies
	f := reflect.ValueOf(dbg).Elem().FieldByName("frame")
	if !f.IsValid() || f.IsNil() {
		return nil, 0, false
	}
	fr := f.Elem()
	pc := int(fr.FieldByName("Pc").Int())
	fnv := fr.FieldByName("Fn")
	if fnv.IsNil() {
		return nil, 0, false
	}
	fn := (*lua.LFunction)(fnv.UnsafePointer())
	if fn.IsG || fn.Proto == nil || pc < 1 || pc > len(fn.Proto.Code) {
		return nil, 0, false
	}
	return fn.Proto, pc - 1, true
}

func opcode(i uint32) int { return int(i >> 26) }
func argA(i uint32) int   { return int(i>>18) & 0xff }
func argB(i uint32) int   { return int(i & 0x1ff) }
func argC(i uint32) int   { return int(i>>9) & 0x1ff }
func argBx(i uint32) int  { return int(i & 0x3ffff) }

const rkConstant = 0x100

// localName is luaF_getlocalname: the name of register reg at pc.
func localName(p *lua.FunctionProto, reg, pc int) string {
	n := reg + 1
	for _, l := range p.DbgLocals {
		if l.StartPc > pc {
			break
		}
		if pc < l.EndPc {
			n--
			if n == 0 {
				return l.Name
			}
		}
	}
	return ""
}

// constName is the name of a constant key, "?" if it is not a string.
func constName(p *lua.FunctionProto, rk int) string {
	if rk&rkConstant != 0 {
		if s, ok := p.Constants[rk&^rkConstant].(lua.LString); ok {
			return string(s)
		}
	}
	return "?"
}

// objName is getobjname: how Lua would name register reg at pc, as
// ("local", "a"), ("global", "x"), ... or ("", "") if it cannot.
func objName(p *lua.FunctionProto, pc, reg int, depth int) (kind, name string) {
	if n := localName(p, reg, pc); n != "" && !strings.HasPrefix(n, "(") {
		return "local", n
	}
	if depth > 8 {
		return "", ""
	}
	// The last instruction before pc that wrote reg.
	last := -1
	for i := 0; i < pc; i++ {
		in := p.Code[i]
		op, a := opcode(in), argA(in)
		switch op {
		case lua.OP_LOADNIL:
			if reg >= a && reg <= argB(in) {
				last = i
			}
		case lua.OP_SELF:
			if reg == a || reg == a+1 {
				last = i
			}
		case lua.OP_CALL, lua.OP_TFORLOOP, lua.OP_VARARG:
			if reg >= a {
				last = i
			}
		case lua.OP_JMP, lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_SETGLOBAL, lua.OP_SETUPVAL,
			lua.OP_SETTABLE, lua.OP_SETTABLEKS, lua.OP_SETLIST, lua.OP_CLOSE, lua.OP_RETURN, lua.OP_TAILCALL, lua.OP_NOP:
		default:
			if a == reg {
				last = i
			}
		}
	}
	if last < 0 {
		return "", ""
	}
	in := p.Code[last]
	switch opcode(in) {
	case lua.OP_GETGLOBAL:
		if s, ok := p.Constants[argBx(in)].(lua.LString); ok {
			return "global", string(s)
		}
	case lua.OP_MOVE:
		if b := argB(in); b < argA(in) {
			return objName(p, last, b, depth+1)
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		return "field", constName(p, argC(in))
	case lua.OP_GETUPVAL:
		if b := argB(in); b < len(p.DbgUpvalues) {
			return "upvalue", p.DbgUpvalues[b]
		}
		return "upvalue", "?"
	case lua.OP_SELF:
		if reg == argA(in) {
			return "method", constName(p, argC(in))
		}
	}
	return "", ""
}

var (
	arithMessage = regexp.MustCompile(`^cannot perform \w+ operation between (\w+) and (\w+)$`)
	indexMessage = regexp.MustCompile(`^attempt to index a non-table object\((\w+)\) with key '[^']*'$`)
	argMessage   = regexp.MustCompile(`^bad argument #(\d+) to ([^' ]+) \((.*)\)$`)
	forMessages  = map[string]string{
		"for statement init must be a number":  "'for' initial value must be a number",
		"for statement limit must be a number": "'for' limit must be a number",
		"for statement step must be a number":  "'for' step must be a number",
	}
)

// luaMessage rewords a gopher-lua runtime error as Lua 5.1 words it.
// prefix is the "user_script:N: " position, msg the rest; dbg is the
// erroring frame, nil if unknown.
func luaMessage(msg string, dbg *lua.Debug) string {
	prefix := ""
	if i := strings.Index(msg, ": "); i >= 0 && (strings.HasPrefix(msg, chunkName+":") || strings.HasPrefix(msg, funcChunkName+":")) {
		prefix, msg = msg[:i+2], msg[i+2:]
	}
	if m, ok := forMessages[msg]; ok {
		return prefix + m
	}
	if m := argMessage.FindStringSubmatch(msg); m != nil {
		// gopher-lua leaves the function name unquoted.
		return prefix + "bad argument #" + m[1] + " to '" + m[2] + "' (" + m[3] + ")"
	}
	var p *lua.FunctionProto
	pc := -1
	if dbg != nil {
		if proto, at, ok := frameCode(dbg); ok {
			p, pc = proto, at
		}
	}
	describe := func(action, typ string, reg int) string {
		if p != nil && reg >= 0 {
			if kind, name := objName(p, pc, reg, 0); kind != "" {
				return prefix + "attempt to " + action + " " + kind + " '" + name + "' (a " + typ + " value)"
			}
		}
		return prefix + "attempt to " + action + " a " + typ + " value"
	}
	var in uint32
	if p != nil {
		in = p.Code[pc]
	}
	if m := arithMessage.FindStringSubmatch(msg); m != nil {
		// Lua names the first operand that is not a number.
		bad, reg := m[1], -1
		if p != nil {
			reg = argB(in)
		}
		if p != nil && opcode(in) == lua.OP_UNM {
			// Unary minus: gopher-lua's message names a second
			// operand, nil, that does not exist.
		} else if bad == "number" || (bad == "string" && m[2] != "number") {
			bad = m[2]
			if p != nil {
				reg = argC(in)
			}
		}
		if reg&rkConstant != 0 {
			reg = -1
		}
		return describe("perform arithmetic on", bad, reg)
	}
	if m := indexMessage.FindStringSubmatch(msg); m != nil {
		reg := -1
		if p != nil {
			switch opcode(in) {
			case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
				reg = argB(in)
			case lua.OP_SETTABLE, lua.OP_SETTABLEKS:
				reg = argA(in)
			}
		}
		return describe("index", m[1], reg)
	}
	if msg == "attempt to call a non-function object" {
		reg := -1
		if p != nil && (opcode(in) == lua.OP_CALL || opcode(in) == lua.OP_TAILCALL) {
			reg = argA(in)
		}
		// gopher-lua does not say what was called; it is nil nearly always.
		return describe("call", "nil", reg)
	}
	if msg == "__unm undefined" {
		return describe("perform arithmetic on", "nil", -1)
	}
	if msg == "__len undefined" {
		reg := -1
		if p != nil && opcode(in) == lua.OP_LEN {
			reg = argB(in)
		}
		return describe("get length of", "nil", reg)
	}
	return prefix + msg
}
