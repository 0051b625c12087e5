package cell

import (
	"math/rand"
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

// TestWindowMatchesW1 runs random calls through CL.WINDOW and through
// W1's MULTI (ZADD k now now; ZREMRANGEBYSCORE k 0 now-window; ZCARD k;
// PEXPIREAT now+window) on the same server at the same instants (the limiter clock set
// to W1's now), and wants the same decisions and remainders. W1 logs a
// refused call too; CL.WINDOW counts admitted events only, so here the
// W1 side takes a refused call's entry back (ZREM), and instants are
// distinct milliseconds (W1 folds two calls of one ms into one member).
func TestWindowMatchesW1(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 20; round++ {
		limit := int64(1 + rng.Intn(6))
		window := int64(5 + rng.Intn(200))
		// An hour ahead of the real clock, which expires keys: neither
		// key may expire under the test before its time.
		now := time.Now().Add(time.Hour).UnixMilli()
		allowed, refused := 0, 0
		for step := 0; step < 150; step++ {
			now += 1 + rng.Int63n(window/2+1)
			if rng.Intn(4) == 0 {
				now += 1 + rng.Int63n(2)
			}
			n := strconv.FormatInt(now, 10)
			c.do("MULTI")
			c.do("ZADD", "z", n, n)
			c.do("ZREMRANGEBYSCORE", "z", "0", strconv.FormatInt(now-window, 10))
			c.do("ZCARD", "z")
			c.do("PEXPIREAT", "z", strconv.FormatInt(now+window, 10))
			r := c.do("EXEC")
			parts := strings.Split(r, "\r\n")
			card, _ := strconv.ParseInt(strings.TrimPrefix(parts[3], ":"), 10, 64)
			w1Allowed := card <= limit
			if !w1Allowed {
				c.do("ZREM", "z", n)
			}
			got := windowAt(srv, c, now, "w", strconv.FormatInt(limit, 10), strconv.FormatInt(window, 10))
			want := ints(1, limit, limit-(card-1), -1, 0)
			if w1Allowed {
				want = ints(0, limit, limit-card, -1, window)
				allowed++
			} else {
				refused++
			}
			// retry_after and reset are not W1's: compare the first three.
			if g, w := strings.Join(strings.Split(got, "\r\n")[:4], "|"), strings.Join(strings.Split(want, "\r\n")[:4], "|"); g != w {
				t.Fatalf("round %d step %d (limit %d window %d at %d): CL.WINDOW %q, W1 %q", round, step, limit, window, now, got, want)
			}
		}
		if allowed == 0 || refused == 0 {
			t.Errorf("round %d: allowed %d refused %d", round, allowed, refused)
		}
		c.do("DEL", "z", "w")
	}
}

// TestWindowDecideModel checks DecideWindow against a plain event list.
func TestWindowDecideModel(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 200; round++ {
		limit, window := int64(rng.Intn(8)), int64(1+rng.Intn(50))
		var events []int64 // admitted, one entry per event
		var runs []keyspace.WindowRun
		now := int64(1000)
		for step := 0; step < 100; step++ {
			now += rng.Int63n(10)
			cost := int64(rng.Intn(4))
			var live []int64
			for _, e := range events {
				if e > now-window {
					live = append(live, e)
				}
			}
			events = live
			allowed := int64(len(live))+cost <= limit
			var d keyspace.WindowDecision
			runs, d = keyspace.DecideWindow(runs, now, window, limit, cost)
			if d.Limited == allowed {
				t.Fatalf("round %d step %d: limited %v with %d live, cost %d, limit %d", round, step, d.Limited, len(live), cost, limit)
			}
			if allowed {
				for i := int64(0); i < cost; i++ {
					events = append(events, now)
				}
			}
			var n int64
			for _, r := range runs {
				n += r.Count
			}
			if n != int64(len(events)) {
				t.Fatalf("round %d step %d: runs hold %d events, want %d", round, step, n, len(events))
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
			var w keyspace.Window
			w.SetRuns(runs)
			if back := w.Runs(nil); len(back) != len(runs) || (len(runs) > 0 && back[len(back)-1] != runs[len(runs)-1]) {
				t.Fatalf("encoding round trip: %v -> %v", runs, back)
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
