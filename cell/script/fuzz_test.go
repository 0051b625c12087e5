package script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// FuzzScript runs arbitrary script bodies and arguments: nothing may panic,
// the reply must be one complete RESP value, and a loop must end when the
// context does.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		"return 1", "return {1, 'x', {err='e'}, {ok='o'}, {double=1.5}}", "error({})",
		"return cjson.decode(ARGV[1])", "return cmsgpack.unpack(ARGV[1])",
		"return {struct.unpack(ARGV[1], ARGV[2])}", "return struct.pack(ARGV[1], 1, 'x')",
		"return string.format(ARGV[1], 1, 'x')", "return redis.call(ARGV[1], ARGV[2])",
		"return bit.tohex(tonumber(ARGV[1]) or 0, tonumber(ARGV[2]) or 8)",
		"while true do end", "local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x",
		"return loadstring(ARGV[1])()", "return tostring(tonumber(ARGV[1]))",
	} {
		f.Add(s, "[1,{\"a\":null}]", "x")
	}
	f.Fuzz(func(t *testing.T, body, a1, a2 string) {
		s, err := testEngine.Load([]byte(body))
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		w := resp.NewWriter()
		testEngine.Run(ctx, s, nil, [][]byte{[]byte(a1), []byte(a2)}, &fakeHost{}, w)
		if n := respLen(w.Bytes()); n != len(w.Bytes()) {
			t.Fatalf("%q: reply %q is not one RESP value", body, w.Bytes())
		}
	})
}

// respLen is the length of the RESP value at the start of b, or -1.
func respLen(b []byte) int {
	if len(b) == 0 {
		return -1
	}
	end := -1
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			end = i
			break
		}
	}
	if end < 0 {
		return -1
	}
	n := 0
	neg := false
	for i, c := range b[1:end] {
		if i == 0 && c == '-' {
			neg = true
			continue
		}
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	pos := end + 2
	switch b[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return pos
	case '$', '=':
		if neg {
			return pos
		}
		return pos + n + 2
	case '*', '~', '%':
		if neg {
			return pos
		}
		if b[0] == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			l := respLen(b[pos:])
			if l < 0 {
				return -1
			}
			pos += l
		}
		return pos
	}
	return -1
}

// FuzzCheckSyntax: the syntax checker never panics (beyond the error it
// raises and recovers itself), and the goto renaming leaves the text
// outside goto tokens alone.
func FuzzCheckSyntax(f *testing.F) {
	for _, s := range []string{
		"x =", "if x then\n\nreturn 1", "local t = {a = 1; [2] = 2, 3,}", "return [==[ x ]==] .. 'a\\300'",
		"local goto = 1 return goto", "return 0x1G, 1e+, 3..2", "f(\n1)", "--[[ c", "a.b:c'x'{1}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSyntax([]byte(src))
		renamed, p := renameGoto([]byte(src))
		if p != "" && strings.ReplaceAll(string(renamed), p, gotoName) != src {
			t.Fatalf("%q renamed to %q", src, renamed)
		}
	})
}
