package cell

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
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

func TestMetricsPersistenceHook(t *testing.T) {
	srv := startServer(t, nil)
	srv.SetPersistenceMetrics(func() []MetricSample {
		return []MetricSample{
			{Name: "cellserver_persistence_enabled", Help: "on", Type: "gauge", Value: 1},
			{Name: "cellserver_persistence_log_bytes", Help: "effect log size", Type: "gauge", Labels: []string{"dir", `a"b\c`}, Value: 12345},
		}
	})
	fams := scrape(t, srv)
	if v, _ := metricValue(fams, "cellserver_persistence_enabled"); v != 1 {
		t.Errorf("persistence_enabled = %v", v)
	}
	if v, _ := metricValue(fams, "cellserver_persistence_log_bytes", "dir", `a"b\c`); v != 12345 {
		t.Errorf("persistence_log_bytes = %v", v)
	}
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
