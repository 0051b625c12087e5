package script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// TestPatterns: lstrlib's semantics and errors (the integration suite
// compares many more with redis-server).
func TestPatterns(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"local t={} for c in ('abc'):gmatch('.') do t[#t+1]=c end return table.concat(t, ',')", "$5\r\na,b,c\r\n"},
		{"local t={} for p in string.gmatch('ab', '()') do t[#t+1]=p end return t", "*3\r\n:1\r\n:2\r\n:3\r\n"},
		{"return {string.find('hello', '()ll()')}", "*4\r\n:3\r\n:4\r\n:3\r\n:5\r\n"},
		{"return {string.find('abc', '', 10)}", "*2\r\n:4\r\n:3\r\n"},
		{"return {string.match('abc', 'b\\0z')}", "*1\r\n$1\r\nb\r\n"},
		{"return string.match('f(a(b)c)d', '%b()')", "$7\r\n(a(b)c)\r\n"},
		{"return string.match('THE (quick) fox', '%f[%a]%a+', 5)", "$5\r\nquick\r\n"},
		{"return string.match('  trim  ', '^%s*(.-)%s*$')", "$4\r\ntrim\r\n"},
		{"return {string.gsub('hello world', '(%w+) (%w+)', '%2 %1')}", "*2\r\n$11\r\nworld hello\r\n:1\r\n"},
		{"return {string.gsub('abc', '', '-')}", "*2\r\n$7\r\n-a-b-c-\r\n:4\r\n"},
		{"return {string.gsub('$a $b', '%$(%w+)', {a=1})}", "*2\r\n$4\r\n1 $b\r\n:2\r\n"},
		{"return {string.gsub('hello', 'l', '%')}", "*2\r\n$5\r\nhe\x00\x00o\r\n:2\r\n"},
		{"return string.match('x', '%')", "-ERR user_script:1: malformed pattern (ends with '%')"},
		{"return string.match('x', '[a')", "-ERR user_script:1: malformed pattern (missing ']')"},
		{"return string.find('x', '(x')", "-ERR user_script:1: unfinished capture"},
		{"return string.match('x', '%1')", "-ERR user_script:1: invalid capture index"},
		{"return string.match('x', 'x)')", "-ERR user_script:1: invalid pattern capture"},
		{"return string.match('x', '%b')", "-ERR user_script:1: unbalanced pattern"},
		{"return string.match('x', '%fx')", "-ERR user_script:1: missing '[' after '%f' in pattern"},
		{"return string.match(string.rep('a', 33), string.rep('(a)', 33))", "-ERR user_script:1: too many captures"},
		{"return select('#', unpack({}, 1, 7998))", "-ERR user_script:1: too many results to unpack"},
		{"return select('#', unpack({}, 1, 7997))", ":7997\r\n"},
		{"return select('#', string.byte(string.rep('x', 7998), 1, -1))", "-ERR user_script:1: stack overflow (string slice too long)"},
		{"return string.char(256)", "-ERR user_script:1: bad argument #1 to 'char' (invalid value)"},
	} {
		if got := eval(t, c.body); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got  %q\n want %q", c.body, got, c.want)
		}
	}
}

// TestBuiltinsStop: a builtin stops at SCRIPT KILL (the context's end)
// within its own loop, and refuses an allocation its memory guard
// refuses, with the stop's text as the error.
func TestBuiltinsStop(t *testing.T) {
	run := func(body string, ctx context.Context) string {
		s, err := testEngine.Load([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		w := resp.NewWriter()
		testEngine.Run(ctx, s, nil, nil, &fakeHost{}, w)
		return string(w.Bytes())
	}
	for _, body := range []string{
		"return string.find(string.rep('a', 40), string.rep('a*', 40)..'b')",
		"for w in string.gmatch(string.rep('a', 40), string.rep('a*', 40)..'b') do end",
		"return string.gsub(string.rep('a', 40), string.rep('a*', 40)..'b', '')",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		if got := run(body, ctx); !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL...") {
			t.Errorf("%s: %q", body, got)
		}
		cancel()
	}
	for _, body := range []string{
		"return #string.rep('x', 8e6)",
		"return #string.gsub(string.rep('x', 3e6), 'x', 'yy')",
		"local t = {} for i = 1, 1e4 do t[i] = string.rep('x', 1000) end return #table.concat(t)",
		"local s = string.rep('x', 3e6) return #(s .. s)",
	} {
		ctx, stop := context.WithCancelCause(context.Background())
		got := run(body, &budgetCtx{Context: ctx, stop: stop, budget: 5 << 20})
		if !strings.HasPrefix(got, "-"+errBudget.Error()) {
			t.Errorf("%s over a 5 MB budget: %q", body, got)
		}
		stop(nil)
	}
}
