package cell

import "testing"

// TestWindowZSetCopies: a sorted set whose members are their own scores
// (a window, stored as integers) keeps every member through DUMP/RESTORE
// and COPY, which read it through entryValue.
func TestWindowZSetCopies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("ZADD", "w", "1795000000001", "1795000000001", "1795000000002", "1795000000002", "1795000000003", "1795000000003")
	want := c.do("ZRANGE", "w", "0", "-1", "WITHSCORES")
	payload := c.do("DUMP", "w")
	if len(payload) < 4 || payload[0] != '$' {
		t.Fatalf("DUMP: %q", payload)
	}
	_, body, _ := cutLine(payload)
	c.do("RESTORE", "r", "0", body[:len(body)-2])
	c.do("COPY", "w", "c")
	for _, k := range []string{"r", "c"} {
		if got := c.do("ZRANGE", k, "0", "-1", "WITHSCORES"); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// cutLine splits a raw reply after its first line.
func cutLine(s string) (line, rest string, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '\r' && s[i+1] == '\n' {
			return s[:i], s[i+2:], true
		}
	}
	return s, "", false
}
