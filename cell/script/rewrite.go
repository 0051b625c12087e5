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

// redis.call and redis.pcall are read through two read-only proxies (the
// global redis, then its field) on every call. Globals cannot change, so
// where redis is the global (no local, parameter or loop variable of the
// script is called redis) the compiler reads them from hidden globals
// holding the same functions: one lookup instead of two.
// A call statement, whose results are dropped, uses the void variants.
var (
	redisFields     = map[string]string{"call": "\x00call", "pcall": "\x00pcall"}
	redisVoidFields = map[string]string{"call": "\x00callv", "pcall": "\x00pcallv"}
)

func rewriteRedisCalls(chunk []ast.Stmt) {
	shadowed := false
	walkTree(reflect.ValueOf(chunk), func(v reflect.Value) {
		var names []string
		switch n := v.Interface().(type) {
		case ast.LocalAssignStmt:
			names = n.Names
		case ast.GenericForStmt:
			names = n.Names
		case ast.NumberForStmt:
			names = []string{n.Name}
		case ast.ParList:
			names = n.Names
		}
		for _, name := range names {
			shadowed = shadowed || name == "redis"
		}
	})
	if shadowed {
		return
	}
	walkTree(reflect.ValueOf(chunk), func(v reflect.Value) {
		if s, ok := v.Interface().(ast.FuncCallStmt); ok && v.CanAddr() {
			if call, ok := s.Expr.(*ast.FuncCallExpr); ok {
				if id := redisField(call.Func, redisVoidFields); id != nil {
					call.Func = id
				}
			}
		}
	})
	rewriteExprs(chunk, func(e ast.Expr) ast.Expr {
		if id := redisField(e, redisFields); id != nil {
			return id
		}
		return e
	})
}

// redisField is the hidden global standing for e, if e is redis.call or
// redis.pcall.
func redisField(e ast.Expr, names map[string]string) ast.Expr {
	get, ok := e.(*ast.AttrGetExpr)
	if !ok {
		return nil
	}
	obj, ok1 := get.Object.(*ast.IdentExpr)
	key, ok2 := get.Key.(*ast.StringExpr)
	if !ok1 || !ok2 || obj.Value != "redis" || names[key.Value] == "" {
		return nil
	}
	id := &ast.IdentExpr{Value: names[key.Value]}
	id.SetLine(get.Line())
	id.SetLastLine(get.LastLine())
	return id
}
