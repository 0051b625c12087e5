package script

import (
	gomath "math"

	lua "github.com/yuin/gopher-lua"
)

// math.max, math.min, math.floor and math.ceil without a fresh box per
// call. Rate-limiting scripts call them on every run, and gopher-lua's
// versions box their result anew each time: max and min now hand back
// the argument they chose (already a boxed number), floor and ceil the
// argument itself when it is integral already, else a box from the
// state's blocks (boxes.go). Anything but plain numbers (strings to
// convert, missing arguments, errors) goes to gopher-lua's own function,
// so the results and messages are its.
func (st *state) patchMath(math *lua.LTable) {
	pick := func(name string, better func(a, b lua.LNumber) bool) {
		orig := math.RawGetString(name).(*lua.LFunction).GFunction
		math.RawSetString(name, st.L.NewFunction(func(L *lua.LState) int {
			top := L.GetTop()
			if top == 0 {
				// Lua's message, not gopher-lua's "wrong number of
				// arguments".
				L.CheckNumber(1)
			}
			best, ok := L.Get(1).(lua.LNumber)
			if !ok {
				return orig(L)
			}
			at := 1
			for i := 2; i <= top; i++ {
				v, ok := L.Get(i).(lua.LNumber)
				if !ok {
					return orig(L)
				}
				if better(v, best) {
					best, at = v, i
				}
			}
			L.Push(L.Get(at))
			return 1
		}))
	}
	pick("max", func(a, b lua.LNumber) bool { return a > b })
	pick("min", func(a, b lua.LNumber) bool { return a < b })
	round := func(name string, f func(float64) float64) {
		orig := math.RawGetString(name).(*lua.LFunction).GFunction
		math.RawSetString(name, st.L.NewFunction(func(L *lua.LState) int {
			v, ok := L.Get(1).(lua.LNumber)
			if !ok {
				return orig(L)
			}
			r := f(float64(v))
			if gomath.Float64bits(r) == gomath.Float64bits(float64(v)) {
				L.Push(L.Get(1))
			} else {
				L.Push(st.box.number(r))
			}
			return 1
		}))
	}
	round("floor", gomath.Floor)
	round("ceil", gomath.Ceil)
}
