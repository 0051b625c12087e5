package cell

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestDispatchOrder checks Redis's order of command-level checks.
func TestDispatchOrder(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.RequirePass = "secret" })
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		// Unknown command and arity come before NOAUTH.
		{"nosuch a", "-ERR unknown command 'nosuch', with args beginning with: 'a' \r\n"},
		{"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
		{"echo a", "-NOAUTH Authentication required.\r\n"},
		{"multi", "-NOAUTH Authentication required.\r\n"},
		{"hello 3", "-" + ErrHelloNoAuth + "\r\n"},
		{"auth nope", "-" + ErrWrongPass + "\r\n"},
		{"auth a b c", "-ERR syntax error\r\n"},
		{"auth secret", "+OK\r\n"},
		{"echo a", "$1\r\na\r\n"},
		{"auth default secret", "+OK\r\n"},
	}
	for _, s := range steps {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

func TestUnknownCommandText(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	long := strings.Repeat("x", 200)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"foo"}, "-ERR unknown command 'foo', with args beginning with: \r\n"},
		{[]string{"GET\x00"}, "-ERR unknown command 'GET', with args beginning with: \r\n"},
		{[]string{"foo", "a\r\nb", "c"}, "-ERR unknown command 'foo', with args beginning with: 'a  b' 'c' \r\n"},
		{[]string{"foo", long, "z"}, "-ERR unknown command 'foo', with args beginning with: '" + long[:128] + "' \r\n"},
		{[]string{"PiNg"}, "+PONG\r\n"},
		{[]string{"ping", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"select", "16"}, "-ERR DB index is out of range\r\n"},
		{[]string{"select", "-1"}, "-ERR DB index is out of range\r\n"},
		{[]string{"select", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"hello", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"hello", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"hello", "3", "setname", "a b"}, "-" + ErrClientName + "\r\n"},
		{[]string{"hello", "3", "foo"}, "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{[]string{"auth", "x"}, "-" + ErrNoPassword + "\r\n"},
		{[]string{"auth", "default", "anything"}, "+OK\r\n"},
	}
	for _, tc := range tests {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestMultiExec(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"exec", "-ERR EXEC without MULTI\r\n"},
		{"discard", "-ERR DISCARD without MULTI\r\n"},
		{"exec x", "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{"multi", "+OK\r\n"},
		{"multi", "-ERR MULTI calls can not be nested\r\n"},
		{"ping", "+QUEUED\r\n"},
		{"echo hi", "+QUEUED\r\n"},
		{"exec", "*2\r\n+PONG\r\n$2\r\nhi\r\n"},
		{"multi", "+OK\r\n"},
		{"nosuch", "-ERR unknown command 'nosuch', with args beginning with: \r\n"},
		{"ping", "+QUEUED\r\n"},
		{"exec", "-" + ErrExecAbort + "\r\n"},
		{"multi", "+OK\r\n"},
		{"select 1", "+QUEUED\r\n"},
		{"select 99", "+QUEUED\r\n"},
		{"exec", "*2\r\n+OK\r\n-ERR DB index is out of range\r\n"},
		{"multi", "+OK\r\n"},
		{"watch k", "-ERR WATCH inside MULTI is not allowed\r\n"},
		{"exec", "*0\r\n"},
		{"multi", "+OK\r\n"},
		{"exec x", "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{"exec", "-ERR EXEC without MULTI\r\n"},
	}
	for _, s := range steps {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

// TestShutdownFinishesInFlight: a pipeline being served when shutdown
// starts still gets its replies; new connections are refused.
func TestShutdownFinishesInFlight(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	if got := c.do("ping"); got != "+PONG\r\n" {
		t.Fatalf("ping: %q", got)
	}
	addr := srv.Addrs()[0].String()
	done := make(chan error)
	go func() { done <- srv.Shutdown(t.Context()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	if nc, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		nc.Close()
		t.Error("still accepting after shutdown")
	}
}
