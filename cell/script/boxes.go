package script

import (
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Boxed values in blocks.
//
// Every number or string that reaches Lua as an LValue is a Go interface,
// and converting a float64 or a string to an interface allocates its
// value on its own (8 or 16 bytes). A rate limiter's script makes a
// handful per call: ARGV strings, tonumber's results, the integers and
// bulk strings of redis.call's replies. A state boxes them into blocks it
// fills in turn instead, one allocation per boxBlock values; gopher-lua's
// VM boxes its own arithmetic results the same way.
//
// The interface is made by pointing the data word of an LValue of the
// right dynamic type at the block's slot. A slot is written once, before
// any interface points at it, and never again (a full block is dropped,
// not reused), so the boxed values are as immutable as Go's own. The
// cost is that a block stays alive while any one of its values does.

const boxBlock = 128

type boxes struct {
	nums []float64
	strs []lua.LString
}

// ifaceWords is the layout of a non-empty interface value such as LValue.
type ifaceWords struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

// zero LValues of each boxed type: converting a zero value to an
// interface does not allocate, and gives the type word to copy.
var (
	zeroNumber lua.LValue = lua.LNumber(0)
	zeroString lua.LValue = lua.LString("")
)

// number is lua.LNumber(f) as an LValue: a shared one for small integers,
// else a slot of the current block.
func (b *boxes) number(f float64) lua.LValue {
	if v, ok := smallInteger(f); ok {
		return v
	}
	if len(b.nums) == cap(b.nums) {
		b.nums = make([]float64, 0, boxBlock)
	}
	b.nums = append(b.nums, f)
	v := zeroNumber
	(*ifaceWords)(unsafe.Pointer(&v)).data = unsafe.Pointer(&b.nums[len(b.nums)-1])
	return v
}

// str is lua.LString(s) as an LValue, in a slot of the current block.
func (b *boxes) str(s string) lua.LValue {
	if s == "" {
		return zeroString
	}
	if len(b.strs) == cap(b.strs) {
		b.strs = make([]lua.LString, 0, boxBlock)
	}
	b.strs = append(b.strs, lua.LString(s))
	v := zeroString
	(*ifaceWords)(unsafe.Pointer(&v)).data = unsafe.Pointer(&b.strs[len(b.strs)-1])
	return v
}
