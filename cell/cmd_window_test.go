package cell

import (
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// windowAt runs CL.WINDOW with the server's limiter clock at ms.
func windowAt(srv *Server, c *testConn, ms int64, args ...string) string {
	srv.limiters.fixedNow.Store(ms * int64(time.Millisecond))
	return c.do(append([]string{"CL.WINDOW"}, args...)...)
}

func TestWindowReplies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	t0 := time.Now().UnixMilli()
	steps := []struct {
		at   int64
		args string
		want string
	}{
		{0, "w 3 1000", ints(0, 3, 2, -1, 1000)},
		{100, "w 3 1000 2", ints(0, 3, 0, -1, 1000)},
		{200, "w 3 1000", ints(1, 3, 0, 800, 900)},    // the event at 0 leaves at 1000
		{300, "w 3 1000 3", ints(1, 3, 0, 800, 800)},  // all three must leave: at 1100
		{400, "w 3 1000 4", ints(1, 3, 0, -1, 700)},   // 4 never fits in 3
		{500, "w 3 1000 0", ints(0, 3, 0, -1, 600)},   // cost 0 asks and records nothing
		{1000, "w 3 1000", ints(0, 3, 0, -1, 1000)},   // 0 has left (time > now-window)
		{1099, "w 3 1000", ints(1, 3, 0, 1, 901)},     // the two at 100 leave at 1100
		{1100, "w 3 1000 2", ints(0, 3, 0, -1, 1000)}, // they have
		{5000, "w 3 1000 0", ints(0, 3, 3, -1, 0)},    // all gone
		{5000, "w2 0 10", ints(1, 0, 0, -1, 0)},       // limit 0 refuses all
		{5000, "w3 2 10 2", ints(0, 2, 0, -1, 10)},    // a burst in one ms
		{5001, "w3 2 10", ints(1, 2, 0, 9, 9)},
		// A cost that would overflow count+cost is refused, not wrapped.
		{5002, "w3 9223372036854775807 10 9223372036854775807", ints(1, 9223372036854775807, 9223372036854775805, 8, 8)},
		{5003, "w3 9223372036854775806 10 9223372036854775807", ints(1, 9223372036854775806, 9223372036854775804, -1, 7)},
	}
	for _, s := range steps {
		if got := windowAt(srv, c, t0+s.at, strings.Fields(s.args)...); got != s.want {
			t.Errorf("at %d %s: got %q, want %q", s.at, s.args, got, s.want)
		}
	}
	if got := c.do("exists", "w", "w2"); got != ":0\r\n" {
		t.Errorf("an empty window is kept: EXISTS %q", got)
	}
	if got, want := c.do("pexpiretime", "w3"), ":"+strconv.FormatInt(t0+5000+10, 10)+"\r\n"; got != want {
		t.Errorf("PEXPIRETIME w3 = %q, want %q (window_ms after the newest event)", got, want)
	}
	for _, tc := range [][2]string{
		{"type w3", "+window\r\n"},
		{"object encoding w3", "$6\r\ndeltas\r\n"},
		{"get w3", "-" + ErrWrongType + "\r\n"},
		{"zcard w3", "-" + ErrWrongType + "\r\n"},
		{"dump w3", "-" + ErrDumpType + "\r\n"},
	} {
		if got := c.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Errorf("%s: %q, want %q", tc[0], got, tc[1])
		}
	}
}

func TestWindowErrors(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("set", "s", "1")
	for _, tc := range [][2]string{
		{"cl.window w 1", "-" + errArity("cl.window") + "\r\n"},
		{"cl.window w 1 10 1 x", "-" + ErrSyntax + "\r\n"},
		{"cl.window w x 10", "-" + ErrNotInteger + "\r\n"},
		{"cl.window w 1 1.5", "-" + ErrNotInteger + "\r\n"},
		{"cl.window w 1 10 y", "-" + ErrNotInteger + "\r\n"},
		{"cl.window w -1 10", "-" + ErrWindowLimit + "\r\n"},
		{"cl.window w 1 0", "-" + ErrWindowSpan + "\r\n"},
		{"cl.window w 1 3153600000001", "-" + ErrWindowSpan + "\r\n"},
		{"cl.window w 1 10 -1", "-" + ErrWindowCost + "\r\n"},
		{"cl.window s 1 10", "-" + ErrWrongType + "\r\n"},
		{"exists w", ":0\r\n"},
		{"get s", "$1\r\n1\r\n"},
	} {
		if got := c.do(strings.Fields(tc[0])...); got != tc[1] {
			t.Errorf("%s: %q, want %q", tc[0], got, tc[1])
		}
	}
}

