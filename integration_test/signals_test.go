package integration_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGHUPStandalone: SIGHUP leaves a standalone server running, as it
// leaves redis-server (a closed terminal or logrotate's kill -HUP must
// not stop a rate limiter); cellserver logs that it ignored it. Cluster
// mode's meaning of SIGHUP (re-read the topology) is TestClusterMigrate's.
func TestSIGHUPStandalone(t *testing.T) {
	s := startServers(t, serverOptions{})
	for _, p := range []*process{s.redis, s.cell} {
		for range 2 {
			if err := p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := pingRESP(p.addr); err != nil || !p.Alive() {
			t.Errorf("%s after SIGHUP: alive %v, PING: %v\n%s", p.name, p.Alive(), err, p.LogTail(10))
		}
	}
	if selfTest() {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.cell.LogTail(10), "SIGHUP received and ignored") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line for SIGHUP:\n%s", s.cell.LogTail(10))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
