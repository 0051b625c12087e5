package integration_test

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSystemdNotify: the built binary with --supervised systemd tells the
// socket NOTIFY_SOCKET names READY=1 only once it has loaded its store
// (PING then answers PONG, not -LOADING), and STOPPING=1 at SIGTERM.
func TestSystemdNotify(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	p := cellOnDir(t, dir)
	c := mustDial(t, p)
	for i := range 3000 {
		c.Send("SET", "k"+strconv.Itoa(i), "v")
	}
	for range 3000 {
		if _, err := c.ReadReply(); err != nil {
			t.Fatal(err)
		}
	}
	p.Stop()

	sock := filepath.Join(t.TempDir(), "notify.sock")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("CELLSERVER_TEST_SLOW_LOAD", "300ms") // per 1000 keys: about a second
	p2 := startLoading(t, dir, "--supervised", "systemd")
	c2 := mustDial(t, p2)
	buf := make([]byte, 512)
	var got []string
	ln.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		n, err := ln.Read(buf)
		if err != nil {
			t.Fatalf("no READY=1 (got %q): %v\n%s", got, err, p2.LogTail(10))
		}
		msg := string(buf[:n])
		got = append(got, msg)
		if strings.HasPrefix(msg, "READY=1") {
			break
		}
		if r := mustDo(t, c2, "PING"); r != "-LOADING Redis is loading the dataset in memory\r\n" {
			t.Errorf("PING before READY: %q", r)
		}
	}
	if got[0] != "STATUS=Loading the dataset" {
		t.Errorf("first notification %q", got[0])
	}
	if r := mustDo(t, c2, "PING"); r != "+PONG\r\n" {
		t.Errorf("PING after READY: %q", r)
	}
	p2.Stop()
	ln.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := ln.Read(buf)
	if err != nil || string(buf[:n]) != "STOPPING=1" {
		t.Errorf("at SIGTERM: %q, %v", buf[:n], err)
	}
}
