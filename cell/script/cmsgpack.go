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
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return msgpackUnpack(L, 0, 0, true) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, 1, L.OptInt(2, 0), false)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, L.CheckInt(2), L.OptInt(3, 0), false)
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

type msgpackCursor struct {
	L   *lua.LState
	b   string
	pos int
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

func (c *msgpackCursor) decode(depth int) lua.LValue {
	L := c.L
	if depth > 1000 {
		L.RaiseError("Bad data format in input.")
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
		return c.array(int(t&0x0f), depth)
	case t&0xf0 == 0x80:
		return c.mapOf(int(t&0x0f), depth)
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
		return c.array(int(c.u16()), depth)
	case 0xdd:
		return c.array(int(c.u32()), depth)
	case 0xde:
		return c.mapOf(int(c.u16()), depth)
	case 0xdf:
		return c.mapOf(int(c.u32()), depth)
	}
	L.RaiseError("Bad data format in input.")
	return lua.LNil
}

func (c *msgpackCursor) array(n int, depth int) lua.LValue {
	c.need(n) // every element takes at least one byte
	t := c.L.CreateTable(n, 0)
	for i := 1; i <= n; i++ {
		t.RawSetInt(i, c.decode(depth+1))
	}
	return t
}

func (c *msgpackCursor) mapOf(n int, depth int) lua.LValue {
	c.need(2 * n)
	t := c.L.CreateTable(0, n)
	for i := 0; i < n; i++ {
		k := c.decode(depth + 1)
		v := c.decode(depth + 1)
		if k != lua.LNil {
			c.L.RawSet(t, k, v)
		}
	}
	return t
}

// msgpackUnpack decodes up to limit objects (0: all) from offset. unpack
// returns the objects; unpack_one and unpack_limit first return the
// offset of the next object, or -1 when the input is used up.
func msgpackUnpack(L *lua.LState, limit, offset int, all bool) int {
	s := L.CheckString(1)
	if offset < 0 || offset > len(s) {
		L.ArgError(2, "Start offset greater than input length.")
	}
	c := &msgpackCursor{L: L, b: s, pos: offset}
	var vals []lua.LValue
	for c.pos < len(s) && (limit == 0 || len(vals) < limit) {
		vals = append(vals, c.decode(0))
	}
	if !all {
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
