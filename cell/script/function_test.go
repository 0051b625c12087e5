package script

import (
	"context"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// TestLoadLibrary: the functions a library registers, with their flags
// and descriptions, and Redis's error for a bad library.
func TestLoadLibrary(t *testing.T) {
	e := NewEngine("7.0.15", nil)
	for _, tc := range []struct {
		code, err string
		funcs     []string
		flags     []Flags
	}{
		{code: "#!lua name=l\nredis.register_function('a', function() end)\nredis.register_function{function_name='b', callback=function() end, flags={'no-writes', 'allow-oom'}}",
			funcs: []string{"a", "b"}, flags: []Flags{0, FlagNoWrites | FlagAllowOOM}},
		{code: "#!LUA Name=l\nredis.register_function('a', function() end)", funcs: []string{"a"}, flags: []Flags{0}},
		{code: "x", err: ErrMissingLibMeta},
		{code: "#!lua name=l", err: ErrInvalidLibMeta},
		{code: "#!lua\n", err: ErrLibNameMissing},
		{code: "#!lua name=l\n", err: ErrNoFunctions},
		{code: "#!lua name=l\nredis.register_function('a', function() end, 1)", err: "ERR Error registering functions: ERR " + msgRegisterArgs},
		{code: "#!lua name=l\nredis.register_function{function_name='a', callback=function() end, flags={'x'}}", err: "ERR Error registering functions: ERR " + msgUnknownFlag},
		{code: "#!lua name=l\nredis.call('ping')", err: "ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"},
		{code: "#!lua name=l\nlocal x = 1 +", err: "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'"},
	} {
		lib, err := e.LoadLibrary([]byte(tc.code))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.code, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.code, err)
			continue
		}
		if len(lib.Funcs) != len(tc.funcs) {
			t.Errorf("%q: %d functions, want %d", tc.code, len(lib.Funcs), len(tc.funcs))
			continue
		}
		for i, f := range lib.Funcs {
			if f.Name != tc.funcs[i] || f.Flags != tc.flags[i] {
				t.Errorf("%q: function %d is %s %b, want %s %b", tc.code, i, f.Name, f.Flags, tc.funcs[i], tc.flags[i])
			}
		}
	}
}

// TestRunFunction: a function gets its keys and arguments as parameters,
// and sees the library's locals and the full environment.
func TestRunFunction(t *testing.T) {
	e := NewEngine("7.0.15", nil)
	lib, err := e.LoadLibrary([]byte("#!lua name=l\nlocal base = 10\nredis.register_function('f', function(keys, args) return base + #keys + tonumber(args[1]) + string.len('abc') end)"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the same state and fresh ones
		w := resp.NewWriter()
		e.RunFunction(context.Background(), lib.Funcs[0], [][]byte{[]byte("k")}, [][]byte{[]byte("5")}, nil, w)
		if got := string(w.Bytes()); got != ":19\r\n" {
			t.Fatalf("reply %q, want :19", got)
		}
	}
}
