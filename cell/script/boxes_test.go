package script

import (
	"math"
	"runtime"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestBoxes checks that boxed values read back as what was boxed, across
// several blocks and a garbage collection, with the type Lua sees.
func TestBoxes(t *testing.T) {
	var b boxes
	nums := []float64{0, 1, 1023, 1024, -1, 0.5, math.Inf(1), math.Copysign(0, -1), 1.7e12, -3.25}
	strs := []string{"", "a", "limit:u:a", strings.Repeat("x", 300)}
	var gotN []lua.LValue
	var gotS []lua.LValue
	for i := 0; i < 3*boxBlock; i++ {
		gotN = append(gotN, b.number(nums[i%len(nums)]+float64(i/len(nums))*1e6))
		gotS = append(gotS, b.str(strs[i%len(strs)]+itoa(i)))
	}
	runtime.GC()
	for i := range gotN {
		want := nums[i%len(nums)] + float64(i/len(nums))*1e6
		n, ok := gotN[i].(lua.LNumber)
		if !ok || math.Float64bits(float64(n)) != math.Float64bits(want) {
			t.Fatalf("number %d: %v (%T), want %v", i, gotN[i], gotN[i], want)
		}
		if gotN[i].Type() != lua.LTNumber {
			t.Fatalf("number %d: type %v", i, gotN[i].Type())
		}
		s, ok := gotS[i].(lua.LString)
		if want := strs[i%len(strs)] + itoa(i); !ok || string(s) != want {
			t.Fatalf("string %d: %q (%T), want %q", i, gotS[i], gotS[i], want)
		}
		if gotS[i] != lua.LValue(lua.LString(string(s))) {
			t.Fatalf("string %d: not equal to an ordinary box of itself", i)
		}
	}
	if v := b.str(""); v != lua.LValue(lua.LString("")) {
		t.Fatalf("empty string: %v", v)
	}
}

// TestAssignsGlobal: which scripts may run with the fast environment.
func TestAssignsGlobal(t *testing.T) {
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"return tonumber(ARGV[1])", false},
		{"local x = 1 x = 2 return x", false},
		{"KEYS[1] = 'x' return KEYS[1]", false},
		{"x = 1", true},
		{"local function f() y = 2 end return 1", true},
		{"function f() end", true},
		{"local t = {} function t.f() end return loadstring('z = 1')", false},
		{"local a, b a, c = 1, 2", true},
	} {
		s, err := testEngine.Load([]byte(tc.body))
		if err != nil {
			t.Fatalf("%q: %v", tc.body, err)
		}
		if s.assignsGlobal != tc.want {
			t.Errorf("%q: assignsGlobal %v, want %v", tc.body, s.assignsGlobal, tc.want)
		}
	}
}
