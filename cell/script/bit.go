package script

import (
	"math"
	"math/bits"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// bitLib is LuaBitOp as Redis bundles it: operations on 32-bit integers,
// every result a signed 32-bit number.
func (st *state) bitLib() *lua.LTable {
	L := st.L
	t := L.CreateTable(0, 16)
	unary := func(f func(uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(lua.LNumber(int32(f(tobit(L, 1)))))
			return 1
		}
	}
	fold := func(f func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			r := tobit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				r = f(r, tobit(L, i))
			}
			L.Push(lua.LNumber(int32(r)))
			return 1
		}
	}
	shift := func(f func(x uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			x, n := tobit(L, 1), uint(tobit(L, 2)&31)
			L.Push(lua.LNumber(int32(f(x, n))))
			return 1
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":  unary(func(x uint32) uint32 { return x }),
		"bnot":   unary(func(x uint32) uint32 { return ^x }),
		"bswap":  unary(bits.ReverseBytes32),
		"band":   fold(func(a, b uint32) uint32 { return a & b }),
		"bor":    fold(func(a, b uint32) uint32 { return a | b }),
		"bxor":   fold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift": shift(func(x uint32, n uint) uint32 { return x << n }),
		"rshift": shift(func(x uint32, n uint) uint32 { return x >> n }),
		"arshift": shift(func(x uint32, n uint) uint32 {
			return uint32(int32(x) >> n)
		}),
		"rol": shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, int(n)) }),
		"ror": shift(func(x uint32, n uint) uint32 { return bits.RotateLeft32(x, -int(n)) }),
		"tohex": func(L *lua.LState) int {
			x := tobit(L, 1)
			n := int32(8)
			if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
				n = int32(tobit(L, 2))
			}
			const digits = "0123456789abcdef"
			upper := n < 0
			if upper {
				n = -n
			}
			if n > 8 {
				n = 8
			}
			buf := make([]byte, n)
			for i := int(n) - 1; i >= 0; i-- {
				buf[i] = digits[x&15]
				x >>= 4
			}
			s := string(buf)
			if upper {
				s = strings.ToUpper(s)
			}
			L.Push(lua.LString(s))
			return 1
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// tobit is LuaBitOp's normalisation: adding 2^52+2^51 puts the number,
// rounded to an integer, in the low bits of the double's mantissa, whose
// low 32 bits are the result. Replicating the trick keeps its exact
// results for fractions and huge values.
func tobit(L *lua.LState, i int) uint32 {
	x := float64(L.CheckNumber(i))
	return uint32(math.Float64bits(x + 6755399441055744.0))
}
