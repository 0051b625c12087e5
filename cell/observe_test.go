package cell

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAppendRepr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"abc 123", `"abc 123"`},
		{"a\"b\\c", `"a\"b\\c"`},
		{"\n\r\t\a\b", `"\n\r\t\a\b"`},
		{"\x00\x01\x1f\x7f\x80\xff", `"\x00\x01\x1f\x7f\x80\xff"`},
		{"é", `"\xc3\xa9"`},
		{"~ }", `"~ }"`},
	} {
		if got := string(appendRepr(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("appendRepr(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRedactions(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want string // one letter per argument: r redacted, . shown
	}{
		{"auth", []string{"AUTH", "pw"}, ".r"},
		{"auth", []string{"AUTH", "u", "pw"}, ".rr"},
		{"hello", []string{"HELLO"}, ""},
		{"hello", []string{"HELLO", "3"}, ""},
		{"hello", []string{"HELLO", "3", "AUTH", "u", "p", "SETNAME", "n"}, "...rr.."},
		{"hello", []string{"HELLO", "2", "setname", "n", "auth", "u", "p"}, ".....rr"},
		{"hello", []string{"HELLO", "4", "AUTH", "u", "p"}, ""}, // version refused first
		{"hello", []string{"HELLO", "x", "AUTH", "u", "p"}, ""}, // likewise
		{"hello", []string{"HELLO", "3", "AUTH", "u"}, ""},      // not enough arguments: syntax error
		{"hello", []string{"HELLO", "3", "BAD", "AUTH", "u", "p"}, ""},
		{"config|set", []string{"CONFIG", "SET", "requirepass", "s", "hz", "10"}, "...r.."},
		{"config|set", []string{"CONFIG", "SET", "MasterAuth", "s"}, "...r"},
		{"config|set", []string{"CONFIG", "SET", "requirepass"}, ""},
		{"get", []string{"GET", "k"}, ""},
	} {
		cmd := lookupFullName([]byte(tc.cmd))
		if cmd == nil {
			t.Fatalf("no command %q", tc.cmd)
		}
		args := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			args[i] = []byte(a)
		}
		var got strings.Builder
		if r := redactions(cmd, args); r != nil {
			for _, x := range r {
				if x {
					got.WriteByte('r')
				} else {
					got.WriteByte('.')
				}
			}
		}
		if got.String() != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got.String(), tc.want)
		}
	}
}

func TestGate(t *testing.T) {
	for _, tc := range []struct {
		slow, latency int64
		monitors      int32
		want          int64
	}{
		{10000, 0, 0, 10_000_000},
		{-1, 0, 0, math.MaxInt64},
		{0, 0, 0, 0},
		{-1, 5, 0, 5_000_000},
		{10000, 5, 0, 5_000_000},
		{-1, 0, 1, 0},
		{math.MaxInt64, 0, 0, math.MaxInt64},
		{-1, math.MaxInt64, 0, math.MaxInt64},
	} {
		var o observer
		o.init()
		o.slowlogThreshold.Store(tc.slow)
		o.latencyThreshold.Store(tc.latency)
		o.monitors.count.Store(tc.monitors)
		o.updateGate()
		if got := o.gate.Load(); got != tc.want {
			t.Errorf("slowlog %d, latency %d, monitors %d: gate %d, want %d", tc.slow, tc.latency, tc.monitors, got, tc.want)
		}
	}
}

