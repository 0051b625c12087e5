package integration_test

import (
	"testing"
)

// TestProtocolErrors sends broken or unusual frames on raw sockets and
// compares what each server sends back before it closes the connection (or
// goes quiet with the connection still open). Each case has a connection of
// its own, so the cases run in parallel.
func TestProtocolErrors(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		// Malformed multibulk frames: an error, then the connection closes.
		{"negative bulk length", "*1\r\n$-5\r\n"},
		{"empty bulk length", "*1\r\n$\r\n"},
		{"non-numeric bulk length", "*1\r\n$abc\r\n"},
		{"non-numeric multibulk length", "*abc\r\n"},
		{"empty multibulk length", "*\r\n"},
		{"bulk without $", "*1\r\nxx\r\n"},
		// Over proto-max-bulk-len (512mb by default); exactly 512mb is accepted
		// and waits for its payload.
		{"bulk over 512mb", "*1\r\n$600000000\r\n"},
		{"bulk of 512mb plus one", "*1\r\n$536870913\r\n"},

		// Frames that are fine.
		{"empty multibulk then PING", "*0\r\n*1\r\n$4\r\nPING\r\n"},
		{"negative multibulk then PING", "*-1\r\nPING\r\n"},
		// The two bytes after a bulk payload are skipped, not checked.
		{"no CRLF after payload", "*1\r\n$4\r\nPINGxx"},
		{"no CRLF after payload, then a command", "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"},
		{"pipeline", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"},

		// Inline commands.
		{"inline", "PING\r\n"},
		{"inline with LF only", "PING\n"},
		{"inline with spaces", "  PING  \r\n"},
		{"inline empty line", "\r\n"},
		{"inline quoted arguments", "SET \"a b\" \"c\\x41\"\r\nGET \"a b\"\r\n"},
		{"inline single quotes", "ECHO 'it''s'\r\n"},
		{"inline unbalanced double quote", "SET \"a b\r\n"},
		{"inline unbalanced single quote", "'a\r\n"},
		{"inline text after closing quote", "\"a\"b\r\n"},
		{"inline bulk header", "$4\r\nPING\r\n"},
		{"inline unknown command", "NOSUCH a b\r\n"},
		{"QUIT stops reading", "QUIT\r\nPING\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			compareRaw(t, []byte(tc.data))
		})
	}
}

func TestInlineCommands(t *testing.T) {
	c := newPair(t)
	c.DoInline("PING")
	c.DoInline("SET \"a b\" \"c\\x41\"")
	c.Do("GET", "a b")
	c.DoInline("GET \"a b\"")
	c.DoInline("ECHO \"\\r\\n\\t\\\"\"")
	c.DoInline("ECHO 'a\\'b'")
	c.DoInline("ECHO \"\\xzz\"")
	c.DoInline("nosuch \"x y\"")
}
