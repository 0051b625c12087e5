package script

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack as Redis bundles it (lua_cmsgpack 0.4): integral numbers as the
// smallest MessagePack integer, other numbers as float 32 when that is
// exact and float 64 otherwise, a table as an array when its keys are
// exactly 1..n (the empty table too) and as a map otherwise, and tables
// nested deeper than 16 levels as nil.

const msgpackMaxNesting = 16

func (st *state) cmsgpackLib() *lua.LTable {
	L := st.L
	t := L.CreateTable(0, 16)
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return st.msgpackUnpack(L, "unpack", 0, 0, L.GetTop()) }))
	// unpack_one and unpack_limit drop all but their first argument
	// before decoding.
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		return st.msgpackUnpack(L, "unpack_one", 1, optInteger(L, 2, "unpack_one", 0), 1)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		return st.msgpackUnpack(L, "unpack_limit", checkInteger(L, 2, "unpack_limit"), optInteger(L, 3, "unpack_limit", 0), 1)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var out []byte
	for i := 1; i <= n; i++ {
		out = msgpackEncode(L, out, L.Get(i), 0)
	}
	L.Push(lua.LString(out))
	return 1
}

func msgpackEncode(L *lua.LState, out []byte, v lua.LValue, level int) []byte {
	if len(out) > maxStringLen {
		L.RaiseError("resulting string too large")
	}
	switch x := v.(type) {
	case lua.LString:
		n := len(x)
		switch {
		case n < 32:
			out = append(out, 0xa0|byte(n))
		case n <= 0xff:
			out = append(out, 0xd9, byte(n))
		case n <= 0xffff:
			out = binary.BigEndian.AppendUint16(append(out, 0xda), uint16(n))
		default:
			out = binary.BigEndian.AppendUint32(append(out, 0xdb), uint32(n))
		}
		return append(out, x...)
	case lua.LBool:
		if x {
			return append(out, 0xc3)
		}
		return append(out, 0xc2)
	case lua.LNumber:
		f := float64(x)
		if !math.IsInf(f, 0) && f == f && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && float64(int64(f)) == f {
			return msgpackInt(out, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			return binary.BigEndian.AppendUint32(append(out, 0xca), math.Float32bits(f32))
		}
		return binary.BigEndian.AppendUint64(append(out, 0xcb), math.Float64bits(f))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(out, 0xc0)
		}
		if n, ok := msgpackArrayLen(x); ok {
			out = msgpackHeader(out, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				out = msgpackEncode(L, out, x.RawGetInt(i), level+1)
			}
			return out
		}
		count := 0
		x.ForEach(func(lua.LValue, lua.LValue) { count++ })
		out = msgpackHeader(out, count, 0x80, 0xde, 0xdf)
		k, val := x.Next(lua.LNil)
		for k != lua.LNil {
			out = msgpackEncode(L, out, k, level+1)
			out = msgpackEncode(L, out, val, level+1)
			k, val = x.Next(k)
		}
		return out
	}
	return append(out, 0xc0)
}