func TestSlowlogEntry(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	c.do("SLOWLOG", "RESET")
	args := []string{"RPUSH", "l", strings.Repeat("x", 130)}
	for range 40 {
		args = append(args, "v")
	}
	c.do(args...)
	got := c.do("SLOWLOG", "GET", "1")
	// 31 arguments kept, the 32nd says how many more; 130 bytes are cut at 128.
	want := "*32\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$146\r\n" + strings.Repeat("x", 128) + "... (2 more bytes)\r\n"
	if !strings.Contains(got, want) || !strings.Contains(got, "$23\r\n... (12 more arguments)\r\n") {
		t.Errorf("SLOWLOG GET 1 = %q", got)
	}
	// A lower maximum applies at once; ids keep counting after RESET.
	c.do("CONFIG", "SET", "slowlog-max-len", "1")
	if got := c.do("SLOWLOG", "LEN"); got != ":1\r\n" {
		t.Errorf("SLOWLOG LEN = %q", got)
	}
	c.do("CONFIG", "SET", "slowlog-max-len", "0")
	c.do("PING")
	if got := c.do("SLOWLOG", "LEN"); got != ":0\r\n" {
		t.Errorf("SLOWLOG LEN with max-len 0 = %q", got)
	}
	if n := srv.obs.slowlog.logged(); n < 6 {
		t.Errorf("entries logged %d", n)
	}
}

func TestLatencySeries(t *testing.T) {
	var tbl latencyTable
	tbl.events = map[string]*latencySeries{}
	tbl.add("command", 5)
	tbl.add("command", 20) // same second: the higher one stays
	tbl.add("command", 7)
	s := tbl.events["command"]
	if got := s.ordered(); len(got) != 1 || got[0].ms != 20 || s.max != 20 {
		t.Errorf("samples %v max %d", got, s.max)
	}
	// A full ring keeps the last 160 seconds with samples, oldest first.
	for i := range 200 {
		s.samples[s.idx] = latencySample{int64(1000 + i), int64(i)}
		s.idx = (s.idx + 1) % latencySeriesLen
	}
	got := s.ordered()
	if len(got) != latencySeriesLen || got[0].unix != 1040 || got[len(got)-1].unix != 1199 {
		t.Errorf("ring: %d samples from %v to %v", len(got), got[0], got[len(got)-1])
	}
	st := analyzeLatency([]latencySample{{100, 20}, {101, 3}, {102, 50}, {103, 11}}, 104)
	if st != (latencyStats{samples: 4, avg: 21, mad: 14, period: 4}) {
		t.Errorf("analyze: %+v", st)
	}
}

// The samples and the output below are Redis 7.0.15's: DEBUG SLEEP of 5
// and 20 ms in one second, then 3, 50 and 11 ms a second apart, with
// latency-monitor-threshold 1, graphed and diagnosed a second after the
// last.
var redisLatencySamples = []latencySample{{1795391293, 20}, {1795391294, 3}, {1795391295, 50}, {1795391296, 11}}

const redisLatencyNow = 1795391297

