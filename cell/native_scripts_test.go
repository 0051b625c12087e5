package cell

import (
	"context"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/script"
)

// The differential tests of the native scripts: each known body runs
// natively and in Lua from the same prior state, at the same clock, in
// the same server, and everything observable must be equal: the reply,
// the replication stream the run produced (what the effects journal
// streams: the keys it changed, with their final values and TTLs), the
// keys' values and TTLs after it, the command and error statistics and
// the count of commands processed.

// nativeHarness runs commands in process on a client without a network
// connection, each at a clock the test chooses (the wall clock callAt is
// given, and the limiter clock TIME reads).
type nativeHarness struct {
	t   testing.TB
	srv *Server
	c   *Client
}

func newNativeHarness(t testing.TB) *nativeHarness {
	srv := startServer(t, nil)
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := newClient(srv, a)
	c.startJournal() // every execution streams to the backlog (propagate)
	return &nativeHarness{t: t, srv: srv, c: c}
}

// at runs args at ns (Unix ns) and returns the raw reply.
func (h *nativeHarness) at(ns int64, args ...string) string {
	h.t.Helper()
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	cmd := h.srv.lookupCommand(argv[0])
	if cmd != nil && cmd.Sub != nil && len(argv) >= 2 {
		cmd = lookupCommand(cmd.Sub, argv[1])
	}
	if cmd == nil || !cmd.arityOK(len(argv)) {
		h.t.Fatalf("harness: bad command %q", args)
	}
	h.srv.limiters.fixedNow.Store(ns)
	h.c.w.Reset()
	h.c.callAt(cmd, argv, monoNow(), ns)
	return string(h.c.w.Bytes())
}

// stream empties the replication backlog and returns what it held.
func (h *nativeHarness) stream() string {
	r := &h.srv.repl
	r.mu.Lock()
	defer r.mu.Unlock()
	s := string(r.backlog)
	r.backlog = r.backlog[:0]
	return s
}

// nativeCase is one run of a script: the prior state, the clock, the call.
type nativeCase struct {
	setup          [][]string // run at setupNs
	setupNs, runNs int64
	call           []string // EVAL or EVALSHA ...
	resp3          bool
	keys           []string // the keys whose state is compared afterwards
}

// nativeOutcome is everything a run showed.
type nativeOutcome struct {
	reply, stream, stats string
	keys                 []string
}

var usecField = regexp.MustCompile(`,?usec(_per_call)?=[0-9.]+`)

// run runs c with native scripts on or off.
func (h *nativeHarness) run(c nativeCase, native bool) (o nativeOutcome, ranNative bool) {
	h.t.Helper()
	h.at(c.setupNs, "FLUSHALL")
	h.at(c.setupNs, "CONFIG", "SET", "lua-native-scripts", yesNo(native))
	if c.resp3 {
		h.at(c.setupNs, "HELLO", "3")
	} else {
		h.at(c.setupNs, "HELLO", "2")
	}
	for _, s := range c.setup {
		h.at(c.setupNs, s...)
	}
	h.at(c.runNs, "CONFIG", "RESETSTAT")
	h.stream()
	before, cmds := h.srv.native.calls.Load(), h.c.ncmds.Load()
	o.reply = h.at(c.runNs, c.call...)
	h.c.tally.flush(h.c) // as before a reply is sent
	ranNative = h.srv.native.calls.Load() != before
	// The commands a script calls are not commands processed.
	o.stats = "commands processed: " + strconv.FormatInt(h.c.ncmds.Load()-cmds, 10) + "\r\n"
	o.stream = h.stream()
	_, stats, _ := strings.Cut(h.at(c.runNs, "INFO", "commandstats", "errorstats"), "\r\n") // past the length
	o.stats += usecField.ReplaceAllString(stats, "")
	for _, k := range c.keys {
		o.keys = append(o.keys, k+" "+h.at(c.runNs, "TYPE", k)+h.at(c.runNs, "PTTL", k)+h.at(c.runNs, "DUMP", k))
	}
	return o, ranNative
}

