package integration_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What Sentinel sends and reads, against redis-server 7.0.15: the INFO
// replication fields it parses, ROLE, the promotion it runs in MULTI/EXEC
// (SLAVEOF, CONFIG REWRITE, CLIENT KILL TYPE normal and pubsub), the
// replica-announce-* and replica-priority settings it reads back, and
// PSYNC2: after a promotion the other replicas continue by partial resync.

// TestReplPromotionPSYNC2: the master dies, replica A is promoted with
// REPLICAOF NO ONE and keeps the old history as its second ID; replica B
// then follows A by a partial resync, and what A takes next reaches B.
func TestReplPromotionPSYNC2(t *testing.T) {
	for _, tc := range []struct{ m, a, b string }{
		{"cellserver", "cellserver", "cellserver"},
		{"redis-server", "cellserver", "cellserver"},
		{"redis-server", "cellserver", "redis-server"},
		{"cellserver", "redis-server", "cellserver"},
	} {
		t.Run(tc.m+"/"+tc.a+"/"+tc.b, func(t *testing.T) {
			ctx := context.Background()
			m, a, b := startReplNode(t, tc.m), startReplNode(t, tc.a), startReplNode(t, tc.b)
			replWorkloads(t, m.rdb, 0, tc.m == "cellserver")
			for _, r := range []*replNode{a, b} {
				if err := r.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", m.port).Err(); err != nil {
					t.Fatal(err)
				}
				waitLinkUp(t, r)
			}
			replWorkloads(t, m.rdb, 1, tc.m == "cellserver")
			if n, err := m.rdb.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
				t.Fatalf("WAIT 2 = %d, %v", n, err)
			}
			oldID := replInfoField(t, m.rdb, "replication", "master_replid")
			// Both replicas at the master's offset: a PING the master sent
			// to one only would put the other behind, and then (as with
			// Redis) the promoted one could not serve it partially.
			waitUntil(t, "at the master's offset", func(r *replNode) bool {
				want := replInfoField(t, m.rdb, "replication", "master_repl_offset")
				return replInfoField(t, r.rdb, "replication", "master_repl_offset") == want
			}, a, b)
			m.p.Cmd.Process.Signal(syscall.SIGKILL)
			<-m.p.Exited()
			off, _ := strconv.ParseInt(replInfoField(t, a.rdb, "replication", "master_repl_offset"), 10, 64)
			if err := a.rdb.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
				t.Fatal(err)
			}
			if got := replInfoField(t, a.rdb, "replication", "master_replid2"); got != oldID {
				t.Errorf("promoted: master_replid2 %s, want the old master's %s", got, oldID)
			}
			if got := replInfoField(t, a.rdb, "replication", "second_repl_offset"); got != strconv.FormatInt(off+1, 10) {
				t.Errorf("promoted: second_repl_offset %s, want %d", got, off+1)
			}
			newID := replInfoField(t, a.rdb, "replication", "master_replid")
			if newID == oldID || len(newID) != 40 {
				t.Errorf("promoted: master_replid %q, want a new ID", newID)
			}
			if err := b.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", a.port).Err(); err != nil {
				t.Fatal(err)
			}
			waitLinkUp(t, b)
			replWorkloads(t, a.rdb, 2, tc.a == "cellserver")
			if n, err := a.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
				t.Fatalf("WAIT 1 on the new master = %d, %v", n, err)
			}
			for name, want := range map[string]string{"sync_partial_ok": "1", "sync_full": "0"} {
				if got := replInfoField(t, a.rdb, "stats", name); got != want {
					t.Errorf("new master %s:%s, want %s", name, got, want)
				}
			}
			if got := replInfoField(t, b.rdb, "replication", "master_replid"); got != newID {
				t.Errorf("B master_replid %s, want the new master's %s", got, newID)
			}
			if got := replInfoField(t, b.rdb, "replication", "master_replid2"); got != oldID {
				t.Errorf("B master_replid2 %s, want the old master's %s", got, oldID)
			}
			compareKeyspaces(t, a, b)
		})
	}
}

// sentinelTopology is a master and two replicas of one program: r1
// announces another address and a priority, r2 asks not to be announced.
type sentinelTopology struct{ m, r1, r2 *replNode }

