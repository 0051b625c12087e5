package cell

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// COMMAND INFO of the module-style commands: what Redis 7.0 shows for a
// module command registered with flags "write" / "readonly fast" and keys
// (1, 1, 1): flag module, no ACL categories, the key spec Redis derives from
// the legacy triple.
func TestCommandInfoModuleCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	spec := "*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+update\r\n" +
		"$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n"
	tests := []struct{ name, want string }{
		{"cl.throttle", "*1\r\n*10\r\n$11\r\ncl.throttle\r\n:-1\r\n*2\r\n+write\r\n+module\r\n:1\r\n:1\r\n:1\r\n*0\r\n*0\r\n" + spec + "*0\r\n"},
		{"CL.PROBE", "*1\r\n*10\r\n$8\r\ncl.probe\r\n:-1\r\n*3\r\n+readonly\r\n+module\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*0\r\n*0\r\n" + spec + "*0\r\n"},
	}
	for _, tc := range tests {
		if got := c.do("command", "info", tc.name); got != tc.want {
			t.Errorf("COMMAND INFO %s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	if got, want := c.do("command", "getkeys", "cl.throttle", "user:1", "15", "30", "60"), "*1\r\n$6\r\nuser:1\r\n"; got != want {
		t.Errorf("GETKEYS cl.throttle: got %q, want %q", got, want)
	}
	if got := c.do("command", "docs", "cl.throttle"); !strings.Contains(got, "$5\r\ngroup\r\n$6\r\nmodule\r\n$6\r\nmodule\r\n$10\r\nredis-cell\r\n") {
		t.Errorf("COMMAND DOCS cl.throttle: %q", got)
	}
	// Our limiter extensions each have a COMMAND DOCS entry.
	for _, name := range []string{"cl.throttleall", "cl.probeall", "cl.window", "cl.toprefused"} {
		got := c.do("command", "docs", name)
		if !strings.HasPrefix(got, "*2\r\n$"+strconv.Itoa(len(name))+"\r\n"+name+"\r\n") || !strings.Contains(got, "$7\r\nsummary\r\n") || !strings.Contains(got, "$10\r\ncomplexity\r\n") {
			t.Errorf("COMMAND DOCS %s: %q", name, got)
		}
	}
	if got, want := c.do("command", "list", "filterby", "module", "redis-cell"), "*5\r\n$8\r\ncl.probe\r\n$11\r\ncl.probeall\r\n$11\r\ncl.throttle\r\n$14\r\ncl.throttleall\r\n$9\r\ncl.window\r\n"; got != want {
		t.Errorf("COMMAND LIST FILTERBY MODULE: got %q, want %q", got, want)
	}
}

// COMMAND and COMMAND COUNT agree with the table, and every entry is a
// well-formed 10-element array in both protocols.
func TestCommandTable(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	n := strconv.Itoa(len(commands))
	if got := c.do("command", "count"); got != ":"+n+"\r\n" {
		t.Errorf("COMMAND COUNT = %q, want :%s", got, n)
	}
	for _, proto := range []string{"2", "3"} {
		c.do("hello", proto)
		all := c.do("command")
		if !strings.HasPrefix(all, "*"+n+"\r\n") {
			t.Errorf("RESP%s COMMAND: header %q", proto, all[:min(len(all), 20)])
		}
		if strings.Count(all, "*10\r\n") < len(commands) {
			t.Errorf("RESP%s COMMAND: fewer than %s entries", proto, n)
		}
		if got := c.do("command", "info"); got != all {
			t.Errorf("RESP%s COMMAND INFO without names differs from COMMAND", proto)
		}
	}
}

func TestCommandACLCategories(t *testing.T) {
	tests := []struct {
		cmd  *Command
		want string
	}{
		{&Command{Flags: FlagFast}, "fast"},
		{&Command{}, "slow"},
		{&Command{Flags: FlagWrite, ACL: ACLKeyspace | ACLDangerous}, "keyspace write slow dangerous"},
		{&Command{Flags: FlagAdmin}, "admin slow dangerous"},
		{&Command{Flags: FlagReadonly | FlagFast, ACL: ACLString}, "read string fast"},
		{&Command{Flags: FlagReadonly, ACL: ACLScripting}, "slow scripting"},
		{&Command{Flags: FlagWrite | FlagModule}, ""},
	}
	for _, tc := range tests {
		var got []string
		cats := tc.cmd.aclCategories()
		for i, n := range aclCategoryNames {
			if cats&(1<<i) != 0 {
				got = append(got, n)
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("flags %b acl %b: got %q, want %q", tc.cmd.Flags, tc.cmd.ACL, got, tc.want)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, // as Redis: KEYS and CONFIG GET special-case a lone "*" before matching
		{"*", "anything", true},
		{"max*", "maxmemory", true},
		{"max*", "MAXMEMORY", true},
		{"max*y", "maxmemory", true},
		{"max*x", "maxmemory", false},
		{"h?", "hz", true},
		{"h?", "h", false},
		{"[a-c]x", "bx", true},
		{"[c-a]x", "bx", true},
		{"[^a-c]x", "bx", false},
		{"[^a-c]x", "dx", true},
		{"[abc", "a", true},
		{"a\\*", "a*", true},
		{"a\\*", "ab", false},
		{"*|get", "config|get", true},
		{"**a**", "bab", true},
		{"", "", true},
		{"", "a", false},
	}
	for _, tc := range tests {
		if got := globMatchFold([]byte(tc.pat), []byte(tc.s)); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
	// Many stars must not take exponential time on a long miss.
	long := strings.Repeat("a", 200)
	start := time.Now()
	if globMatch([]byte(strings.Repeat("*a", 100)+"b"), []byte(long)) {
		t.Error("matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("hostile pattern took %v", d)
	}
}

// The early give-up changes no answer: compare with plain backtracking on
// every short pattern and string over a small alphabet.
func TestPatternMatchGiveUpIsExact(t *testing.T) {
	var naive func(p, s string) bool
	naive = func(p, s string) bool {
		if p == "" {
			return s == ""
		}
		switch p[0] {
		case '*':
			for i := 0; i <= len(s); i++ {
				if naive(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			return s != "" && naive(p[1:], s[1:])
		}
		return s != "" && s[0] == p[0] && naive(p[1:], s[1:])
	}
	var gen func(alpha string, n int) []string
	gen = func(alpha string, n int) []string {
		out := []string{""}
		if n == 0 {
			return out
		}
		for _, rest := range gen(alpha, n-1) {
			for i := 0; i < len(alpha); i++ {
				out = append(out, string(alpha[i])+rest)
			}
		}
		return out
	}
	pats, strs := gen("ab*?", 5), gen("ab", 6)
	for _, p := range pats {
		for _, s := range strs {
			want := naive(p, s)
			if s == "" {
				// stringmatchlen never enters its loop for an empty
				// string: only the empty pattern matches it.
				want = p == ""
			}
			if got := globMatch([]byte(p), []byte(s)); got != want {
				t.Fatalf("globMatch(%q, %q) = %v, want %v", p, s, got, want)
			}
		}
	}
}
