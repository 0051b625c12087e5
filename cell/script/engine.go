// Package script is the Lua environment of EVAL: a Redis 7.0 sandbox on
// gopher-lua (Lua 5.1, as Redis bundles), with the redis.* helpers, the
// cjson, struct, bit and cmsgpack libraries, Redis's conversions between
// Lua values and replies, and its error formats.
//
// The package knows nothing of the keyspace. redis.call reaches the server
// through the Host interface, which runs one command and writes its RESP
// reply into a scratch writer; the reply is then parsed back into Lua
// values here. Locking, time freezing, key declarations and BUSY are the
// caller's business (cell/cmd_script.go).
//
// Invariants:
//   - A compiled script (its FunctionProto) is immutable and shared by every
//     Lua state; each state makes its own closure from it on first use.
//   - A state runs one script at a time and returns to a bounded pool of idle
//     states afterwards. Globals are read-only, so no script can leave state
//     behind for the next one, except through math.randomseed, whose
//     generator is server-wide as in Redis 7.0.
//   - Nothing a script does panics the server: Go panics inside a run are
//     recovered at the boundary, reported as an error reply, and the state
//     is thrown away.
package script

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/cellserver/cellserver/resp"
)

// Flags are a script's shebang flags (#!lua flags=...).
type Flags uint8

const (
	// FlagCompat marks a script without a shebang: it may write unless run
	// by EVAL_RO.
	FlagCompat Flags = 1 << iota
	FlagNoWrites
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlot
)

var flagNames = map[string]Flags{
	"no-writes":             FlagNoWrites,
	"allow-oom":             FlagAllowOOM,
	"allow-stale":           FlagAllowStale,
	"no-cluster":            FlagNoCluster,
	"allow-cross-slot-keys": FlagAllowCrossSlot,
}

// Script is a compiled script body.
type Script struct {
	SHA   string // 40 lower-case hex digits of the body's SHA1
	Body  []byte
	Flags Flags
	proto *lua.FunctionProto
	// assignsGlobal: the script may write a global, so it must run with
	// the read-only proxy as its environment (fastenv.go).
	assignsGlobal bool
	// Notes: which shards its runs need, kept as long as the script.
	Notes ShardNotes
	// Known is the host's own version of this body, if it has one (the
	// server's native scripts): what the engine's Known hook said for the
	// SHA1 when the body was cached, so that a run does not look again.
	Known any
}

// ShardNotes are the host's notes on a script or function, kept as long
// as it is: NeedsAll, it once reached past the keys it declared, so later
// runs start holding everything; StaysDeclared, a run holding every
// shard touched only the keys it declared, so later runs may hold just
// those.
type ShardNotes struct {
	NeedsAll      atomic.Bool
	StaysDeclared atomic.Bool
}

// Host runs the commands a script calls. Call runs args (already checked
// for count and argument types) as one command and writes its reply, in
// the protocol of w, into w: errors too, as RESP error lines. The script
// package decides what an error reply does (raise or return).
type Host interface {
	Call(args [][]byte, w *resp.Writer)
}

// LogHost is a Host that takes the run's redis.log lines itself: a run the
// host may abandon and rerun must not log twice.
type LogHost interface {
	Log(level int, msg string)
}

// RNG is the state of math.random's shared generator, read before a run
// the host may abandon.
func (e *Engine) RNG() uint64 {
	e.rng.mu.Lock()
	defer e.rng.mu.Unlock()
	return e.rng.x
}

// RewindRNG puts the generator back to before, the state read before an
// abandoned run, unless another script drew from it since that run ended
// at after: the rerun then sees the numbers the abandoned run saw.
func (e *Engine) RewindRNG(before, after uint64) {
	e.rng.mu.Lock()
	if e.rng.x == after {
		e.rng.x = before
	}
	e.rng.mu.Unlock()
}

// Logger receives redis.log lines; level is a LOG_* constant.
type Logger func(level int, msg string)

// Engine holds the script cache and the pool of Lua states.
type Engine struct {
	version    string
	versionNum int
	log        Logger

	mu      sync.RWMutex
	scripts map[string]*Script
	bodies  int64 // bytes of cached bodies, for used_memory_lua
	gen     atomic.Int64
	libGen  atomic.Int64 // bumped when libraries change (function.go)

	idle chan *state
	rng  rand48

	known func(sha string) any // SetKnown
}

// SetKnown makes f the host's lookup of its own versions of scripts by
// SHA1: each body cached from now on carries f(its SHA1) as Known. Set it
// before the first Load.
func (e *Engine) SetKnown(f func(sha string) any) { e.known = f }

