package clusterbus

import (
	"io"
	"log/slog"
	"sync"
	"testing"
)

// TestAnnounce: the cluster-announce-* settings go into every header and
// the hostname extension, and this node's own entry follows the IP and
// hostname as they change; the ports are the ones given at start (Redis
// 7.0 derives myself's ports once, the header's at every message).
func TestAnnounce(t *testing.T) {
	var mu sync.Mutex
	a := Announce{IP: "10.1.2.3", Hostname: "cell.example", Port: 7100, BusPort: 17100, TLSPort: 7200}
	c, err := Open(Config{Dir: t.TempDir(), File: "nodes.conf", Port: 7000, Bind: "127.0.0.1",
		Announce: func() Announce { mu.Lock(); defer mu.Unlock(); return a },
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)), Host: &fakeHost{}})
	if err != nil {
		t.Fatal(err)
	}
	header := func() Header {
		c.mu.Lock()
		defer c.mu.Unlock()
		m := c.header(Ping)
		if m.Hostname != c.myself.Hostname {
			t.Errorf("hostname extension %q, own entry %q", m.Hostname, c.myself.Hostname)
		}
		return m.Header
	}
	own := func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return addrString(c.myself) + "," + c.myself.Hostname
	}
	for _, tc := range []struct {
		name       string
		set        func(a *Announce)
		ip         string
		port, bus  uint16
		ownAddress string
	}{
		{"at start", func(*Announce) {}, "10.1.2.3", 7100, 17100, "10.1.2.3:7100@17100,cell.example"},
		{"changed", func(a *Announce) { a.IP, a.Hostname, a.Port, a.BusPort = "10.9.9.9", "other.example", 7300, 17300 },
			"10.9.9.9", 7300, 17300, "10.9.9.9:7100@17100,other.example"},
		{"cleared", func(a *Announce) { *a = Announce{} }, "", 7000, 17000, ":7100@17100,"},
	} {
		mu.Lock()
		tc.set(&a)
		mu.Unlock()
		c.mu.Lock()
		c.updateMyself()
		c.mu.Unlock()
		h := header()
		if h.IP != tc.ip || h.Port != tc.port || h.CPort != tc.bus || h.PPort != 0 {
			t.Errorf("%s: header ip %q port %d cport %d pport %d, want %q %d %d 0", tc.name, h.IP, h.Port, h.CPort, h.PPort, tc.ip, tc.port, tc.bus)
		}
		if got := own(); got != tc.ownAddress {
			t.Errorf("%s: own entry %s, want %s", tc.name, got, tc.ownAddress)
		}
	}
}