func TestLatencyGraphMatchesRedis(t *testing.T) {
	want, err := os.ReadFile("testdata/latency_graph_redis.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := renderLatencyGraph("command", redisLatencySamples, 50, redisLatencyNow)
	if got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// More than 80 samples wrap into blocks separated by a blank line.
	var many []latencySample
	for i := range 100 {
		many = append(many, latencySample{int64(1000 + i), int64(i % 7)})
	}
	g := renderLatencyGraph("command", many, 6, 1100)
	lines := strings.Split(g, "\n")
	if len(lines[2]) != 80 || !strings.Contains(g, "\n\n") {
		t.Errorf("wrapped graph:\n%s", g)
	}
}

func TestLatencyDoctorMatchesRedis(t *testing.T) {
	if anonHugePages() > 0 {
		t.Skip("this process has anonymous huge pages, which adds advice Redis did not give")
	}
	want, err := os.ReadFile("testdata/latency_doctor_redis.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, nil)
	if got := srv.latencyReport(redisLatencyNow); !strings.HasPrefix(got, "I'm sorry, Dave") {
		t.Errorf("doctor while off: %q", got)
	}
	srv.obs.latencyThreshold.Store(1)
	if got := srv.latencyReport(redisLatencyNow); !strings.HasPrefix(got, "Dave, no latency spike") {
		t.Errorf("doctor without events: %q", got)
	}
	s := &latencySeries{max: 50}
	for _, sm := range redisLatencySamples {
		s.samples[s.idx] = sm
		s.idx++
	}
	srv.obs.latency.events["command"] = s
	if got := srv.latencyReport(redisLatencyNow); got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLatencyMonitorRecordsCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("CONFIG", "SET", "latency-monitor-threshold", "1")
	cl := &Client{srv: srv}
	cl.observe(lookupFullName([]byte("get")), nil, 3*time.Millisecond)
	cl.observe(lookupFullName([]byte("keys")), nil, 2*time.Millisecond)
	cl.observe(lookupFullName([]byte("keys")), nil, 900*time.Microsecond) // under the threshold
	got := c.do("LATENCY", "LATEST")
	if !strings.Contains(got, "$7\r\ncommand\r\n") || !strings.Contains(got, "$12\r\nfast-command\r\n") ||
		!strings.HasSuffix(got, "\r\n:3\r\n:3\r\n") {
		t.Errorf("LATENCY LATEST = %q", got)
	}
	if got := c.do("LATENCY", "RESET", "COMMAND"); got != ":1\r\n" {
		t.Errorf("LATENCY RESET COMMAND = %q", got)
	}
}

func TestLatencyHistogramCDF(t *testing.T) {
	var h latencyHist
	for _, ns := range []int64{5000, 9000, 9000, 15000, 3_000_000} {
		h.counts[latencyBucket(ns)].Add(1)
	}
	cdf, n := h.redisCDF()
	// HdrHistogram's steps: 4127 ns (4 µs), 8255 (8), 16511 (16), ...,
	// 4227071 (4227).
	want := [][2]int64{{8, 1}, {16, 4}, {4227, 5}}
	if n != 5 || len(cdf) != len(want) {
		t.Fatalf("cdf %v, n %d", cdf, n)
	}
	for i := range want {
		if cdf[i] != want[i] {
			t.Errorf("cdf %v, want %v", cdf, want)
		}
	}
}

// TestMonitorUnderLoad runs clients in parallel while a monitor watches:
// the monitor gets every command exactly once, each line whole, and
// detaching while traffic goes on is safe (run with -race).
func TestMonitorUnderLoad(t *testing.T) {
	srv := startServer(t, nil)
	m := dial(t, srv)
	if got := m.do("MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR = %q", got)
	}
	const clients, each = 8, 200
	done := make(chan struct{})
	for i := range clients {
		go func() {
			defer func() { done <- struct{}{} }()
			c := dial(t, srv)
			for j := range each {
				c.do("SET", "k"+strconv.Itoa(i), strconv.Itoa(j))
			}
		}()
	}
	for range clients {
		<-done
	}
	seen := map[string]int{}
	for range clients * each {
		line := m.read()
		if !strings.HasPrefix(line, "+") || !strings.HasSuffix(line, "\r\n") || !strings.Contains(line, `] "SET" "k`) {
			t.Fatalf("monitor line %q", line)
		}
		seen[line[strings.Index(line, `"SET"`):]]++
	}
	if len(seen) != clients*each {
		t.Errorf("%d distinct lines, want %d", len(seen), clients*each)
	}
	// Detach while others keep writing.
	stop := make(chan struct{})
	go func() {
		c := dial(t, srv)
		for {
			select {
			case <-stop:
				done <- struct{}{}
				return
			default:
				c.do("PING")
			}
		}
	}()
	m.nc.Write(encode("RESET"))
	for {
		if line := m.read(); line == "+RESET\r\n" {
			break
		}
	}
	close(stop)
	<-done
	if n := srv.obs.monitors.count.Load(); n != 0 {
		t.Errorf("%d monitors after RESET", n)
	}
	if g := srv.obs.gate.Load(); g != 10_000_000 {
		t.Errorf("gate %d after the monitor left", g)
	}
}

// BenchmarkRecordIdle is the per-command bookkeeping with the slow log,
// MONITOR and the latency monitor idle: the observer adds one atomic load
// and comparison to it.
func BenchmarkRecordIdle(b *testing.B) {
	srv := startServer(b, nil)
	c := &Client{srv: srv}
	cmd := lookupFullName([]byte("get"))
	args := [][]byte{[]byte("GET"), []byte("k")}
	for b.Loop() {
		c.record(cmd, args, false, time.Microsecond)
	}
}
