package cell

import (
	"bytes"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// scrape fetches /metrics from srv's handler and parses it with
// Prometheus's own text parser.
func scrape(t *testing.T, srv *Server) map[string]*dto.MetricFamily {
	t.Helper()
	hs := httptest.NewServer(srv.MetricsHandler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != MetricsContentType {
		t.Errorf("Content-Type %q", ct)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// metricValue finds the sample of family name whose labels include all of
// want (name, value pairs); ok is false when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetrics(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, cmd := range [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2", "EX", "100"}, {"GET", "a"}, {"GET", "a"},
		{"GET"},                          // rejected: arity
		{"SET", "s", "x"}, {"INCR", "s"}, // failed: not an integer
		{"CL.THROTTLE", "t", "1", "1", "60"}, {"CL.THROTTLE", "t", "1", "1", "60"},
		{"CL.THROTTLE", "t", "1", "1", "60"}, // limited: burst 1 means 2 at once
		{"CL.THROTTLE", "t", "x", "1", "60"}, // error
		{"CL.PROBE", "t", "1", "1", "60"},    // limited
		{"CL.PROBE", "u", "1", "1", "60"},    // allowed
		{"SELECT", "2"}, {"SET", "c", "1"},
	} {
		c.do(cmd...)
	}
	fams := scrape(t, srv)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"cellserver_commands_total", []string{"cmd", "set"}, 4},
		{"cellserver_commands_total", []string{"cmd", "get"}, 2},
		{"cellserver_commands_total", []string{"cmd", "cl.throttle"}, 4},
		{"cellserver_commands_rejected_total", []string{"cmd", "get"}, 1},
		{"cellserver_commands_failed_total", []string{"cmd", "incr"}, 1},
		{"cellserver_command_duration_seconds", []string{"cmd", "get"}, 2},
		{"cellserver_command_duration_seconds", []string{"cmd", "set"}, 4},
		{"cellserver_connected_clients", nil, 1},
		{"cellserver_connections_total", nil, 1},
		{"cellserver_keys", []string{"db", "0"}, 4},
		{"cellserver_keys", []string{"db", "2"}, 1},
		{"cellserver_keys", []string{"db", "1"}, 0},
		{"cellserver_keys_with_expiry", []string{"db", "0"}, 2}, // b and the limiter's key
		{"cellserver_expired_keys_total", nil, 0},
		{"cellserver_persistence_enabled", nil, 0},
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "allowed"}, 2},
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "limited"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.throttle", "result", "error"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.probe", "result", "limited"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.probe", "result", "allowed"}, 1},
		{"cellserver_throttle_total", []string{"cmd", "cl.probe", "result", "error"}, 0},
	} {
		got, ok := metricValue(fams, tc.name, tc.labels...)
		if !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	for _, name := range []string{"cellserver_memory_heap_inuse_bytes", "cellserver_uptime_seconds"} {
		if v, ok := metricValue(fams, name); !ok || v <= 0 {
			t.Errorf("%s = %v (present %v)", name, v, ok)
		}
	}
	if _, ok := metricValue(fams, "cellserver_commands_total", "cmd", "del"); ok {
		t.Error("a command never called has a sample")
	}

	// Histograms: cumulative, ending at the count, in seconds.
	for _, m := range fams["cellserver_command_duration_seconds"].Metric {
		h := m.Histogram
		prev, prevLE := uint64(0), 0.0
		for _, b := range h.Bucket {
			if b.GetCumulativeCount() < prev || b.GetUpperBound() <= prevLE {
				t.Errorf("%v: buckets not cumulative: %v", m.Label, h.Bucket)
			}
			prev, prevLE = b.GetCumulativeCount(), b.GetUpperBound()
		}
		if prev > h.GetSampleCount() || h.GetSampleSum() < 0 || h.GetSampleSum() > 10 {
			t.Errorf("%v: count %d sum %v after buckets up to %d", m.Label, h.GetSampleCount(), h.GetSampleSum(), prev)
		}
	}
}

