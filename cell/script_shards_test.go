package cell

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runningScripts samples the scripts running now: how many, and whether
// one of them holds every shard.
func runningScripts(srv *Server) (n int, all bool) {
	srv.scriptMu.Lock()
	defer srv.scriptMu.Unlock()
	for r := range srv.running {
		n++
		all = all || r.allowAll
	}
	return n, all
}

// TestScriptsOnDifferentShardsOverlap: on default settings two slow
// scripts on declared keys of different shards are seen running at the
// same moment, while a script that needs every shard is never seen
// running beside another.
func TestScriptsOnDifferentShardsOverlap(t *testing.T) {
	srv := startServer(t, nil)
	a, b := keysOnShards(srv)
	slow := "redis.call('incr', KEYS[1]) local x = 0 for i = 1, 300000 do x = x + i end return x"
	whole := "local n = #redis.call('keys', '*') local x = 0 for i = 1, 300000 do x = x + i end return n"
	var overlap, allAlone atomic.Bool
	allAlone.Store(true)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, all := runningScripts(srv)
			if n >= 2 && !all {
				overlap.Store(true)
			}
			if n >= 2 && all {
				allAlone.Store(false)
			}
		}
	}()
	conns := []*testConn{dial(t, srv), dial(t, srv), dial(t, srv)}
	for attempt := 0; attempt < 50 && !overlap.Load(); attempt++ {
		var wg sync.WaitGroup
		for i, k := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conns[i].do("EVAL", slow, "1", k)
			}()
		}
		wg.Wait()
	}
	if !overlap.Load() {
		t.Error("two scripts on different shards never ran at the same time")
	}
	// The whole-keyspace script (remembered as such after its first run)
	// beside the declared ones.
	for attempt := 0; attempt < 20; attempt++ {
		var wg sync.WaitGroup
		for i, args := range [][]string{{whole, "0"}, {slow, "1", a}, {slow, "1", b}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := conns[i].do(append([]string{"EVAL"}, args...)...); got[0] != ':' {
					t.Errorf("%q: %q", args[0], got)
				}
			}()
		}
		wg.Wait()
	}
	close(stop)
	<-sampled
	if !allAlone.Load() {
		t.Error("a script holding every shard ran beside another")
	}
}

// TestScriptsSerialInterleaving: scripts that increment a declared counter
// and an undeclared total (before or after writing, so both ways of taking
// more shards run), against readers that check in one atomic step that the
// counters add up to the total. A reader seeing anything else has seen an
// interleaving no serial order of the scripts shows.
func TestScriptsSerialInterleaving(t *testing.T) {
	writeFirst := "redis.call('incr', KEYS[1]) return redis.call('incr', 'total')"
	readFirst := "local t = tonumber(redis.call('get', 'total') or '0') redis.call('incr', KEYS[1]) redis.call('set', 'total', t + 1) return t + 1"
	checkSerial(t, 150, func(c *testConn, w, i int, counter string) bool {
		body := writeFirst
		if (i+w)%2 == 1 {
			body = readFirst
		}
		body += " -- " + strconv.Itoa(i%7) // several scripts, some new each time
		return c.do("EVAL", body, "1", counter)[0] == ':'
	}, 1)
}