func msgpackHeader(out []byte, n int, fix, b16, b32 byte) []byte {
	switch {
	case n <= 15:
		return append(out, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(out, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(out, b32), uint32(n))
}

func msgpackInt(out []byte, n int64) []byte {
	be := binary.BigEndian
	if n >= 0 {
		switch {
		case n <= 127:
			return append(out, byte(n))
		case n <= 0xff:
			return append(out, 0xcc, byte(n))
		case n <= 0xffff:
			return be.AppendUint16(append(out, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return be.AppendUint32(append(out, 0xce), uint32(n))
		}
		return be.AppendUint64(append(out, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(out, byte(int8(n)))
	case n >= -128:
		return append(out, 0xd0, byte(int8(n)))
	case n >= -32768:
		return be.AppendUint16(append(out, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return be.AppendUint32(append(out, 0xd2), uint32(int32(n)))
	}
	return be.AppendUint64(append(out, 0xd3), uint64(n))
}

// msgpackArrayLen is table_is_an_array: every key a positive integer and
// the largest equal to the count.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, max := 0, 0
	k, _ := t.Next(lua.LNil)
	for k != lua.LNil {
		n, ok := k.(lua.LNumber)
		if !ok || n <= 0 || float64(n) != float64(int32(n)) {
			return 0, false
		}
		if int(n) > max {
			max = int(n)
		}
		count++
		k, _ = t.Next(k)
	}
	return count, max == count
}

// msgpackCursor decodes from b at pos. It counts the Lua stack slots that
// lua_cmsgpack would hold (each value, each table being filled and the key
// or index beside it), so that a decode fails where Redis's runs out of C
// stack, with its message.
type msgpackCursor struct {
	st    *state
	L     *lua.LState
	b     string
	pos   int
	steps int
}

// slot checks that one more value fits above top stack slots.
func (c *msgpackCursor) slot(top int, msg string) {
	if top+1 > luaMaxCStack {
		c.L.RaiseError("%s", msg)
	}
}

func (c *msgpackCursor) need(n int) {
	if n < 0 || c.pos+n > len(c.b) || c.pos+n < c.pos {
		c.L.RaiseError("Missing bytes in input.")
	}
}

func (c *msgpackCursor) take(n int) string {
	c.need(n)
	s := c.b[c.pos : c.pos+n]
	c.pos += n
	return s
}

func (c *msgpackCursor) u8() uint64  { return uint64(c.take(1)[0]) }
func (c *msgpackCursor) u16() uint64 { return uint64(binary.BigEndian.Uint16([]byte(c.take(2)))) }
func (c *msgpackCursor) u32() uint64 { return uint64(binary.BigEndian.Uint32([]byte(c.take(4)))) }
func (c *msgpackCursor) u64() uint64 { return binary.BigEndian.Uint64([]byte(c.take(8))) }

// decode reads one value whose slot would be above top stack slots.
func (c *msgpackCursor) decode(top int) lua.LValue {
	L := c.L
	c.need(1)
	c.slot(top, msgMsgpackTooMany)
	c.steps++
	if c.steps%patternCheckSteps == 0 {
		c.st.checkStop(L)
	}
	t := byte(c.u8())
	switch {
	case t <= 0x7f:
		return lua.LNumber(t)
	case t >= 0xe0:
		return lua.LNumber(int8(t))
	case t&0xe0 == 0xa0:
		return lua.LString(c.take(int(t & 0x1f)))
	case t&0xf0 == 0x90:
		return c.array(int(t&0x0f), top)
	case t&0xf0 == 0x80:
		return c.mapOf(int(t&0x0f), top)
	}
	switch t {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc:
		return lua.LNumber(c.u8())
	case 0xcd:
		return lua.LNumber(c.u16())
	case 0xce:
		return lua.LNumber(c.u32())
	case 0xcf:
		return lua.LNumber(float64(c.u64()))
	case 0xd0:
		return lua.LNumber(int8(c.u8()))
	case 0xd1:
		return lua.LNumber(int16(c.u16()))
	case 0xd2:
		return lua.LNumber(int32(c.u32()))
	case 0xd3:
		return lua.LNumber(float64(int64(c.u64())))
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(c.u32())))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(c.u64()))
	case 0xd9, 0xc4:
		return lua.LString(c.take(int(c.u8())))
	case 0xda, 0xc5:
		return lua.LString(c.take(int(c.u16())))
	case 0xdb, 0xc6:
		return lua.LString(c.take(int(c.u32())))
	case 0xdc:
		return c.array(int(c.u16()), top)
	case 0xdd:
		return c.array(int(c.u32()), top)
	case 0xde:
		return c.mapOf(int(c.u16()), top)
	case 0xdf:
		return c.mapOf(int(c.u32()), top)
	}
	L.RaiseError("Bad data format in input.")
	return lua.LNil
}

// array decodes n elements into a table in slot top+1, each beside its
// index.
func (c *msgpackCursor) array(n int, top int) lua.LValue {
	c.slot(top+1, msgMsgpackArray)
	t := c.L.CreateTable(min(n, len(c.b)-c.pos), 0) // every element takes a byte
	for i := 1; i <= n; i++ {
		t.RawSetInt(i, c.decode(top+2))
	}
	return t
}

// mapOf decodes n pairs into a table in slot top+1, each value beside its
// key.
func (c *msgpackCursor) mapOf(n int, top int) lua.LValue {
	t := c.L.CreateTable(0, min(n, (len(c.b)-c.pos)/2))
	for i := 0; i < n; i++ {
		k := c.decode(top + 1)
		v := c.decode(top + 2)
		if k != lua.LNil {
			c.L.RawSet(t, k, v)
		}
	}
	return t
}

// msgpackUnpack is mp_unpack_full: it decodes up to limit objects from
// offset, all of them when both are 0 (unpack). Unless decoding all, the
// offset of the next object comes first (-1 when the input is used up).
// top is the stack slots the C function holds before its results.
func (st *state) msgpackUnpack(L *lua.LState, name string, limit, offset int64, top int) int {
	s := checkStr(L, 1, name)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	}
	if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if all {
		limit = math.MaxInt64
	}
	c := &msgpackCursor{st: st, L: L, b: s, pos: int(offset)}
	var vals []lua.LValue
	for c.pos < len(s) && int64(len(vals)) < limit {
		vals = append(vals, c.decode(top+len(vals)))
	}
	if !all {
		c.slot(top+len(vals), msgMsgpackUnpackAll)
		next := c.pos
		if next >= len(s) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range vals {
		L.Push(v)
	}
	if all {
		return len(vals)
	}
	return len(vals) + 1
}
