package script

import (
	"reflect"

	"github.com/yuin/gopher-lua/ast"
)

// The compiler's rewrites (concat.go, luaorder.go, negzero.go) replace
// expressions of the parsed chunk by calls of hidden helpers: globals
// whose names start with a NUL byte, which no identifier can spell.

var exprType = reflect.TypeOf((*ast.Expr)(nil)).Elem()

// rewriteExprs walks every expression of chunk, inner ones first, and
// puts rewrite(e) in e's place.
func rewriteExprs(chunk []ast.Stmt, rewrite func(ast.Expr) ast.Expr) {
	walkTree(reflect.ValueOf(chunk), func(v reflect.Value) {
		if v.Kind() != reflect.Interface || v.IsNil() || v.Type() != exprType || !v.CanSet() {
			return
		}
		if e := rewrite(v.Interface().(ast.Expr)); e != v.Interface() {
			v.Set(reflect.ValueOf(&e).Elem())
		}
	})
}

// walkTree calls visit for every value of the tree under v (exported
// fields, slice elements, what pointers and interfaces hold), children
// before their parent.
func walkTree(v reflect.Value, visit func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			walkTree(v.Elem(), visit)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkTree(v.Field(i), visit)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkTree(v.Index(i), visit)
		}
	}
	visit(v)
}

// helperCall is name(args...), placed at at's lines.
func helperCall(at ast.Expr, name string, args ...ast.Expr) *ast.FuncCallExpr {
	call := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: name}, Args: args, AdjustRet: true}
	for _, e := range []ast.Expr{call, call.Func} {
		e.SetLine(at.Line())
		e.SetLastLine(at.LastLine())
	}
	return call
}

// isHelperCall reports a call of one of the hidden helpers.
func isHelperCall(e ast.Expr) bool {
	c, ok := e.(*ast.FuncCallExpr)
	if !ok || c.Receiver != nil {
		return false
	}
	id, ok := c.Func.(*ast.IdentExpr)
	return ok && len(id.Value) > 0 && id.Value[0] == 0
}
