package script

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Lua's `..` turns numbers into text with "%.14g"; gopher-lua's VM uses
// Go's formatting and has no hook for it. So the compiler never sees a
// `..`: after parsing, every concatenation a .. b is rewritten into a call
// of a built-in function that formats numbers as C Lua does. The function
// hides under a global name no identifier can spell.
const concatName = "\x00concat"

// rewriteConcat replaces the concatenations in chunk, at any depth.
func rewriteConcat(chunk []ast.Stmt) {
	rewriteExprs(chunk, func(e ast.Expr) ast.Expr {
		if c, ok := e.(*ast.StringConcatOpExpr); ok {
			return helperCall(c, concatName, c.Lhs, c.Rhs)
		}
		return e
	})
}

// luaConcat is a .. b with C Lua's semantics: strings and numbers (as
// "%.14g") concatenate, anything else tries __concat, then fails with
// Lua's message.
func (st *state) luaConcat(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	as, aok := concatText(a)
	bs, bok := concatText(b)
	if aok && bok {
		if n := len(as) + len(bs); n >= reserveFrom {
			if n > maxStringLen {
				L.RaiseError("string length overflow")
			}
			st.reserve(L, n)
		}
		L.Push(lua.LString(as + bs))
		return 1
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if mm == lua.LNil {
		bad := a
		if aok {
			bad = b
		}
		L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
	}
	L.Push(mm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	return 1
}

func concatText(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return fmt14(float64(x)), true
	}
	return "", false
}
