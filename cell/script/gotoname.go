package script

import (
	"bytes"
	"reflect"
	"strings"

	"github.com/yuin/gopher-lua/ast"
)

// In Lua 5.1 (Redis's Lua) "goto" is an ordinary name: a script may have a
// local, a field or a function called goto. gopher-lua reads it as the Lua
// 5.2 keyword. So before parsing, every goto token outside strings and
// comments is renamed to a placeholder name, and after parsing every name
// in the tree that is the placeholder is renamed back: the compiler, which
// knows no keywords, then sees "goto" as Redis's Lua does (a field t.goto
// keeps the key "goto", a missing global is reported as 'goto').

const (
	gotoName        = "goto"
	gotoPlaceholder = "__cellserver_goto_name__"
)

// renameGoto replaces the goto tokens of src by a placeholder name that
// src does not contain, and returns it; "" (and src) if there is no goto.
func renameGoto(src []byte) ([]byte, string) {
	if !bytes.Contains(src, []byte(gotoName)) {
		return src, ""
	}
	placeholder := gotoPlaceholder
	for n := 0; bytes.Contains(src, []byte(placeholder)); n++ {
		placeholder = gotoPlaceholder + itoa(n)
	}
	var out []byte
	last, found := 0, false
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			i += 2
			if n := longBracket(src, i); n >= 0 {
				i = skipLong(src, i, n)
			} else {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
		case c == '[':
			if n := longBracket(src, i); n >= 0 {
				i = skipLong(src, i, n)
			} else {
				i++
			}
		case c == '"' || c == '\'':
			i = skipQuoted(src, i)
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			// A numeral, as Lua 5.1 reads one: digits, letters, '.' and
			// a sign after an exponent mark.
			for i++; i < len(src); i++ {
				d := src[i]
				if (d == '+' || d == '-') && (src[i-1] == 'e' || src[i-1] == 'E') {
					continue
				}
				if !isNameChar(d) && d != '.' {
					break
				}
			}
		case isNameStart(c):
			j := i + 1
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			if string(src[i:j]) == gotoName {
				out = append(out, src[last:i]...)
				out = append(out, placeholder...)
				last, found = j, true
			}
			i = j
		default:
			i++
		}
	}
	if !found {
		return src, ""
	}
	return append(out, src[last:]...), placeholder
}

// longBracket reports the level of a long bracket "[==[" at src[i:], or -1.
func longBracket(src []byte, i int) int {
	if i >= len(src) || src[i] != '[' {
		return -1
	}
	n := 0
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '=':
			n++
		case '[':
			return n
		default:
			return -1
		}
	}
	return -1
}

// skipLong returns the index after the long string or comment of level n
// opening at src[i], or len(src) if it is not closed.
func skipLong(src []byte, i, n int) int {
	closing := "]" + strings.Repeat("=", n) + "]"
	if k := bytes.Index(src[i+n+2:], []byte(closing)); k >= 0 {
		return i + n + 2 + k + len(closing)
	}
	return len(src)
}

// skipQuoted returns the index after the quoted string opening at src[i]:
// its closing quote, or the line end of an unfinished one.
func skipQuoted(src []byte, i int) int {
	q := src[i]
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case q:
			return i + 1
		case '\n':
			return i
		}
	}
	return len(src)
}

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameChar(c byte) bool  { return isNameStart(c) || isDigit(c) }

// restoreGoto renames placeholder back to goto in every name and string
// of the parsed chunk.
func restoreGoto(chunk []ast.Stmt, placeholder string) {
	walkTree(reflect.ValueOf(chunk), func(v reflect.Value) {
		if v.Kind() == reflect.String && v.CanSet() && v.String() == placeholder {
			v.SetString(gotoName)
		}
	})
}
