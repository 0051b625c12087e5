package integration_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFailoverErrors: FAILOVER's and PSYNC FAILOVER's refusals on a
// master without replicas, byte for byte against redis-server.
func TestFailoverErrors(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, args := range [][]string{
			{"FAILOVER"},
			{"FAILOVER", "ABORT"},
			{"FAILOVER", "abort", "x"},
			{"FAILOVER", "TIMEOUT", "0"},
			{"FAILOVER", "TIMEOUT", "-5"},
			{"FAILOVER", "TIMEOUT", "x"},
			{"FAILOVER", "TIMEOUT", "10", "TIMEOUT", "20"},
			{"FAILOVER", "TO", "127.0.0.1"},
			{"FAILOVER", "TO", "127.0.0.1", "x"},
			{"FAILOVER", "TO", "127.0.0.1", "1", "FORCE"},
			{"FAILOVER", "FORCE", "FORCE"},
			{"FAILOVER", "bogus"},
			{"FAILOVER", "FORCE"},
			{"PSYNC", "x", "1", "FAILOVER"},
		} {
			c.Do(args...)
		}
	})
}

// TestFailoverCoordinated: FAILOVER hands the master role to a replica,
// for each pairing of cellserver and redis-server as the master and the
// target: the old master follows the target by partial resync, nothing
// written before is lost, writes paused meanwhile answer -READONLY on
// the old master, and a second replica follows the new master.
func TestFailoverCoordinated(t *testing.T) {
	for _, tc := range []struct{ m, a string }{
		{"cellserver", "cellserver"},
		{"cellserver", "redis-server"},
		{"redis-server", "cellserver"},
	} {
		t.Run(tc.m+"/"+tc.a, func(t *testing.T) {
			ctx := context.Background()
			m, a := startReplNode(t, tc.m), startReplNode(t, tc.a)
			replWorkloads(t, m.rdb, 0, tc.m == "cellserver")
			if err := a.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", m.port).Err(); err != nil {
				t.Fatal(err)
			}
			waitLinkUp(t, a)
			replWorkloads(t, m.rdb, 1, tc.m == "cellserver")
			// The master lists the replica online once the snapshot's end
			// is known there, a moment after the replica's link is up.
			waitUntil(t, "listing its replica online", func(n *replNode) bool {
				return strings.Contains(n.rdb.Info(ctx, "replication").Val(), "state=online")
			}, m)
			partial := replInfoField(t, a.rdb, "stats", "sync_partial_ok")
			if err := m.rdb.Do(ctx, "FAILOVER", "TO", "127.0.0.1", a.port, "TIMEOUT", "10000").Err(); err != nil {
				t.Fatalf("FAILOVER: %v", err)
			}
			// A write sent meanwhile waits, then is refused as on a replica.
			if err := m.rdb.Set(ctx, "during", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
				t.Errorf("write during the failover: %v, want READONLY", err)
			}
			waitUntil(t, "the new master", func(n *replNode) bool {
				return replInfoField(t, n.rdb, "replication", "role") == "master"
			}, a)
			waitUntil(t, "following the new master", func(n *replNode) bool {
				return replInfoField(t, n.rdb, "replication", "master_port") == a.port &&
					replInfoField(t, n.rdb, "replication", "master_link_status") == "up" &&
					replInfoField(t, n.rdb, "replication", "master_failover_state") == "no-failover"
			}, m)
			if got := replInfoField(t, a.rdb, "stats", "sync_partial_ok"); got == partial {
				t.Errorf("the old master did not resync partially (sync_partial_ok %s -> %s)", partial, got)
			}
			if got := replInfoField(t, a.rdb, "stats", "sync_full"); got != "0" {
				t.Errorf("new master sync_full %s, want 0", got)
			}
			replWorkloads(t, a.rdb, 2, tc.a == "cellserver")
			if n, err := a.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
				t.Fatalf("WAIT 1 on the new master = %d, %v", n, err)
			}
			compareKeyspaces(t, a, m)
			if err := m.rdb.Set(ctx, "after", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
				t.Errorf("write on the old master: %v, want READONLY", err)
			}
		})
	}
}