// NewEngine makes an engine reporting version ("7.0.15") as REDIS_VERSION.
func NewEngine(version string, log Logger) *Engine {
	if log == nil {
		log = func(int, string) {}
	}
	e := &Engine{
		version: version,
		log:     log,
		scripts: map[string]*Script{},
		idle:    make(chan *state, max(64, 8*runtime.GOMAXPROCS(0))),
	}
	var maj, min, patch int
	fmt.Sscanf(version, "%d.%d.%d", &maj, &min, &patch)
	e.versionNum = maj<<16 | min<<8 | patch
	// Redis starts its generator at rand48's default state and never
	// reseeds it per script (7.0).
	e.rng.x = rand48Initial
	return e
}

// SHA1Hex is the script name Redis uses: the lower-case hex SHA1 of body.
func SHA1Hex(body []byte) string {
	h := sha1.Sum(body)
	return hex.EncodeToString(h[:])
}

// Load compiles body and caches it, returning the cached script when the
// body is known. The error is Redis's text, ready for an error reply.
func (e *Engine) Load(body []byte) (*Script, error) {
	sha := SHA1Hex(body)
	if s := e.Lookup([]byte(sha)); s != nil {
		return s, nil
	}
	flags, skip, err := parseShebang(body)
	if err != nil {
		return nil, err
	}
	proto, err := compile(body[skip:])
	if err != nil {
		return nil, err
	}
	s := &Script{SHA: sha, Body: bytes.Clone(body), Flags: flags, proto: proto, assignsGlobal: assignsGlobal(proto)}
	if e.known != nil {
		s.Known = e.known(sha)
	}
	e.mu.Lock()
	if old := e.scripts[sha]; old != nil {
		s = old
	} else {
		e.scripts[sha] = s
		e.bodies += int64(len(body))
	}
	e.mu.Unlock()
	return s, nil
}

// Lookup finds a cached script by SHA1 in any letter case.
func (e *Engine) Lookup(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	var buf [40]byte
	for i, c := range sha {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	e.mu.RLock()
	s := e.scripts[string(buf[:])]
	e.mu.RUnlock()
	return s
}

// Flush forgets every cached script (SCRIPT FLUSH). States drop their
// closures lazily, when they see the generation change.
func (e *Engine) Flush() {
	e.mu.Lock()
	e.scripts = map[string]*Script{}
	e.bodies = 0
	e.gen.Add(1)
	e.mu.Unlock()
}

// Generation changes when the cache is flushed: a script found in one
// generation stays cached until it changes.
func (e *Engine) Generation() int64 { return e.gen.Load() }

// Count is number_of_cached_scripts.
func (e *Engine) Count() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.scripts)
}

// MemoryUsed is used_memory_lua: an estimate, since gopher-lua's heap is
// Go's. It follows what Redis 7.0 reports: 32 KB for an idle Lua state,
// growing in whole kilobytes as scripts are cached.
func (e *Engine) MemoryUsed() int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return 32768 + (512*int64(len(e.scripts))+2*e.bodies)/1024*1024
}

// CacheBytes is used_memory_scripts_eval: the cached bodies plus Redis's
// per-script bookkeeping (112 bytes each in 7.0).
func (e *Engine) CacheBytes() int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.bodies + 112*int64(len(e.scripts))
}

// FlagsOf is the flags body declares (FlagCompat without a shebang), for
// checks made before a script is loaded, as Redis's evalGetCommandFlags;
// ok is false when the shebang is bad (running it reports why).
func FlagsOf(body []byte) (flags Flags, ok bool) {
	flags, _, err := parseShebang(body)
	return flags, err == nil
}

// parseShebang reads the "#!lua flags=..." first line. skip is the length
// of that line without its line feed: the compiler gets the rest, so line
// numbers stay the user's.
func parseShebang(body []byte) (flags Flags, skip int, err error) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return FlagCompat, 0, nil
	}
	end := bytes.IndexByte(body, '\n')
	if end < 0 {
		return 0, 0, errorText(ErrInvalidShebang)
	}
	parts, ok := resp.SplitArgs(body[:end], nil)
	if !ok || len(parts) == 0 {
		return 0, 0, errorText(ErrInvalidEngine)
	}
	if string(parts[0]) != "#!lua" {
		return 0, 0, errorText(ErrUnexpectedEngine + string(parts[0]))
	}
	for _, p := range parts[1:] {
		list, found := bytes.CutPrefix(p, []byte("flags="))
		if !found {
			return 0, 0, errorText(ErrUnknownShebangOption + string(p))
		}
		if len(list) == 0 {
			continue
		}
		for _, f := range bytes.Split(list, []byte(",")) {
			v, known := flagNames[string(f)]
			if !known {
				return 0, 0, errorText(ErrUnexpectedFlag + string(f))
			}
			flags |= v
		}
	}
	return flags, end, nil
}

