package script

import (
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// Negative zero. C Lua keeps the sign of a zero result: -x with x = 0,
// 0 * -1 and 1 / -math.huge are -0, which tostring, .., cjson and
// redis.call's arguments print as "-0". gopher-lua's VM stores every
// integral arithmetic result below 128 as a shared boxed number, and -0
// compares equal to 0, so the sign is lost the moment the result lands in
// a register.
//
// So the compiler rewrites * and / (unless an operand is a positive
// constant, which cannot make a zero negative) into  helper(a, b) or
// (a op b):  the helper computes the result of two numbers in Go, where
// the sign survives because the call's result is boxed by Go rather than
// by the VM; for anything else it returns nil and the original operation
// runs, with its own metamethods and error messages. Only operands without
// calls are rewritten, since the fallback evaluates them a second time.
// Unary minus becomes a call of its own (luaUnm).
//
// Not covered: arithmetic that keeps an existing -0 (-0 * 2, -0 - 0) loses
// it in the VM, and constants folded by C Lua's compiler (0/-5) can merge
// with a 0 constant there; gopher-lua's constant pool differs.

const (
	unmName = "\x00unm"
	mulName = "\x00mul"
	divName = "\x00div"
)

// rewriteNegZero rewrites the operations of chunk that may yield -0.
func rewriteNegZero(chunk []ast.Stmt) {
	rewriteExprs(chunk, func(e ast.Expr) ast.Expr {
		switch x := e.(type) {
		case *ast.UnaryMinusOpExpr:
			if !isNumberConst(x.Expr) {
				return helperCall(x, unmName, x.Expr)
			}
		case *ast.ArithmeticOpExpr:
			name := ""
			switch {
			case x.Operator == "*" && !positiveConst(x.Lhs) && !positiveConst(x.Rhs):
				name = mulName
			case x.Operator == "/" && !positiveConst(x.Rhs):
				name = divName
			}
			if name != "" && simpleOperand(x.Lhs) && simpleOperand(x.Rhs) {
				or := &ast.LogicalOpExpr{Operator: "or", Lhs: helperCall(x, name, x.Lhs, x.Rhs), Rhs: x}
				or.SetLine(x.Line())
				or.SetLastLine(x.LastLine())
				return or
			}
		}
		return e
	})
}

// simpleOperand: an expression without calls of the script's, safe to
// evaluate twice (the helpers of the rewrites have no side effects).
func simpleOperand(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.NumberExpr, *ast.StringExpr, *ast.NilExpr, *ast.TrueExpr, *ast.FalseExpr, *ast.IdentExpr:
		return true
	case *ast.AttrGetExpr:
		return simpleOperand(x.Object) && simpleOperand(x.Key)
	case *ast.ArithmeticOpExpr:
		return simpleOperand(x.Lhs) && simpleOperand(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		return simpleOperand(x.Expr)
	case *ast.LogicalOpExpr:
		return simpleOperand(x.Lhs) && simpleOperand(x.Rhs)
	case *ast.FuncCallExpr:
		if !isHelperCall(x) {
			return false
		}
		for _, a := range x.Args {
			if !simpleOperand(a) {
				return false
			}
		}
		return true
	}
	return false
}

func isNumberConst(e ast.Expr) bool {
	_, ok := e.(*ast.NumberExpr)
	return ok
}

// positiveConst: a number literal above zero, which keeps the sign of the
// other operand of * (and of the dividend of /).
func positiveConst(e ast.Expr) bool {
	n, ok := e.(*ast.NumberExpr)
	if !ok {
		return false
	}
	f, ok := strtodLua(n.Value)
	return ok && f > 0
}

// The helpers: the operation on two numbers, or nil.

// luaUnm is -x, metamethod included. gopher-lua's own unary minus keeps
// -0, but its error message names neither the operand nor its type, so
// every unary minus of a non-constant goes through here.
func (st *state) luaUnm(L *lua.LState) int {
	v := L.Get(1)
	switch x := v.(type) {
	case lua.LNumber:
		L.Push(st.box.number(-float64(x)))
		return 1
	case lua.LString:
		if f, ok := strtodLua(string(x)); ok {
			L.Push(st.box.number(-f))
			return 1
		}
	}
	if mm := L.GetMetaField(v, "__unm"); mm != lua.LNil {
		// Lua 5.1 calls it with the operand twice.
		L.Push(mm)
		L.Push(v)
		L.Push(v)
		L.Call(2, 1)
		return 1
	}
	msg := "attempt to perform arithmetic on a " + v.Type().String() + " value"
	if dbg := luaFrame(L); dbg != nil {
		if p, pc, ok := frameCode(dbg); ok && opcode(p.Code[pc]) == lua.OP_CALL {
			if kind, name := objName(p, pc, argA(p.Code[pc])+1, 0); kind != "" {
				msg = "attempt to perform arithmetic on " + kind + " '" + name + "' (a " + v.Type().String() + " value)"
			}
		}
	}
	L.RaiseError("%s", msg)
	return 0
}

func (st *state) luaMul(L *lua.LState) int {
	a, aok := L.Get(1).(lua.LNumber)
	b, bok := L.Get(2).(lua.LNumber)
	if aok && bok {
		L.Push(st.box.number(float64(a) * float64(b)))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}

func (st *state) luaDiv(L *lua.LState) int {
	a, aok := L.Get(1).(lua.LNumber)
	b, bok := L.Get(2).(lua.LNumber)
	if aok && bok {
		L.Push(st.box.number(float64(a) / float64(b)))
		return 1
	}
	L.Push(lua.LNil)
	return 1
}