// TestWindowMatchesW1 runs random call sequences through CL.WINDOW and
// through W1's MULTI (ZADD k now m; ZREMRANGEBYSCORE k 0 now-window;
// ZCARD k; PEXPIREAT k now+window; EXEC) on the same server at the same
// instants: the server's test clock, by which the limiter decides and the
// keys of both expire. W1 is taken in its UUID-member form (one member per
// event, cost members for a cost), so that a burst in one millisecond is
// as many events as calls, and W1's ZCARD <= limit is count + cost <=
// limit. CL.WINDOW's log holds the admitted events only (its reply's
// retry_after counts on that), so the W1 side takes a refused call's
// members back, and its key expires window_ms after its newest event, as
// CL.WINDOW's. Every call's whole reply, each key's existence and
// PEXPIRETIME must agree, retry_after and reset checked against the W1
// log by their definitions.
func TestWindowMatchesW1(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	rng := rand.New(rand.NewSource(1))
	// Ahead of the real clock: the active expiry reads that one, and must
	// expire no key before the test clock reaches its time.
	now := time.Now().Add(time.Hour).UnixMilli()
	var seen struct{ allowed, refused, burst, costly, overLimit, zero, edge, expired, limitDrop int }
	seq := 0
	for round := 0; round < 40; round++ {
		type lim struct{ limit, window int64 }
		keys := make([]lim, 1+rng.Intn(3))
		for i := range keys {
			keys[i] = lim{int64(rng.Intn(7)), int64(1 + rng.Intn(60))}
		}
		for step := 0; step < 120; step++ {
			i := rng.Intn(len(keys))
			k := &keys[i]
			wkey, zkey := "w"+strconv.Itoa(i), "z"+strconv.Itoa(i)
			scores := zScores(t, c, zkey)
			switch r := rng.Intn(20); {
			case r < 6: // a burst: the same millisecond again
				seen.burst++
			case r < 9 && len(scores) > 0: // an edge: an event leaves now, or 1 ms off
				if at := scores[rng.Intn(len(scores))] + k.window + int64(rng.Intn(3)-1); at >= now {
					now = at
					seen.edge++
				}
			case r < 10: // past every window: the keys expire
				now += 61 + rng.Int63n(100)
				srv.limiters.fixedNow.Store(now * int64(time.Millisecond))
				if got := c.do("EXISTS", wkey, zkey); got != ":0\r\n" {
					t.Fatalf("round %d step %d: EXISTS %s %s = %q past their windows", round, step, wkey, zkey, got)
				}
				seen.expired++
			default:
				now += rng.Int63n(k.window/3 + 2)
			}
			if rng.Intn(25) == 0 {
				if l := int64(rng.Intn(7)); l < k.limit {
					seen.limitDrop++
					k.limit = l
				} else {
					k.limit = l
				}
			}
			if rng.Intn(40) == 0 {
				k.window = int64(1 + rng.Intn(60))
			}
			cost := int64(1)
			switch r := rng.Intn(10); {
			case r == 0:
				cost = 0
				seen.zero++
			case r < 3:
				cost = 2 + rng.Int63n(k.limit+2) // up to limit+2
				seen.costly++
			}
			if cost > k.limit {
				seen.overLimit++
			}
			srv.limiters.fixedNow.Store(now * int64(time.Millisecond))

			// W1, its members unique per event.
			n := strconv.FormatInt(now, 10)
			members := make([]string, cost)
			for j := range members {
				seq++
				members[j] = n + "-" + strconv.Itoa(seq)
			}
			c.do("MULTI")
			if cost > 0 {
				zadd := []string{"ZADD", zkey}
				for _, m := range members {
					zadd = append(zadd, n, m)
				}
				c.do(zadd...)
			}
			c.do("ZREMRANGEBYSCORE", zkey, "0", strconv.FormatInt(now-k.window, 10))
			c.do("ZCARD", zkey)
			c.do("PEXPIREAT", zkey, strconv.FormatInt(now+k.window, 10))
			exec := replyInts(t, c.do("EXEC"))
			card := exec[len(exec)-2]
			allowed := card <= k.limit
			if !allowed && cost > 0 {
				c.do(append([]string{"ZREM", zkey}, members...)...)
			}
			log := zScores(t, c, zkey)
			if len(log) > 0 && (!allowed || cost == 0) {
				c.do("PEXPIREAT", zkey, strconv.FormatInt(log[len(log)-1]+k.window, 10))
			}

			want := []int64{1, k.limit, k.limit - (card - cost), -1, 0}
			if allowed {
				want[0], want[2] = 0, k.limit-card
				seen.allowed++
			} else {
				seen.refused++
				if cost <= k.limit {
					// The first ms at which the call fits.
					fits := func(at int64) bool {
						left := int64(0)
						for _, s := range log {
							if s > at-k.window {
								left++
							}
						}
						return left+cost <= k.limit
					}
					d := int64(1)
					for !fits(now + d) {
						d++
					}
					want[3] = d
				}
			}
			if len(log) > 0 {
				want[4] = log[len(log)-1] + k.window - now
			}
			got := c.do("CL.WINDOW", wkey, strconv.FormatInt(k.limit, 10), strconv.FormatInt(k.window, 10), strconv.FormatInt(cost, 10))
			where := func() string {
				return "round " + strconv.Itoa(round) + " step " + strconv.Itoa(step) + " at " + n + " " + wkey + " " +
					strconv.FormatInt(k.limit, 10) + " " + strconv.FormatInt(k.window, 10) + " " + strconv.FormatInt(cost, 10)
			}
			if got != ints(want...) {
				t.Fatalf("%s: CL.WINDOW %q, W1 %q (W1 log %v)", where(), got, ints(want...), log)
			}
			if gw, gz := c.do("PEXPIRETIME", wkey), c.do("PEXPIRETIME", zkey); gw != gz {
				t.Fatalf("%s: PEXPIRETIME %q, W1's %q", where(), gw, gz)
			}
		}
		c.do("FLUSHALL")
	}
	t.Logf("cases: %+v", seen)
	for name, n := range map[string]int{"allowed": seen.allowed, "refused": seen.refused, "burst": seen.burst,
		"cost>1": seen.costly, "cost>limit": seen.overLimit, "cost 0": seen.zero, "edge": seen.edge,
		"expiry": seen.expired, "limit lowered": seen.limitDrop} {
		if n < 10 {
			t.Errorf("only %d %s calls: the sequence does not cover the case", n, name)
		}
	}
}

