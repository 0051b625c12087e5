package integration_test

// Helpers for the client-library tests (go-redis, rate limiters, redis-py,
// Node, redis-cli): a session of a real client library runs once against
// each server and writes what it saw into a transcript; the two transcripts
// must be equal line for line. Lines hold results as the library returns
// them, so a difference in any reply the library reads shows up, as does a
// difference the library hides from raw bytes but not from its caller.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A transcript is what one client session saw, one line per observation.
// Safe for concurrent use.
type transcript struct {
	mu    sync.Mutex
	lines []string
}

// add records one line.
func (tr *transcript) add(format string, args ...any) {
	tr.mu.Lock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

// compareTranscripts fails t at each line where the session against
// cellserver saw something else than the session against redis-server.
// CELLSERVER_SHOW_TRANSCRIPTS=1 logs redis-server's transcript, to read
// what a session checks.
func compareTranscripts(t testing.TB, what string, redis, cell []string) {
	t.Helper()
	compareLines(t, what, "redis-server", redis, cell)
}

// compareLines is compareTranscripts against a reference named ref: the
// expected lines of a test, or another server's transcript.
func compareLines(t testing.TB, what, ref string, redis, cell []string) {
	t.Helper()
	if os.Getenv("CELLSERVER_SHOW_TRANSCRIPTS") == "1" {
		t.Logf("%s, %s's transcript:\n%s", what, ref, strings.Join(redis, "\n"))
	}
	shown := 0
	for i := 0; i < max(len(redis), len(cell)); i++ {
		var r, c string = "<no line>", "<no line>"
		if i < len(redis) {
			r = redis[i]
		}
		if i < len(cell) {
			c = cell[i]
		}
		if r == c {
			continue
		}
		if shown == 8 {
			t.Errorf("%s: more lines differ", what)
			return
		}
		shown++
		t.Errorf("%s, line %d:\n  %-13s %s\n  %-13s %s", what, i+1, ref+":", r, "cellserver:", c)
	}
}

// cellserverAnswers reports whether cellserver knows the command name: the
// commands other branches add (ZADD, EVAL, SLOWLOG) are tested as soon as
// they are merged, and skipped with a message until then. In self-test mode
// the stand-in is redis-server, which knows them all.
func cellserverAnswers(t testing.TB, name string) bool {
	t.Helper()
	s := sharedServers(t)
	conn, err := dialRESP(s.cell.addr)
	if err != nil {
		t.Fatalf("connecting to %s: %v", s.cell.name, err)
	}
	defer conn.Close()
	reply, err := conn.Do("COMMAND", "INFO", name)
	if err != nil {
		t.Fatalf("COMMAND INFO %s: %v", name, err)
	}
	// A known command is *1 holding its description; an unknown one is *1
	// holding a null.
	return strings.HasPrefix(string(reply), "*1\r\n*") && !strings.HasPrefix(string(reply), "*1\r\n*-1")
}

// needScripting skips t until cellserver answers EVAL (the script branch).
// It is the one condition every scripting-dependent client test names, so
// that a run's skip list says plainly what waits for scripting.
func needScripting(t testing.TB) {
	t.Helper()
	if !cellserverAnswers(t, "EVAL") || !cellserverAnswers(t, "EVALSHA") || !cellserverAnswers(t, "SCRIPT") {
		t.Skip("cellserver does not answer EVAL/EVALSHA/SCRIPT yet (scripting not merged); this test runs once it is")
	}
}

// needSortedSets skips t until cellserver answers the sorted-set commands
// of the sliding-window workloads (the zcmd branch).
func needSortedSets(t testing.TB) {
	t.Helper()
	for _, name := range []string{"ZADD", "ZREMRANGEBYSCORE", "ZCARD", "ZRANGE", "ZRANGEBYSCORE"} {
		if !cellserverAnswers(t, name) {
			t.Skipf("cellserver does not answer %s yet (sorted sets not merged); this test runs once it is", name)
		}
	}
}

// hasScripting and hasSortedSets are the same conditions as flags, for
// sessions that run their scripting or sorted-set parts only when present.
func hasScripting(t testing.TB) bool {
	return cellserverAnswers(t, "EVAL") && cellserverAnswers(t, "EVALSHA") && cellserverAnswers(t, "SCRIPT")
}

func hasSortedSets(t testing.TB) bool {
	for _, name := range []string{"ZADD", "ZREMRANGEBYSCORE", "ZCARD", "ZRANGE", "ZRANGEBYSCORE"} {
		if !cellserverAnswers(t, name) {
			return false
		}
	}
	return true
}

// testScript reads a Lua script of testdata/: the workload scripts are
// shared by the go-redis, redis-py, Node and redis-cli sessions, so every
// client runs the very same text.
func testScript(t testing.TB, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// forgetScripts empties both servers' script caches when t ends: the
// scripts a client session loads would otherwise stay for the tests after
// it, whose INFO compares number_of_cached_scripts and used_memory_lua.
func forgetScripts(t testing.TB, s *servers) {
	t.Cleanup(func() {
		for _, p := range []*process{s.redis, s.cell} {
			c, err := dialRESP(p.addr)
			if err != nil {
				continue
			}
			// Ask first: an unknown SCRIPT would count in cellserver's
			// error statistics and not in redis-server's.
			if reply, err := c.Do("COMMAND", "INFO", "SCRIPT"); err == nil && strings.HasPrefix(string(reply), "*1\r\n*") && !strings.HasPrefix(string(reply), "*1\r\n*-1") {
				c.Do("SCRIPT", "FLUSH")
			}
			c.Close()
		}
	})
}

// bothServers runs session once against each shared server, at the same
// time (so time-dependent replies see the same moment on both), after a
// FLUSHALL on both, and compares the transcripts.
func bothServers(t *testing.T, what string, session func(addr string, tr *transcript)) {
	t.Helper()
	s := sharedServers(t)
	newPair(t) // FLUSHALL both
	bothServersOn(t, s, what, session)
}

// bothServersOn is bothServers on servers the test started itself
// (startServers), as they are.
func bothServersOn(t *testing.T, s *servers, what string, session func(addr string, tr *transcript)) {
	t.Helper()
	forgetScripts(t, s)
	var redis, cell transcript
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); session(s.redis.addr, &redis) }()
	go func() { defer wg.Done(); session(s.cell.addr, &cell) }()
	wg.Wait()
	if len(redis.lines) == 0 {
		t.Fatalf("%s: the session against redis-server recorded nothing", what)
	}
	compareTranscripts(t, what, redis.lines, cell.lines)
}

