package main

import (
	"bytes"
	"flag"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prevUpper := uint64(0)
	for i := 1; i < histBuckets; i++ {
		u := bucketUpper(i)
		if u <= prevUpper {
			t.Fatalf("bucket %d upper %d not above bucket %d's %d", i, u, i-1, prevUpper)
		}
		if bucketOf(u) != i || bucketOf(prevUpper+1) != i {
			t.Fatalf("bucket %d spans (%d, %d] but bucketOf gives %d and %d", i, prevUpper, u, bucketOf(prevUpper+1), bucketOf(u))
		}
		// Width within 1/64 of the values held.
		if lo := prevUpper + 1; lo >= subBuckets && float64(u-lo+1) > float64(lo)/subBuckets+1 {
			t.Fatalf("bucket %d [%d, %d] wider than 1/64", i, lo, u)
		}
		prevUpper = u
	}
	if bucketOf(math.MaxUint64) != histBuckets-1 {
		t.Errorf("max value lands in bucket %d of %d", bucketOf(math.MaxUint64), histBuckets)
	}
}

func TestPercentile(t *testing.T) {
	var h histogram
	if h.percentile(0.5) != 0 {
		t.Error("empty histogram")
	}
	for v := uint64(1); v <= 50; v++ { // exact below 64
		h.record(v)
	}
	for q, want := range map[float64]uint64{0.5: 25, 0.99: 50, 0.999: 50, 0.02: 1, 1: 50} {
		if got := h.percentile(q); got != want {
			t.Errorf("1..50: p%v = %d, want %d", q*100, got, want)
		}
	}

	// 1000 values of 1 ms and 10 of 100 ms: p99 is 1 ms, p99.9 100 ms, to
	// within a bucket, and never above the maximum.
	var g histogram
	for range 1000 {
		g.record(1_000_000)
	}
	for range 10 {
		g.record(100_000_000)
	}
	within := func(got, want uint64) bool {
		return got >= want && float64(got-want) <= float64(want)/64
	}
	if p := g.percentile(0.99); !within(p, 1_000_000) {
		t.Errorf("p99 = %d", p)
	}
	if p := g.percentile(0.999); p != 100_000_000 {
		t.Errorf("p99.9 = %d, want the max 100ms", p)
	}

	// Merging sums counts.
	var m histogram
	m.merge(&h)
	m.merge(&g)
	if m.n != h.n+g.n || m.max != 100_000_000 {
		t.Errorf("merged n %d max %d", m.n, m.max)
	}
}