// zScores is the scores of a sorted set, ascending.
func zScores(t *testing.T, c *testConn, key string) []int64 {
	t.Helper()
	parts := strings.Split(c.do("ZRANGE", key, "0", "-1", "WITHSCORES"), "\r\n")
	var out []int64
	for i := 4; i < len(parts); i += 4 {
		v, err := strconv.ParseInt(parts[i], 10, 64)
		if err != nil {
			t.Fatalf("ZRANGE %s: score %q", key, parts[i])
		}
		out = append(out, v)
	}
	return out
}

// replyInts reads an array of integers.
func replyInts(t *testing.T, r string) []int64 {
	t.Helper()
	parts := strings.Split(strings.TrimSuffix(r, "\r\n"), "\r\n")
	var out []int64
	for _, p := range parts[1:] {
		v, err := strconv.ParseInt(strings.TrimPrefix(p, ":"), 10, 64)
		if err != nil || !strings.HasPrefix(p, ":") {
			t.Fatalf("not an array of integers: %q", r)
		}
		out = append(out, v)
	}
	return out
}

// TestWindowDecideModel checks Window.Decide against a plain event list,
// with the clock now and then stepped back, and the window's runs, count
// and newest time against the list after every call.
func TestWindowDecideModel(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 300; round++ {
		limit, window := int64(rng.Intn(8)), int64(1+rng.Intn(50))
		var events []int64 // admitted, one entry per event
		var w keyspace.Window
		now := int64(1000)
		for step := 0; step < 100; step++ {
			now += rng.Int63n(10)
			if rng.Intn(15) == 0 {
				now -= rng.Int63n(8) // a clock stepped back
			}
			cost := int64(rng.Intn(4))
			var live []int64
			for _, e := range events {
				if e > now-window {
					live = append(live, e)
				}
			}
			events = live
			allowed := int64(len(live))+cost <= limit
			d := w.Decide(now, window, limit, cost)
			if d.Limited == allowed {
				t.Fatalf("round %d step %d: limited %v with %d live, cost %d, limit %d", round, step, d.Limited, len(live), cost, limit)
			}
			if allowed {
				for i := int64(0); i < cost; i++ {
					events = append(events, now)
				}
			}
			sort.Slice(events, func(i, j int) bool { return events[i] < events[j] })
			var flat []int64
			for _, r := range w.Runs(nil) {
				if r.Count <= 0 {
					t.Fatalf("round %d step %d: run %v", round, step, r)
				}
				for i := int64(0); i < r.Count; i++ {
					flat = append(flat, r.Time)
				}
			}
			if !slices.Equal(flat, events) {
				t.Fatalf("round %d step %d: runs hold %v, want %v", round, step, flat, events)
			}
			var newest int64
			if len(events) > 0 {
				newest = events[len(events)-1]
			}
			if w.Empty() != (len(events) == 0) || (len(events) > 0 && d.Newest != newest) {
				t.Fatalf("round %d step %d: empty %v newest %d, want %d events, newest %d", round, step, w.Empty(), d.Newest, len(events), newest)
			}
			// Allowed or not, what remains is what the log leaves.
			if d.Remaining != limit-int64(len(events)) {
				t.Fatalf("round %d step %d: remaining %d with %d events, limit %d", round, step, d.Remaining, len(events), limit)
			}
			// retry_after: at now+RetryAfter the call fits, a ms before not.
			if d.Limited && d.RetryAfter >= 0 {
				fits := func(at int64) bool {
					k := int64(0)
					for _, e := range events {
						if e > at-window {
							k++
						}
					}
					return k+cost <= limit
				}
				if !fits(now+d.RetryAfter) || fits(now+d.RetryAfter-1) {
					t.Fatalf("round %d step %d: retry after %d is not the first instant it fits", round, step, d.RetryAfter)
				}
			}
		}
	}
}

