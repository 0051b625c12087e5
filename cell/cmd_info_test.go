package cell

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func infoBody(t *testing.T, raw string) string {
	t.Helper()
	i := strings.Index(raw, "\r\n")
	if i < 0 || raw[0] != '$' {
		t.Fatalf("not a bulk string: %q", raw)
	}
	return raw[i+2 : len(raw)-2]
}

func TestInfoKeyspaceAndStats(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	if got := infoBody(t, c.do("info", "keyspace")); got != "# Keyspace\r\n" {
		t.Errorf("empty keyspace: %q", got)
	}
	// CL.THROTTLE stores its state in a key with a TTL.
	c.do("cl.throttle", "a", "5", "10", "60")
	c.do("cl.throttle", "b", "5", "10", "60")
	c.do("select", "3")
	c.do("cl.throttle", "c", "5", "10", "60")
	want := "# Keyspace\r\ndb0:keys=2,expires=2,avg_ttl=0\r\ndb3:keys=1,expires=1,avg_ttl=0\r\n"
	if got := infoBody(t, c.do("info", "keyspace")); got != want {
		t.Errorf("keyspace: got %q, want %q", got, want)
	}
	stats := infoBody(t, c.do("info", "stats"))
	for _, re := range []string{`(?m)^total_connections_received:1\r$`, `(?m)^total_commands_processed:\d+\r$`, `(?m)^expired_keys:0\r$`} {
		if !regexp.MustCompile(re).MatchString(stats) {
			t.Errorf("stats lack %s: %q", re, stats)
		}
	}
	persist := infoBody(t, c.do("info", "persistence"))
	if !strings.Contains(persist, "rdb_changes_since_last_save:3\r\n") {
		t.Errorf("persistence: %q", persist)
	}
}

func TestInfoResetStat(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("nosuch")
	c.do("hello", "9")
	c.do("echo")
	if got := c.do("config", "resetstat"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	c.do("echo", "x")
	c.do("select", "x")
	body := infoBody(t, c.do("info", "commandstats", "errorstats", "stats"))
	for _, want := range []string{
		"cmdstat_echo:calls=1,",
		",rejected_calls=0,failed_calls=0\r\n",
		"cmdstat_select:calls=1,",
		"cmdstat_config|resetstat:calls=1,",
		"# Errorstats\r\nerrorstat_ERR:count=1\r\n",
		"total_error_replies:1\r\n",
		"total_commands_processed:3\r\n",
		"total_connections_received:0\r\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %q in %q", want, body)
		}
	}
	if strings.Contains(body, "cmdstat_hello") || strings.Contains(body, "NOPROTO") {
		t.Errorf("stats before RESETSTAT remain: %q", body)
	}
}

func TestInfoSectionsOrder(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	heads := func(args ...string) string {
		var out []string
		for _, l := range strings.Split(infoBody(t, c.do(args...)), "\r\n") {
			if strings.HasPrefix(l, "# ") {
				out = append(out, l[2:])
			}
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"info"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Errorstats,Cluster,Keyspace"},
		{[]string{"info", "everything"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Commandstats,Errorstats,Latencystats,Cluster,Keyspace"},
		{[]string{"info", "KEYSPACE", "server", "nosuch"}, "Server,Keyspace"},
		{[]string{"info", "commandstats", "default"}, "Server,Clients,Memory,Persistence,Stats,Replication,CPU,Modules,Commandstats,Errorstats,Cluster,Keyspace"},
	}
	for _, tc := range tests {
		if got := heads(tc.args...); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.args, got, tc.want)
		}
	}
	if got := c.do("info", "nosuch"); got != "$0\r\n\r\n" {
		t.Errorf("unknown section: %q", got)
	}
	c.do("hello", "3")
	if got := c.do("info", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Errorf("RESP3 INFO: %q", got)
	}
}

func TestBytesToHuman(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{{0, "0B"}, {1023, "1023B"}, {1024, "1.00K"}, {1212520, "1.16M"}, {25276502016, "23.54G"}, {1 << 40, "1.00T"}}
	for _, tc := range tests {
		if got := bytesToHuman(tc.n); got != tc.want {
			t.Errorf("bytesToHuman(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestLatencyHistogram(t *testing.T) {
	// Bucket 0 is never used: values are at least 1 ns, as in Redis.
	prevHi := uint64(0)
	for i := 1; i < latencyBuckets; i++ {
		lo, hi := latencyBucketRange(i)
		if hi > 1e9 { // values are clamped to 1s
			break
		}
		if lo > hi || lo != prevHi+1 {
			t.Fatalf("bucket %d: [%d, %d] after %d", i, lo, hi, prevHi)
		}
		if latencyBucket(int64(lo)) != i || latencyBucket(int64(hi)) != i {
			t.Fatalf("bucket %d: [%d, %d] maps to %d, %d", i, lo, hi, latencyBucket(int64(lo)), latencyBucket(int64(hi)))
		}
		prevHi = hi
	}
	var cs cmdStats
	for i := 1; i <= 100; i++ {
		cs.recordLatency(time.Duration(i) * time.Microsecond)
	}
	h := cs.latency.Load()
	for _, tc := range []struct {
		p      float64
		lo, hi uint64
	}{{0, 990, 1000}, {50, 50000, 51000}, {99, 99000, 100600}, {100, 100000, 101600}} {
		if got := h.percentile(tc.p); got < tc.lo || got > tc.hi {
			t.Errorf("p%v = %d, want in [%d, %d]", tc.p, got, tc.lo, tc.hi)
		}
	}
}

// TestCommandStatsPerServer: two servers in one process keep their own
// INFO commandstats and latencystats.
func TestCommandStatsPerServer(t *testing.T) {
	a, b := startServer(t, nil), startServer(t, nil)
	ca, cb := dial(t, a), dial(t, b)
	for range 3 {
		ca.do("set", "k", "v")
	}
	cb.do("get", "k")
	for _, tc := range []struct {
		c          *testConn
		want, none string
	}{
		{ca, `(?m)^cmdstat_set:calls=3,`, `(?m)^cmdstat_get:`},
		{cb, `(?m)^cmdstat_get:calls=1,`, `(?m)^cmdstat_set:`},
	} {
		got := infoBody(t, tc.c.do("info", "commandstats"))
		if !regexp.MustCompile(tc.want).MatchString(got) || regexp.MustCompile(tc.none).MatchString(got) {
			t.Errorf("commandstats: want %s and no %s: %q", tc.want, tc.none, got)
		}
		lat := infoBody(t, tc.c.do("info", "latencystats"))
		if strings.Contains(lat, "latency_percentiles_usec_set:") != (tc.c == ca) {
			t.Errorf("latencystats of the other server's SET: %q", lat)
		}
	}
}