func TestParseStat(t *testing.T) {
	// Field 2 may hold spaces and parentheses; utime and stime are fields
	// 14 and 15.
	line := "4242 (redis (a) b) S 1 4242 4242 0 -1 4194560 512 0 0 0 1234 567 0 0 20 0 5 0 100 1000 200 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil || got.utime != 1234 || got.stime != 567 || got.ticks() != 1801 {
		t.Errorf("parseStat = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "12 (x S 1", "12 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 u s 0"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestParseRSS(t *testing.T) {
	status := "Name:\tredis-server\nVmPeak:\t  100 kB\nVmRSS:\t    9876 kB\nThreads:\t5\n"
	if got, err := parseRSS([]byte(status)); err != nil || got != 9876*1024 {
		t.Errorf("parseRSS = %d, %v", got, err)
	}
	if _, err := parseRSS([]byte("Name:\tzombie\n")); err == nil {
		t.Error("no VmRSS: no error")
	}
}

func TestProcSelf(t *testing.T) {
	// The real files parse, and this process has some memory.
	if _, err := readCPU(1); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	rss, err := readRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Errorf("own RSS: %d, %v", rss, err)
	}
	if clockTicks() <= 0 {
		t.Errorf("CLK_TCK %d", clockTicks())
	}
}

func TestSkipReason(t *testing.T) {
	tests := []struct{ err, want string }{
		{"ERR unknown command 'zadd', with args beginning with: 'k' ", "skipped: ZADD not supported by cellserver"},
		{"ERR unknown command 'SCRIPT', with args beginning with: 'LOAD' ", "skipped: SCRIPT not supported by cellserver"},
		{"ERR Unknown Redis command called from script script: 1234", "skipped: a command the script calls is not supported by cellserver (ERR Unknown Redis command called from script script: 1234)"},
		{"NOSCRIPT No matching script.", "skipped: cellserver replied -NOSCRIPT No matching script."},
	}
	for _, tt := range tests {
		if got := skipReason(tt.err, kindCell); got != tt.want {
			t.Errorf("skipReason(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.conns != 50 || len(o.depths) != 2 || o.duration != 5*time.Second || len(o.workloads) != len(workloads) || o.persist != "off" {
		t.Errorf("defaults: %+v", o)
	}
	o, err = parseOptions([]string{"-quick", "-keys", "7", "-workloads", "w1,ping,w1", "-depths", "4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.duration != time.Second || o.keys != 7 || len(o.workloads) != 2 || o.workloads[0].name != "w1" || o.depths[0] != 4 {
		t.Errorf("-quick with overrides: %+v", o)
	}
	for _, bad := range [][]string{
		{"-workloads", "nope"},
		{"-depths", "0"},
		{"-persist", "sometimes"},
		{"-conns", "0"},
		{"stray"},
		{"-servers", "redis,memcached"},
	} {
		if _, err := parseOptions(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	o, err = parseOptions([]string{"-servers", "cellserver"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := (&bench{o: o}).kinds(); len(got) != 1 || got[0] != kindCell {
		t.Errorf("-servers cellserver: %v", got)
	}
	o, _ = parseOptions([]string{"-redis-module", "/x.so"}, io.Discard)
	if got := (&bench{o: o}).kinds(); len(got) != 3 || got[1] != kindModule {
		t.Errorf("with a module: %v", got)
	}
	var help bytes.Buffer
	if _, err := parseOptions([]string{"-h"}, &help); err != flag.ErrHelp || !strings.Contains(help.String(), "-workloads") {
		t.Errorf("-h: %v, %q", err, help.String())
	}
}

func TestPersistenceArgs(t *testing.T) {
	redis := strings.Join(redisArgs(7000, "/d", "off", ""), " ")
	if !strings.Contains(redis, "--save  --appendonly no") || strings.Contains(redis, "loadmodule") {
		t.Errorf("redis off: %s", redis)
	}
	redis = strings.Join(redisArgs(7000, "/d", "everysec", "/m.so"), " ")
	if !strings.Contains(redis, "--appendonly yes --appendfsync everysec --loadmodule /m.so") {
		t.Errorf("redis everysec + module: %s", redis)
	}
	full := cellFlags{appendonly: true, appendfsync: true}
	if args, _ := cellArgs(7000, "/d", "always", full); !strings.Contains(strings.Join(args, " "), "--appendonly yes --appendfsync always") {
		t.Errorf("cellserver always: %q", args)
	}
	if args, _ := cellArgs(7000, "/d", "off", full); !strings.Contains(strings.Join(args, " "), "--appendonly no") {
		t.Errorf("cellserver off: %q", args)
	}
	help := "Flags:\n  -appendfsync string\n    \tfsync policy\n  -appendonly\n    \tkeep an append-only log\n  -bind string\n"
	f := parseCellHelp(help)
	if !f.appendonly || !f.appendonlyBool || !f.appendfsync || f.save {
		t.Errorf("parseCellHelp = %+v", f)
	}
	if args, _ := cellArgs(7000, "/d", "off", f); !strings.Contains(strings.Join(args, " "), "--appendonly=false") {
		t.Errorf("cellserver off, bool flag: %q", args)
	}
	if f := parseCellHelp("  -appendonly string\n"); !f.appendonly || f.appendonlyBool {
		t.Errorf("string flag: %+v", f)
	}
	if _, note := cellArgs(7000, "/d", "always", cellFlags{}); !strings.Contains(note, "WITHOUT persistence") {
		t.Errorf("cellserver without flags: the note %q does not warn", note)
	}
}

func TestRatios(t *testing.T) {
	rows := []row{
		{Server: "redis", OpsPerSec: 100, ServerCPUus: 4},
		{Server: "cellserver", OpsPerSec: 150, ServerCPUus: 2},
	}
	setRatios(rows, false)
	if rows[1].OpsRatio != 1.5 || rows[1].CPURatio != 0.5 {
		t.Errorf("ratios %v %v", rows[1].OpsRatio, rows[1].CPURatio)
	}
	rows = []row{{Server: "redis", Skipped: "n/a"}, {Server: "cellserver", OpsPerSec: 10}}
	setRatios(rows, true)
	if rows[1].OpsRatio != 0 || rows[1].RatioBasis != "" {
		t.Errorf("a ratio without a reference: %+v", rows[1])
	}
	// Persistence's cost: cellserver against cellserver-off when no redis
	// ran, and against redis when one did.
	rows = []row{{Server: "cellserver", OpsPerSec: 90, ServerCPUus: 3}, {Server: "cellserver-off", OpsPerSec: 100, ServerCPUus: 2}}
	setRatios(rows, false)
	if rows[0].OpsRatio != 0.9 || rows[0].CPURatio != 1.5 || rows[0].RatioBasis != "cellserver-off" {
		t.Errorf("cellserver against cellserver-off: %+v", rows[0])
	}
	if rows[0].Paired != nil {
		t.Errorf("a paired ratio without rounds: %+v", rows[0].Paired)
	}
	// Paired rounds: the median of the per-round ratios, not the ratio of
	// the best rounds (1.0 here, from rounds two minutes apart).
	rows = []row{
		{Server: "cellserver", OpsPerSec: 100, ServerCPUus: 2, RoundOps: []float64{90, 100, 60, 95}, RoundCPU: []float64{2.2, 2, 3, 2.1}},
		{Server: "cellserver-off", OpsPerSec: 100, ServerCPUus: 2, RoundOps: []float64{100, 80, 100, 100}, RoundCPU: []float64{2, 2.5, 2, 2}},
	}
	setRatios(rows, false)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if p := rows[0].Paired; p == nil || p.Rounds != 4 || !near(p.OpsMedian, 0.925) || !near(p.OpsMin, 0.6) ||
		!near(p.OpsMax, 1.25) || !near(p.CPUMedian, 1.075) {
		t.Errorf("paired ratio %+v, want 4 rounds, ops 0.925 (0.6-1.25), CPU 1.075", p)
	} else if s := p.String(); !strings.HasPrefix(s, "paired: 0.9") || !strings.HasSuffix(s, " (0.60-1.25), 1.07x CPU/op, 4 rounds") &&
		!strings.HasSuffix(s, " (0.60-1.25), 1.08x CPU/op, 4 rounds") {
		t.Errorf("paired ratio text %q", s)
	}
	rows[1].RoundOps = rows[1].RoundOps[:2]
	rows[1].RoundCPU = rows[1].RoundCPU[:2]
	if setRatios(rows, false); rows[0].Paired != nil {
		t.Errorf("a paired ratio over rounds that do not pair: %+v", rows[0].Paired)
	}
	rows = []row{{Server: "redis", OpsPerSec: 30}, {Server: "cellserver", OpsPerSec: 90}, {Server: "cellserver-off", OpsPerSec: 100}}
	setRatios(rows, false)
	if rows[1].OpsRatio != 3 || rows[1].RatioBasis != "" {
		t.Errorf("cellserver against redis, with cellserver-off beside: %+v", rows[1])
	}
	rows = []row{
		{Workload: "throttle", Depth: 16, Server: "cellserver", OpsPerSec: 300, ServerCPUus: 1},
		{Workload: "gcra-lua", Depth: 1, Server: "redis", OpsPerSec: 50, ServerCPUus: 8},
		{Workload: "gcra-lua", Depth: 16, Server: "redis", OpsPerSec: 100, ServerCPUus: 4},
	}
	setLuaRatios(rows)
	if rows[0].OpsRatio != 3 || rows[0].CPURatio != 0.25 || rows[0].RatioBasis != "redis gcra-lua" {
		t.Errorf("CL.THROTTLE against the Lua GCRA: %+v", rows[0])
	}
	if got := thousands(1234567.4); got != "1,234,567" {
		t.Errorf("thousands = %q", got)
	}
}

func TestParseMachineBusy(t *testing.T) {
	stat := "cpu  100 5 50 1000 20 3 2 1 7 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n"
	// user+nice+system+irq+softirq+steal; idle, iowait and guest excluded.
	if got, err := parseMachineBusy([]byte(stat)); err != nil || got != 100+5+50+3+2+1 {
		t.Errorf("parseMachineBusy = %d, %v", got, err)
	}
	if _, err := parseMachineBusy([]byte("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line: no error")
	}
}