// TestWindowPersist: windows survive a restart, from the effect log and
// from a checkpoint, and the limiter continues where it stopped.
func TestWindowPersist(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	t0 := time.Now().UnixMilli()
	for i := int64(0); i < 5; i++ {
		windowAt(srv, c, t0+i, "a", "10", "60000")
	}
	c.do("SAVE")
	for i := int64(0); i < 3; i++ {
		windowAt(srv, c, t0+10+i, "a", "10", "60000", "2")
		windowAt(srv, c, t0+10+i, "b", "100", "60000")
	}
	want := []string{
		windowAt(srv, c, t0+20, "a", "10", "60000", "0"),
		windowAt(srv, c, t0+20, "b", "100", "60000", "0"),
		c.do("pexpiretime", "a"), c.do("type", "b"),
	}
	stop()
	srv2, _ := openServer(t, dir, nil)
	c2 := dial(t, srv2)
	got := []string{
		windowAt(srv2, c2, t0+20, "a", "10", "60000", "0"),
		windowAt(srv2, c2, t0+20, "b", "100", "60000", "0"),
		c2.do("pexpiretime", "a"), c2.do("type", "b"),
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("after restart %q, before %q", got, want)
	}
	// 5 events, then 2 at +10 and 2 at +11; the 2 at +12 were refused.
	if want := ints(0, 10, 1, -1, 59991); got[0] != want {
		t.Errorf("a after restart: %q, want %q", got[0], want)
	}
}

// TestLimiterMetrics: every rate limiting command's outcomes reach INFO
// limiters and /metrics (parsed by Prometheus's parser).
func TestLimiterMetrics(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, cmd := range []string{
		"cl.window w 1 60000", "cl.window w 1 60000", "cl.window w x 60000",
		"cl.throttleall a 0 1 60 1 b 0 1 60 1", "cl.throttleall a 0 1 60 1", "cl.probeall a 0 1 60 0",
		"cl.probeall a 0 1 60 1 b 0 1 60 0",
	} {
		c.do(strings.Fields(cmd)...)
	}
	info := c.do("info", "limiters")
	for _, want := range []string{
		"# Limiters\r\n",
		"limiter_cl_window:allowed=1,limited=1,errors=1\r\n",
		"limiter_cl_throttleall:allowed=1,limited=1,errors=0\r\n",
		"limiter_cl_probeall:allowed=1,limited=1,errors=0\r\n",
		"limiter_cl_throttle:allowed=0,limited=0,errors=0\r\n",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO limiters lacks %q:\n%s", want, info)
		}
	}
	if strings.Contains(c.do("info"), "limiter_") {
		t.Error("INFO without arguments shows the limiters section, which Redis's has not")
	}
	fams := scrape(t, srv)
	for _, tc := range []struct {
		cmd, result string
		want        float64
	}{
		{"cl.window", "allowed", 1}, {"cl.window", "limited", 1}, {"cl.window", "error", 1},
		{"cl.throttleall", "allowed", 1}, {"cl.throttleall", "limited", 1},
		{"cl.probeall", "allowed", 1}, {"cl.probeall", "limited", 1},
	} {
		if got, ok := metricValue(fams, "cellserver_throttle_total", "cmd", tc.cmd, "result", tc.result); !ok || got != tc.want {
			t.Errorf("cellserver_throttle_total{cmd=%s,result=%s} = %v (present %v), want %v", tc.cmd, tc.result, got, ok, tc.want)
		}
	}
}

