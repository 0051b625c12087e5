package cell

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loopServer starts a server with the event loop and a client it has
// accepted (so the loops have started), or skips where there is none.
func loopServer(t *testing.T) (*Server, *testConn) {
	srv := startServer(t, func(c *Config) { c.EventLoop = true })
	c := dial(t, srv)
	c.do("PING")
	srv.mu.Lock()
	n := len(srv.loops)
	srv.mu.Unlock()
	if n == 0 {
		t.Skip("no event loop on this platform")
	}
	return srv, c
}

// TestEventLoopSlowReader: replies that do not fit a client's socket
// leave the loop to that client's goroutine, which sends them whole and in
// order, while every other client, whichever loop it waits in, is served
// meanwhile.
func TestEventLoopSlowReader(t *testing.T) {
	srv, c := loopServer(t)
	val := strings.Repeat("v", 1<<20)
	if r := c.do("SET", "big", val); r != "+OK\r\n" {
		t.Fatal(r)
	}
	// Idle for a moment, so that c waits in its loop, then ask for far
	// more than a socket buffer holds and read none of it yet.
	c.do("PING")
	const n = 16
	var req []byte
	for range n {
		req = append(req, encode("GET", "big")...)
	}
	req = append(req, encode("ECHO", "last")...)
	if _, err := c.nc.Write(req); err != nil {
		t.Fatal(err)
	}
	// Clients in every loop answer while c's replies wait for c.
	for range 2 * len(srv.loops) {
		o := dial(t, srv)
		if r := o.do("INCR", "n"); !strings.HasPrefix(r, ":") {
			t.Fatalf("another client got %q while one did not read", r)
		}
	}
	want := "$" + strconv.Itoa(len(val)) + "\r\n" + val + "\r\n"
	got := make([]byte, n*len(want))
	if _, err := io.ReadFull(c.br, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(strings.Repeat(want, n))) {
		t.Fatal("the replies arrived altered")
	}
	if r := c.read(); r != "$4\r\nlast\r\n" {
		t.Fatalf("after the big replies: %q", r)
	}
	// Back in plain state: served again, by the loop or not.
	if r := c.do("GET", "n"); r != "$1\r\n"+strconv.Itoa(2*len(srv.loops))+"\r\n" {
		t.Fatalf("GET n: %q", r)
	}
}

// TestEventLoopKill: a client waiting in its loop is closed at once by
// CLIENT KILL and by the idle timeout, and leaves CLIENT LIST.
func TestEventLoopKill(t *testing.T) {
	srv, admin := loopServer(t)
	for _, how := range []string{"kill", "timeout"} {
		t.Run(how, func(t *testing.T) {
			c := dial(t, srv)
			c.do("CLIENT", "SETNAME", "victim-"+how)
			idStr := strings.TrimPrefix(strings.TrimSpace(c.do("CLIENT", "ID")), ":")
			c.do("SET", "k", "v") // plain: it then waits in its loop
			id, _ := strconv.ParseInt(idStr, 10, 64)
			waitFor(t, "the client to wait in its loop", func() bool {
				srv.mu.Lock()
				defer srv.mu.Unlock()
				return srv.clients[id] != nil && srv.clients[id].loopState.Load() == loopIdle
			})
			switch how {
			case "kill":
				if r := admin.do("CLIENT", "KILL", "ID", idStr); r != ":1\r\n" {
					t.Fatal(r)
				}
			case "timeout":
				// admin stays busy below, so only the victim is idle.
				admin.do("CONFIG", "SET", "timeout", "1")
				defer admin.do("CONFIG", "SET", "timeout", "0")
			}
			waitFor(t, "the client to leave CLIENT LIST", func() bool {
				return !strings.Contains(admin.do("CLIENT", "LIST"), "victim-"+how)
			})
			if rest, closed := c.readToClose(5 * time.Second); !closed {
				t.Fatalf("still open (read %q)", rest)
			}
		})
	}
}
