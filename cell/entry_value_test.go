package cell

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The Entry header must stay 32 bytes: with a 16-byte key it fills a
// 48-byte size class (entry_alloc.go).
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(Entry{}); n != 32 {
		t.Fatalf("Entry is %d bytes, want 32", n)
	}
}

// TestStringValues: every value reads back as the bytes written, whether
// it is kept as an int (only canonical int64s) or as bytes, and commands
// that change a value in place turn an int back into bytes first.
func TestStringValues(t *testing.T) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	do := func(args ...string) string {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		c.w.Reset()
		c.dispatch(b)
		return string(c.w.Bytes())
	}
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	for _, tc := range []struct {
		val   string
		asInt bool
	}{
		{"0", true}, {"1", true}, {"-1", true}, {"1234567890123456789", true},
		{"9223372036854775807", true}, {"-9223372036854775808", true},
		{"9223372036854775808", false}, {"-9223372036854775809", false},
		{"-0", false}, {"01", false}, {"+1", false}, {" 1", false}, {"1 ", false},
		{"", false}, {"-", false}, {"1e3", false}, {"18446744073709551615", false},
	} {
		if got := do("set", "k", tc.val); got != "+OK\r\n" {
			t.Fatalf("set %q: %q", tc.val, got)
		}
		e := srv.ks.shardOf(0, []byte("k")).keys.getS("k")
		if isInt := e.kind == valInt; isInt != tc.asInt {
			t.Errorf("%q: stored as int %v, want %v", tc.val, !tc.asInt, tc.asInt)
		}
		for _, step := range []struct{ args, want []string }{
			{[]string{"get", "k"}, []string{bulk(tc.val)}},
			{[]string{"strlen", "k"}, []string{":" + strconv.Itoa(len(tc.val)) + "\r\n"}},
			{[]string{"getrange", "k", "0", "-1"}, []string{bulk(tc.val)}},
			{[]string{"append", "k", "x"}, []string{":" + strconv.Itoa(len(tc.val)+1) + "\r\n"}},
			{[]string{"get", "k"}, []string{bulk(tc.val + "x")}},
			{[]string{"setrange", "k", "0", "y"}, []string{":" + strconv.Itoa(len(tc.val)+1) + "\r\n"}},
			{[]string{"get", "k"}, []string{bulk("y" + (tc.val + "x")[1:])}},
		} {
			if got := do(step.args...); got != step.want[0] {
				t.Errorf("%q: %v = %q, want %q", tc.val, step.args, got, step.want[0])
			}
		}
	}
	// INCR keeps an int; SETRANGE over it gives bytes that INCR reads.
	for _, s := range [][2]string{
		{"set n 41", "+OK\r\n"}, {"incr n", ":42\r\n"}, {"setrange n 1 3", ":2\r\n"},
		{"incr n", ":44\r\n"}, {"append n 5", ":3\r\n"}, {"incrby n -446", ":-1\r\n"},
		{"get n", bulk("-1")}, {"object encoding n", bulk("int")},
	} {
		if got := do(strings.Fields(s[0])...); got != s[1] {
			t.Errorf("%s = %q, want %q", s[0], got, s[1])
		}
	}
}

// TestBigStringReaders: a string kept behind its own slice header (4 GB
// or more, which a test cannot allocate, so the form is made by hand)
// reads, grows and moves like any other.
func TestBigStringReaders(t *testing.T) {
	b := []byte("big value")
	e := &Entry{ptr: unsafe.Pointer(&b), kind: valBig}
	if string(e.str()) != "big value" || e.strLen() != 9 || e.strCap() != cap(b) || !e.isString() || !e.hasBytes() {
		t.Fatalf("read as %q len %d cap %d", e.str(), e.strLen(), e.strCap())
	}
	var sh Shard
	moved := sh.adopt([]byte("k"), e)
	if string(moved.str()) != "big value" || sh.keys.getS("k") != moved {
		t.Fatalf("adopted as %q", moved.str())
	}
	if v := append(e.mutableStr(), '!'); string(v) != "big value!" {
		t.Fatalf("mutable: %q", v)
	}
}
