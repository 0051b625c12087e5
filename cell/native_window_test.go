package cell

import (
	"strconv"
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
