package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell"
)

// TestNotifier: with supervised systemd (or auto) and NOTIFY_SOCKET set,
// a state arrives as one datagram on that unix socket, a path or an
// abstract name; without them nothing is sent.
func TestNotifier(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode, socket string
		sends        bool
	}{
		{"systemd", filepath.Join(dir, "notify.sock"), true},
		{"auto", filepath.Join(dir, "notify2.sock"), true},
		{"systemd", "@cellserver-test-" + filepath.Base(dir), true},
		{"no", filepath.Join(dir, "notify3.sock"), false},
		{"upstart", filepath.Join(dir, "notify4.sock"), false},
		{"systemd", "", false},
	} {
		var ln *net.UnixConn
		if tc.socket != "" {
			name := tc.socket
			if name[0] == '@' {
				name = "\x00" + name[1:]
			}
			var err error
			ln, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("NOTIFY_SOCKET", tc.socket)
		cfg := cell.DefaultConfig()
		cfg.Params = map[string]string{"supervised": tc.mode}
		sent, err := newNotifier(cfg).send("READY=1\nSTATUS=Ready to accept connections")
		if sent != tc.sends || err != nil {
			t.Errorf("%s %q: sent %v, %v", tc.mode, tc.socket, sent, err)
		}
		if ln == nil {
			continue
		}
		buf := make([]byte, 256)
		ln.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := ln.Read(buf)
		switch {
		case tc.sends && (err != nil || string(buf[:n]) != "READY=1\nSTATUS=Ready to accept connections"):
			t.Errorf("%s %q: received %q, %v", tc.mode, tc.socket, buf[:n], err)
		case !tc.sends && err == nil:
			t.Errorf("%s %q: received %q", tc.mode, tc.socket, buf[:n])
		}
		ln.Close()
	}
}
