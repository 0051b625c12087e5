package serverproc

import (
	"net"
	"os"
	"testing"
	"time"
)

// TestListening tells the process holding a listening socket from others.
func TestListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if yes, known := listening(os.Getpid(), port); !yes || !known {
		t.Errorf("this process on its own port: %v, %v", yes, known)
	}
	free, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if yes, known := listening(os.Getpid(), free); yes || !known {
		t.Errorf("a port nobody listens on: %v, %v", yes, known)
	}
	p, err := Start("/bin/sh", []string{"-c", "sleep 60"}, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if yes, known := listening(p.Pid(), port); yes || !known {
		t.Errorf("another process on this one's port: %v, %v", yes, known)
	}
	// A wrapper's child holding the socket counts as the wrapper's: the
	// test process is the child of nothing here, so ask for its parent.
	if yes, known := listening(os.Getppid(), port); !yes || !known {
		t.Errorf("the parent of the process holding the port: %v, %v", yes, known)
	}
}

// TestWaitReadyOtherListener: a PING answered on the port by another
// program is not the started process being ready (the integration tests
// once checked a restarted server's data on another suite's server).
func TestWaitReadyOtherListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p, err := Start("/bin/sh", []string{"-c", "sleep 60"}, t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ping := func(addr string) error {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := p.WaitReady(ln.Addr().String(), 300*time.Millisecond, ping); err == nil {
		t.Error("WaitReady took another program's listener for the process's own")
	}
}