func startSentinelTopology(t *testing.T, program string) sentinelTopology {
	t.Helper()
	ctx := context.Background()
	st := sentinelTopology{
		m: startReplNode(t, program),
		r1: startReplNode(t, program, "--replica-priority", "7",
			"--replica-announce-ip", "10.9.8.7", "--replica-announce-port", "7777"),
		r2: startReplNode(t, program, "--replica-announced", "no"),
	}
	for _, r := range []*replNode{st.r1, st.r2} {
		if err := r.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", st.m.port).Err(); err != nil {
			t.Fatal(err)
		}
		waitLinkUp(t, r)
	}
	st.m.rdb.Set(ctx, "k", "v", 0)
	if n, err := st.m.rdb.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 = %d, %v", n, err)
	}
	return st
}

// sentinelExactFields are the INFO replication values Sentinel acts on
// that both servers must print alike here.
var sentinelExactFields = []string{
	"role", "connected_slaves", "master_host", "master_link_status", "master_sync_in_progress",
	"slave_priority", "slave_read_only", "replica_announced", "master_failover_state",
	"master_replid2", "second_repl_offset", "repl_backlog_active", "repl_backlog_size",
}

// slaveLine is INFO's slaveN value as Sentinel parses it.
var slaveLine = regexp.MustCompile(`^ip=([^,]+),port=(\d+),state=(online|wait_bgsave|send_bulk),offset=(\d+),lag=(\d+)$`)

