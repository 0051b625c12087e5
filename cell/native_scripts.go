package cell

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/resp"
)

// Native scripts: the Lua scripts that rate limiting libraries send, run
// as Go instead of Lua.
//
// A script is known by the SHA1 of its exact body (one byte different is
// another script, and runs in Lua), looked up once, when the body is
// cached (Script.Known). Its Go version makes the same redis.calls in the
// same order, each through the checks a script's call passes and the
// command's own handler, so the keys it changes, the effect log and
// replication records, the command statistics, MONITOR and the slow log
// are those of the Lua run by construction; what it saves is the Lua
// machine (filling KEYS and ARGV, the bytecode, turning replies into Lua
// values and back) and the run's bookkeeping around it.
//
// Each version reproduces only what it is sure of: before its first call
// it checks its arguments and the keys it reads, and any it does not
// expect (a non-numeric or unusual number, a missing argument, a key of
// another type) leave it to Lua, having done nothing. From its first call
// on it finishes as the Lua would, including the script error a failing
// redis.call raises, which names the line of the call in the body.
//
// A native run is an ordinary command (runNative): it runs on the shards
// dispatch locked for the EVALSHA's declared keys, which are the only
// keys it touches, with no scriptRun. Lua's bookkeeping has nothing to
// watch in it: it makes a few calls and ends, as one command does, so it
// never reaches busy-reply-threshold between them (Redis's own hook looks
// only every 100,000 Lua instructions); SCRIPT KILL finds no script to
// stop (NOTBUSY), and a client waiting for its keys waits as for any
// command. Everything before the run (SCRIPT LOAD/EXISTS/FLUSH, EVALSHA's
// NOSCRIPT, the script's flags) is the Lua path's.