// TestMetricsPersistenceMatchesInfo: the persistence metrics of a server
// with a store say what INFO persistence says, before and after a
// checkpoint; without a store only enabled and loading are reported, 0.
func TestMetricsPersistenceMatchesInfo(t *testing.T) {
	plain := scrape(t, startServer(t, nil))
	for _, name := range []string{"cellserver_persistence_enabled", "cellserver_persistence_loading"} {
		if v, ok := metricValue(plain, name); !ok || v != 0 {
			t.Errorf("without a store: %s = %v (present %v)", name, v, ok)
		}
	}
	if _, ok := metricValue(plain, "cellserver_persistence_log_bytes"); ok {
		t.Error("without a store: log_bytes reported")
	}
	srv, _ := openServer(t, t.TempDir(), nil)
	c := dial(t, srv)
	check := func(when string) {
		t.Helper()
		info := infoMap(c.do("INFO", "persistence"))
		fams := scrape(t, srv)
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(info[k], 64)
			if err != nil {
				t.Fatalf("%s: INFO %s = %q", when, k, info[k])
			}
			return v
		}
		flag := func(k, v string) float64 {
			if info[k] == v {
				return 1
			}
			return 0
		}
		for _, tc := range []struct {
			metric string
			want   float64
		}{
			{"cellserver_persistence_enabled", num("aof_enabled")},
			{"cellserver_persistence_loading", num("loading")},
			{"cellserver_persistence_checkpoints_total", num("rdb_saves")},
			{"cellserver_persistence_rewrites_total", num("aof_rewrites")},
			{"cellserver_persistence_changes_since_checkpoint", num("rdb_changes_since_last_save")},
			{"cellserver_persistence_checkpoint_in_progress", num("rdb_bgsave_in_progress")},
			{"cellserver_persistence_last_checkpoint_timestamp_seconds", num("rdb_last_save_time")},
			{"cellserver_persistence_last_checkpoint_failed", flag("rdb_last_bgsave_status", "err")},
			{"cellserver_persistence_snapshot_bytes", num("aof_base_size")},
			{"cellserver_persistence_log_bytes", num("aof_current_size") - num("aof_base_size")},
			{"cellserver_persistence_misconf", flag("aof_last_write_status", "err")},
			{"cellserver_persistence_last_load_corrupt_skipped", num("aof_last_load_corrupt_skipped")},
			{"cellserver_persistence_last_load_damaged_bytes", num("aof_last_load_damaged_bytes")},
		} {
			if got, ok := metricValue(fams, tc.metric); !ok || got != tc.want {
				t.Errorf("%s: %s = %v (present %v), INFO says %v", when, tc.metric, got, ok, tc.want)
			}
		}
		stats := infoMap(c.do("INFO", "stats"))
		if got, _ := metricValue(fams, "cellserver_evicted_keys_total"); strconv.FormatFloat(got, 'f', -1, 64) != stats["evicted_keys"] {
			t.Errorf("%s: evicted_keys_total %v, INFO evicted_keys %s", when, got, stats["evicted_keys"])
		}
	}
	for i := range 100 {
		c.do("SET", "k"+strconv.Itoa(i), "v")
	}
	check("before a checkpoint")
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE: %q", r)
	}
	c.do("SET", "after", "v")
	check("after a checkpoint")
	fams := scrape(t, srv)
	if v, _ := metricValue(fams, "cellserver_persistence_checkpoints_total"); v != 1 {
		t.Errorf("checkpoints_total = %v after one SAVE", v)
	}
	if v, _ := metricValue(fams, "cellserver_persistence_last_checkpoint_duration_seconds"); v <= 0 {
		t.Errorf("last_checkpoint_duration_seconds = %v after a SAVE", v)
	}
}

// infoMap reads the fields of an INFO reply (a bulk string).
func infoMap(reply string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(reply, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = v
		}
	}
	return out
}

func TestMetricsHistogramBounds(t *testing.T) {
	var h latencyHist
	for _, d := range []time.Duration{500 * time.Nanosecond, 3 * time.Microsecond, 3 * time.Microsecond, 2 * time.Millisecond, 2 * time.Second} {
		h.counts[latencyBucket(int64(d))].Add(1)
	}
	got, total := h.cumulative([]float64{1e-6, 5e-6, 1e-3, 2.5e-3, 1})
	want := []int64{1, 3, 3, 4, 4}
	if total != 5 || !equalInts(got, want) {
		t.Errorf("cumulative = %v, %d; want %v, 5", got, total, want)
	}
	if s := h.sumSeconds(); math.Abs(s-(0.0000005+0.000006+0.002+1)) > 0.02 {
		t.Errorf("sum = %v", s) // 2 s is recorded as the 1 s ceiling
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMetricsFormat(t *testing.T) {
	var b bytes.Buffer
	m := &metricsWriter{b: &b}
	m.family("x_total", "counter", "a\\b\nc")
	m.sample("x_total", 3, "k", "q\"\\\n")
	m.sample("x_total", 0.5)
	m.family("x_total", "counter", "ignored: same family")
	m.sample("x_total", math.Inf(1))
	want := "# HELP x_total a\\\\b\\nc\n# TYPE x_total counter\nx_total{k=\"q\\\"\\\\\\n\"} 3\nx_total 0.5\nx_total +Inf\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if !strings.HasPrefix(MetricsContentType, "text/plain; version=0.0.4") {
		t.Error(MetricsContentType)
	}
}

// logBuffer collects a server's log lines for a test.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPersistLogsCheckpointAndShutdown: at the default level (notice) a
// checkpoint logs what it wrote and how long it took, and a shutdown
// what it saved.
func TestPersistLogsCheckpointAndShutdown(t *testing.T) {
	var logs logBuffer
	level := new(slog.LevelVar)
	level.Set(slog.LevelInfo) // notice
	srv, stop := openServer(t, t.TempDir(), func(c *Config) {
		c.LogLevel = level
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level, ReplaceAttr: ReplaceLogLevel}))
	})
	c := dial(t, srv)
	c.do("SET", "a", "1")
	c.do("SAVE")
	c.do("SET", "b", "2")
	stop()
	out := logs.String()
	for _, want := range []string{
		`level=NOTICE msg="persistence: checkpoint" rewrite=true keys_written=1 `,
		`level=NOTICE msg="persistence: saved at shutdown" dir=`, ` keys=2 `,
		`msg="persistence: store closed, the log is synced"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
