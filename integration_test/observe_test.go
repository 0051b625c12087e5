package integration_test

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/internal/serverproc"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// SLOWLOG, MONITOR, LATENCY and their CONFIG parameters against Redis.

// maskSlowlog hides, in a SLOWLOG GET reply, each entry's id, time,
// duration and client address. The arguments and the client name are
// compared.
func maskSlowlog(v *value) {
	if v.kind != '*' || v.null {
		return
	}
	for _, e := range v.elems {
		if e.kind != '*' || len(e.elems) != 6 {
			continue
		}
		for i, name := range []string{"<id>", "<unix>", "<usec>"} {
			if e.elems[i].kind == ':' && !strings.HasPrefix(e.elems[i].text, "-") {
				e.elems[i].text = name
			}
		}
		if a := e.elems[4]; a.kind == '$' && strings.HasPrefix(a.text, "127.0.0.1:") {
			a.text = "<addr>"
		}
	}
}

// slowlogEverything makes both servers log every command and starts their
// slow logs empty; the defaults come back when the test ends.
func slowlogEverything(t *testing.T, c *pair) {
	t.Helper()
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "128")
	c.Do("SLOWLOG", "RESET")
	t.Cleanup(func() {
		c.Do("CONFIG", "SET", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128")
		c.Do("SLOWLOG", "RESET")
	})
}

func TestSlowlog(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		slowlogEverything(t, c)
		c.Do("SLOWLOG", "LEN")
		c.Do("CLIENT", "SETNAME", "slow-client")
		c.Do("SET", "k", strings.Repeat("v", 200))
		c.Do("SET", "bin", "a\x00b\xff")
		args := []string{"RPUSH", "l"}
		for i := range 40 {
			args = append(args, strconv.Itoa(i))
		}
		c.Do(args...)
		// EXEC is skip_slowlog; the commands it runs are logged one by one.
		c.Do("MULTI")
		c.Do("GET", "k")
		c.Do("INCR", "n")
		c.Do("EXEC")
		c.Do("MULTI")
		c.Error("GET")
		c.Error("EXEC")
		// Secrets are redacted; refused commands are not logged.
		c.Error("AUTH", "secret")
		c.Error("AUTH", "user", "secret")
		c.DoMasked(maskHello, "HELLO", "2", "AUTH", "default", "secret", "SETNAME", "slow-client")
		c.Error("HELLO", "4", "AUTH", "default", "secret")
		c.Error("NOSUCHCOMMAND", "x")
		c.Error("GET")
		c.DoMasked(maskSlowlog, "SLOWLOG", "GET", "-1")
		c.DoMasked(maskSlowlog, "SLOWLOG", "GET", "2")
		c.Do("SLOWLOG", "GET", "0")
		c.Do("SLOWLOG", "LEN")
		c.Error("SLOWLOG", "GET", "-2")
		c.Error("SLOWLOG", "GET", "x")
		c.Error("SLOWLOG", "GET", "1", "2")
		c.Error("SLOWLOG", "LEN", "x")
		c.Error("SLOWLOG", "NOSUCH")
		c.Error("SLOWLOG")
		c.Do("SLOWLOG", "HELP")
		// A shorter maximum applies at once (CONFIG SET is itself logged).
		c.Do("CONFIG", "SET", "slowlog-max-len", "3")
		c.Do("SLOWLOG", "LEN")
		c.DoMasked(maskSlowlog, "SLOWLOG", "GET")
		c.Do("SLOWLOG", "RESET")
		c.DoMasked(maskSlowlog, "SLOWLOG", "GET")
		// Off: nothing more is logged.
		c.Do("CONFIG", "SET", "slowlog-log-slower-than", "-1")
		c.Do("SLOWLOG", "RESET")
		c.Do("PING")
		c.Do("SLOWLOG", "LEN")
		c.Error("CONFIG", "SET", "slowlog-log-slower-than", "-2")
		c.Error("CONFIG", "SET", "slowlog-max-len", "-1")
		c.DoSorted("CONFIG", "GET", "slowlog-*")
	})
}