// TestFailoverTimeoutAbort: a target that does not catch up before the
// timeout leaves the master a master, writing again; FAILOVER ABORT
// ends a wait at once; INFO shows the state meanwhile. Both programs as
// the master, the same observations.
func TestFailoverTimeoutAbort(t *testing.T) {
	for _, kind := range []string{"redis-server", "cellserver"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			m := startStalledReplica(t, kind)
			m.rdb.Set(ctx, "k", "1", 0)
			if err := m.rdb.Do(ctx, "FAILOVER", "TIMEOUT", "300").Err(); err != nil {
				t.Fatalf("FAILOVER TIMEOUT 300: %v", err)
			}
			if got := replInfoField(t, m.rdb, "replication", "master_failover_state"); got != "waiting-for-sync" {
				t.Errorf("master_failover_state %q, want waiting-for-sync", got)
			}
			if err := m.rdb.Do(ctx, "FAILOVER").Err(); err == nil || err.Error() != "ERR FAILOVER already in progress." {
				t.Errorf("second FAILOVER: %v", err)
			}
			if err := m.rdb.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err == nil || err.Error() != "ERR REPLICAOF not allowed while failing over." {
				t.Errorf("REPLICAOF during a failover: %v", err)
			}
			waitUntil(t, "back to no-failover", func(n *replNode) bool {
				return replInfoField(t, n.rdb, "replication", "master_failover_state") == "no-failover"
			}, m)
			if got := replInfoField(t, m.rdb, "replication", "role"); got != "master" {
				t.Errorf("role after the timeout %q", got)
			}
			if err := m.rdb.Set(ctx, "k", "2", 0).Err(); err != nil {
				t.Errorf("write after the timeout: %v", err)
			}
			// ABORT.
			if err := m.rdb.Do(ctx, "FAILOVER").Err(); err != nil {
				t.Fatalf("FAILOVER: %v", err)
			}
			if err := m.rdb.Do(ctx, "FAILOVER", "ABORT").Err(); err != nil {
				t.Fatalf("FAILOVER ABORT: %v", err)
			}
			if got := replInfoField(t, m.rdb, "replication", "master_failover_state"); got != "no-failover" {
				t.Errorf("after ABORT: %q", got)
			}
			if err := m.rdb.Set(ctx, "k", "3", 0).Err(); err != nil {
				t.Errorf("write after ABORT: %v", err)
			}
			if err := m.rdb.Do(ctx, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(1)).Err(); err == nil || err.Error() != "ERR FAILOVER target HOST and PORT is not a replica." {
				t.Errorf("FAILOVER TO a stranger: %v", err)
			}
		})
	}
}

// startStalledReplica starts a master of the kind given with a
// redis-server replica, online and then stopped (SIGSTOP): it
// acknowledges nothing more, so a FAILOVER waits for it. It continues
// when the test ends.
func startStalledReplica(t *testing.T, kind string) *replNode {
	t.Helper()
	ctx := context.Background()
	m, a := startReplNode(t, kind), startReplNode(t, "redis-server")
	if err := a.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", m.port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, a)
	waitUntil(t, "listing its replica online", func(n *replNode) bool {
		return strings.Contains(n.rdb.Info(ctx, "replication").Val(), "state=online")
	}, m)
	if err := a.p.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.p.Cmd.Process.Signal(syscall.SIGCONT) })
	return m
}

// TestFailoverUnpause: CLIENT UNPAUSE ends only CLIENT PAUSE's pause. A
// write sent after it, while a FAILOVER waits for a target that
// acknowledges nothing, is held (counted in blocked_clients) as during
// any failover, and runs once FAILOVER ABORT ends the wait. Both
// programs as the master, the same replies.
func TestFailoverUnpause(t *testing.T) {
	got := map[string][]string{}
	kinds := []string{"redis-server", "cellserver"}
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			m := startStalledReplica(t, kind)
			m.rdb.Set(ctx, "k", "1", 0)
			c, err := dialRESP(m.p.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			w, err := dialRESP(m.p.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var replies []string
			do := func(args ...string) {
				r, err := c.Do(args...)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				replies = append(replies, strings.Join(args, " ")+" -> "+string(r))
			}
			do("FAILOVER")
			do("CLIENT", "PAUSE", "100000", "WRITE")
			do("CLIENT", "UNPAUSE")
			if err := w.Send("SET", "k", "2"); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "holding the write", func(n *replNode) bool {
				return replInfoField(t, n.rdb, "clients", "blocked_clients") == "1"
			}, m)
			do("GET", "k")
			do("FAILOVER", "ABORT")
			r, err := w.ReadReply()
			if err != nil {
				t.Fatalf("the held write: %v", err)
			}
			replies = append(replies, "held SET k 2 -> "+string(r))
			do("GET", "k")
			do("INFO", "clients") // masked below but for blocked_clients
			got[kind] = replies
		})
	}
	r, c := got[kinds[0]], got[kinds[1]]
	if r == nil || c == nil {
		return
	}
	for i := range r {
		if strings.HasPrefix(r[i], "INFO") {
			r[i], c[i] = infoLine(r[i], "blocked_clients"), infoLine(c[i], "blocked_clients")
		}
	}
	if strings.Join(r, "\n") != strings.Join(c, "\n") {
		t.Errorf("redis-server:\n%s\ncellserver:\n%s", strings.Join(r, "\n"), strings.Join(c, "\n"))
	}
}

// infoLine is the line of an INFO reply giving field.
func infoLine(info, field string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(line, field+":") {
			return line
		}
	}
	return field + " missing"
}
