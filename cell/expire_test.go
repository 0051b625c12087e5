package cell

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Keys with a TTL that nobody touches again leave memory through the
// active cycle alone: DBSIZE and INFO keyspace count them until it reaps
// them, and the shard maps are rebuilt small afterwards.
func TestActiveExpiryReapsUntouchedKeys(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Hz = 50 })
	c := dial(t, srv)
	const n = 20000
	var batch []byte
	for i := 0; i < n; i++ {
		batch = append(batch, encode("SET", "k"+strconv.Itoa(i), "v", "PX", "1000")...)
	}
	batch = append(batch, encode("SET", "stays", "v")...)
	if _, err := c.nc.Write(batch); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= n; i++ {
		if r := c.read(); r != "+OK\r\n" {
			t.Fatalf("SET %d: %q", i, r)
		}
	}
	// A slow machine may already have reaped some; most must be there.
	if got := atoiReply(c.do("DBSIZE")); got < n/2 {
		t.Fatalf("DBSIZE right after = %d", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for c.do("DBSIZE") != ":1\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("DBSIZE still %s long after every TTL passed", c.do("DBSIZE"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := c.do("GET", "stays"); got != "$1\r\nv\r\n" {
		t.Errorf("a key without TTL went too: GET = %q", got)
	}
	total := srv.ks.Counts(0, true).Expires
	if total != 0 {
		t.Errorf("withTTL counts %d keys after all expired", total)
	}
}

// Reaping asks for a collection only if the runtime does not run one of
// its own within reapGCDelay: an idle server gets it, a busy one is not
// made to mark its whole heap once more.
func TestReapCollect(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type step struct {
		after  time.Duration // since t0
		reaped int           // added before the step
		cycles uint64        // the runtime's count
		want   bool
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"idle: collect after the delay", []step{
			{0, reapedBeforeGC, 7, false},
			{reapGCDelay / 2, 0, 7, false},
			{reapGCDelay, 0, 7, true},
			{2 * reapGCDelay, 0, 7, false}, // once
		}},
		{"too few reaped", []step{
			{0, reapedBeforeGC - 1, 7, false},
			{2 * reapGCDelay, 0, 7, false},
		}},
		{"busy: the runtime collected meanwhile", []step{
			{0, reapedBeforeGC, 7, false},
			{time.Second, 0, 8, false},
			{reapGCDelay, 0, 8, false},
			{2 * reapGCDelay, 0, 8, false},
		}},
		{"more reaped while waiting: still one request, from the first", []step{
			{0, reapedBeforeGC, 7, false},
			{time.Second, reapedBeforeGC, 7, false},
			{reapGCDelay, 0, 7, true},
		}},
		{"a second round after a collection", []step{
			{0, reapedBeforeGC, 7, false},
			{time.Second, 0, 8, false},
			{2 * time.Second, reapedBeforeGC, 8, false},
			{2*time.Second + reapGCDelay, 0, 8, true},
		}},
	}
	// The runtime's count that due compares: a wrong metric name would
	// read 0 for ever, and every request would force its collection.
	before := gcCycles()
	runtime.GC()
	if after := gcCycles(); after <= before {
		t.Errorf("gcCycles %d after a collection, %d before", after, before)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r reapCollect
			for i, st := range tc.steps {
				r.reaped += st.reaped
				if got := r.due(t0.Add(st.after), func() uint64 { return st.cycles }); got != st.want {
					t.Fatalf("step %d (%v): due = %v, want %v", i, st.after, got, st.want)
				}
			}
		})
	}
}