// TestLimiterPrefixesAndTop: decisions are counted per named prefix
// (set at start and by CONFIG SET), and CL.TOPREFUSED lists the keys
// refused most, estimated from a sample.
func TestLimiterPrefixesAndTop(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.LimiterPrefixes = "api:,login:" })
	c := dial(t, srv)
	if got := c.do("config", "get", "limiter-prefixes"); got != "*2\r\n$16\r\nlimiter-prefixes\r\n$11\r\napi:,login:\r\n" {
		t.Errorf("CONFIG GET: %q", got)
	}
	for i := 0; i < 400; i++ {
		c.do("cl.window", "api:hot", "1", "600000")     // 1 allowed, 399 refused
		c.do("cl.throttle", "login:x", "0", "1", "600") // 1 allowed, 399 refused
		c.do("cl.window", "other:"+strconv.Itoa(i%3), "1000", "600000")
	}
	c.do("cl.probe", "api:hot2", "0", "1", "600")
	info := c.do("info", "limiters")
	for _, want := range []string{
		"limiter_prefix_0:prefix=api:,allowed=2,limited=399\r\n",
		"limiter_prefix_1:prefix=login:,allowed=1,limited=399\r\n",
	} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO limiters lacks %q:\n%s", want, info)
		}
	}
	fams := scrape(t, srv)
	if got, ok := metricValue(fams, "cellserver_limiter_prefix_total", "prefix", "login:", "result", "limited"); !ok || got != 399 {
		t.Errorf("cellserver_limiter_prefix_total{login:,limited} = %v (present %v)", got, ok)
	}
	top := c.do("cl.toprefused", "2")
	if !strings.HasPrefix(top, "*2\r\n*2\r\n") || !strings.Contains(top, "api:hot") || !strings.Contains(top, "login:x") || strings.Contains(top, "other:") {
		t.Errorf("CL.TOPREFUSED 2: %q", top)
	}
	if got := c.do("cl.toprefused", "x"); got != "-"+ErrNotInteger+"\r\n" {
		t.Errorf("CL.TOPREFUSED x: %q", got)
	}
	c.do("config", "set", "limiter-prefixes", "")
	if strings.Contains(c.do("info", "limiters"), "limiter_prefix_") {
		t.Error("prefixes still counted after CONFIG SET limiter-prefixes \"\"")
	}
}

// FuzzLimiterArgs sends CL.WINDOW and CL.THROTTLEALL arbitrary numbers:
// the reply is an error or the command's array, never a panic, and a
// refused CL.THROTTLEALL or an error leaves the keys as they were.
func FuzzLimiterArgs(f *testing.F) {
	f.Add("3", "1000", "1", "4", "1", "60")
	f.Add("-1", "0", "x", "9223372036854775807", "0", "-5")
	f.Add("0", "3153600000000", "9223372036854775807", "-9223372036854775808", "1", "1")
	srv := startServer(f, nil)
	f.Fuzz(func(t *testing.T, a, b, d, burst, count, period string) {
		c := dial(t, srv)
		r := c.do("CL.WINDOW", "w", a, b, d)
		if !strings.HasPrefix(r, "-") && !strings.HasPrefix(r, "*5\r\n:") {
			t.Fatalf("CL.WINDOW w %q %q %q: %q", a, b, d, r)
		}
		before := c.do("get", "t1") + c.do("pexpiretime", "t1")
		r = c.do("CL.THROTTLEALL", "t1", "1", "1", "60", "1", "t2", burst, count, period, d)
		after := c.do("get", "t1") + c.do("pexpiretime", "t1")
		switch {
		case strings.HasPrefix(r, "*3\r\n:0\r\n"):
		case strings.HasPrefix(r, "*3\r\n:1\r\n"), strings.HasPrefix(r, "-") && !strings.Contains(r, "expire"):
			if before != after {
				t.Fatalf("%q %q %q %q: refused or failed (%q) but t1 changed", burst, count, period, d, r)
			}
		case strings.HasPrefix(r, "-"):
		default:
			t.Fatalf("CL.THROTTLEALL: %q", r)
		}
	})
}
