package script

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// strFormat is Lua 5.1's string.format over C's printf: gopher-lua's
// version formats with Go's fmt, which differs for %g without a precision,
// for infinities, for %u and for negative %x, and accepts any value for %s.
func (st *state) strFormat(L *lua.LState) int {
	f := L.CheckString(1)
	if s, ok := formatOneNumber(f, L); ok {
		L.Push(st.box.str(s))
		return 1
	}
	arg := 1
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i < len(f) && f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		// flags, width (at most 2 digits), precision (at most 2 digits)
		start := i
		for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
			i++
		}
		if i-start > 5 {
			L.RaiseError("invalid format (repeated flags)")
		}
		digits := func() {
			n := 0
			for i < len(f) && isDigit(f[i]) {
				i++
				n++
			}
			if n > 2 {
				L.RaiseError("invalid format (width or precision too long)")
			}
		}
		digits()
		hasPrec := false
		if i < len(f) && f[i] == '.' {
			hasPrec = true
			i++
			digits()
		}
		if i >= len(f) {
			L.RaiseError("invalid option '%%' to 'format'")
		}
		spec := f[start:i]
		conv := f[i]
		arg++
		if arg > L.GetTop() && conv != '%' {
			argError(L, arg, "format", "no value")
		}
		switch conv {
		case 'c':
			b.WriteString(fmt.Sprintf("%"+spec+"c", rune(byte(int64(checkNumber(L, arg))))))
		case 'd', 'i':
			b.WriteString(fmt.Sprintf("%"+spec+"d", int64(checkNumber(L, arg))))
		case 'o', 'u', 'x', 'X':
			n := checkNumber(L, arg)
			var u uint64
			if n < 0 {
				u = uint64(int64(n))
			} else {
				u = uint64(n)
			}
			verb := string(conv)
			if conv == 'u' {
				verb = "d"
			}
			b.WriteString(fmt.Sprintf("%"+spec+verb, u))
		case 'e', 'E', 'f', 'g', 'G':
			n := checkNumber(L, arg)
			if math.IsInf(n, 0) || math.IsNaN(n) {
				// C prints these as words, padded with spaces only.
				txt := formatG(n, 1)
				if n > 0 && strings.Contains(spec, "+") {
					txt = "+" + txt
				} else if n > 0 && strings.Contains(spec, " ") {
					txt = " " + txt
				}
				if conv == 'E' || conv == 'G' {
					txt = strings.ToUpper(txt)
				}
				width, _, _ := strings.Cut(strings.TrimLeft(spec, "-+ #0"), ".")
				pad := 0
				fmt.Sscanf(width, "%d", &pad)
				for len(txt) < pad {
					if strings.Contains(spec, "-") {
						txt += " "
					} else {
						txt = " " + txt
					}
				}
				b.WriteString(txt)
				continue
			}
			s := spec
			if !hasPrec {
				s += ".6"
			}
			b.WriteString(fmt.Sprintf("%"+s+string(conv), n))
		case 'q':
			quoteLua(&b, L.CheckString(arg))
		case 's':
			var s string
			switch v := L.Get(arg).(type) {
			case lua.LString:
				s = string(v)
			case lua.LNumber:
				s = fmt14(float64(v))
			default:
				argTypeError(L, arg, "format", "string", v)
			}
			if !hasPrec && len(s) >= 100 {
				b.WriteString(s)
			} else {
				b.WriteString(fmt.Sprintf("%"+spec+"s", s))
			}
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", conv)
		}
		if b.Len() > maxStringLen {
			L.RaiseError("resulting string too large")
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// checkNumber is luaL_checknumber: a number or a numeric string.
func checkNumber(L *lua.LState, n int) float64 {
	v := L.Get(n)
	if f, ok := toNumber(v); ok {
		return f
	}
	argTypeError(L, n, "format", "number", v)
	return 0
}

func argTypeError(L *lua.LState, n int, fn, want string, got lua.LValue) {
	name := got.Type().String()
	if n > L.GetTop() {
		name = "no value"
	}
	argError(L, n, fn, want+" expected, got "+name)
}

// quoteLua is %q: a string Lua can read back.
func quoteLua(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// formatOneNumber is the fast path of the formats scripts use to turn one
// number into an integer text, "%d" and "%.0f" (a GCRA's TAT): printf's
// round-half-to-even of "%.0f" is strconv's too.
func formatOneNumber(f string, L *lua.LState) (string, bool) {
	if L.GetTop() != 2 || (f != "%d" && f != "%.0f") {
		return "", false
	}
	n, ok := L.Get(2).(lua.LNumber)
	x := float64(n)
	if !ok || x != x || x >= 1e18 || x <= -1e18 {
		return "", false
	}
	if f == "%d" {
		return strconv.FormatInt(int64(x), 10), true
	}
	return strconv.FormatFloat(x, 'f', 0, 64), true
}