// monitorLinePrefix is the time and client address of a MONITOR line.
var monitorLinePrefix = regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[([0-9]+) 127\.0\.0\.1:[0-9]+\] `)

// maskMonitorLine hides a MONITOR line's time and client address.
func maskMonitorLine(line []byte) string {
	return monitorLinePrefix.ReplaceAllString(string(line), "+<time> [$1 <addr>] ")
}

// readMonitor reads replies and MONITOR lines from m until a MONITOR line
// contains marker.
func readMonitor(t *testing.T, name string, m *respConn, marker string) []string {
	t.Helper()
	var lines []string
	for {
		r, err := m.ReadReply()
		if err != nil {
			t.Fatalf("%s: reading MONITOR lines after %q: %v", name, lines, err)
		}
		if v, err := parseReply(r); err == nil && v.kind == '$' && strings.Contains(v.text, " flags=") {
			maskClientList(v) // CLIENT INFO from the monitor itself
			r = v.encode()
		}
		lines = append(lines, maskMonitorLine(r))
		if r[0] == '+' && bytes.Contains(r, []byte(marker)) {
			return lines
		}
	}
}

func TestMonitor(t *testing.T) {
	c := newPair(t)
	s := c.srv
	monitor := func(p *process) *respConn {
		m, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		r, err := m.Do("MONITOR")
		if err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("%s: MONITOR replied %q, %v", p.name, r, err)
		}
		return m
	}
	mr, mc := monitor(s.redis), monitor(s.cell)

	c.Do("SET", "k", "a\"b\\c\n\r\t\a\b\x01\xff é")
	c.Do("GET", "k")
	c.Do("SELECT", "3")
	c.Do("SELECT", "0")
	c.Do("MULTI")
	c.Do("SET", "x", "1")
	c.Do("INCR", "x")
	c.Do("EXEC")
	c.Do("MULTI")
	c.Error("GET")
	c.Error("EXEC")
	c.Error("AUTH", "secret")
	c.Error("AUTH", "user", "secret")
	c.DoMasked(maskHello, "HELLO", "2", "AUTH", "default", "secret", "SETNAME", "watched")
	c.Error("HELLO", "4", "AUTH", "default", "secret")
	c.Do("CLIENT", "SETNAME", "watched")
	c.Do("CONFIG", "GET", "hz") // admin: not shown
	c.Error("NOSUCH")           // refused: not shown
	c.Do("SET", "num", "12345")
	c.Do("ECHO", "end-1")
	lr := readMonitor(t, s.redis.name, mr, "end-1")
	lc := readMonitor(t, s.cell.name, mc, "end-1")
	if strings.Join(lr, "") != strings.Join(lc, "") {
		t.Errorf("MONITOR lines differ\n  redis-server: %q\n  cellserver:   %q", lr, lc)
	}

	// The monitor itself: commands that do not touch keys run, and are
	// shown after their reply; keyspace commands are refused.
	for _, cmd := range [][]string{{"PING"}, {"GET", "k"}, {"CLIENT", "INFO"}, {"ECHO", "end-2"}} {
		if err := mr.Send(cmd...); err != nil {
			t.Fatal(err)
		}
		if err := mc.Send(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	lr = readMonitor(t, s.redis.name, mr, "end-2")
	lc = readMonitor(t, s.cell.name, mc, "end-2")
	if strings.Join(lr, "") != strings.Join(lc, "") {
		t.Errorf("MONITOR's own commands differ\n  redis-server: %q\n  cellserver:   %q", lr, lc)
	}

	// RESET leaves monitor mode: the reply, then nothing more.
	names := []string{s.redis.name, s.cell.name}
	for i, m := range []*respConn{mr, mc} {
		if r, err := m.Do("RESET"); err != nil || string(r) != "+RESET\r\n" {
			t.Errorf("%s: RESET: %q, %v", names[i], r, err)
		}
	}
	c.Do("PING")
	for i, m := range []*respConn{mr, mc} {
		if r, err := m.Do("ECHO", "after"); err != nil || string(r) != "$5\r\nafter\r\n" {
			t.Errorf("%s: after RESET: %q, %v", names[i], r, err)
		}
	}

	// MONITOR inside MULTI is refused at EXEC.
	c.Do("MULTI")
	c.Do("MONITOR")
	c.Do("EXEC")
}

func TestLatency(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("LATENCY", "RESET")
		c.Do("LATENCY", "LATEST")
		c.Do("LATENCY", "HISTORY", "command")
		c.Do("LATENCY", "DOCTOR")
		c.Error("LATENCY", "GRAPH", "command")
		c.Do("LATENCY", "RESET", "command", "fast-command")
		c.Do("LATENCY", "HELP")
		c.Do("LATENCY", "HISTOGRAM", "nosuch")
		c.Error("LATENCY", "HISTORY")
		c.Error("LATENCY", "LATEST", "x")
		c.Error("LATENCY", "NOSUCH")
		c.Error("LATENCY")
		c.Do("CONFIG", "SET", "latency-monitor-threshold", "100000")
		c.Do("CONFIG", "GET", "latency-monitor-threshold")
		c.Do("PING")
		c.Do("LATENCY", "LATEST")
		c.Do("CONFIG", "SET", "latency-monitor-threshold", "0")
		c.Error("CONFIG", "SET", "latency-monitor-threshold", "-1")
	})
}

// maskHistogram replaces, in a LATENCY HISTOGRAM reply, each command's
// bucket map by its last cumulative count (which is its calls): the
// buckets themselves depend on timing.
func maskHistogram(v *value) {
	for i, e := range v.elems {
		if e.kind == '$' && e.text == "histogram_usec" && i+1 < len(v.elems) {
			if h := v.elems[i+1]; len(h.elems) >= 2 {
				h.kind, h.elems = '*', h.elems[len(h.elems)-1:]
			}
			continue
		}
		maskHistogram(e)
	}
}

func TestLatencyHistogram(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CONFIG", "RESETSTAT")
		for range 3 {
			c.Do("SET", "k", "v")
		}
		c.Do("GET", "k")
		c.DoMasked(maskHistogram, "LATENCY", "HISTOGRAM", "set")
		c.DoMasked(maskHistogram, "LATENCY", "HISTOGRAM", "GET", "nosuch")
		c.Do("LATENCY", "HISTOGRAM", "del")
	})
}

func TestObservabilityCommandInfo(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range []string{
			"slowlog", "monitor", "latency", "slowlog|get", "latency|histogram",
		} {
			c.DoMasked(maskCommandOrder, "COMMAND", "INFO", name)
		}
		c.DoMasked(maskDocs, "COMMAND", "DOCS", "slowlog")
		c.DoMasked(maskDocs, "COMMAND", "DOCS", "latency")
		c.DoMasked(maskDocs, "COMMAND", "DOCS", "monitor")
		c.Do("CONFIG", "GET", "logfile")
		c.Do("CONFIG", "GET", "loglevel")
		c.Do("CONFIG", "SET", "loglevel", "WARNING")
		c.Do("CONFIG", "GET", "loglevel")
		c.Do("CONFIG", "SET", "loglevel", "notice")
		c.Error("CONFIG", "SET", "loglevel", "nothing")
		c.Error("CONFIG", "SET", "logfile", "x.log")
		c.Do("CONFIG", "GET", "loglevel")
	})
}

// TestMetricsEndpoint starts cellserver with --metrics-port, drives a few
// commands, and reads /metrics with Prometheus's own parser.
func TestMetricsEndpoint(t *testing.T) {
	if selfTest() {
		t.Skip("redis-server has no /metrics")
	}
	bin := cellserverBinary(t)
	mport, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess("cellserver", bin, func(port int, dir string) []string {
		return []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
			"--metrics-port", strconv.Itoa(mport), "--loglevel", "debug"}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	c, err := dialRESP(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, cmd := range [][]string{
		{"CL.THROTTLE", "u", "0", "1", "60"}, {"CL.THROTTLE", "u", "0", "1", "60"},
		{"CL.THROTTLE", "u", "x", "1", "60"}, {"SET", "k", "v", "EX", "100"}, {"GET", "k"},
	} {
		if _, err := c.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(mport) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s, %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	var parser expfmt.TextParser
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	value := func(name string, labels ...string) float64 {
		f := fams[name]
		if f == nil {
			t.Errorf("no %s", name)
			return -1
		}
	next:
		for _, m := range f.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				if !slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool {
					return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
				}) {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		t.Errorf("no %s%v", name, labels)
		return -1
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "allowed"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "limited"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "error"}, 1},
		{"cellserver_commands_total", []string{"cmd", "cl.throttle"}, 3},
		{"cellserver_commands_failed_total", []string{"cmd", "cl.throttle"}, 1},
		{"cellserver_command_duration_seconds", []string{"cmd", "get"}, 1},
		{"cellserver_keys", []string{"db", "0"}, 2},
		{"cellserver_keys_with_expiry", []string{"db", "0"}, 2},
		{"cellserver_connected_clients", nil, 1},
		// Started without --appendonly: persistence is on (INFO aof_enabled:1).
		{"cellserver_persistence_enabled", nil, 1},
		{"cellserver_persistence_loading", nil, 0},
		{"cellserver_persistence_misconf", nil, 0},
	} {
		if got := value(tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if !strings.Contains(p.LogTail(20), "level=DEBUG") {
		t.Errorf("--loglevel debug logged no debug line:\n%s", p.LogTail(20))
	}
}

// TestSlowlogRedactsConfigSecrets uses servers of its own: it sets a
// password.
func TestSlowlogRedactsConfigSecrets(t *testing.T) {
	c := newPairOn(t, startServers(t, serverOptions{}))
	c.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
	c.Do("SLOWLOG", "RESET")
	c.Do("CONFIG", "SET", "hz", "10", "requirepass", "secret")
	c.Error("CONFIG", "SET", "requirepass", "x", "nosuch", "y")
	c.Do("AUTH", "secret")
	c.Do("CONFIG", "SET", "requirepass", "")
	c.DoMasked(maskSlowlog, "SLOWLOG", "GET", "-1")
}
