package cell

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// GET /metrics in Prometheus's text exposition format 0.0.4, written by
// hand: the format is a few lines of text per sample, and the client
// library would bring a dozen modules and its own registry for what the
// server already counts (INFO's counters, commandstats, latencystats).
//
// A scrape reads atomics, locks each shard in turn for a moment to count
// its keys, and nothing else. Counters restart from zero after CONFIG
// RESETSTAT, which Prometheus's rate() treats as a counter reset.

// MetricsContentType is the Content-Type of the exposition.
const MetricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// throttleResult indexes the CL.THROTTLE / CL.PROBE outcome counters.
type throttleResult int

const (
	throttleAllowed throttleResult = iota
	throttleLimited
	throttleError
)

// throttleCounters counts the rate limiting commands' outcomes, indexed
// by limiterCmd (limiter_stats.go) and throttleResult.
type throttleCounters [limiterCmds][3]atomic.Int64

// countThrottle records the outcome of one rate limiting command cmd: an
// error reply, or the limited flag of its reply. Per client, published at
// the end of its batch: no cost per key and no shared write per call.
func (x *Ctx) countThrottle(cmd limiterCmd, limited bool) {
	r := throttleAllowed
	switch {
	case x.failed:
		r = throttleError
	case limited:
		r = throttleLimited
	}
	t := &x.cl.tally // published at the end of the batch (stats_tally.go)
	t.throttle[cmd][r]++
	t.throttled = true
	if r != throttleError {
		x.srv.limiters.countDecision(cmd, x.Args, limited, x.wallNow()) // limiter_stats.go
	}
}

// MetricsHandler serves the exposition on GET (and HEAD) of any path it is
// mounted at.
func (s *Server) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var b bytes.Buffer
		s.WriteMetrics(&b)
		w.Header().Set("Content-Type", MetricsContentType)
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		if r.Method == http.MethodGet {
			w.Write(b.Bytes())
		}
	})
}

// metricsWriter writes families in the text format; each family's HELP
// and TYPE come once, before its first sample.
type metricsWriter struct {
	b    *bytes.Buffer
	last string
}

func (m *metricsWriter) family(name, typ, help string) {
	if m.last == name {
		return
	}
	m.last = name
	m.b.WriteString("# HELP " + name + " ")
	for i := 0; i < len(help); i++ {
		switch help[i] {
		case '\\':
			m.b.WriteString(`\\`)
		case '\n':
			m.b.WriteString(`\n`)
		default:
			m.b.WriteByte(help[i])
		}
	}
	m.b.WriteString("\n# TYPE " + name + " " + typ + "\n")
}

// sample writes name{labels} value; labels alternate names and values.
func (m *metricsWriter) sample(name string, v float64, labels ...string) {
	m.b.WriteString(name)
	if len(labels) > 0 {
		m.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				m.b.WriteByte(',')
			}
			m.b.WriteString(labels[i])
			m.b.WriteString(`="`)
			writeLabelValue(m.b, labels[i+1])
			m.b.WriteByte('"')
		}
		m.b.WriteByte('}')
	}
	m.b.WriteByte(' ')
	m.b.WriteString(formatMetricValue(v))
	m.b.WriteByte('\n')
}

func writeLabelValue(b *bytes.Buffer, v string) {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(v[i])
		}
	}
}

func formatMetricValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// metricsLatencyBounds are the histogram's upper bounds in seconds. The
// underlying histograms (latency.go) are finer; a fine bucket counts
// toward a bound when all of it lies at or below the bound, so a count is
// never reported below a bound it may exceed (the error is under 1/64).
var metricsLatencyBounds = []float64{
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1,
}

