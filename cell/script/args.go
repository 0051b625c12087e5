package script

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// The arguments that cross between the server and Lua on every call:
// KEYS and ARGV going in, redis.call's arguments going out. A rate
// limiter's script is small and runs very often, so these paths reuse what
// the state already has rather than allocate per call.

// argTable is KEYS or ARGV of one state, reused by the next run when the
// script left it as it found it.
type argTable struct {
	t *lua.LTable
	n int // the elements it was filled with
}

// fillArgs makes KEYS and ARGV hold keys and argv as fresh Lua arrays
// would (see argTable.prepare). The new element strings of both share one
// backing string, so the copy costs at most one allocation per run, and
// their boxes come from the state's blocks (boxes.go).
func (st *state) fillArgs(keys, argv [][]byte) {
	k, a := st.keys.t, st.argv.t
	b := st.keys.prepare(st.L, keys, st.fillBuf[:0])
	b = st.argv.prepare(st.L, argv, b)
	st.fillBuf = b
	all := string(b)
	all = st.keys.assign(keys, all, &st.box)
	st.argv.assign(argv, all, &st.box)
	// The globals keep the tables between runs (scripts cannot replace
	// a global): set them only when prepare had to make new ones.
	if st.keys.t != k {
		st.setGlobal("KEYS", st.keys.t)
	}
	if st.argv.t != a {
		st.setGlobal("ARGV", st.argv.t)
	}
}

// prepare readies a.t for items and appends to b the bytes of the
// elements assign must set. A table the last script changed in a way the
// refill cannot undo (a metatable, a key that is not one of 1..n) is
// replaced by a new one; one whose elements it only overwrote, removed or
// appended is refilled.
func (a *argTable) prepare(L *lua.LState, items [][]byte, b []byte) []byte {
	// A table the script grew far past this call's size would cost its
	// clearing on every later call: start afresh instead.
	if a.t == nil || !a.clean() || a.n > len(items)+16 {
		a.t, a.n = L.CreateTable(len(items), 0), 0
	}
	// An element equal to the one already there is kept: rate limiters
	// pass the same limits on every call, and a kept string costs no
	// allocation at all.
	for i, it := range items {
		if !a.same(i, it) {
			b = append(b, it...)
		}
	}
	return b
}

// assign sets the elements prepare found changed, taking their text from
// the front of all, and returns the rest of all.
func (a *argTable) assign(items [][]byte, all string, box *boxes) string {
	for i, it := range items {
		if a.same(i, it) {
			continue
		}
		a.t.RawSetInt(i+1, box.str(all[:len(it)]))
		all = all[len(it):]
	}
	for i := len(items) + 1; i <= a.n; i++ {
		a.t.RawSetInt(i, lua.LNil)
	}
	a.n = len(items)
	return all
}

// same reports that element i (from 0) already holds the bytes of it.
func (a *argTable) same(i int, it []byte) bool {
	if i >= a.n {
		return false
	}
	s, ok := a.t.RawGetInt(i + 1).(lua.LString)
	return ok && string(s) == string(it)
}

// decimalInteger parses up to 15 decimal digits with an optional minus
// sign, the common shape of a number argument, exactly and quickly; other
// texts are left to strtod.
func decimalInteger(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 15 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return 0, false // "-0" is -0, which strtod keeps
		}
		n = -n
	}
	return n, true
}

// clean reports that a.t has no metatable and no key beyond its array
// part 1..MaxN, where the refill writes.
func (a *argTable) clean() bool {
	if a.t.Metatable != lua.LNil {
		return false
	}
	m := a.t.MaxN()
	if m > a.n {
		// Appended by the script: refilled and cleared like the rest.
		a.n = m
	}
	var from lua.LValue = lua.LNil
	if m > 0 {
		from = smallNumber(m)
	}
	k, _ := a.t.Next(from)
	return k == lua.LNil
}

// argBuffer builds redis.call's argument list in memory the state reuses:
// strings and numbers are copied into one byte buffer, and the argument
// slices point into it. The host must not keep them past the call, which
// holds for command handlers already (a client's arguments live in its
// read buffer only until the next read).
type argBuffer struct {
	buf  []byte
	ends []int
	args [][]byte
}

func (a *argBuffer) reset() {
	a.buf = a.buf[:0]
	a.ends = a.ends[:0]
}

func (a *argBuffer) addString(s string) {
	a.buf = append(a.buf, s...)
	a.ends = append(a.ends, len(a.buf))
}

// addNumber appends f as "%.17g", the way Redis passes a Lua number to a
// command.
func (a *argBuffer) addNumber(f float64) {
	a.buf = appendG17(a.buf, f)
	a.ends = append(a.ends, len(a.buf))
}

// list slices the buffer into the arguments, once every one is in (the
// buffer may move while it grows).
func (a *argBuffer) list() [][]byte {
	a.args = a.args[:0]
	start := 0
	for _, end := range a.ends {
		a.args = append(a.args, a.buf[start:end:end])
		start = end
	}
	return a.args
}

// appendG17 appends C's "%.17g" of f. Integers below 10^16 print all their
// digits either way, and are the common case (timestamps, counts).
func appendG17(b []byte, f float64) []byte {
	if f == math.Trunc(f) && f > -1e16 && f < 1e16 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return appendG(b, f, 17)
}

// smallNumbers are boxed Lua numbers for small integers: converting an
// LNumber to an LValue allocates, and counts, flags and indexes are
// mostly small.
var smallNumbers = func() (t [1024]lua.LValue) {
	for i := range t {
		t[i] = lua.LNumber(i)
	}
	return t
}()

// smallNumber is lua.LNumber(n) as an LValue, without an allocation for
// 0 <= n < 1024.
func smallNumber(n int) lua.LValue {
	if n >= 0 && n < len(smallNumbers) {
		return smallNumbers[n]
	}
	return lua.LNumber(n)
}

// number is lua.LNumber(f) as an LValue, shared for small integers. A
// state's own boxes.number also shares the rest of its boxes.
func number(f float64) lua.LValue {
	if v, ok := smallInteger(f); ok {
		return v
	}
	return lua.LNumber(f)
}

// smallInteger is the shared LValue of f when f is one of smallNumbers.
func smallInteger(f float64) (lua.LValue, bool) {
	if f >= 0 && f < float64(len(smallNumbers)) && f == math.Trunc(f) && !math.Signbit(f) {
		return smallNumbers[int(f)], true
	}
	return nil, false
}
