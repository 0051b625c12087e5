package script

import (
	"reflect"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Lua's `..` turns numbers into text with "%.14g"; gopher-lua's VM uses
// Go's formatting and has no hook for it. So the compiler never sees a
// `..`: after parsing, every concatenation a .. b is rewritten into a call
// of a built-in function that formats numbers as C Lua does. The function
// hides under a global name no identifier can spell.
const concatName = "\x00concat"

var (
	exprType   = reflect.TypeOf((*ast.Expr)(nil)).Elem()
	concatType = reflect.TypeOf(&ast.StringConcatOpExpr{})
)

// rewriteConcat replaces the concatenations in chunk, at any depth.
func rewriteConcat(chunk []ast.Stmt) {
	walkAST(reflect.ValueOf(chunk))
}

func walkAST(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Type() == exprType && v.Elem().Type() == concatType {
			c := v.Elem().Interface().(*ast.StringConcatOpExpr)
			walkAST(reflect.ValueOf(c))
			call := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: concatName}, Args: []ast.Expr{c.Lhs, c.Rhs}, AdjustRet: true}
			call.SetLine(c.Line())
			call.SetLastLine(c.LastLine())
			call.Func.SetLine(c.Line())
			call.Func.SetLastLine(c.LastLine())
			if v.CanSet() {
				v.Set(reflect.ValueOf(ast.Expr(call)))
			}
			return
		}
		walkAST(v.Elem())
	case reflect.Pointer:
		if !v.IsNil() {
			walkAST(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkAST(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkAST(v.Index(i))
		}
	}
}

// luaConcat is a .. b with C Lua's semantics: strings and numbers (as
// "%.14g") concatenate, anything else tries __concat, then fails with
// Lua's message.
func luaConcat(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	as, aok := concatText(a)
	bs, bok := concatText(b)
	if aok && bok {
		if len(as)+len(bs) > maxStringLen {
			L.RaiseError("string length overflow")
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
