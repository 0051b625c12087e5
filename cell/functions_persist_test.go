package cell

import (
	"strings"
	"testing"
)

// lib is a library named name whose function fn returns ret.
func lib(name, fn, ret string) string {
	return "#!lua name=" + name + "\nredis.register_function('" + fn + "', function() return '" + ret + "' end)"
}

// TestPersistFunctions: every change of the libraries survives a crash
// (no final checkpoint), whether the checkpoints before it wrote the
// libraries or not, and a restart serves exactly the libraries, and their
// functions, that the server had. The steps run in order on one
// directory; each restarts the server after its commands.
func TestPersistFunctions(t *testing.T) {
	eachRewritePolicy(t, testPersistFunctions)
}

func testPersistFunctions(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	var dump string
	for _, step := range []struct {
		name string
		cmds [][]string
		save bool   // SAVE (a checkpoint) before the commands
		want string // the libraries (FUNCTION LIST's names) after the restart
		call []string
	}{
		{name: "load", cmds: [][]string{{"FUNCTION", "LOAD", lib("a", "fa", "1")}, {"FUNCTION", "LOAD", lib("b", "fb", "2")}},
			want: "a,b", call: []string{"FCALL", "fb", "0"}},
		{name: "replace and delete after a checkpoint", save: true,
			cmds: [][]string{{"FUNCTION", "LOAD", "REPLACE", lib("a", "fa", "new")}, {"FUNCTION", "DELETE", "b"}},
			want: "a", call: []string{"FCALL", "fa", "0"}},
		{name: "a function moves between libraries", cmds: [][]string{{"FUNCTION", "LOAD", lib("b", "fb", "3")},
			{"FUNCTION", "DELETE", "b"}, {"FUNCTION", "LOAD", lib("c", "fb", "4")}},
			want: "a,c", call: []string{"FCALL", "fb", "0"}},
		{name: "dump", save: true, cmds: [][]string{{"FUNCTION", "DUMP"}}, want: "a,c"},
		{name: "flush after a checkpoint", save: true, cmds: [][]string{{"FUNCTION", "FLUSH"}}, want: ""},
		{name: "nothing since the flush, checkpointed", save: true, want: ""},
		{name: "restore", cmds: [][]string{{"FUNCTION", "LOAD", lib("d", "fd", "5")}, {"FUNCTION", "RESTORE", "<dump>", "FLUSH"}},
			want: "a,c", call: []string{"FCALL", "fa", "0"}},
		{name: "restore append refused", cmds: [][]string{{"FUNCTION", "RESTORE", "<dump>"}}, want: "a,c"},
	} {
		c := dial(t, srv)
		c.do("SET", "k", step.name) // so that checkpoints have keys to write too
		if step.save {
			if r := c.do("SAVE"); r != "+OK\r\n" {
				t.Fatalf("%s: SAVE %q", step.name, r)
			}
		}
		for _, cmd := range step.cmds {
			for i, a := range cmd {
				if a == "<dump>" {
					cmd[i] = dump
				}
			}
			r := c.do(cmd...)
			if len(cmd) > 1 && cmd[1] == "DUMP" {
				dump = r[strings.Index(r, "\r\n")+2 : len(r)-2]
			}
		}
		before := c.do("FUNCTION", "LIST", "WITHCODE")
		var called string
		if step.call != nil {
			called = c.do(step.call...)
		}
		crashStop(srv, stop)
		srv, stop = openServer(t, dir, nil)
		c = dial(t, srv)
		if got := c.do("FUNCTION", "LIST", "WITHCODE"); got != before {
			t.Fatalf("%s: FUNCTION LIST after the restart\n%q\nbefore\n%q", step.name, got, before)
		}
		var names []string
		for _, l := range srv.functions.list() {
			names = append(names, l.Name)
		}
		if got := strings.Join(names, ","); got != step.want {
			t.Fatalf("%s: libraries %q, want %q", step.name, got, step.want)
		}
		if step.call != nil {
			if got := c.do(step.call...); got != called || got[0] != '$' {
				t.Fatalf("%s: %v after the restart %q, before %q", step.name, step.call, got, called)
			}
		}
	}
}
