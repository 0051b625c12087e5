package cell

import (
	"strconv"
	"strings"
	"testing"
)

// TestKeyedEntries: keys and values of every size around the shapes'
// edges keep their bytes when the value is rewritten in place, grows past
// its room, or the entry changes type; the key strings the map holds stay
// the keys.
func TestKeyedEntries(t *testing.T) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	do := func(args ...string) string {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		c.w.Reset()
		c.dispatch(b)
		return string(c.w.Bytes())
	}
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	var keys []string
	for _, kl := range []int{1, 7, 8, 9, 16, 24, 40, 72, 73, 200} {
		for _, vl := range []int{0, 1, 8, 19, 30, 64, 100} {
			key := strconv.Itoa(len(keys)) + ":" + strings.Repeat("k", kl)
			val := strings.Repeat("v", vl)
			keys = append(keys, key)
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"set", key, val}, "+OK\r\n"},
				{[]string{"get", key}, bulk(val)},
				{[]string{"set", key, strings.Repeat("w", vl)}, "+OK\r\n"}, // in place
				{[]string{"append", key, "xyz"}, ":" + strconv.Itoa(vl+3) + "\r\n"},
				{[]string{"get", key}, bulk(strings.Repeat("w", vl) + "xyz")},
				{[]string{"incr", key + ":n"}, ":1\r\n"},
				{[]string{"incr", key + ":n"}, ":2\r\n"},
			}
			for _, s := range steps {
				if got := do(s.args...); got != s.want {
					t.Fatalf("%.60q: got %q, want %q", s.args, got, s.want)
				}
			}
		}
	}
	// A key that held a string now holds a list, then a string again.
	if got := do("del", keys[0]); got != ":1\r\n" {
		t.Fatalf("del: %q", got)
	}
	if got := do("rpush", keys[0], "a"); got != ":1\r\n" {
		t.Fatalf("rpush: %q", got)
	}
	if got := do("set", keys[0], "s"); got != "+OK\r\n" {
		t.Fatalf("set over a list: %q", got)
	}
	// Every key is still found under its own name.
	for _, k := range keys {
		if got := do("exists", k, k+":n"); got != ":2\r\n" {
			t.Errorf("exists %.40q: %q", k, got)
		}
	}
	if got := do("dbsize"); got != ":"+strconv.Itoa(2*len(keys))+"\r\n" {
		t.Errorf("dbsize: %q, want %d", got, 2*len(keys))
	}
}
