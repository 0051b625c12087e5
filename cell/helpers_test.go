package cell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startServer runs an in-process server on a free loopback port and stops
// it when the test ends.
func startServer(t testing.TB, mod func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Shards = 8
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if mod != nil {
		mod(&cfg)
	}
	srv := New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.listeners = append(srv.listeners, ln)
	srv.mu.Unlock()
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// testConn is a raw RESP client for tests in this package.
type testConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, srv *Server) *testConn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Addrs()[0].String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &testConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func encode(args ...string) []byte {
	var b []byte
	b = fmt.Appendf(b, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// do sends one command and returns its raw reply.
func (c *testConn) do(args ...string) string {
	c.t.Helper()
	if _, err := c.nc.Write(encode(args...)); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

// read returns one complete raw reply.
func (c *testConn) read() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sb strings.Builder
	if err := readReply(c.br, &sb); err != nil {
		c.t.Fatalf("reading reply: %v (so far %q)", err, sb.String())
	}
	return sb.String()
}

func readReply(br *bufio.Reader, sb *strings.Builder) error {
	line, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	sb.WriteString(line)
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		sb.Write(buf)
	case '*', '~', '>':
		for i := 0; i < n; i++ {
			if err := readReply(br, sb); err != nil {
				return err
			}
		}
	case '%', '|':
		for i := 0; i < 2*n; i++ {
			if err := readReply(br, sb); err != nil {
				return err
			}
		}
	}
	return nil
}
