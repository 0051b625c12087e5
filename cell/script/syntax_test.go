package script

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSyntax: the messages were read off redis-server 7.0.15 (EVAL
// replies "ERR Error compiling script (new function): " and then these).
func TestCheckSyntax(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"x =", "user_script:1: unexpected symbol near '<eof>'"},
		{"if x then", "user_script:1: 'end' expected near '<eof>'"},
		{"if x then\n\nreturn 1", "user_script:3: 'end' expected (to close 'if' at line 1) near '<eof>'"},
		{"for i=1 do end", "user_script:1: ',' expected near 'do'"},
		{"for i in pairs(t) end", "user_script:1: 'do' expected near 'end'"},
		{"for i do end", "user_script:1: '=' or 'in' expected near 'do'"},
		{"function f( return end", "user_script:1: <name> or '...' expected near 'return'"},
		{"local t = {1, 2", "user_script:1: '}' expected near '<eof>'"},
		{"local = 1", "user_script:1: '<name>' expected near '='"},
		{"return 1goto", "user_script:1: malformed number near '1goto'"},
		{"return 3..2", "user_script:1: malformed number near '3..2'"},
		{"return @", "user_script:1: unexpected symbol near '@'"},
		{"return a:b", "user_script:1: function arguments expected near '<eof>'"},
		{"break", "user_script:1: no loop to break near '<eof>'"},
		{"return 1 return 2", "user_script:1: '<eof>' expected near 'return'"},
		{"local x = 1 x", "user_script:1: '=' expected near '<eof>'"},
		{"f() = 1", "user_script:1: unexpected symbol near '='"},
		{"(x) = 1", "user_script:1: syntax error near '='"},
		{"local x = f\n(1)", "user_script:2: ambiguous syntax (function call x new statement) near '('"},
		{"local f = function() return ... end", "user_script:1: cannot use '...' outside a vararg function near '...'"},
		{"return 'abc", "user_script:1: unfinished string near '<eof>'"},
		{"return 'a\nb'", "user_script:1: unfinished string near ''a'"},
		{"return '\\300'", "user_script:1: escape sequence too large near '''"},
		{"return [=x", "user_script:1: invalid long string delimiter near '[='"},
		{"return [[\n\nx", "user_script:3: unfinished long string near '<eof>'"},
		{"return --[[ x", "user_script:1: unfinished long comment near '<eof>'"},
		{"return 'x' 'y'", "user_script:1: '<eof>' expected near ''y''"},
		{"return \x01", "user_script:1: unexpected symbol near 'char(1)'"},
		{"local goto = 1 return goto", ""},
		{"return [[a [[b]]", ""},
		{"return 0x10 + 1e5 + .5 + 5. + 3e-2", ""},
		{"local function f(a, ...) return ... end return f(1)", ""},
		{"while true do break end", ""},
		{"repeat local x = 1 until x", ""},
		{"return {a = 1; [2] = 2, 3,}", ""},
		{"a.b['c']:d 'x' {1} (2)", ""},
	} {
		if got := checkSyntax([]byte(tc.src)); got != tc.want {
			t.Errorf("%q:\n   got  %q\n   want %q", tc.src, got, tc.want)
		}
	}
}

// TestCheckSyntaxAcceptsScripts: the scripts of the bench and of the
// integration tests' data are all valid Lua 5.1.
func TestCheckSyntaxAcceptsScripts(t *testing.T) {
	files, _ := filepath.Glob("../../bench/*.lua")
	more, _ := filepath.Glob("../../integration_test/testdata/*.lua")
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found only %q", files)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if msg := checkSyntax(src); msg != "" {
			t.Errorf("%s: %s", f, msg)
		}
	}
}

func TestRenameGoto(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"return 1", "return 1"},
		{"local goto = 1", "local P = 1"},
		{"t.goto = 'goto' -- goto\nreturn [[goto]], [=[goto]=], gotox, xgoto, goto", "t.P = 'goto' -- goto\nreturn [[goto]], [=[goto]=], gotox, xgoto, P"},
		{"return \"a\\\"goto\" .. goto", "return \"a\\\"goto\" .. P"},
		{"--[[ goto ]] goto", "--[[ goto ]] P"},
		{"return 1goto", "return 1goto"},
	} {
		got, p := renameGoto([]byte(tc.src))
		want := tc.want
		if p != "" {
			want = strings.ReplaceAll(want, "P", p)
		}
		if string(got) != want {
			t.Errorf("%q: got %q, want %q", tc.src, got, want)
		}
	}
	if _, p := renameGoto([]byte("local " + gotoPlaceholder + " = goto")); p == gotoPlaceholder || p == "" {
		t.Errorf("placeholder %q collides with the script's own name", p)
	}
}

// TestLuaKeyOrder: the orders were read off redis-server 7.0.15's
// cjson.encode of the same tables.
func TestLuaKeyOrder(t *testing.T) {
	for _, tc := range []struct {
		hint int
		keys []string
		want string
	}{
		{3, []string{"a", "b", "c"}, "a c b"},
		{2, []string{"b", "a"}, "a b"},
		{3, []string{"limit", "remaining", "reset"}, "remaining limit reset"},
		{3, []string{"key", "count", "ts"}, "ts key count"},
		{0, []string{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"}, "k9 k8 k1 k3 k2 k6 k7 k4 k5"},
	} {
		h := newLuaHash(tc.hint)
		for _, k := range tc.keys {
			h.insert(k)
		}
		var got []string
		for _, n := range h.nodes {
			if n.used {
				got = append(got, n.key)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v (size %d): %q, want %q", tc.keys, tc.hint, got, tc.want)
		}
	}
}
