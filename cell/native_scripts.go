package cell

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/resp"
)

// Native scripts: the Lua scripts that rate limiting libraries send, run
// as Go instead of Lua.
//
// A script is known by the SHA1 of its exact body (one byte different is
// another script, and runs in Lua). Its Go version makes the same
// redis.calls in the same order, through the same Host (scriptRun.Call),
// so the keys it changes, the effect log and replication records, the
// command statistics, MONITOR and the slow log are those of the Lua run by
// construction; what it saves is the Lua machine: filling KEYS and ARGV,
// running the bytecode, turning replies into Lua values and back.
//
// Each version reproduces only what it is sure of: before its first call
// it checks its arguments and the keys it reads, and any it does not
// expect (a non-numeric or unusual number, a missing argument, a key of
// another type) leave it to Lua, having done nothing. From its first call
// on it finishes as the Lua would, including the script error a failing
// redis.call raises, which names the line of the call in the body.
// Everything around the body (SCRIPT LOAD/EXISTS/FLUSH, EVALSHA's
// NOSCRIPT, the shards a script holds, SCRIPT KILL and BUSY) is the Lua
// path's: only runScript's call of the Lua engine is replaced.

// nativeState is the switch and the count of native runs.
type nativeState struct {
	off   atomic.Bool  // --lua-native-scripts no
	calls atomic.Int64 // INFO limiters' lua_native_calls
}

func init() {
	configParams = append(configParams, &configParam{name: "lua-native-scripts", kind: kindBool, def: "yes",
		apply: func(s *Server, v string) string { s.native.off.Store(v == "no"); return "" },
		get:   func(s *Server) string { return yesNo(!s.native.off.Load()) }})
}

// nativeImpl runs one call of a known script. false: it did nothing, and
// the script must run in Lua.
type nativeImpl func(n *nativeRun) bool

// nativeScript is one known body: its Go version, and for each of the
// redis.calls that version makes (by index), the line of the body it is on.
type nativeScript struct {
	name  string
	run   nativeImpl
	lines []int
}

// nativeScripts are the known bodies by SHA1 (lower-case hex). Filled at
// init, read only after.
var nativeScripts = map[string]*nativeScript{}

// registerNative makes the body with the given SHA1 run as run. lines
// maps run's calls, by index, to their lines in that body.
func registerNative(sha, name string, run nativeImpl, lines ...int) {
	nativeScripts[sha] = &nativeScript{name: name, run: run, lines: lines}
}

// nativeRun is one native call: the script's KEYS and ARGV, where its
// reply goes, and the scratch its redis.calls use.
type nativeRun struct {
	r          *scriptRun
	ns         *nativeScript
	sha        string
	keys, argv [][]byte
	w          *resp.Writer // the script's reply
	sw         *resp.Writer // the reply of the call running
	args       [][]byte     // the call's arguments
	buf        []byte       // number arguments' text
	out        script.Outcome
}

var nativeRuns = sync.Pool{New: func() any { return &nativeRun{sw: resp.NewWriter()} }}

// runBody runs the body of s for r: natively when it is a known script
// and the setting allows, else in Lua.
func (srv *Server) runBody(r *scriptRun, s *script.Script, keys, argv [][]byte) script.Outcome {
	if ns := nativeScripts[s.SHA]; ns != nil && !srv.native.off.Load() {
		n := nativeRuns.Get().(*nativeRun)
		n.r, n.ns, n.sha, n.keys, n.argv, n.w = r, ns, s.SHA, keys, argv, r.x.W
		n.out = script.Outcome{}
		ok := ns.run(n)
		out := n.out
		n.r, n.ns, n.keys, n.argv, n.w = nil, nil, nil, nil, nil
		nativeRuns.Put(n)
		if ok {
			srv.native.calls.Add(1)
			return out
		}
	}
	return srv.scripts.Run(r, s, keys, argv, r, r.x.W)
}

// cmd starts the arguments of a call.
func (n *nativeRun) cmd(args ...[]byte) {
	n.args = append(n.args[:0], args...)
	n.buf = n.buf[:0]
}

// arg adds an argument as the script passes a string.
func (n *nativeRun) arg(b []byte) { n.args = append(n.args, b) }

// num adds an argument as the script passes a Lua number ("%.17g"). The
// text of earlier numbers stays where it was when buf grows.
func (n *nativeRun) num(f float64) {
	start := len(n.buf)
	n.buf = script.AppendCallNumber(n.buf, f)
	n.args = append(n.args, n.buf[start:len(n.buf):len(n.buf)])
}