// checkSerial runs 4 writers for rounds rounds each, write adding one to
// the given counter and one to the total each of its calls (calls of
// them), against two readers that check in one atomic step that the
// counters add up to the total: a script, and MGET, which locks its
// shards in order. A reader seeing anything else has seen an interleaving
// no serial order of the writers' scripts shows. false from write: its
// reply was not an integer.
func checkSerial(t *testing.T, rounds int, write func(c *testConn, w, i int, counter string) bool, calls int) {
	srv := startServer(t, nil)
	const writers, counters = 4, 8
	var names []string
	for i := range counters {
		names = append(names, "c"+strconv.Itoa(i))
	}
	check := "local s = 0 for _, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k) or '0') end " +
		"local t = tonumber(redis.call('get', 'total') or '0') if s ~= t then return redis.error_reply('sum ' .. s .. ' total ' .. t) end return t"
	done := make(chan struct{})
	var wg, readers sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		c := dial(t, srv)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if !write(c, w, i, names[(i*writers+w)%counters]) {
					t.Errorf("writer %d, round %d: a reply other than an integer", w, i)
					return
				}
			}
		}()
	}
	for r := range 2 {
		readers.Add(1)
		c := dial(t, srv)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var got string
				if r == 0 {
					got = c.do(append([]string{"EVAL", check, "0"}, names...)...)
				} else {
					got = sumMGET(c.do(append([]string{"MGET", "total"}, names...)...))
				}
				if strings.HasPrefix(got, "-") {
					t.Errorf("reader %d: %q", r, got)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	c := dial(t, srv)
	want := strconv.Itoa(calls * writers * rounds)
	if got := c.do("GET", "total"); got != "$"+strconv.Itoa(len(want))+"\r\n"+want+"\r\n" {
		t.Errorf("total %q, want %s", got, want)
	}
	if got := c.do(append([]string{"EVAL", check, "0"}, names...)...); got != ":"+want+"\r\n" {
		t.Errorf("final check %q", got)
	}
}

// sumMGET checks an MGET reply of total then counters: "-..." when the
// counters do not add up to the total.
func sumMGET(reply string) string {
	lines := strings.Split(reply, "\r\n")
	var vals []int
	for i := 1; i < len(lines); i++ {
		switch {
		case lines[i] == "$-1":
			vals = append(vals, 0)
		case strings.HasPrefix(lines[i], "$"):
			v, _ := strconv.Atoi(lines[i+1])
			vals = append(vals, v)
			i++
		}
	}
	s := 0
	for _, v := range vals[1:] {
		s += v
	}
	if s != vals[0] {
		return "-MGET sum " + strconv.Itoa(s) + " total " + strconv.Itoa(vals[0])
	}
	return "+ok"
}

// reachAfterWrite is a script that stays within its declared key unless
// ARGV[1] is 'reach': then, after writing KEYS[1], it spins for ARGV[3]
// ms (TIME's clock) and increments ARGV[2], a key it did not declare.
const reachAfterWrite = "redis.call('incr', KEYS[1]) if ARGV[1] ~= 'reach' then return 0 end " +
	"local t = redis.call('time') local start = t[1] * 1000000 + t[2] " +
	"repeat t = redis.call('time') until t[1] * 1000000 + t[2] - start >= tonumber(ARGV[3]) * 1000 " +
	"return redis.call('incr', ARGV[2])"

// spinScript increments KEYS[1] and spins for ARGV[1] ms (TIME's clock).
const spinScript = "redis.call('incr', KEYS[1]) local t = redis.call('time') local start = t[1] * 1000000 + t[2] " +
	"repeat t = redis.call('time') until t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) * 1000 return 1"

// declaredOnly runs body until the server runs it on its declared shards
// (its first run, holding every shard, saw it stay within them).
func declaredOnly(t *testing.T, c *testConn, body, key string) {
	t.Helper()
	for range 2 {
		if got := c.do("EVAL", body, "1", key, "stay", "x", "0"); got != ":0\r\n" {
			t.Fatalf("staying run: %q", got)
		}
	}
}

// TestScriptReachWaitsForSlowScript: a script on its declared shard that,
// after writing, reaches a shard held by another script running longer
// than busy-reply-threshold waits for that script's end and succeeds, as
// it would on Redis, where the two would have run one after the other.
// It used to give up with ErrScriptReach once the threshold passed.
func TestScriptReachWaitsForSlowScript(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.BusyReplyThreshold = 50 * time.Millisecond })
	a, b := keysOnShards(srv)
	reacher, slow := dial(t, srv), dial(t, srv)
	declaredOnly(t, reacher, reachAfterWrite, a)
	if got := slow.do("EVAL", spinScript, "1", b, "0"); got != ":1\r\n" { // its probing run
		t.Fatalf("slow script's first run: %q", got)
	}
	slow.nc.Write(encode("EVAL", spinScript, "1", b, "400"))
	for n, _ := runningScripts(srv); n == 0; n, _ = runningScripts(srv) {
		time.Sleep(time.Millisecond)
	}
	if got := reacher.do("EVAL", reachAfterWrite, "1", a, "reach", b, "0"); got != ":3\r\n" {
		t.Errorf("reaching script: %q, want :3 (the slow script's two increments, then its own)", got)
	}
	if got := slow.read(); got != ":1\r\n" {
		t.Errorf("slow script: %q", got)
	}
	if got := reacher.do("MGET", a, b); got != "*2\r\n$1\r\n3\r\n$1\r\n3\r\n" {
		t.Errorf("MGET: %q", got)
	}
}

