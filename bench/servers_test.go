package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// requireRedis skips the test when redis-server is missing, or fails it
// under CELLSERVER_REQUIRE_PEERS=1 (as CI sets).
func requireRedis(t *testing.T) string {
	t.Helper()
	return serverproc.RequirePeer(t, "redis-server", "apt-get install redis-server redis-tools")
}

// The tests share one cellserver build.
var (
	builtOnce sync.Once
	built     string
	buildErr  error
	sharedTmp string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cellserver-bench-test-")
	if err != nil {
		panic(err)
	}
	sharedTmp = dir
	code := m.Run()
	stopAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// smallBench is a bench with tiny rows, for tests: the point is that every
// piece runs end to end, not the numbers.
func smallBench(t *testing.T, args ...string) *bench {
	t.Helper()
	return smallBenchLog(t, io.Discard, args...)
}

// smallBenchLog is smallBench writing its progress lines to log.
func smallBenchLog(t *testing.T, log io.Writer, args ...string) *bench {
	t.Helper()
	redis := requireRedis(t)
	if testing.Short() {
		t.Skip("starts servers and builds cellserver")
	}
	args = append([]string{"-redis-server", redis, "-conns", "4", "-depths", "1,4", "-duration", "200ms",
		"-warmup", "50ms", "-keys", "100", "-mem-keys", "200", "-mem-max-elements", "2000"}, args...)
	o, err := parseOptions(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	o.memSettle = 10 * time.Millisecond
	builtOnce.Do(func() { built, buildErr = buildCellserver(sharedTmp) })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	o.cellBin = built
	tmp := t.TempDir()
	t.Cleanup(stopAll)
	b, err := newBench(o, tmp, log)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundsAlternate checks that the servers take turns running first.
func TestRoundsAlternate(t *testing.T) {
	var log bytes.Buffer
	b := smallBenchLog(t, &log, "-servers", "cellserver,cellserver-off", "-persist", "everysec",
		"-workloads", "ping", "-depths", "1", "-rounds", "3", "-duration", "50ms", "-warmup", "10ms")
	if _, err := b.runThroughput(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.SplitSeq(log.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "bench: ping depth 1 on "); ok {
			got = append(got, rest)
		}
	}
	want := []string{
		"cellserver (round 1/3)", "cellserver-off (round 1/3)",
		"cellserver-off (round 2/3)", "cellserver (round 2/3)",
		"cellserver (round 3/3)", "cellserver-off (round 3/3)",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("runs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestThroughputEndToEnd(t *testing.T) {
	b := smallBench(t, "-workloads", "ping,throttle,gcra-lua,w1,w3")
	rep, err := b.runThroughput()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 5*2*2 {
		t.Fatalf("%d rows, want 20", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		switch {
		case r.Workload == "throttle" && r.Server == "redis":
			if !strings.HasPrefix(r.Skipped, "n/a") {
				t.Errorf("CL.THROTTLE on plain redis: %q, want n/a", r.Skipped)
			}
		case r.Skipped != "":
			// Commands cellserver does not have yet are reported, not run.
			if r.Server != "cellserver" || !strings.HasPrefix(r.Skipped, "skipped: ") {
				t.Errorf("%s depth %d on %s: %s", r.Workload, r.Depth, r.Server, r.Skipped)
			}
		default:
			if r.Ops == 0 || r.Errors != 0 || r.P50us <= 0 || r.RSSBytes <= 0 {
				t.Errorf("%s depth %d on %s: %+v", r.Workload, r.Depth, r.Server, r)
			}
		}
	}
	var out bytes.Buffer
	rep.writeMarkdown(&out)
	for _, want := range []string{"| ping | 1 | redis |", "| ping | 4 | cellserver |", "redis-benchmark -h 127.0.0.1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMemoryEndToEnd(t *testing.T) {
	b := smallBench(t)
	rep, err := b.runMem()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Mem {
		if r.Server == "redis" && (r.Skipped != "" || !r.HasUsedMemory || r.UsedMemory <= 0) {
			t.Errorf("%s on redis: %+v", r.What, r)
		}
	}
	var out bytes.Buffer
	rep.writeMarkdown(&out)
	if !strings.Contains(out.String(), "| W1 window of 1000 | redis | 2 | 2000 |") {
		t.Errorf("memory table:\n%s", out.String())
	}
}

// TestRestartEndToEnd: the restart mode loads both servers, restarts them
// on their directories and finds every key again.
func TestRestartEndToEnd(t *testing.T) {
	b := smallBench(t, "-restart", "-restart-keys", "300", "-restart-windows", "50", "-restart-window", "120")
	if b.o.persist != "everysec" {
		t.Fatalf("-restart persistence %q, want everysec by default", b.o.persist)
	}
	rep, err := b.runRestart()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Restart) != 4 {
		t.Fatalf("%d rows, want 4: %+v", len(rep.Restart), rep.Restart)
	}
	for _, r := range rep.Restart {
		if r.KeysAfter != 350 || r.Keys != 350 || r.Elements != 6000 || r.DiskBytes <= 0 || r.RestartSecs <= 0 {
			t.Errorf("%s (%s): %+v", r.Server, r.Stop, r)
		}
	}
	var out bytes.Buffer
	rep.writeMarkdown(&out)
	if !strings.Contains(out.String(), "| cellserver | SIGKILL 1 s after the load | 350 | 6000 |") {
		t.Errorf("restart table:\n%s", out.String())
	}
}

// TestGCRAScript checks the Lua GCRA against CL.THROTTLE's recorded
// vectors (spec/cl-throttle.md) on a real redis-server.
func TestGCRAScript(t *testing.T) {
	b := smallBench(t)
	s, err := b.start(kindRedis)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dial(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	sha := scriptSHA(gcraScript)
	if r, err := c.do("SCRIPT", "LOAD", gcraScript); err != nil || string(r.bulk) != sha {
		t.Fatalf("SCRIPT LOAD: %+v %v", r, err)
	}
	call := func(args ...string) []int64 {
		r, err := c.do(append([]string{"EVALSHA", sha, "1"}, args...)...)
		if err != nil || r.err != "" {
			t.Fatalf("%q: %v %s", args, err, r.err)
		}
		var v []int64
		for _, e := range r.elems {
			v = append(v, e.int)
		}
		return v
	}
	vectors := []struct {
		args []string
		want []string
	}{
		{[]string{"user123", "15", "30", "60"}, []string{"[0 16 15 -1 2]", "[0 16 14 -1 4]"}},
		{[]string{"t3", "2", "3", "1"}, []string{"[0 3 2 -1 1]", "[0 3 1 -1 1]", "[0 3 0 -1 1]", "[1 3 0 1 1]"}},
		{[]string{"big", "4", "1", "1", "6"}, []string{"[1 5 5 -1 0]"}},
	}
	for _, v := range vectors {
		for i, want := range v.want {
			if got := sprint(call(v.args...)); got != want {
				t.Errorf("%q call %d = %s, want %s", v.args, i+1, got, want)
			}
		}
	}
	if r, _ := c.do("EXISTS", "big"); r.int != 0 {
		t.Error("a limited first call created its key")
	}
}

func sprint(v []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	b.WriteByte(']')
	return b.String()
}
