package cell

import (
	"fmt"
	"strings"
	"testing"
)

// TestCmdCache: the cache resolves every name as the server's table does
// (renamed and disabled commands included), whatever the order and however
// many names pass through it, and hands out no command for a name that
// has none.
func TestCmdCache(t *testing.T) {
	cfg := fuzzConfig()
	cfg.RenameCommands = [][2]string{{"flushall", ""}, {"zcard", "zc-" + strings.Repeat("x", 30)}}
	srv := New(cfg)
	if srv.lookupCommand([]byte("FLUSHALL")) != nil || srv.lookupCommand([]byte("ZC-"+strings.Repeat("X", 30))) == nil {
		t.Fatal("the server's table does not have the renames")
	}
	names := []string{
		"MULTI", "ZADD", "ZREMRANGEBYSCORE", "zcard", "EXPIRE", "EXEC",
		"multi", "zAdd", "GET", "SET", "CL.THROTTLE", "PING", "INCR", "DEL", "HSET",
		"flushall", "FLUSHALL", "nosuch", "", "zc-" + strings.Repeat("x", 30),
		"ZC-" + strings.Repeat("X", 30), strings.Repeat("g", 40), "get", "GET ",
	}
	tests := []struct {
		name  string
		order []int
	}{
		{"once each", nil},
		{"one command repeated", []int{10, 10, 10, 7, 10, 10}},
		{"W1 blocks", []int{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}},
		{"more names than entries, twice", append(seq(len(names)), seq(len(names))...)},
		{"misses between hits", []int{15, 0, 17, 0, 18, 1, 19, 1, 21, 2, 16, 2}},
	}
	for _, tc := range tests {
		order := tc.order
		if order == nil {
			order = seq(len(names))
		}
		var k cmdCache
		for step, i := range order {
			name := []byte(names[i])
			got, want := k.lookup(srv, name), srv.lookupCommand(name)
			if got != want {
				t.Errorf("%s, step %d: %q resolved to %s, the table says %s", tc.name, step, names[i], cmdName(got), cmdName(want))
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func cmdName(c *Command) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%q", c.Name)
}
