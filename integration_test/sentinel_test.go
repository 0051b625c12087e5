package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
	"github.com/redis/go-redis/v9"
)

// Failover by Redis Sentinel: three real redis-sentinel processes watch a
// master and two replicas; the master is killed with SIGKILL while
// go-redis's FailoverClient and redis-py's Sentinel client write, each
// write followed by WAIT 1. Sentinel must promote a replica, both clients
// must go on writing on it after a pause (logged), no write a replica
// acknowledged may be lost, the other replica must follow the new master,
// and the old master, restarted, must be made a replica of it.

const sentinelMaster = "mymaster"

// TestSentinelFailover: a cellserver master and two cellserver replicas.
func TestSentinelFailover(t *testing.T) {
	runSentinelFailover(t, "cellserver")
}

// TestSentinelFailoverMixed: a redis-server master and two cellserver
// replicas; after the failover the restarted redis-server replicates a
// cellserver.
func TestSentinelFailoverMixed(t *testing.T) {
	runSentinelFailover(t, "redis-server")
}

// startSentinels starts n redis-sentinel processes watching the master
// at port, with short detection and failover times, their configuration
// files (which Sentinel rewrites) in a temporary directory.
func startSentinels(t *testing.T, n int, masterPort string) []*process {
	t.Helper()
	bin := requirePeer(t, "redis-sentinel")
	var procs []*process
	for i := range n {
		var p *process
		var err error
		for range 3 {
			var port int
			if port, err = serverproc.FreePort(); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			conf := filepath.Join(dir, "sentinel.conf")
			text := fmt.Sprintf(`port %d
bind 127.0.0.1
daemonize no
dir %s
sentinel monitor %s 127.0.0.1 %s 2
sentinel down-after-milliseconds %s 2000
sentinel failover-timeout %s 5000
sentinel parallel-syncs %s 2
`, port, dir, sentinelMaster, masterPort, sentinelMaster, sentinelMaster, sentinelMaster)
			if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if p, err = launch(fmt.Sprintf("redis-sentinel-%d", i), bin, []string{conf}, dir, port); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
		procs = append(procs, p)
	}
	return procs
}

// sentinelLogs is the end of each sentinel's log, for a failure message.
func sentinelLogs(procs []*process) string {
	var b strings.Builder
	for _, p := range procs {
		fmt.Fprintf(&b, "--- %s:\n%s\n", p.name, p.LogTail(25))
	}
	return b.String()
}

// waitSentinels waits until every sentinel knows the replicas and the
// other sentinels (through __sentinel__:hello on the servers).
func waitSentinels(t *testing.T, addrs []string, replicas int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for _, a := range addrs {
		s := redis.NewSentinelClient(&redis.Options{Addr: a})
		defer s.Close()
		for {
			reps, _ := s.Replicas(ctx, sentinelMaster).Result()
			sens, _ := s.Sentinels(ctx, sentinelMaster).Result()
			if len(reps) == replicas && len(sens) == len(addrs)-1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("sentinel %s knows %d replicas and %d sentinels, want %d and %d", a, len(reps), len(sens), replicas, len(addrs)-1)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// writerResult is what one client wrote through the failover.
type writerResult struct {
	Acked   [][2]any `json:"acked"` // key, Unix ms of the WAIT that counted a replica
	Writes  int      `json:"writes"`
	Failed  int      `json:"failed"`
	PauseMs int64    `json:"pause_ms"`
}

// goWriter writes with go-redis's FailoverClient until stop closes: SET
// go:<n> then WAIT 1 500, as the Python writer does. okAfter counts the
// writes that succeeded after *since (Unix ms), once set.
type goWriter struct {
	res     writerResult
	mu      sync.Mutex
	since   int64
	okAfter int
}

func (w *goWriter) run(addrs []string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	c := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: sentinelMaster, SentinelAddrs: addrs,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
		MaxRetries: -1,
	})
	defer c.Close()
	ctx := context.Background()
	var last time.Time
	for n := 0; ; {
		select {
		case <-stop:
			return
		default:
		}
		key := "go:" + strconv.Itoa(n)
		if err := c.Set(ctx, key, n, 0).Err(); err != nil {
			w.mu.Lock()
			w.res.Failed++
			w.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		waited, err := c.Wait(ctx, 1, 500*time.Millisecond).Result()
		if err != nil {
			w.mu.Lock()
			w.res.Failed++
			w.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		now := time.Now()
		w.mu.Lock()
		if !last.IsZero() {
			w.res.PauseMs = max(w.res.PauseMs, now.Sub(last).Milliseconds())
		}
		if waited >= 1 {
			w.res.Acked = append(w.res.Acked, [2]any{key, float64(now.UnixMilli())})
		}
		w.res.Writes++
		if w.since != 0 && now.UnixMilli() > w.since {
			w.okAfter++
		}
		w.mu.Unlock()
		last = now
		n++
		time.Sleep(5 * time.Millisecond)
	}
}

func runSentinelFailover(t *testing.T, masterProg string) {
	ctx := context.Background()
	python := debianPython(t)
	m, _ := startReplNodeConf(t, masterProg, []string{})
	r1, _ := startReplNodeConf(t, "cellserver", []string{"replicaof 127.0.0.1 " + m.port})
	r2, _ := startReplNodeConf(t, "cellserver", []string{"replicaof 127.0.0.1 " + m.port})
	waitLinkUp(t, r1)
	waitLinkUp(t, r2)
	replWorkloads(t, m.rdb, 0, masterProg == "cellserver")
	sentinels := startSentinels(t, 3, m.port)
	var addrs []string
	for _, p := range sentinels {
		addrs = append(addrs, p.addr)
	}
	waitSentinels(t, addrs, 2)

	// Both clients write; the master dies once they have.
	stop := make(chan struct{})
	gw := &goWriter{}
	goDone := make(chan struct{})
	go gw.run(addrs, stop, goDone)
	py := exec.Command(python, "python/redis_py_sentinel.py", sentinelMaster, strings.Join(addrs, ","))
	pyIn, err := py.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var pyOut, pyErr strings.Builder
	py.Stdout, py.Stderr = &pyOut, &pyErr
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	pyTimer := time.AfterFunc(2*time.Minute, func() { py.Process.Kill() }) // our child, by its pid
	defer pyTimer.Stop()
	stopWriters := func() {
		select {
		case <-stop:
		default:
			close(stop)
			pyIn.Close()
			<-goDone
			py.Wait()
		}
	}
	defer stopWriters()
	// Both clients have written (Python starts slower), for a few
	// hundred ms.
	deadline := time.Now().Add(60 * time.Second)
	for {
		gw.mu.Lock()
		goWrites := gw.res.Writes
		gw.mu.Unlock()
		py, _ := m.rdb.Keys(ctx, "py:*").Result()
		if goWrites >= 20 && len(py) >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("before the kill: go-redis wrote %d times, redis-py %d", goWrites, len(py))
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.p.Cmd.Process.Signal(syscall.SIGKILL)
	<-m.p.Exited()
	killed := time.Now()
	gw.mu.Lock()
	gw.since = killed.UnixMilli()
	gw.mu.Unlock()

	// Sentinel promotes a replica; the clients find it.
	sc := redis.NewSentinelClient(&redis.Options{Addr: addrs[0]})
	defer sc.Close()
	var newPort string
	deadline = time.Now().Add(60 * time.Second)
	for {
		a, _ := sc.GetMasterAddrByName(ctx, sentinelMaster).Result()
		if len(a) == 2 && a[1] != m.port {
			newPort = a[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failover within a minute of the kill")
		}
		time.Sleep(50 * time.Millisecond)
	}
	promoted := time.Since(killed)
	newM, other := r1, r2
	if newPort == r2.port {
		newM, other = r2, r1
	}
	for {
		gw.mu.Lock()
		ok := gw.okAfter
		gw.mu.Unlock()
		if ok >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("go-redis wrote %d times since the kill", ok)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // Python's turn
	stopWriters()
	var pr writerResult
	if err := json.Unmarshal([]byte(pyOut.String()), &pr); err != nil {
		t.Fatalf("redis_py_sentinel.py: %v\n%s\n%s", err, pyOut.String(), pyErr.String())
	}
	t.Logf("%s master killed: Sentinel switched to %s after %v", masterProg, newPort, promoted.Round(time.Millisecond))
	t.Logf("go-redis FailoverClient: %d writes, %d acknowledged by WAIT 1, %d failed attempts, longest pause %d ms",
		gw.res.Writes, len(gw.res.Acked), gw.res.Failed, gw.res.PauseMs)
	t.Logf("redis-py Sentinel: %d writes, %d acknowledged by WAIT 1, %d failed attempts, longest pause %d ms",
		pr.Writes, len(pr.Acked), pr.Failed, pr.PauseMs)

	// No acknowledged write is lost, before the kill or after; both
	// clients wrote on the new master.
	for _, w := range []struct {
		name string
		res  writerResult
	}{{"go-redis", gw.res}, {"redis-py", pr}} {
		before, after := 0, 0
		for _, a := range w.res.Acked {
			key, at := a[0].(string), int64(a[1].(float64))
			if at < killed.UnixMilli() {
				before++
			} else {
				after++
			}
			if v, err := newM.rdb.Get(ctx, key).Result(); err != nil || v != strings.TrimPrefix(strings.TrimPrefix(key, "go:"), "py:") {
				t.Errorf("%s: %s acknowledged by WAIT 1 at %d (kill at %d) is lost: %q %v",
					w.name, key, at, killed.UnixMilli(), v, err)
			}
		}
		if before == 0 || after == 0 {
			t.Errorf("%s: %d writes acknowledged before the kill, %d after; want some of each", w.name, before, after)
		}
	}

	// The other replica follows the new master.
	waitFollows(t, other, newPort, sentinels)
	if n, err := newM.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n < 1 {
		t.Fatalf("WAIT 1 on the new master = %d, %v", n, err)
	}
	compareKeyspaces(t, newM, other)

	// The old master comes back and Sentinel makes it a replica.
	m.restart(t)
	back := time.Now()
	waitFollows(t, m, newPort, sentinels)
	t.Logf("restarted %s made a replica of the new master after %v", masterProg, time.Since(back).Round(time.Millisecond))
	newM.rdb.Set(ctx, "after-rejoin", "1", 0)
	if n, err := newM.rdb.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 on the new master = %d, %v", n, err)
	}
	compareKeyspaces(t, newM, m)
}

// waitFollows waits until n is a replica of the master at port with its
// link up.
func waitFollows(t *testing.T, n *replNode, port string, sentinels []*process) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		info := n.rdb.Info(ctx, "replication").Val()
		if strings.Contains(info, "master_port:"+port+"\r\n") && strings.Contains(info, "master_link_status:up") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	info := n.rdb.Info(ctx, "replication").Val()
	t.Fatalf("%s never followed 127.0.0.1:%s:\n%s\n%s\n%s", n.p.addr, port, info, n.p.LogTail(20), sentinelLogs(sentinels))
}
