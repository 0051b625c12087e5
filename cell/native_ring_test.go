package cell

import (
	"strconv"
	"testing"
)

// ringCase builds a call of W6 on a ring of random size and state.
func ringCase(f *fuzzBytes, body string) nativeCase {
	var c nativeCase
	c.setupNs, c.runNs = f.fuzzClock()
	size := 1 + f.intn(12)
	switch f.intn(6) {
	case 0: // no list
	case 1:
		c.setup = append(c.setup, []string{"SET", "ring", "x"})
	default:
		push := []string{"RPUSH", "ring"}
		for range size + f.intn(3) - 1 {
			push = append(push, f.pick("0", "1", "7", "x", "2.5", "-0"))
		}
		if len(push) > 2 {
			c.setup = append(c.setup, push)
		}
	}
	if f.intn(3) == 0 {
		c.setup = append(c.setup, []string{"HSET", "idx", "f", "v"})
	}
	// Lua loops for ever unless the walk from last+1 reaches current:
	// a different current is a whole slot of the ring, and last a whole
	// number in some spelling, or not a number at all (an error first).
	var argv []string
	if f.intn(4) == 0 {
		same := f.pick(append([]string{strconv.Itoa(f.intn(size + 2))}, oddNumbers...)...)
		if same == "nan" {
			same = "x" // NaN is not equal to itself: the walk would never end
		}
		argv = []string{same, same, strconv.Itoa(size)}
	} else {
		last := f.pick(strconv.Itoa(f.intn(size)), strconv.Itoa(f.intn(size)), "x", "", "007", " 3", "1e0", "0x1", "-0", "-1")
		argv = []string{last, strconv.Itoa(f.intn(size)), strconv.Itoa(size)}
		if f.intn(10) == 0 {
			argv[2] = f.pick("x", "")
		}
	}
	keys := []string{"ring", "idx"}
	if f.intn(10) == 0 {
		keys = keys[:1]
	}
	c.call = f.callOf(body, len(keys), keys, f.fuzzArgs(argv))
	c.resp3 = f.intn(4) == 0
	c.keys = []string{"ring", "idx"}
	return c
}

// TestNativeRing: W6's usual calls run natively with the Lua run's outcome.
func TestNativeRing(t *testing.T) {
	body := readBody(t, "../integration_test/testdata/w6_ring.lua")
	h := newNativeHarness(t)
	run := int64(1900000000123456789)
	ring := []string{"RPUSH", "ring", "0", "3", "0", "0", "5"}
	for _, tt := range []struct {
		name   string
		setup  [][]string
		argv   []string
		native bool
	}{
		{"same slot", [][]string{ring}, []string{"1", "1", "5"}, true},
		{"next slot", [][]string{ring}, []string{"1", "2", "5"}, true},
		{"wrap round", [][]string{ring}, []string{"3", "1", "5"}, true},
		{"no list", nil, []string{"3", "1", "5"}, true},
		{"short list", [][]string{{"RPUSH", "ring", "0"}}, []string{"0", "3", "5"}, true},
		{"same slot, no list", nil, []string{"1", "1", "5"}, false},
		{"slot past the ring", [][]string{ring}, []string{"7", "7", "5"}, false},
		{"non-numeric slot", [][]string{{"RPUSH", "ring", "x", "y"}}, []string{"1", "1", "2"}, false},
	} {
		c := nativeCase{setup: tt.setup, setupNs: run - 5e9, runNs: run, keys: []string{"ring", "idx"},
			call: append([]string{"EVAL", body, "2", "ring", "idx"}, tt.argv...)}
		if ran := h.check(c); ran != tt.native {
			t.Errorf("%s: ran natively %v, want %v", tt.name, ran, tt.native)
		}
	}
}

// FuzzNativeRing compares W6 run natively and in Lua.
func FuzzNativeRing(f *testing.F) {
	for _, s := range []string{"", "\x02\x05\x03\x04\x05\x06\x07\x08\x09", "\x04\x0b\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0"} {
		f.Add([]byte(s))
	}
	body := readBody(f, "../integration_test/testdata/w6_ring.lua")
	h := newNativeHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h.t = t
		h.check(ringCase(&fuzzBytes{data}, body))
	})
}
