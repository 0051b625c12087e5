package main

import (
	"strings"
	"testing"
)

const perfSelf = `# Samples: 319  of event 'cpu-clock:pppH'
#
# Overhead  Symbol                                                           IPC   [IPC Coverage]
# ........  ...............................................................  ....................
#
    15.99%  [.] __vdso_clock_gettime                                         -      -
     8.15%  [k] finish_task_switch.isra.0                                    -      -
     6.90%  [.] runtime.mapaccess1_faststr                                   -      -
     3.76%  [.] github.com/cellserver/cellserver/cell.(*Ctx).lookup          -      -
     2.51%  [.] github.com/cellserver/cellserver/gcra.ParseTAT               -      -
     1.25%  [.] runtime.reentersyscall                                       -      -
     0.94%  [.] runtime.mallocgc                                             -      -
     0.50%  [.] github.com/yuin/gopher-lua.(*LState).mainLoop               -      -
     0.30%  [.] mystery                                                      -      -
`

func TestProfileSummary(t *testing.T) {
	s := parsePerfReport(perfSelf)
	if len(s) != 9 || s[0].pct != 15.99 || !s[1].kernel || s[3].symbol != "github.com/cellserver/cellserver/cell.(*Ctx).lookup" {
		t.Fatalf("parsed %+v", s)
	}
	got := profileSummary("throttle, depth 16", perfSelf, 3)
	for _, want := range []string{
		"**throttle, depth 16**: reading the clock 16%, kernel (syscalls, TCP, scheduling) 8%, Go maps (key lookup, hashing) 7%, cellserver cell/ 4%",
		"cellserver gcra/ 3%", "Go allocation and GC 1%", "Lua (gopher-lua) 0%", "other 0%",
		"Top symbols (self): `__vdso_clock_gettime` 16.0%, `finish_task_switch.isra.0` 8.2%, `runtime.mapaccess1_faststr` 6.9%.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if profileSummary("x", "no samples\n", 3) != "" {
		t.Error("a summary of nothing")
	}
}