// TestReplSentinelInfo compares INFO replication and ROLE on masters and
// replicas of both programs, field by field as Sentinel reads them.
func TestReplSentinelInfo(t *testing.T) {
	ctx := context.Background()
	red, cell := startSentinelTopology(t, "redis-server"), startSentinelTopology(t, "cellserver")
	fields := maskInfoValues(sentinelExactFields)
	for _, which := range []struct {
		name string
		pick func(sentinelTopology) *replNode
	}{
		{"master", func(s sentinelTopology) *replNode { return s.m }},
		{"announcing replica", func(s sentinelTopology) *replNode { return s.r1 }},
		{"unannounced replica", func(s sentinelTopology) *replNode { return s.r2 }},
	} {
		c := newPairOn(t, &servers{redis: which.pick(red).p, cell: which.pick(cell).p})
		c.DoMasked(fields, "INFO", "replication")
		c.DoMasked(fields, "INFO")
	}
	for _, s := range []sentinelTopology{red, cell} {
		name := s.m.p.name
		info := s.m.rdb.Info(ctx, "replication").Val()
		var lines []string
		for _, l := range strings.Split(info, "\r\n") {
			if strings.HasPrefix(l, "slave0:") || strings.HasPrefix(l, "slave1:") {
				lines = append(lines, l[len("slave0:"):])
			}
		}
		announced := false
		for _, l := range lines {
			f := slaveLine.FindStringSubmatch(l)
			if f == nil {
				t.Errorf("%s: slave line %q is not as Sentinel parses it", name, l)
				continue
			}
			if f[1] == "10.9.8.7" && f[2] == "7777" {
				announced = true
			}
		}
		if len(lines) != 2 || !announced {
			t.Errorf("%s: slave lines %q, want two, one at 10.9.8.7:7777", name, lines)
		}
		role := fmt.Sprint(s.m.rdb.Do(ctx, "ROLE").Val())
		if !strings.Contains(role, "[10.9.8.7 7777 ") {
			t.Errorf("%s: master ROLE %s lacks the announced replica", name, role)
		}
		rrole, _ := s.r1.rdb.Do(ctx, "ROLE").Slice()
		want := []any{"slave", "127.0.0.1", int64(mustAtoi(s.m.port)), "connected"}
		if len(rrole) != 5 || fmt.Sprint(rrole[:4]) != fmt.Sprint(want) {
			t.Errorf("%s: replica ROLE %#v, want %v and an offset", name, rrole, want)
		} else if _, ok := rrole[4].(int64); !ok {
			t.Errorf("%s: replica ROLE offset %#v is not an integer", name, rrole[4])
		}
	}
	// A replica whose master is gone says since when, as Sentinel reads it
	// to choose whom to promote.
	red.m.p.Stop()
	cell.m.p.Stop()
	for _, s := range []sentinelTopology{red, cell} {
		deadline := time.Now().Add(10 * time.Second)
		for replInfoField(t, s.r1.rdb, "replication", "master_link_status") != "down" && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	c := newPairOn(t, &servers{redis: red.r1.p, cell: cell.r1.p})
	c.DoMasked(fields, "INFO", "replication")
	for _, s := range []sentinelTopology{red, cell} {
		if v := replInfoField(t, s.r1.rdb, "replication", "master_link_down_since_seconds"); v == "" || strings.HasPrefix(v, "-") {
			t.Errorf("%s: master_link_down_since_seconds %q", s.r1.p.name, v)
		}
	}
}

// TestReplSentinelFailoverCommands runs what Sentinel sends to promote a
// replica and to point one at a new master, in MULTI/EXEC with CONFIG
// REWRITE and CLIENT KILL TYPE normal and pubsub, on a replica of each
// program started from a configuration file with a replicaof line; the
// replies must match byte for byte, the other clients be cut, and the
// rewritten files drop, then name, the master.
func TestReplSentinelFailoverCommands(t *testing.T) {
	ctx := context.Background()
	type node struct {
		m, r *replNode
		conf string
	}
	var nodes [2]node
	for i, prog := range []string{"redis-server", "cellserver"} {
		m := startReplNode(t, prog)
		r, conf := startReplNodeConf(t, prog, []string{"replicaof 127.0.0.1 " + m.port})
		waitLinkUp(t, r)
		nodes[i] = node{m, r, conf}
	}
	c := newPairOn(t, &servers{redis: nodes[0].r.p, cell: nodes[1].r.p})
	for _, n := range nodes {
		got, _ := n.r.rdb.ConfigGet(ctx, "replicaof").Result()
		if want := "127.0.0.1 " + n.m.port; got["replicaof"] != want {
			t.Errorf("%s: CONFIG GET replicaof %v, want %q", n.r.p.name, got, want)
		}
	}
	// slaveof is each server's SLAVEOF arguments (their masters differ).
	sentinelSends := func(redisSlaveof, cellSlaveof []string) {
		// One more normal client and one subscribed: both are cut.
		var others []*respConn
		for _, n := range nodes {
			normal, err := dialRESP(n.r.p.addr)
			if err != nil {
				t.Fatal(err)
			}
			sub, err := dialRESP(n.r.p.addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sub.Do("SUBSCRIBE", "__sentinel__:hello"); err != nil {
				t.Fatal(err)
			}
			if _, err := normal.Do("PING"); err != nil {
				t.Fatal(err)
			}
			others = append(others, normal, sub)
		}
		c.Do("MULTI")
		c.DoEach(append([]string{"SLAVEOF"}, redisSlaveof...), append([]string{"SLAVEOF"}, cellSlaveof...))
		c.Do("CONFIG", "REWRITE")
		c.Do("CLIENT", "KILL", "TYPE", "normal")
		c.Do("CLIENT", "KILL", "TYPE", "pubsub")
		c.Do("EXEC")
		for _, o := range others {
			if _, closed, _ := o.ReadUntilClose(2 * time.Second); !closed {
				t.Errorf("a client Sentinel's CLIENT KILL should cut is still connected")
			}
		}
	}
	sentinelSends([]string{"NO", "ONE"}, []string{"NO", "ONE"})
	c.Do("ROLE")
	for _, n := range nodes {
		data, _ := os.ReadFile(n.conf)
		if strings.Contains(string(data), "replicaof") {
			t.Errorf("%s: after SLAVEOF NO ONE the rewritten file still names a master:\n%s", n.r.p.name, data)
		}
	}
	c.Do("CONFIG", "GET", "replicaof")
	sentinelSends([]string{"127.0.0.1", nodes[0].m.port}, []string{"127.0.0.1", nodes[1].m.port})
	for _, n := range nodes {
		waitLinkUp(t, n.r)
		data, _ := os.ReadFile(n.conf)
		if !strings.Contains(string(data), "\nreplicaof 127.0.0.1 "+n.m.port+"\n") {
			t.Errorf("%s: the rewritten file does not name the master:\n%s", n.r.p.name, data)
		}
		if err := n.r.rdb.Do(ctx, "SCRIPT", "KILL").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOTBUSY ") {
			t.Errorf("%s: SCRIPT KILL with no script: %v", n.r.p.name, err)
		}
	}
}