// call runs the arguments as the script's call number i (redis.call) and
// returns its reply. nil: the call failed, which raises the script's error,
// now written as the reply; the run must end.
func (n *nativeRun) call(i int) []byte {
	if n.r.Err() != nil {
		// Stopped from outside: the error redis.call raises then.
		n.fail([]byte("-"+script.StopText(n.r)), i, false)
		return nil
	}
	n.sw.Reset()
	n.sw.SetProto(2)
	n.r.Call(n.args, n.sw)
	b := n.sw.Bytes()
	if len(b) == 0 || b[0] == '-' {
		n.fail(b, i, true)
		return nil
	}
	return b
}

// fail writes the error the script raises when its call number i gets the
// error reply e. counted: the command already counted it in the error
// statistics.
func (n *nativeRun) fail(e []byte, i int, counted bool) {
	msg := script.CallError(e, n.sha, n.ns.lines[i])
	n.w.Error(msg)
	n.out.Failed = true
	if !counted {
		n.out.Errors = append(n.out.Errors, msg)
	}
}

// replyInt reads an integer reply.
func replyInt(b []byte) (int64, bool) {
	if len(b) < 4 || b[0] != ':' {
		return 0, false
	}
	return resp.ParseInt(b[1 : len(b)-2])
}

// replyBulk reads a bulk reply: its bytes and the rest of b; nil with ok
// for a nil bulk.
func replyBulk(b []byte) (v, rest []byte, ok bool) {
	if len(b) < 4 || b[0] != '$' {
		return nil, nil, false
	}
	i := 1
	for i < len(b) && b[i] != '\r' {
		i++
	}
	l, ok := resp.ParseInt(b[1:i])
	if !ok {
		return nil, nil, false
	}
	if l < 0 {
		return nil, b[i+2:], true
	}
	start := i + 2
	end := start + int(l)
	if end+2 > len(b) {
		return nil, nil, false
	}
	return b[start:end:end], b[end+2:], true
}

// plainNumber reads a number argument the way every Lua conversion of it
// agrees on, in Lua and in C Lua as Redis runs it: [-]digits[.digits],
// no leading zero, at most 15 digits on either side, not -0. Anything
// else (exponents, hex, spaces, "inf") is left to the Lua path, whose
// conversions differ between arithmetic and tonumber.
func plainNumber(b []byte) (float64, bool) {
	s := b
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 15 || i > 1 && s[0] == '0' {
		return 0, false
	}
	var ip int64
	for _, c := range s[:i] {
		ip = ip*10 + int64(c-'0')
	}
	if i == len(s) {
		if neg {
			if ip == 0 {
				return 0, false
			}
			ip = -ip
		}
		return float64(ip), true
	}
	frac := s[i:]
	if frac[0] != '.' || len(frac) < 2 || len(frac) > 16 {
		return 0, false
	}
	for _, c := range frac[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f == 0 && neg {
		return 0, false
	}
	return f, true
}

// peekNumber reads key as the script's GET will see it: missing (nil,
// true), or a string that plainNumber reads. false: something else (a
// wrong type, a value Lua may read differently), which is Lua's to handle.
// It changes nothing: an expired key is left for the GET to delete.
func (n *nativeRun) peekNumber(key []byte) (val []byte, ok bool) {
	x := n.r.x
	e := x.srv.ks.PeekLocked(n.r.db, key)
	if e == nil || e.Expired(x.Now()) {
		return nil, true
	}
	if !e.IsString() {
		return nil, false
	}
	var buf [20]byte
	v := e.StrTo(&buf)
	if _, ok := plainNumber(v); !ok {
		return nil, false
	}
	return v, true
}

// replyTime reads TIME's reply: seconds and microseconds.
func replyTime(b []byte) (sec, usec int64, ok bool) {
	if len(b) < 4 || string(b[:4]) != "*2\r\n" {
		return 0, 0, false
	}
	s, rest, ok := replyBulk(b[4:])
	if !ok {
		return 0, 0, false
	}
	us, _, ok := replyBulk(rest)
	if !ok {
		return 0, 0, false
	}
	sec, ok1 := resp.ParseInt(s)
	usec, ok2 := resp.ParseInt(us)
	return sec, usec, ok1 && ok2
}

// internal answers a call whose reply the Go version did not expect (its
// checks before the first call rule that out): an error, never a guess.
func (n *nativeRun) internal() bool {
	msg := "ERR Error running script " + n.sha + ", internal error: unexpected reply in its native version"
	n.w.Error(msg)
	n.out.Failed = true
	n.out.Errors = append(n.out.Errors, msg)
	return true
}

// nativeInfo is INFO limiters' line about native scripts.
func nativeInfo(s *Server, b *strings.Builder) {
	field(b, "lua_native_calls", strconv.FormatInt(s.native.calls.Load(), 10))
}