// compile parses and compiles a body under Redis's chunk name. Lua prints
// the chunk name "@user_script" as "user_script", so that is the name the
// compiler gets. gopher-lua's parse errors are worded differently from
// Lua's; their position is rewritten into Lua's "user_script:N:" form.
func compile(src []byte) (*lua.FunctionProto, error) {
	proto, msg := compileAs(src, chunkName)
	if msg != "" {
		return nil, errorText(ErrCompilePrefix + msg)
	}
	return proto, nil
}

// compileAs compiles src under the chunk name name; on failure msg is
// Lua's message ("name:N: ...").
func compileAs(src []byte, name string) (proto *lua.FunctionProto, msg string) {
	defer func() {
		if r := recover(); r != nil {
			proto, msg = nil, fmt.Sprint(r)
		}
	}()
	if m := checkSyntax(src); m != "" {
		if rest, ok := strings.CutPrefix(m, chunkName+":"); ok {
			m = name + ":" + rest
		}
		return nil, m
	}
	renamed, placeholder := renameGoto(src)
	chunk, err := parse.Parse(bytes.NewReader(renamed), name)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*parse.Error); ok {
			if pe.Pos.Line == parse.EOF {
				msg = fmt.Sprintf("%s:%d: %s near '<eof>'", name, lastLine(src), luaSyntaxMessage(pe.Message))
			} else {
				msg = fmt.Sprintf("%s:%d: %s near '%s'", name, pe.Pos.Line, luaSyntaxMessage(pe.Message), pe.Token)
			}
		}
		if placeholder != "" {
			msg = strings.ReplaceAll(msg, placeholder, gotoName)
		}
		return nil, strings.TrimSpace(msg)
	}
	if placeholder != "" {
		restoreGoto(chunk, placeholder)
	}
	rewriteConcat(chunk)
	rewriteCtors(chunk)
	rewriteNegZero(chunk)
	rewriteRedisCalls(chunk)
	proto, err = lua.Compile(chunk, name)
	if err != nil {
		return nil, strings.TrimSpace(err.Error())
	}
	// The main chunk is vararg, and gopher-lua would build Lua 5.0's "arg"
	// table for it on every call; Lua 5.1 does not for a main chunk (no
	// script can name it), so neither do we.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

func lastLine(src []byte) int { return bytes.Count(src, []byte("\n")) + 1 }

const chunkName = "user_script"

// errorText is an error whose text is the reply, code included.
type errorText string

func (e errorText) Error() string { return string(e) }

// Run runs s with KEYS and ARGV and writes its reply (or its error) into
// w. ctx ends the script from outside: SCRIPT KILL cancels it with a cause
// whose text becomes the error. Which commands a script may run (read-only
// scripts, undeclared keys) is the host's business.
func (e *Engine) Run(ctx context.Context, s *Script, keys, argv [][]byte, host Host, w *resp.Writer) (out Outcome) {
	st := e.get()
	mark := w.Len()
	defer func() {
		if r := recover(); r != nil {
			w.Truncate(mark)
			msg := fmt.Sprintf("ERR Error running script %s, internal error: %v", s.SHA, r)
			w.Error(msg)
			st.L.Close()
			out = Outcome{Failed: true, Errors: []string{msg}}
			return
		}
		e.put(st)
	}()
	return st.run(ctx, s, keys, argv, host, w)
}

// Outcome is what the reply of a run means for the statistics: Failed if
// it holds an error at any depth (failed_calls), and the error texts that
// error statistics count. As in Redis, an error that came from a command
// the script called was counted when that command failed, and is not
// counted again when the script passes it on (Redis's
// ignore_stats_update).
type Outcome struct {
	Failed bool
	Errors []string
}

func (e *Engine) get() *state {
	select {
	case st := <-e.idle:
		if st.gen != e.gen.Load() {
			st.fns = map[string]*lua.LFunction{}
			st.gen = e.gen.Load()
		}
		return st
	default:
		return newState(e)
	}
}

func (e *Engine) put(st *state) {
	select {
	case e.idle <- st:
	default:
		st.L.Close()
	}
}

// luaSyntaxMessage rewords gopher-lua's parser messages as Lua 5.1's,
// where there is a direct equivalent.
func luaSyntaxMessage(msg string) string {
	switch msg {
	case "syntax error":
		return "unexpected symbol"
	case "unterminated string":
		return "unfinished string"
	case "unterminated multiline string":
		return "unfinished long string"
	case "invalid multiline comment":
		return "unfinished long comment"
	case "illegal hexadecimal number":
		return "malformed number"
	case "Invalid '~' token":
		return "unexpected symbol"
	}
	return msg
}