// WriteMetrics writes the whole exposition to w.
func (s *Server) WriteMetrics(w io.Writer) error {
	var buf bytes.Buffer
	m := &metricsWriter{b: &buf}
	cmds := allCommands()

	for _, f := range []struct {
		name, help string
		get        func(*cmdStats) int64
	}{
		{"cellserver_commands_total", "Commands run, per command (INFO commandstats calls).", func(cs *cmdStats) int64 { return cs.calls.Load() }},
		{"cellserver_commands_failed_total", "Commands that ran and replied with an error, per command.", func(cs *cmdStats) int64 { return cs.failed.Load() }},
		{"cellserver_commands_rejected_total", "Commands refused before running (arity, NOAUTH, MULTI rules), per command.", func(cs *cmdStats) int64 { return cs.rejected.Load() }},
	} {
		for _, c := range cmds {
			if v := f.get(s.statsOf(c)); v > 0 {
				m.family(f.name, "counter", f.help)
				m.sample(f.name, float64(v), "cmd", c.Name)
			}
		}
	}

	const hist = "cellserver_command_duration_seconds"
	for _, c := range cmds {
		h := s.statsOf(c).latency.Load()
		if h == nil {
			continue
		}
		m.family(hist, "histogram", "Time commands took to run, per command (the latencystats histograms; off with latency-tracking no).")
		counts, total := h.cumulative(metricsLatencyBounds)
		for i, le := range metricsLatencyBounds {
			m.sample(hist+"_bucket", float64(counts[i]), "cmd", c.Name, "le", formatMetricValue(le))
		}
		m.sample(hist+"_bucket", float64(total), "cmd", c.Name, "le", "+Inf")
		m.sample(hist+"_sum", h.sumSeconds(), "cmd", c.Name)
		m.sample(hist+"_count", float64(total), "cmd", c.Name)
	}

	s.mu.Lock()
	clients := len(s.clients)
	s.mu.Unlock()
	gauge := func(name, help string, v float64, labels ...string) {
		m.family(name, "gauge", help)
		m.sample(name, v, labels...)
	}
	counter := func(name, help string, v float64, labels ...string) {
		m.family(name, "counter", help)
		m.sample(name, v, labels...)
	}
	gauge("cellserver_connected_clients", "Clients connected now.", float64(clients))
	counter("cellserver_connections_total", "Connections accepted (INFO total_connections_received).", float64(s.stats.connections.Load()))
	counter("cellserver_rejected_connections_total", "Connections refused at maxclients.", float64(s.stats.rejectedConns.Load()))
	counter("cellserver_error_replies_total", "Error replies sent (INFO total_error_replies).", float64(s.stats.errorReplies.Load()))

	expired := int64(0)
	keys := make([]int, s.ks.DBs())
	ttl := make([]int, s.ks.DBs())
	for d := range s.ks.DBs() {
		if s.loading.Load() {
			break // the loader fills the shards unlocked (loading.go)
		}
		c := s.ks.Counts(d, true)
		keys[d], ttl[d] = c.Keys, c.Expires
		expired += c.Expired
	}
	for d := range keys {
		gauge("cellserver_keys", "Keys per database, counting expired keys not yet reaped (INFO keyspace).", float64(keys[d]), "db", strconv.Itoa(d))
	}
	for d := range ttl {
		gauge("cellserver_keys_with_expiry", "Keys with a TTL per database.", float64(ttl[d]), "db", strconv.Itoa(d))
	}
	counter("cellserver_expired_keys_total", "Keys removed because their TTL passed (INFO expired_keys).", float64(expired-s.stats.expiredBase.Load()))

	heap := goHeapInUse()
	gauge("cellserver_memory_heap_inuse_bytes", "Go heap in use: spans holding objects.", float64(heap))
	if rss, ok := residentBytes(); ok {
		gauge("cellserver_memory_rss_bytes", "Resident set size (/proc/self/statm).", float64(rss))
	}
	gauge("cellserver_uptime_seconds", "Seconds since the server started.", time.Since(s.start).Seconds())

	counter("cellserver_evicted_keys_total", "Keys evicted to stay under maxmemory (INFO evicted_keys).", float64(s.ops.mem.evicted.Load()))
	s.writePersistMetrics(gauge, counter) // metrics_persist.go

	const thr = "cellserver_throttle_total"
	for i, cmd := range limiterCmdNames {
		for r, res := range []string{"allowed", "limited", "error"} {
			counter(thr, "Rate limiting commands' outcomes (CL.THROTTLE, CL.THROTTLEALL, CL.PROBE, CL.PROBEALL, CL.WINDOW): allowed, limited, or an error reply.",
				float64(s.obs.throttle[i][r].Load()), "cmd", cmd, "result", res)
		}
	}
	if t := s.limiters.prefixes.Load(); t != nil {
		for i, p := range t.names {
			for r, res := range []string{"allowed", "limited"} {
				counter("cellserver_limiter_prefix_total", "Rate limiting decisions per key prefix named by --limiter-prefixes (a key counts under its first matching prefix).",
					float64(t.n[i][r].Load()), "prefix", string(p), "result", res)
			}
		}
	}
	counter("cellserver_slowlog_entries_total", "Commands logged to the slow log since start (the next SLOWLOG id).", float64(s.obs.slowlog.logged()))

	_, err := w.Write(buf.Bytes())
	return err
}

// cumulative returns, for each bound in seconds, the number of recorded
// durations in fine buckets lying wholly at or below it, and the total.
func (h *latencyHist) cumulative(bounds []float64) ([]int64, int64) {
	out := make([]int64, len(bounds))
	total := int64(0)
	b := 0
	for i := range latencyBuckets {
		n := h.counts[i].Load()
		if n == 0 {
			continue
		}
		_, hi := latencyBucketRange(i)
		for b < len(bounds) && float64(hi) > math.Round(bounds[b]*1e9) {
			out[b] = total
			b++
		}
		total += n
	}
	for ; b < len(bounds); b++ {
		out[b] = total
	}
	return out, total
}

// sumSeconds estimates the histogram's sum from each bucket's midpoint
// (exact below 128 ns, within 1/128 above).
func (h *latencyHist) sumSeconds() float64 {
	sum := 0.0
	for i := range latencyBuckets {
		if n := h.counts[i].Load(); n > 0 {
			lo, hi := latencyBucketRange(i)
			sum += float64(n) * (float64(lo) + float64(hi)) / 2
		}
	}
	return sum / 1e9
}

// goHeapInUse is the bytes of heap spans in use (MemStats.HeapInuse), read
// without stopping the world.
func goHeapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			n += x.Value.Uint64()
		}
	}
	return n
}

// residentBytes reads the resident set size from /proc/self/statm.
func residentBytes() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
