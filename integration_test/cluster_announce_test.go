package integration_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/cellserver/cellserver/cell/hashslot"
)

// relay is a port on 127.0.0.2 that forwards every connection to a port
// of 127.0.0.1: a node reached at another address than its own, as
// behind NAT or in a container, which cluster-announce-* exist for.
type relay struct {
	port   int
	target atomic.Int64
}

func newRelay(t *testing.T) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 to relay from: %v", err)
	}
	r := &relay{port: ln.Addr().(*net.TCPAddr).Port}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				d, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(int(r.target.Load())))
				if err != nil {
					return
				}
				defer d.Close()
				go func() { io.Copy(d, c); d.(*net.TCPConn).CloseWrite() }()
				io.Copy(c, d)
			}()
		}
	}()
	return r
}

// TestBusClusterAnnounce: a cellserver and a redis-server 7.0.15 node each
// reached through relays on 127.0.0.2, and told so with
// --cluster-announce-ip, -port, -bus-port and -hostname, form a cluster
// with a cellserver and a redis-server that announce nothing. Every node
// shows the announced addresses and hostnames in CLUSTER NODES (so each
// kind carries them on the bus as the other reads them); redis-cli
// --cluster check and a cluster client go through the relays; and under
// each cluster-preferred-endpoint-type the plain cellserver answers
// CLUSTER SLOTS, CLUSTER SHARDS and MOVED as the plain redis-server does.
func TestBusClusterAnnounce(t *testing.T) {
	if selfTest() {
		t.Skip("self-test mode has no cellserver cluster")
	}
	requirePeer(t, "redis-cli")
	type node struct {
		p        *process
		id, host string
		relayed  string // 127.0.0.2:port@busport, "" when nothing is announced
	}
	var nodes []*node
	for i, kind := range []string{"cellserver", "redis-server", "cellserver", "redis-server"} {
		n := &node{}
		var extra func(int) []string
		if i < 2 {
			client, bus := newRelay(t), newRelay(t)
			n.host = fmt.Sprintf("node%d.example", i)
			n.relayed = fmt.Sprintf("127.0.0.2:%d@%d", client.port, bus.port)
			extra = func(port int) []string {
				client.target.Store(int64(port))
				bus.target.Store(int64(port + 10000))
				return []string{"--cluster-announce-ip", "127.0.0.2", "--cluster-announce-port", strconv.Itoa(client.port),
					"--cluster-announce-bus-port", strconv.Itoa(bus.port), "--cluster-announce-hostname", n.host}
			}
		}
		n.p = busNodeWith(t, kind, i, extra)
		n.id = nodeIDAt(t, n.p.addr)
		nodes = append(nodes, n)
	}
	// redis-cli reaches the announcing nodes where they announce, and
	// has every node MEET the first, a plain one.
	args := []string{"--cluster", "create"}
	for _, n := range append(nodes[2:], nodes[:2]...) {
		addr, _, _ := strings.Cut(n.relayed, "@")
		if addr == "" {
			addr = n.p.addr
		}
		args = append(args, addr)
	}
	create, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(create, "redis-cli", append(args, "--cluster-yes")...).CombinedOutput(); err != nil || !strings.Contains(string(out), "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, n := range nodes {
		waitClusterOK(t, n.p.addr, len(nodes))
	}
	// Each node sees the others at the address they announce.
	for _, seer := range nodes {
		waitFor(t, 10*time.Second, func() string {
			lines := cli(t, seer.p.addr, "", "CLUSTER", "NODES")
			for _, n := range nodes {
				want := n.id + " " + n.p.addr + "@" + strconv.Itoa(mustAtoi(portOf(n.p.addr))+10000) + " "
				if n.relayed != "" {
					want = n.id + " " + n.relayed + "," + n.host + " "
				}
				if !strings.Contains(lines, want) {
					return fmt.Sprintf("%s's CLUSTER NODES lacks %q:\n%s", seer.p.name, want, lines)
				}
			}
			return ""
		})
	}
	checkClean(t, nodes[2].p.addr, "with announced addresses")
	ctx := context.Background()
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[3].p.addr}})
	defer cl.Close()
	for i := range 200 {
		if err := cl.Set(ctx, fmt.Sprintf("k:%d", i), i, 0).Err(); err != nil {
			t.Fatalf("SET through the relays: %v", err)
		}
	}
	for i, n := range nodes[:2] {
		if got := strings.TrimSpace(cli(t, n.p.addr, "", "DBSIZE")); got == "0" {
			t.Errorf("announced node %d holds no keys", i)
		}
	}

	// The plain cellserver and the plain redis-server describe the
	// cluster alike under each endpoint type.
	var key string
	for i := 0; key == ""; i++ {
		if k := fmt.Sprintf("k:%d", i); slotOwner(t, nodes[2].p.addr, hashslot.Of([]byte(k))) == nodes[0].id {
			key = k
		}
	}
	cell := redis.NewClient(&redis.Options{Addr: nodes[2].p.addr})
	defer cell.Close()
	red := redis.NewClient(&redis.Options{Addr: nodes[3].p.addr})
	defer red.Close()
	describe := func(c *redis.Client, typ string) string {
		var b strings.Builder
		moved := c.Get(ctx, key).Err()
		fmt.Fprintf(&b, "GET: %v\n", moved)
		shards, err := c.ClusterShards(ctx).Result()
		if err != nil {
			t.Fatalf("CLUSTER SHARDS: %v", err)
		}
		sort.Slice(shards, func(i, j int) bool { return shards[i].Slots[0].Start < shards[j].Slots[0].Start })
		for _, sh := range shards {
			for i := range sh.Nodes {
				sh.Nodes[i].ReplicationOffset = 0
			}
			fmt.Fprintf(&b, "shard %v %+v\n", sh.Slots, sh.Nodes)
		}
		if typ == "unknown-endpoint" {
			return b.String() // CLUSTER SLOTS gives a null endpoint, which go-redis refuses
		}
		slots, err := c.ClusterSlots(ctx).Result()
		if err != nil {
			t.Fatalf("CLUSTER SLOTS: %v", err)
		}
		sort.Slice(slots, func(i, j int) bool { return slots[i].Start < slots[j].Start })
		for _, s := range slots {
			fmt.Fprintf(&b, "slots %d-%d %+v\n", s.Start, s.End, s.Nodes)
		}
		return b.String()
	}
	for _, typ := range []string{"ip", "hostname", "unknown-endpoint"} {
		for _, c := range []*redis.Client{cell, red} {
			if err := c.ConfigSet(ctx, "cluster-preferred-endpoint-type", typ).Err(); err != nil {
				t.Fatal(err)
			}
		}
		got, want := describe(cell, typ), describe(red, typ)
		if got != want {
			t.Errorf("cluster-preferred-endpoint-type %s:\n%s", typ, describeDiff("redis-server", []byte(want), "cellserver", []byte(got)))
		}
		if typ == "hostname" && !strings.Contains(got, "MOVED "+strconv.Itoa(hashslot.Of([]byte(key)))+" "+nodes[0].host+":") {
			t.Errorf("under hostname, GET %s on the plain cellserver: %s", key, got)
		}
	}

	// A hostname changed at run time reaches every node.
	for i, n := range nodes[:2] {
		cli(t, n.p.addr, "", "CONFIG", "SET", "cluster-announce-hostname", fmt.Sprintf("renamed%d.example", i))
	}
	for _, seer := range nodes {
		waitFor(t, 10*time.Second, func() string {
			lines := cli(t, seer.p.addr, "", "CLUSTER", "NODES")
			for i, n := range nodes[:2] {
				if want := n.relayed + fmt.Sprintf(",renamed%d.example ", i); !strings.Contains(lines, want) {
					return fmt.Sprintf("%s's CLUSTER NODES lacks %q:\n%s", seer.p.name, want, lines)
				}
			}
			return ""
		})
	}
}

// slotOwner is the id of the master serving slot, as the node at addr
// sees it.
func slotOwner(t *testing.T, addr string, slot int) string {
	t.Helper()
	for _, line := range strings.Split(cli(t, addr, "", "CLUSTER", "NODES"), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") {
			continue
		}
		for _, r := range f[8:] {
			lo, hi, found := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				return f[0]
			}
		}
	}
	return ""
}
