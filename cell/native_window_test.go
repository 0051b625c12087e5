package cell

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func windowBodies(t testing.TB) []string {
	return []string{readBody(t, "../bench/window.lua"), readBody(t, "../integration_test/testdata/w2_window.lua")}
}

// windowCase builds a call of W2 from the fuzzer's choices.
func windowCase(f *fuzzBytes, bodies []string) nativeCase {
	var c nativeCase
	c.setupNs, c.runNs = f.fuzzClock()
	nowMs := c.runNs / int64(time.Millisecond)
	member := func() string { return strconv.FormatInt(nowMs-int64(f.intn(120))*500, 10) }
	zset := func() []string {
		var m []string
		for range f.intn(6) + 1 {
			x := member()
			m = append(m, x, x)
		}
		return m
	}
	c.setup = f.keyState(nil, "k", member, zset)
	body := bodies[f.intn(len(bodies))]
	now := f.number(nowMs-1000, 2000)
	argv := []string{now, f.number(nowMs-60000, 60000), f.number(1, 120)}
	keys := f.fuzzKeys()
	c.call = f.callOf(body, len(keys), keys, f.fuzzArgs(argv))
	c.resp3 = f.intn(4) == 0
	c.keys = []string{"k", "k2"}
	return c
}

// TestNativeWindow: W2's usual calls run natively with the Lua run's
// outcome, including the errors after its first write.
func TestNativeWindow(t *testing.T) {
	h := newNativeHarness(t)
	run := int64(1900000000123456789)
	ms := strconv.FormatInt(run/1e6, 10)
	old := strconv.FormatInt(run/1e6-70000, 10)
	for _, tt := range []struct {
		name   string
		setup  [][]string
		argv   []string
		native bool
	}{
		{"fresh key", nil, []string{ms, old, "60"}, true},
		{"old entries", [][]string{{"ZADD", "k", old, old, ms, "x"}}, []string{ms, old, "60"}, true},
		{"wrong type", [][]string{{"SET", "k", "1"}}, []string{ms, old, "60"}, true},
		{"fractional ttl", nil, []string{ms, old, "1.5"}, true},
		{"negative ttl", nil, []string{ms, old, "-1"}, true},
		{"non-numeric now", nil, []string{"x", old, "60"}, false},
		{"missing ttl", nil, []string{ms, old}, false},
	} {
		for i, body := range windowBodies(t) {
			c := nativeCase{setup: tt.setup, setupNs: run - 5e9, runNs: run, keys: []string{"k"},
				call: append([]string{"EVAL", body, "1", "k"}, tt.argv...)}
			if ran := h.check(c); ran != tt.native {
				t.Errorf("%s (script %d): ran natively %v, want %v", tt.name, i, ran, tt.native)
			}
		}
	}
}

// FuzzNativeWindow compares W2 run natively and in Lua.
func FuzzNativeWindow(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x05\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0", "\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07"} {
		f.Add([]byte(s))
	}
	bodies := windowBodies(f)
	h := newNativeHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.t = t
		h.check(windowCase(&fuzzBytes{data}, bodies))
	})
}

// TestNativeCallStats: a native run counts each of its calls in the
// command statistics, timed together at the run's end by default; with a
// gate under untimedGate (here the slow log's threshold at 0) each call
// is timed alone and reaches the slow log beside the EVALSHA.
func TestNativeCallStats(t *testing.T) {
	h := newNativeHarness(t)
	body := windowBodies(t)[0]
	run := int64(1900000000123456789)
	ms := strconv.FormatInt(run/1e6, 10)
	sha := strings.TrimSpace(strings.Split(h.at(run, "SCRIPT", "LOAD", body), "\r\n")[1])
	calls := func() string {
		stats := h.at(run, "INFO", "commandstats")
		var got []string
		for _, name := range []string{"zadd", "zcard", "zremrangebyscore", "expire", "evalsha"} {
			if i := strings.Index(stats, "cmdstat_"+name+":calls="); i >= 0 {
				rest := stats[i+len("cmdstat_"+name+":calls="):]
				got = append(got, name+"="+rest[:strings.IndexByte(rest, ',')])
			}
		}
		return strings.Join(got, " ")
	}
	evalsha := func() string { return h.at(run, "EVALSHA", sha, "1", "k", ms, "0", "60") }
	if r := evalsha(); r != ":1\r\n" {
		t.Fatalf("EVALSHA: %q", r)
	}
	if r := evalsha(); r != ":1\r\n" { // the same member again
		t.Fatalf("EVALSHA: %q", r)
	}
	if got, want := calls(), "zadd=2 zcard=2 zremrangebyscore=2 expire=2 evalsha=2"; got != want {
		t.Errorf("untimed calls: %s, want %s", got, want)
	}
	if n := h.srv.native.calls.Load(); n != 2 {
		t.Errorf("%d native runs, want 2", n)
	}
	if r := h.at(run, "SLOWLOG", "LEN"); r != ":0\r\n" {
		t.Errorf("SLOWLOG LEN %q at the default threshold", r)
	}
	h.at(run, "CONFIG", "SET", "slowlog-log-slower-than", "0")
	evalsha()
	if got, want := calls(), "zadd=3 zcard=3 zremrangebyscore=3 expire=3 evalsha=3"; got != want {
		t.Errorf("timed calls: %s, want %s", got, want)
	}
	log := h.at(run, "SLOWLOG", "GET", "10")
	for _, name := range []string{"ZADD", "ZCARD", "ZREMRANGEBYSCORE", "EXPIRE", "EVALSHA"} {
		if !strings.Contains(log, "$"+strconv.Itoa(len(name))+"\r\n"+name+"\r\n") {
			t.Errorf("the slow log lacks %s: %q", name, log)
		}
	}
}
