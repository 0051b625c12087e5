package clusterbus

import (
	"bytes"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// startRedisCluster starts a redis-server with cluster mode on and
// returns its port; the bus is port+10000.
func startRedisCluster(t *testing.T) int {
	t.Helper()
	bin := serverproc.RequirePeer(t, "redis-server", "install redis-server 7.0 (Debian: apt install redis-server)")
	port, err := serverproc.FreeClusterPort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := serverproc.Start(bin, []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no",
		"--cluster-announce-hostname", "peer.example"}, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	// Both ports: redis-server listens on its client port a moment
	// before its bus port (clusterInit comes later in initServer), and a
	// dial to the bus in between is refused.
	err = p.WaitReady("127.0.0.1:"+strconv.Itoa(port), 10*time.Second, func(string) error {
		for _, pt := range []int{port, port + 10000} {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(pt), time.Second)
			if err != nil {
				return err
			}
			c.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, p.LogTail(20))
	}
	return port
}

// TestRedisPeer speaks to a real redis-server's bus: it MEETs it from a
// made-up node, decodes the PONG it answers, then accepts the link it opens
// back and decodes the PING it sends there. Every message read re-encodes
// to the very bytes received.
func TestRedisPeer(t *testing.T) {
	port := startRedisCluster(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	myBus := ln.Addr().(*net.TCPAddr).Port
	me := "0123456789abcdef0123456789abcdef01234567"
	meet := &Message{Header: Header{Type: Meet, Port: 6999, Sender: me, CPort: uint16(myBus), Flags: FlagMaster, CurrentEpoch: 5, ConfigEpoch: 2}}
	meet.Slots.Set(42)
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port+10000), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write(meet.Append(nil)); err != nil {
		t.Fatal(err)
	}
	pong := readChecked(t, conn)
	if pong.Type != Pong || len(pong.Sender) != NameLen || int(pong.Port) != port || int(pong.CPort) != port+10000 {
		t.Fatalf("got %s from %q port %d cport %d, want a PONG from the peer", pong.Type, pong.Sender, pong.Port, pong.CPort)
	}
	if pong.Flags&FlagMaster == 0 || pong.Hostname != "peer.example" || pong.State != StateFail || pong.Slots.Count() != 0 {
		t.Errorf("PONG flags %#x hostname %q state %d slots %d", pong.Flags, pong.Hostname, pong.State, pong.Slots.Count())
	}
	if pong.CurrentEpoch != 0 {
		// A node in handshake does not take the sender's epochs.
		t.Errorf("PONG currentEpoch %d, want 0", pong.CurrentEpoch)
	}
	// The peer now connects to our bus port and PINGs (the handshake).
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	back, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	back.SetDeadline(time.Now().Add(10 * time.Second))
	ping := readChecked(t, back)
	if ping.Type != Ping || ping.Sender != pong.Sender {
		t.Fatalf("got %s from %q, want a PING from %q", ping.Type, ping.Sender, pong.Sender)
	}
	// It gossips about itself only... and about us, still in handshake
	// under a random name: every section names 40 hex characters.
	for _, g := range ping.Gossip {
		if len(g.Name) != NameLen || g.Port == 0 {
			t.Errorf("gossip %+v", g)
		}
	}
	// Answering its PING with a PONG from our name completes the handshake:
	// CLUSTER NODES on the peer then lists our name.
	reply := &Message{Header: Header{Type: Pong, Port: 6999, Sender: me, CPort: uint16(myBus), Flags: FlagMaster}}
	if _, err := back.Write(reply.Append(nil)); err != nil {
		t.Fatal(err)
	}
	cli := serverproc.RequirePeer(t, "redis-cli", "install redis-tools")
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command(cli, "-p", strconv.Itoa(port), "cluster", "nodes").Output()
		if bytes.Contains(out, []byte(me+" 127.0.0.1:6999@"+strconv.Itoa(myBus))) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("peer's CLUSTER NODES does not list us:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readChecked reads and decodes one message, and checks that encoding it
// again gives the bytes read.
func readChecked(t *testing.T, c net.Conn) *Message {
	t.Helper()
	b, err := Read(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if again := m.Append(nil); !bytes.Equal(again, b) {
		for i := range min(len(again), len(b)) {
			if again[i] != b[i] {
				t.Fatalf("%s: re-encoding differs at byte %d of %d (%d bytes again)", m.Type, i, len(b), len(again))
			}
		}
		t.Fatalf("%s: re-encoding is %d bytes, read %d", m.Type, len(again), len(b))
	}
	return m
}