// nativeState is the switch and the count of native runs.
type nativeState struct {
	off   atomic.Bool  // --lua-native-scripts no
	calls atomic.Int64 // INFO limiters' lua_native_calls (and the clients' tallies)
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

// knownNative is the script engine's Known hook: the native version of
// the body with SHA1 sha, as an untyped nil when there is none.
func knownNative(sha string) any {
	if ns := nativeScripts[sha]; ns != nil {
		return ns
	}
	return nil
}

// nativeCmd is a command a native script calls, by the name the script
// spells it with, looked up on its first call.
type nativeCmd struct {
	name []byte
	once sync.Once
	cmd  *Command // nil: no such command
}

func nativeCommand(name string) *nativeCmd { return &nativeCmd{name: []byte(name)} }

// resolve is scriptCommand's answer for a call of c with args.
func (c *nativeCmd) resolve(args [][]byte) (*Command, string) {
	c.once.Do(func() { c.cmd = lookupCommand(commands, c.name) })
	if c.cmd == nil {
		return nil, ErrScriptUnknownCmd
	}
	return scriptCommandOf(c.cmd, args)
}

// nativeRun is one native call: the script's KEYS and ARGV, where its
// reply goes, and the scratch its redis.calls use.
type nativeRun struct {
	x          *Ctx
	ns         *nativeScript
	sha        string
	keys, argv [][]byte
	db         int
	readOnly   bool         // EVALSHA_RO, or a no-writes script
	allowOOM   bool         // the script declared allow-oom
	wrote      bool         // a write command ran
	w          *resp.Writer // the script's reply
	sw         *resp.Writer // the reply of the call running
	c          *nativeCmd   // the call's command
	args       [][]byte     // the call's arguments
	buf        []byte       // number arguments' text
	out        script.Outcome
	sub        Ctx   // the Ctx of the command a call runs, reused
	mark       int64 // monoNow at the end of the last timed call, or the EVALSHA's start
	// untimed are the calls made since mark, counted with their
	// durations at the end of the run (timeCalls), when the observer's
	// gate is at least untimedGate.
	untimed  [maxUntimed]untimedCall
	nuntimed int
	timeEach bool // the gate is below untimedGate: each call reads the clock
}

// maxUntimed is how many calls a native run counts at its end.
const maxUntimed = 8

// untimedCall is a call whose statistics wait for the run's end.
type untimedCall struct {
	cmd    *Command
	failed bool
}

// untimedGate is the observer's gate from which a native run reads the
// clock once, at its end, instead of after each call: its calls then
// share the run's duration evenly in the command statistics (the
// counts are exact; a duration split among a few sub-microsecond calls
// is as good as theirs, and is most of a call's cost on a VM whose
// clock costs 25 ns). Below the gate (a MONITOR attached, a slow log or
// latency monitor threshold under 1 ms) each call is timed alone, as a
// slow one must reach the slow log and latency monitor on its own.
// Above it, only a run that reaches the gate could hold a call that
// does; such a run, which only a pause of the whole process makes (a
// native run's calls are a few microseconds), is logged as its EVALSHA,
// and its calls are not.
const untimedGate = int64(time.Millisecond)

// runNative runs s for x's EVAL or EVALSHA natively, when it is a known
// script and the setting allows: false leaves it to Lua, nothing done.
// readOnly: the script may not write (EVAL_RO, EVALSHA_RO, no-writes).
func (srv *Server) runNative(x *Ctx, s *script.Script, readOnly bool, keys, argv [][]byte) bool {
	ns, _ := s.Known.(*nativeScript)
	if ns == nil || srv.native.off.Load() {
		return false
	}
	// The client's own: a native run makes no script call, so never
	// runs inside another, and a client runs one command at a time.
	n := x.cl.native
	if n == nil {
		n = &nativeRun{sw: resp.NewWriter()}
		x.cl.native = n
	}
	n.x, n.ns, n.sha, n.keys, n.argv, n.w = x, ns, s.SHA, keys, argv, x.W
	n.db, n.readOnly, n.wrote = x.DB(), readOnly, false
	n.allowOOM = s.Flags&(script.FlagAllowOOM|script.FlagCompat) == script.FlagAllowOOM
	n.out = script.Outcome{}
	if n.mark = x.monoNs; n.mark == 0 {
		n.mark = monoNow()
	}
	n.timeEach, n.nuntimed = x.srv.obs.gate.Load() < untimedGate, 0
	ok := ns.run(n)
	if n.nuntimed != 0 {
		// Counted at the EVALSHA's end, on the clock reading that ends
		// it (Client.endCommand): one reading fewer per run.
		p := &x.cl.scriptCalls
		if p.n != 0 {
			p.settle(x.cl, monoNow()) // a path that missed endCommand
		}
		p.n = copy(p.calls[:], n.untimed[:n.nuntimed])
		p.mark = n.mark
		n.nuntimed = 0
	}
	out := n.out
	n.x, n.ns, n.keys, n.argv, n.w, n.c = nil, nil, nil, nil, nil, nil
	n.sub = Ctx{}
	if !ok {
		return false
	}
	x.failed = out.Failed
	for _, e := range out.Errors {
		srv.stats.countError(e)
	}
	x.cl.tally.native++
	return true
}

// polledNative says whether an EVALSHA may run inside the poller's
// callback (pollserve.go): one of a known script that runs natively, as
// an ordinary command that waits for nothing else. Its Go version may
// still leave the call to Lua, which may wait (for every shard, for a busy
// script): evalGeneric then gives up before anything is done, and the
// ordinary loop runs the call.
func (c *Client) polledNative(cmd *Command, args [][]byte) bool {
	if cmd.Name != "evalsha" && cmd.Name != "evalsha_ro" || len(args) < 3 || c.srv.native.off.Load() {
		return false
	}
	s := c.scriptBySHA(args[1])
	return s != nil && s.Known != nil
}

// cmd starts the arguments of a call of c.
func (n *nativeRun) cmd(c *nativeCmd, args ...[]byte) {
	n.c = c
	n.args = append(append(n.args[:0], c.name), args...)
	n.buf = n.buf[:0]
}

// arg adds an argument as the script passes a string.
func (n *nativeRun) arg(b []byte) { n.args = append(n.args, b) }

// text is tostring of the Lua number f ("%.14g"), in the run's scratch:
// valid until the next call's arguments are started.
func (n *nativeRun) text(f float64) []byte {
	start := len(n.buf)
	n.buf = script.AppendNumber(n.buf, f)
	return n.buf[start:len(n.buf):len(n.buf)]
}

// num adds an argument as the script passes a Lua number ("%.17g"). The
// text of earlier numbers stays where it was when buf grows.
func (n *nativeRun) num(f float64) {
	start := len(n.buf)
	n.buf = script.AppendCallNumber(n.buf, f)
	n.args = append(n.args, n.buf[start:len(n.buf):len(n.buf)])
}

// numArg adds the argument b, which plainNumber read as f, as the script
// passes tonumber(b): b itself when that is the text "%.17g" prints, as
// it is for an integer (plainNumber admits no leading zero, no "-0" and
// at most 15 digits), f's text otherwise.
func (n *nativeRun) numArg(f float64, b []byte) {
	if bytes.IndexByte(b, '.') < 0 {
		n.arg(b)
		return
	}
	n.num(f)
}

// call runs the arguments as the script's call number i (redis.call), as
// scriptRun.Call runs a Lua script's, and returns its reply. nil: the call
// failed, which raises the script's error, now written as the reply; the
// run must end.
//
// Its keys are the script's declared ones, whose shards the EVALSHA holds,
// so only the checks that do not depend on the keys are made. Its counts
// go to the client's tally with the EVALSHA's (stats_tally.go), and its
// duration runs from the end of the call before (the first's, from the
// EVALSHA's start): one clock reading per call.
func (n *nativeRun) call(i int) []byte {
	x := n.x
	n.sw.Reset()
	n.sw.SetProto(2)
	cmd, msg := n.c.resolve(n.args)
	if msg == "" {
		var holds func(*keyspace.Shard) bool
		if x.srv.clusterOn {
			holds = n.holds
		}
		msg = x.scriptCallRefusal(cmd, n.args, n.readOnly, n.oomDenied, holds)
	}
	if msg != "" {
		x.refuseScriptCall(cmd, msg, n.sw)
		n.fail(n.sw.Bytes(), i, true)
		return nil
	}
	if cmd.Flags&FlagWrite != 0 {
		n.wrote = true
	}
	var failed bool
	n.db, failed = x.runScriptCmd(&n.sub, cmd, n.args, n.sw, n.db)
	if x.srv.obs.monitors.count.Load() > 0 && cmd.Flags&(FlagSkipMonitor|FlagAdmin) == 0 {
		x.cl.feedMonitorsAs(cmd, n.args, n.db, "lua")
	}
	if n.timeEach {
		end := monoNow()
		d := time.Duration(end - n.mark)
		n.mark = end
		x.cl.tally.addInScript(x.cl, cmd, failed, d)
		if int64(d) >= x.srv.obs.gate.Load() {
			x.srv.obs.observe(nil, cmd, n.args, d) // MONITOR was fed above
		}
	} else {
		if n.nuntimed == len(n.untimed) {
			n.timeCalls()
		}
		n.untimed[n.nuntimed] = untimedCall{cmd, failed}
		n.nuntimed++
	}
	b := n.sw.Bytes()
	if len(b) == 0 || b[0] == '-' {
		n.fail(b, i, true)
		return nil
	}
	return b
}

// timeCalls counts the untimed calls, sharing the time since mark
// evenly (untimedGate): for a run of more calls than untimed holds.
func (n *nativeRun) timeCalls() {
	end := monoNow()
	shareTime(n.x.cl, n.untimed[:n.nuntimed], end-n.mark)
	n.mark = end
	n.nuntimed = 0
}

// shareTime counts calls in c's tally, sharing d evenly.
func shareTime(c *Client, calls []untimedCall, d int64) {
	if len(calls) == 0 {
		return
	}
	each := time.Duration(d) / time.Duration(len(calls))
	for _, u := range calls {
		c.tally.addInScript(c, u.cmd, u.failed, each)
	}
}

// scriptCalls are the untimed calls of the native run that the client's
// command (EVALSHA, EVAL) just made, waiting for the reading that ends
// the command: they share the time from mark to it, which so also
// counts the command's commit after the run (a few tens of ns).
type scriptCalls struct {
	calls [maxUntimed]untimedCall
	n     int
	mark  int64
}

// settle counts the calls with the time from mark to end.
func (p *scriptCalls) settle(c *Client, end int64) {
	if p.n == 0 {
		return
	}
	shareTime(c, p.calls[:p.n], end-p.mark)
	p.n = 0
}

// oomDenied is scriptOOMDenied for a native run.
func (n *nativeRun) oomDenied(cmd *Command) bool {
	return scriptOOMRefused(n.x, cmd, n.allowOOM) && !n.wrote
}

// holds reports whether s is the shard of one of the run's declared keys
// (or, under EXEC, any shard): those are what the run holds.
func (n *nativeRun) holds(s *keyspace.Shard) bool {
	if n.x != &n.x.cl.ctx {
		return true // EXEC holds every shard
	}
	for _, k := range n.keys {
		if n.x.srv.ks.ShardOf(n.x.DB(), k) == s {
			return true
		}
	}
	return false
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

// intReply reads the integer reply b of the call that just ran: the
// number its command wrote, as it wrote it (resp.Writer.OneInt), else
// read from the text.
func (n *nativeRun) intReply(b []byte) (int64, bool) {
	if v, ok := n.sw.OneInt(); ok {
		return v, true
	}
	return replyInt(b)
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
	f, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64) // not kept: no copy
	if err != nil || f == 0 && neg {
		return 0, false
	}
	return f, true
}

// peekNumber reads key as the script's GET will see it: missing
// (present false), or a string that plainNumber reads as f. ok false:
// something else (a wrong type, a value Lua may read differently), which
// is Lua's to handle. It changes nothing: an expired key is left for the
// GET to delete. The GET, on the same locked shard at the same frozen
// clock, then finds what it found (getPeeked).
func (n *nativeRun) peekNumber(key []byte) (f float64, present, ok bool) {
	x := n.x
	e := x.srv.ks.PeekLocked(n.db, key)
	if e == nil || e.Expired(x.Now()) {
		return 0, false, true
	}
	if !e.IsString() {
		return 0, false, false
	}
	var buf [20]byte
	if f, ok = plainNumber(e.StrTo(&buf)); !ok {
		return 0, false, false
	}
	return f, true, true
}

// getPeeked reads the reply b of the GET of a key peekNumber found
// present (f) or not: the number, or false for a nil reply. ok false:
// the reply is not what the peek saw, which the caller answers as an
// internal error.
func getPeeked(b []byte, f float64, present bool) (v float64, found, ok bool) {
	val, _, ok := replyBulk(b)
	if !ok || (val != nil) != present {
		return 0, false, false
	}
	return f, present, true
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
