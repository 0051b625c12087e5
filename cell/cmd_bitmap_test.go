package cell

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// FuzzBitfield feeds random arguments to BITFIELD and BITFIELD_RO on a
// string key. Neither may panic; every reply is well-formed RESP; a
// refused command (an error) and BITFIELD_RO leave the key as it was; a
// run replies one element per GET, SET and INCRBY and grows the string
// no further than its furthest write.
func FuzzBitfield(f *testing.F) {
	for _, s := range []string{
		"GET u8 0", "SET i8 #1 -100 GET u4 3", "OVERFLOW SAT INCRBY u2 100 1 OVERFLOW FAIL incrby i64 0 -9223372036854775808",
		"GET u64 0", "GET i65 0", "GET u8 #", "GET u8 ##1", "GET u8 #536870912", "SET u63 #3 9223372036854775807",
		"OVERFLOW", "OVERFLOW WRAPS", "FOO", "GET u8", "SET u8 0 x", "INCRBY i1 7 -1 INCRBY i1 7 -1",
		"GET \"u8\\x00x\" 0", "\"get\\x00\" i3 5", "GET i64 #1152921504606846976", "SET u1 8388607 1",
	} {
		f.Add(s)
	}
	srv := New(fuzzConfig())
	srv.live.protoMaxBulkLen.Store(1 << 20) // offsets up to 8M bits: bounded memory per run
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	do := func(args ...[]byte) []byte {
		c.dispatch(args)
		out := bytes.Clone(c.w.Bytes())
		c.w.Reset()
		return out
	}
	const before = "0123456789abcdef"
	f.Fuzz(func(t *testing.T, line string) {
		args, ok := resp.SplitArgs([]byte(line), nil)
		if !ok || len(args) > 64 {
			return
		}
		for _, name := range []string{"BITFIELD_RO", "BITFIELD"} {
			do([]byte("SET"), []byte("b"), []byte(before))
			out := do(append([][]byte{[]byte(name), []byte("b")}, args...)...)
			checkRESP(t, out, line)
			after := do([]byte("GET"), []byte("b"))
			unchanged := string(after) == "$16\r\n"+before+"\r\n"
			if out[0] == '-' || name == "BITFIELD_RO" {
				if !unchanged {
					t.Fatalf("%s b %s: replied %q and changed the key to %q", name, line, out, after)
				}
				continue
			}
			ops := 0
			for _, a := range args {
				if s := strings.ToLower(cstring(a)); s == "get" || s == "set" || s == "incrby" {
					ops++
				}
			}
			if out[0] != '*' {
				t.Fatalf("%s b %s: replied %q", name, line, out)
			}
			if n, _ := resp.ParseInt(out[1:bytes.IndexByte(out, '\r')]); int(n) > ops {
				t.Fatalf("%s b %s: %d replies for at most %d operations", name, line, n, ops)
			}
			if len(after) > 16+(1<<20)+16 {
				t.Fatalf("%s b %s: the string grew to %d bytes", name, line, len(after))
			}
		}
	})
}

// TestBitfieldOverflow checks the overflow arithmetic against values
// worked out by hand from Redis's rules.
func TestBitfieldOverflow(t *testing.T) {
	for _, tt := range []struct {
		signed      bool
		value, incr int64
		width       uint
		behaviour   int
		want        int64
		over        bool
	}{
		{false, 250, 10, 8, bfWrap, 4, true},
		{false, 250, 10, 8, bfSat, 255, true},
		{false, 5, -10, 8, bfSat, 0, true},
		{false, 5, -10, 8, bfWrap, 251, true},
		{false, 5, 3, 8, bfWrap, 8, false},
		{false, -1, 0, 8, bfWrap, 255, true}, // SET u8 -1
		{false, 1<<63 - 1, 1, 63, bfSat, 1<<63 - 1, true},
		{true, 127, 1, 8, bfWrap, -128, true},
		{true, 127, 1, 8, bfSat, 127, true},
		{true, -128, -1, 8, bfSat, -128, true},
		{true, -128, -1, 8, bfWrap, 127, true},
		{true, 200, 0, 8, bfWrap, -56, true}, // SET i8 200
		{true, 1<<63 - 1, 1, 64, bfWrap, -1 << 63, true},
		{true, 1<<63 - 1, 1, 64, bfSat, 1<<63 - 1, true},
		{true, -1 << 63, -1, 64, bfSat, -1 << 63, true},
		{true, -5, 3, 64, bfWrap, -2, false},
		{true, 0, -1, 1, bfWrap, -1, false},
		{true, 0, 1, 1, bfSat, 0, true},
	} {
		var got int64
		var over bool
		if tt.signed {
			got, over = signedOverflow(tt.value, tt.incr, tt.width, tt.behaviour)
		} else {
			var u uint64
			u, over = unsignedOverflow(uint64(tt.value), tt.incr, tt.width, tt.behaviour)
			got = int64(u)
		}
		if got != tt.want || over != tt.over {
			t.Errorf("%+v: got %d, %v", tt, got, over)
		}
	}
}