// errorRecorder is a testing.TB that keeps its errors instead of failing,
// to test the comparisons themselves.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCompareTranscripts: equal transcripts pass; a changed, missing or
// extra line is reported with both sides. Needs no server.
func TestCompareTranscripts(t *testing.T) {
	ref := []string{"[incr n] -> 1", "[ttl k] -> 10", "done"}
	cases := []struct {
		name string
		cell []string
		want []string // substrings of the errors, in order
	}{
		{"equal", []string{"[incr n] -> 1", "[ttl k] -> 10", "done"}, nil},
		{"changed", []string{"[incr n] -> 1", "[ttl k] -> 9", "done"}, []string{"line 2:\n  redis-server: [ttl k] -> 10\n  cellserver:   [ttl k] -> 9"}},
		{"missing", []string{"[incr n] -> 1", "[ttl k] -> 10"}, []string{"line 3:\n  redis-server: done\n  cellserver:   <no line>"}},
		{"extra", append(slices.Clone(ref), "more"), []string{"line 4:\n  redis-server: <no line>\n  cellserver:   more"}},
	}
	for _, tc := range cases {
		r := &errorRecorder{TB: t}
		compareTranscripts(r, "session", ref, tc.cell)
		if len(r.errs) != len(tc.want) {
			t.Errorf("%s: %d errors %q, want %d", tc.name, len(r.errs), r.errs, len(tc.want))
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(r.errs[i], w) {
				t.Errorf("%s: error %q lacks %q", tc.name, r.errs[i], w)
			}
		}
	}
}