// check runs c both ways and fails on any difference. It reports whether
// the native run took the call (rather than leaving it to Lua).
func (h *nativeHarness) check(c nativeCase) bool {
	h.t.Helper()
	nat, ran := h.run(c, true)
	lua, ranLua := h.run(c, false)
	if ranLua {
		h.t.Fatalf("lua-native-scripts no ran natively: %q", c.call)
	}
	if nat.reply != lua.reply {
		h.t.Fatalf("%+v\nreply: native %q, Lua %q", c, nat.reply, lua.reply)
	}
	if nat.stream != lua.stream {
		h.t.Fatalf("%+v\nreply %q\nreplication stream: native %q, Lua %q", c, nat.reply, nat.stream, lua.stream)
	}
	if nat.stats != lua.stats {
		h.t.Fatalf("%+v\nreply %q\nstats: native %q, Lua %q", c, nat.reply, nat.stats, lua.stats)
	}
	for i := range nat.keys {
		if nat.keys[i] != lua.keys[i] {
			h.t.Fatalf("%+v\nreply %q\nkey: native %q, Lua %q", c, nat.reply, nat.keys[i], lua.keys[i])
		}
	}
	return ran
}

// fuzzBytes draws choices from a fuzzer's input; past its end, zeros.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) intn(n int) int { return int(f.byte()) % n }

// u32 is a number up to 2^32.
func (f *fuzzBytes) u32() int64 {
	return int64(f.byte()) | int64(f.byte())<<8 | int64(f.byte())<<16 | int64(f.byte())<<24
}

func (f *fuzzBytes) pick(s ...string) string { return s[f.intn(len(s))] }

// oddNumbers are arguments every Lua conversion may read differently, or
// not at all.
var oddNumbers = []string{"", "abc", "-0", "0x10", " 5", "5 ", "1e3", "inf", "nan", "-inf", "007", "1.", ".5",
	"99999999999999999999", "1.5", "-1", "0", "2.25", "9007199254740993", "1e400", "-1e-400", "0.0", "-0.0"}

// number is a plain number near base most of the time, else an odd one.
func (f *fuzzBytes) number(base, spread int64) string {
	switch f.intn(8) {
	case 0:
		return f.pick(oddNumbers...)
	case 1:
		return strconv.FormatFloat(float64(base)+float64(f.u32()%uint32max(spread))/float64(1+f.intn(1000)), 'f', -1, 64)
	}
	return strconv.FormatInt(base+f.u32()%uint32max(spread), 10)
}

func uint32max(n int64) int64 {
	if n <= 0 {
		return 1
	}
	return n
}

// fuzzKeyState adds to setup a random prior state of key: missing, a
// string (numeric or not), another type, with or without a TTL that has
// or has not run out by the run's clock. str and zset suggest values.
func (f *fuzzBytes) keyState(setup [][]string, key string, str func() string, zset func() []string) [][]string {
	switch f.intn(8) {
	case 0:
		return setup // missing
	case 1, 2, 3:
		setup = append(setup, []string{"SET", key, str()})
	case 4:
		setup = append(setup, append([]string{"ZADD", key}, zset()...))
	case 5:
		setup = append(setup, []string{"RPUSH", key, "a", "1"})
	case 6:
		setup = append(setup, []string{"HSET", key, "f", "1"})
	case 7:
		setup = append(setup, []string{"SET", key, f.pick(oddNumbers...)})
	}
	switch f.intn(3) {
	case 1:
		setup = append(setup, []string{"PEXPIRE", key, strconv.Itoa(1 + f.intn(200)*50)})
	}
	return setup
}

// nativeClockBase is the fuzz cases' clock origin, in ms: 2030, later
// than the real clock, so that active expiry (which reads the real one)
// leaves their keys alone.
const nativeClockBase = int64(1900000000000)

// fuzzClock picks the setup's and the run's clock: the run 0 to ~13 s
// later, with microseconds.
func (f *fuzzBytes) fuzzClock() (setupNs, runNs int64) {
	setupMs := nativeClockBase + f.u32()%86400000
	setupNs = setupMs * int64(time.Millisecond)
	runNs = setupNs + int64(f.intn(256))*50*int64(time.Millisecond) + f.u32()%1000000*1000
	return setupNs, runNs
}

