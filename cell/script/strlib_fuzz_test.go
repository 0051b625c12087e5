package script

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// budgetCtx is a run's context with a memory budget: what the builtins
// reserve is added up, and the run is stopped past the budget, as the
// server's memory guard stops it past the script memory limit.
type budgetCtx struct {
	context.Context
	stop     context.CancelCauseFunc
	reserved atomic.Int64
	budget   int64
}

var errBudget = errors.New("ERR fuzz memory budget")

func (c *budgetCtx) Reserve(n int64) bool {
	if c.reserved.Add(n) > c.budget {
		c.stop(errBudget)
		return false
	}
	return true
}

// hostileTemplates are scripts of the builtins that loop, allocate or
// return many values; N is replaced by a size, ARGV[1..3] are fuzzed.
var hostileTemplates = []string{
	"return {string.gsub(string.rep(ARGV[1], N), ARGV[2], ARGV[3])}",
	"return {string.gsub(string.rep(ARGV[1], N), ARGV[2], function(...) return select('#', ...) end)}",
	"return {string.gsub(string.rep(ARGV[1], N), ARGV[2], {a = ARGV[3]})}",
	"local n = 0 for a in string.rep(ARGV[1], N):gmatch(ARGV[2]) do n = n + 1 end return n",
	"return {string.find(string.rep(ARGV[1], N), ARGV[2], tonumber(ARGV[3]))}",
	"return {string.match(string.rep(ARGV[1], N), ARGV[2])}",
	"return select('#', unpack({}, 1, N))",
	"local t = {} for i = 1, N do t[i] = i % 256 end return #string.char(unpack(t))",
	"return select('#', string.byte(string.rep(ARGV[1], N), 1, -1))",
	"local t = {} for i = 1, N do t[i] = cmsgpack.pack(i) end return select('#', cmsgpack.unpack(table.concat(t)))",
	"local t = {} for i = 1, N do t[i] = ARGV[1] end return #table.concat(t, ARGV[2])",
	"return #string.rep(string.rep(ARGV[1], N), N)",
}

// FuzzBuiltins runs the templates with fuzzed sizes and arguments under a
// 200 ms deadline and a 256 MB budget: nothing may panic, the reply must
// be one RESP value, and the run must end soon after its deadline however
// long a single builtin would take.
func FuzzBuiltins(f *testing.F) {
	f.Add(uint8(0), uint32(1e6), "x", "x", "y")
	f.Add(uint8(1), uint32(1000), "ab", "(a)(b)", "")
	f.Add(uint8(3), uint32(1e5), "abc", "()", "")
	f.Add(uint8(4), uint32(40), "a", strings.Repeat("a*", 40)+"b", "1")
	f.Add(uint8(5), uint32(3), "(x)", "%b()", "")
	f.Add(uint8(6), uint32(400000), "", "", "")
	f.Add(uint8(7), uint32(7998), "", "", "")
	f.Add(uint8(8), uint32(1e6), "x", "", "")
	f.Add(uint8(9), uint32(8000), "", "", "")
	f.Add(uint8(10), uint32(1e6), "abc", ",", "")
	f.Add(uint8(11), uint32(1e5), "xy", "", "")
	f.Fuzz(func(t *testing.T, which uint8, size uint32, a1, a2, a3 string) {
		body := hostileTemplates[int(which)%len(hostileTemplates)]
		body = strings.ReplaceAll(body, "N", strconv.Itoa(int(size%(1<<21))))
		s, err := testEngine.Load([]byte(body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		base, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		ctx, stop := context.WithCancelCause(base)
		defer stop(nil)
		run := &budgetCtx{Context: ctx, stop: stop, budget: 256 << 20}
		w := resp.NewWriter()
		start := time.Now()
		testEngine.Run(run, s, nil, [][]byte{[]byte(a1), []byte(a2), []byte(a3)}, &fakeHost{}, w)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%q with %q %q %q: ran %v past a 200 ms deadline", body, a1, a2, a3, d)
		}
		if n := respLen(w.Bytes()); n != len(w.Bytes()) {
			t.Fatalf("%q: reply %q is not one RESP value", body, w.Bytes())
		}
	})
}
