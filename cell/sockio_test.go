package cell

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// socketPair connects a client to a listener of network and returns both
// ends: the server's end first.
func socketPair(t *testing.T, network string) (net.Conn, net.Conn) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s.sock")
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); sv.Close() })
	return sv, cl
}

func TestSockIOReadWrite(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			sv, cl := socketPair(t, network)
			s := newSockIO(sv)
			if s == nil {
				t.Fatal("no raw I/O for a plain socket")
			}
			// Read waits for data that comes later.
			go func() {
				time.Sleep(20 * time.Millisecond)
				cl.Write([]byte("*1\r\n$4\r\nPING\r\n"))
			}()
			buf := make([]byte, 64)
			n, err := s.Read(buf)
			if err != nil || string(buf[:n]) != "*1\r\n$4\r\nPING\r\n" {
				t.Fatalf("Read = %q, %v", buf[:n], err)
			}
			// Write sends all of a reply larger than the socket's buffers,
			// waiting while the peer reads slowly.
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
			got := make(chan []byte)
			go func() {
				time.Sleep(50 * time.Millisecond)
				b, _ := io.ReadAll(io.LimitReader(cl, int64(len(big))))
				got <- b
			}()
			if n, err := s.Write(big); n != len(big) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(big))
			}
			if b := <-got; !bytes.Equal(b, big) {
				t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(big))
			}
			// The peer's close is io.EOF.
			cl.Close()
			if n, err := s.Read(buf); n != 0 || err != io.EOF {
				t.Fatalf("Read after the peer closed = %d, %v; want 0, EOF", n, err)
			}
		})
	}
}

func TestSockIODeadlineAndClose(t *testing.T) {
	sv, _ := socketPair(t, "tcp")
	s := newSockIO(sv)
	buf := make([]byte, 16)
	// A deadline wakes a waiting Read (Shutdown relies on it).
	sv.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline: %v, want a deadline error", err)
	}
	sv.SetReadDeadline(time.Time{})
	// Close from another goroutine wakes it too (CLIENT KILL).
	done := make(chan error)
	go func() { _, err := s.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	sv.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Read on a closed socket: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the Read")
	}
	if _, err := s.Write([]byte("x")); err == nil {
		t.Fatal("Write on a closed socket succeeded")
	}
}

func TestSockIOOnlyPlainSockets(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if newSockIO(a) != nil {
		t.Error("raw I/O for a pipe")
	}
	sv, _ := socketPair(t, "tcp")
	if newSockIO(tls.Server(sv, &tls.Config{})) != nil {
		t.Error("raw I/O for a TLS connection: it would bypass the encryption")
	}
}

// TestSockIONoAllocation: a request's read and its reply's write allocate
// nothing (the callbacks are bound once per connection).
func TestSockIONoAllocation(t *testing.T) {
	sv, cl := socketPair(t, "tcp")
	s := newSockIO(sv)
	req, buf := []byte("*1\r\n$4\r\nPING\r\n"), make([]byte, 64)
	pong, in := []byte("+PONG\r\n"), make([]byte, 64)
	n := testing.AllocsPerRun(200, func() {
		cl.Write(req)
		if _, err := s.Read(buf); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(pong); err != nil {
			t.Fatal(err)
		}
		io.ReadFull(cl, in[:len(pong)])
	})
	if n != 0 {
		t.Errorf("%.1f allocations per request", n)
	}
}