// callOf is EVALSHA (or, sometimes, EVAL) of body with the given KEYS
// count, keys and arguments.
func (f *fuzzBytes) callOf(body string, numkeys int, keys, argv []string) []string {
	call := []string{"EVALSHA", script.SHA1Hex([]byte(body))}
	if f.intn(4) == 0 {
		call = []string{"EVAL", body}
	}
	call = append(call, strconv.Itoa(numkeys))
	call = append(call, keys...)
	return append(call, argv...)
}

// fuzzArgs trims or extends argv at random, rarely.
func (f *fuzzBytes) fuzzArgs(argv []string) []string {
	switch f.intn(10) {
	case 0:
		return argv[:f.intn(len(argv)+1)]
	case 1:
		return append(argv, "extra")
	}
	return argv
}

// fuzzKeys picks the KEYS: usually the script's key, rarely none or two.
func (f *fuzzBytes) fuzzKeys() []string {
	switch f.intn(12) {
	case 0:
		return nil
	case 1:
		return []string{"k", "k2"}
	}
	return []string{"k"}
}

func readBody(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNativeScriptsKnown: each body the tests run is known by its SHA1,
// and one byte more is not.
func TestNativeScriptsKnown(t *testing.T) {
	for _, path := range []string{"../bench/window.lua", "../integration_test/testdata/w2_window.lua"} {
		body := readBody(t, path)
		if nativeScripts[script.SHA1Hex([]byte(body))] == nil {
			t.Errorf("%s is not a native script", path)
		}
		if nativeScripts[script.SHA1Hex([]byte(body+" "))] != nil {
			t.Errorf("%s with a space more is still native", path)
		}
	}
	for _, body := range redisRateBodies(t) {
		if nativeScripts[script.SHA1Hex([]byte(body))] == nil {
			t.Errorf("redis_rate's script %.60q is not native", body)
		}
	}
}

// redisRateBodies are the scripts go-redis/redis_rate sends, as the
// pinned module sends them: taken from a server it ran against.
func redisRateBodies(t testing.TB) []string {
	t.Helper()
	srv := startServer(t, nil)
	lim := redisRateLimiter(srv)
	ctx := context.Background()
	if err := lim.allowN(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lim.allowAtMost(ctx); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sha := range []string{"f52a5b566060d79fd321d695df55bc918339c4aa", "054143318f521948424aa25df61d7f7ba835a9d7"} {
		s := srv.scripts.Lookup([]byte(sha))
		if s == nil {
			t.Fatalf("redis_rate did not send the script %s: has the pinned module changed?", sha)
		}
		out = append(out, string(s.Body))
	}
	return out
}

var argThousand, argOne, argMinuteMs = []byte("1000"), []byte("1"), []byte("60000")

// BenchmarkNativeScripts runs each native script by EVALSHA through
// dispatch, natively and in Lua, for the CPU per call of each. The
// arguments are built in place, so that the allocations reported are the
// server's.
func BenchmarkNativeScripts(b *testing.B) {
	now := int64(1700000000000)
	cases := []struct {
		name string
		body string
		args func(a [][]byte) [][]byte // appends ARGV to a, reusing its arrays
	}{
		{"window", readBody(b, "../bench/window.lua"), func(a [][]byte) [][]byte {
			now++
			a = a[:len(a)+3]
			n := len(a)
			a[n-3] = strconv.AppendInt(a[n-3][:0], now, 10)
			a[n-2] = strconv.AppendInt(a[n-2][:0], now-60000, 10)
			a[n-1] = append(a[n-1][:0], "60"...)
			return a
		}},
		{"redis_rate", redisRateBodies(b)[0], func(a [][]byte) [][]byte {
			return append(a, argThousand, argThousand, argOne, argOne)
		}},
		{"ulule", ululeBodies(b)[0], func(a [][]byte) [][]byte {
			return append(a, argOne, argMinuteMs)
		}},
	}
	for _, tc := range cases {
		for _, native := range []bool{true, false} {
			b.Run(tc.name+"/native="+strconv.FormatBool(native), func(b *testing.B) {
				srv := New(fuzzConfig())
				srv.native.off.Store(!native)
				c, peer := pipeClient(srv)
				defer peer.Close()
				defer c.close()
				if _, err := srv.scripts.Load([]byte(tc.body)); err != nil {
					b.Fatal(err)
				}
				keys := make([][]byte, 1000)
				for i := range keys {
					keys[i] = []byte("limit:" + strconv.Itoa(i))
				}
				args := make([][]byte, 4, 8)
				args[0], args[1], args[2] = []byte("EVALSHA"), []byte(script.SHA1Hex([]byte(tc.body))), []byte("1")
				b.ReportAllocs()
				i := 0
				c0 := processCPU()
				for b.Loop() {
					i++
					a := args[:4]
					a[3] = keys[i%len(keys)]
					c.dispatch(tc.args(a))
					c.w.Reset()
				}
				// The process's CPU, garbage collection included: less
				// swayed than ns/op by other work on the machine.
				b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// TestNativeScriptsAround: the script cache, NOSCRIPT, MULTI, the setting
// and INFO's count behave as described, whether a call runs natively or
// not.
func TestNativeScriptsAround(t *testing.T) {
	srv := startServer(t, nil)
	c, admin := dial(t, srv), dial(t, srv)
	body := readBody(t, "../bench/window.lua")
	sha := script.SHA1Hex([]byte(body))
	calls := func() string {
		info := admin.do("INFO", "limiters")
		i := strings.Index(info, "lua_native_calls:")
		if i < 0 {
			t.Fatalf("INFO limiters lacks lua_native_calls:\n%s", info)
		}
		v, _, _ := strings.Cut(info[i+len("lua_native_calls:"):], "\r\n")
		return v
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	steps := []struct{ args, want string }{
		{"CONFIG GET lua-native-scripts", "*2\r\n$18\r\nlua-native-scripts\r\n$3\r\nyes\r\n"},
		{"SCRIPT EXISTS " + sha, "*1\r\n:0\r\n"},
		{"EVALSHA " + sha + " 1 w " + now + " 0 60", "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"SCRIPT LOAD " + body, "$40\r\n" + sha + "\r\n"},
		{"SCRIPT EXISTS " + sha, "*1\r\n:1\r\n"},
		{"EVALSHA " + sha + " 1 w " + now + " 0 60", ":1\r\n"},
		{"MULTI", "+OK\r\n"},
		{"EVALSHA " + sha + " 1 w " + now + "1 0 60", "+QUEUED\r\n"},
		{"EXEC", "*1\r\n:2\r\n"},
		{"SCRIPT FLUSH", "+OK\r\n"},
		{"EVALSHA " + sha + " 1 w " + now + " 0 60", "-NOSCRIPT No matching script. Please use EVAL.\r\n"},
		{"CONFIG SET lua-native-scripts maybe", "-ERR CONFIG SET failed (possibly related to argument 'lua-native-scripts') - argument must be 'yes' or 'no'\r\n"},
		{"CONFIG SET lua-native-scripts no", "+OK\r\n"},
		{"CONFIG GET lua-native-scripts", "*2\r\n$18\r\nlua-native-scripts\r\n$2\r\nno\r\n"},
		{"EVAL " + body + " 1 w " + now + "2 0 60", ":3\r\n"},
	}
	want := []string{"0", "0", "0", "0", "0", "1", "1", "1", "2", "2", "2", "2", "2", "2", "2"}
	for i, s := range steps {
		var args []string
		if strings.HasPrefix(s.args, "SCRIPT LOAD ") {
			args = []string{"SCRIPT", "LOAD", body}
		} else if strings.HasPrefix(s.args, "EVAL ") {
			args = append([]string{"EVAL", body}, strings.Fields(s.args[len("EVAL ")+len(body):])...)
		} else {
			args = strings.Fields(s.args)
		}
		if got := c.do(args...); got != s.want {
			t.Errorf("%.60s: %q, want %q", s.args, got, s.want)
		}
		if got := calls(); got != want[i] {
			t.Errorf("after %.60s: lua_native_calls %s, want %s", s.args, got, want[i])
		}
	}
}