// TestScriptReachCycle: two scripts on their declared shards that, after
// writing, each reach the other's shard wait for each other; one gives
// way at once with ErrScriptReach (the one known difference from Redis,
// where both succeed), the other then succeeds. Neither hangs until
// busy-reply-threshold (left at its default here, far past the test's
// length), and the keys hold exactly the increments that ran. A script
// that reached once holds every shard after, so each round is a new one.
func TestScriptReachCycle(t *testing.T) {
	srv := startServer(t, nil)
	a, b := keysOnShards(srv)
	ca, cb := dial(t, srv), dial(t, srv)
	want, cycles := 0, 0
	for round := range 5 {
		body := reachAfterWrite + " -- " + strconv.Itoa(round)
		declaredOnly(t, ca, body, a)
		declaredOnly(t, ca, body, b)
		// Each spins 150 ms after its write, so that both hold their
		// own shard when they reach.
		ca.nc.Write(encode("EVAL", body, "1", a, "reach", b, "150"))
		cb.nc.Write(encode("EVAL", body, "1", b, "reach", a, "150"))
		ra, rb := ca.read(), cb.read()
		errs := 0
		for _, r := range []string{ra, rb} {
			switch {
			case strings.HasPrefix(r, ":"):
			case strings.HasPrefix(r, "-"+ErrScriptReach+" script: "):
				errs++
			default:
				t.Fatalf("round %d: %q", round, r)
			}
		}
		if errs == 2 {
			t.Fatalf("round %d: both gave way: %q, %q", round, ra, rb)
		}
		cycles += errs
		// Four staying runs, each script's own key, and the other's
		// for each that did not give way.
		want += 4 + 2 + 2 - errs
		got := ca.do("EVAL", "return redis.call('get', KEYS[1]) + redis.call('get', KEYS[2])", "2", a, b)
		if got != ":"+strconv.Itoa(want)+"\r\n" {
			t.Fatalf("round %d: a+b = %q, want %d", round, got, want)
		}
	}
	t.Logf("%d of 5 rounds met the cycle", cycles)
}

// TestScriptsSerialReaching is TestScriptsSerialInterleaving for scripts
// running on their declared shards that reach past them: each body is
// called first with the total declared (its probing run, holding every
// shard, then a run on its two shards), then with the total passed in
// ARGV, so that it reaches the total's shard after writing its counter
// (writeFirst: it takes the shard as it goes) or before writing anything
// (readFirst: the run is dropped and run again holding every shard).
// Every call adds one to a counter and one to the total; readers check in
// one atomic step that the counters add up to the total.
func TestScriptsSerialReaching(t *testing.T) {
	writeFirst := "local t = KEYS[2] or ARGV[1] redis.call('incr', KEYS[1]) return redis.call('incr', t)"
	readFirst := "local t = KEYS[2] or ARGV[1] local v = tonumber(redis.call('get', t) or '0') redis.call('incr', KEYS[1]) redis.call('set', t, v + 1) return v + 1"
	checkSerial(t, 40, func(c *testConn, w, i int, counter string) bool {
		body := writeFirst
		if (i+w)%2 == 1 {
			body = readFirst
		}
		body += " -- " + strconv.Itoa(w) + "/" + strconv.Itoa(i) // a new script each round
		for _, args := range [][]string{{"2", counter, "total"}, {"2", counter, "total"}, {"1", counter, "total"}} {
			if c.do(append([]string{"EVAL", body}, args...)...)[0] != ':' {
				return false
			}
		}
		return true
	}, 3)
}
