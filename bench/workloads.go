package main

import (
	"bytes"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// gcraScript is CL.THROTTLE's algorithm written in Lua, for Redis without
// the module (TIME, GET, SET PX).
//
//go:embed gcra.lua
var gcraScript string

// windowScript is W2 of spec/workloads.md, as clients ship it.
//
//go:embed window.lua
var windowScript string

func scriptSHA(src string) string {
	h := sha1.Sum([]byte(src))
	return hex.EncodeToString(h[:])
}

// Parameters shared by the rate-limit workloads: a 15-burst, 30 per 60 s
// throttle as in spec/workloads.md W4, and 60 s windows for W1-W3.
const (
	windowSeconds = 60
	valueSize     = 16
)

// genState is one load connection's private state. Generators append one
// operation's commands to dst and must not allocate.
type genState struct {
	rng   *rand.Rand
	nowMs int64 // wall clock, read once per pipeline batch
	num   [24]byte
}

// generator appends one operation to dst.
type generator func(g *genState, dst []byte) []byte

// workload is one row kind of the table. An operation is one rate-limit
// decision (or one PING/SET/GET) and may take several commands: W1 is six
// (MULTI ... EXEC) and W3 two.
type workload struct {
	name    string
	about   string // what one operation is
	replies int    // replies per operation
	keys    int    // distinct keys drawn at random; 1 for a hot key, 0 for none
	module  bool   // CL.THROTTLE: only cellserver and redis with redis-cell
	script  string // Lua source to SCRIPT LOAD before the run
	// lib names a library's script to read into script once the workload
	// is chosen (libscripts.go).
	lib      *libScript
	populate bool // SET every key before the run (GET)
	// newGen builds the generator once per run; sha is the loaded script's.
	newGen func(keys *keyTable, sha string) generator
	// benchmark is the redis-benchmark command for the same load, after
	// -h -p -c -P -n; empty when redis-benchmark cannot express it.
	benchmark string
	// benchNote says what the redis-benchmark line does not reproduce.
	benchNote string
}

// keyTable holds the keys of a workload, each pre-encoded as a bulk
// string, so the hot loop copies bytes instead of formatting numbers.
type keyTable struct {
	buf []byte
	off []int32 // key i is buf[off[i]:off[i+1]]
}

func newKeyTable(prefix, suffix string, n int) *keyTable {
	if n < 1 {
		n = 1
	}
	t := &keyTable{off: make([]int32, 0, n+1)}
	for i := range n {
		t.off = append(t.off, int32(len(t.buf)))
		var name string
		if n == 1 {
			name = prefix + "hot" + suffix
		} else {
			name = prefix + strconv.Itoa(i) + suffix
		}
		t.buf = appendBulkString(t.buf, name)
	}
	t.off = append(t.off, int32(len(t.buf)))
	return t
}

func (t *keyTable) len() int { return len(t.off) - 1 }

// random returns a random key's encoding.
func (t *keyTable) random(rng *rand.Rand) []byte {
	i := 0
	if n := t.len(); n > 1 {
		i = rng.IntN(n)
	}
	return t.buf[t.off[i]:t.off[i+1]]
}

// name returns key i without its bulk framing (for set-up code).
func (t *keyTable) name(i int) string {
	b := t.buf[t.off[i]:t.off[i+1]]
	nl := bytes.IndexByte(b, '\n')
	return string(b[nl+1 : len(b)-2])
}

// keyPrefix is each workload's key name prefix; keys differ between
// workloads so one row's leftovers never change another's work.
func keyPrefix(w *workload) (string, string) {
	switch w.name {
	case "set", "get":
		return "key:", ""
	case "throttle", "throttle-hot":
		return "user:", ":reply"
	case "gcra-lua", "gcra-lua-hot":
		return "gcra:", ":reply"
	case "w1":
		return "limit:", ":w1"
	case "w2":
		return "limit:", ":w2"
	case "redis-rate":
		return "rl:", ":rr"
	case "ulule":
		return "rl:", ":ulule"
	case "window":
		return "limit:", ":win"
	default:
		return "rl:", ""
	}
}

// cat concatenates pre-encoded pieces.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func bulks(args ...string) []byte {
	var b []byte
	for _, a := range args {
		b = appendBulkString(b, a)
	}
	return b
}

func throttleGen(keys *keyTable, _ string) generator {
	head := cat(appendArrayHeader(nil, 6), bulks("CL.THROTTLE"))
	tail := bulks("15", "30", "60", "1")
	return func(g *genState, dst []byte) []byte {
		dst = append(dst, head...)
		dst = append(dst, keys.random(g.rng)...)
		return append(dst, tail...)
	}
}

func gcraLuaGen(keys *keyTable, sha string) generator {
	head := cat(appendArrayHeader(nil, 8), bulks("EVALSHA", sha, "1"))
	tail := bulks("15", "30", "60", "1")
	return func(g *genState, dst []byte) []byte {
		dst = append(dst, head...)
		dst = append(dst, keys.random(g.rng)...)
		return append(dst, tail...)
	}
}

// workloads lists every workload in table order.
var workloads = []*workload{
	{
		name: "ping", about: "PING", replies: 1,
		newGen: func(*keyTable, string) generator {
			cmd := encodeCommand("PING")
			return func(_ *genState, dst []byte) []byte { return append(dst, cmd...) }
		},
		benchmark: "-t ping_mbulk",
	},
	{
		name: "set", about: "SET key:<rand> <16 bytes>", replies: 1, keys: -1,
		newGen: func(keys *keyTable, _ string) generator {
			head := cat(appendArrayHeader(nil, 3), bulks("SET"))
			val := bulks(strings.Repeat("x", valueSize))
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				dst = append(dst, keys.random(g.rng)...)
				return append(dst, val...)
			}
		},
		benchmark: "-t set -r {keys} -d 16",
	},
	{
		name: "get", about: "GET key:<rand> (all keys set first)", replies: 1, keys: -1, populate: true,
		newGen: func(keys *keyTable, _ string) generator {
			head := cat(appendArrayHeader(nil, 2), bulks("GET"))
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				return append(dst, keys.random(g.rng)...)
			}
		},
		benchmark: "-t get -r {keys} -d 16",
		benchNote: "its GET test reads keys its SET test wrote: run -t set,get",
	},
	{
		name: "throttle", about: "CL.THROTTLE user:<rand>:reply 15 30 60 1", replies: 1, keys: -1, module: true,
		newGen:    throttleGen,
		benchmark: "-r {keys} CL.THROTTLE user:__rand_int__:reply 15 30 60 1",
	},
	{
		name: "throttle-hot", about: "CL.THROTTLE on one hot key", replies: 1, keys: 1, module: true,
		newGen:    throttleGen,
		benchmark: "CL.THROTTLE user:hot:reply 15 30 60 1",
	},
	{
		name: "gcra-lua", about: "EVALSHA <gcra.lua> 1 gcra:<rand>:reply 15 30 60 1", replies: 1, keys: -1,
		script:    gcraScript,
		newGen:    gcraLuaGen,
		benchmark: "-r {keys} EVALSHA {sha} 1 gcra:__rand_int__:reply 15 30 60 1",
		benchNote: "load the script first: redis-cli -p <port> -x SCRIPT LOAD < bench/gcra.lua",
	},
	{
		name: "gcra-lua-hot", about: "EVALSHA <gcra.lua> on one hot key", replies: 1, keys: 1,
		script:    gcraScript,
		newGen:    gcraLuaGen,
		benchmark: "EVALSHA {sha} 1 gcra:hot:reply 15 30 60 1",
		benchNote: "load the script first: redis-cli -p <port> -x SCRIPT LOAD < bench/gcra.lua",
	},
	{
		name: "redis-rate", about: "EVALSHA <go-redis/redis_rate allowN> 1 rl:<rand>:rr 10 10 1 1 (10/s, burst 10)", replies: 1, keys: -1,
		lib: &redisRateAllowN,
		newGen: func(keys *keyTable, sha string) generator {
			head := cat(appendArrayHeader(nil, 8), bulks("EVALSHA", sha, "1"))
			tail := bulks("10", "10", "1", "1")
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				dst = append(dst, keys.random(g.rng)...)
				return append(dst, tail...)
			}
		},
		benchmark: "-r {keys} EVALSHA {sha} 1 rl:__rand_int__:rr 10 10 1 1",
		benchNote: "load the script first (redis_rate's allowN, from its module source)",
	},
	{
		name: "ulule", about: "EVALSHA <ulule/limiter increment> 1 rl:<rand>:ulule 1 60000", replies: 1, keys: -1,
		lib: &ululeIncr,
		newGen: func(keys *keyTable, sha string) generator {
			head := cat(appendArrayHeader(nil, 6), bulks("EVALSHA", sha, "1"))
			tail := bulks("1", "60000")
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				dst = append(dst, keys.random(g.rng)...)
				return append(dst, tail...)
			}
		},
		benchmark: "-r {keys} EVALSHA {sha} 1 rl:__rand_int__:ulule 1 60000",
		benchNote: "load the script first (ulule/limiter's increment, from its module source)",
	},
	{
		name: "w1", about: "W1: MULTI ZADD ZREMRANGEBYSCORE ZCARD EXPIRE EXEC on limit:<rand>:w1", replies: 6, keys: -1,
		newGen: func(keys *keyTable, _ string) generator {
			multi := encodeCommand("MULTI")
			zadd := cat(appendArrayHeader(nil, 4), bulks("ZADD"))
			zrem := cat(appendArrayHeader(nil, 4), bulks("ZREMRANGEBYSCORE"))
			zrem0 := bulks("0")
			zcard := cat(appendArrayHeader(nil, 2), bulks("ZCARD"))
			expire := cat(appendArrayHeader(nil, 3), bulks("EXPIRE"))
			ttl := bulks(strconv.Itoa(windowSeconds))
			exec := encodeCommand("EXEC")
			return func(g *genState, dst []byte) []byte {
				k := keys.random(g.rng)
				now := strconv.AppendInt(g.num[:0], g.nowMs, 10)
				dst = append(dst, multi...)
				dst = append(dst, zadd...)
				dst = append(dst, k...)
				dst = appendBulk(dst, now)
				dst = appendBulk(dst, now)
				dst = append(dst, zrem...)
				dst = append(dst, k...)
				dst = append(dst, zrem0...)
				dst = appendBulkInt(dst, g.nowMs-windowSeconds*1000)
				dst = append(dst, zcard...)
				dst = append(dst, k...)
				dst = append(dst, expire...)
				dst = append(dst, k...)
				dst = append(dst, ttl...)
				return append(dst, exec...)
			}
		},
		benchNote: "redis-benchmark sends one command per request: no equivalent for a MULTI block",
	},
	{
		name: "w2", about: "W2: EVALSHA <window.lua> 1 limit:<rand>:w2 now now-60000 60", replies: 1, keys: -1,
		script: windowScript,
		newGen: func(keys *keyTable, sha string) generator {
			head := cat(appendArrayHeader(nil, 7), bulks("EVALSHA", sha, "1"))
			ttl := bulks(strconv.Itoa(windowSeconds))
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				dst = append(dst, keys.random(g.rng)...)
				dst = appendBulkInt(dst, g.nowMs)
				dst = appendBulkInt(dst, g.nowMs-windowSeconds*1000)
				return append(dst, ttl...)
			}
		},
		benchmark: "-r {keys} EVALSHA {sha} 1 limit:__rand_int__:w2 1700000000000 1699999940000 60",
		benchNote: "load the script first: redis-cli -p <port> -x SCRIPT LOAD < bench/window.lua; the timestamps are fixed, so every call adds the same member and the sets stay at one entry",
	},
	{
		// W1's decision natively: cellserver's CL.WINDOW (ours), a
		// 60-per-minute window like W2's; redis-server has no equivalent.
		name: "window", about: "CL.WINDOW limit:<rand>:win 60 60000 (cellserver only: W1's decision in one command)", replies: 1, keys: -1,
		newGen: func(keys *keyTable, _ string) generator {
			head := cat(appendArrayHeader(nil, 4), bulks("CL.WINDOW"))
			tail := bulks("60", strconv.Itoa(windowSeconds*1000))
			return func(g *genState, dst []byte) []byte {
				dst = append(dst, head...)
				dst = append(dst, keys.random(g.rng)...)
				return append(dst, tail...)
			}
		},
		benchmark: "-r {keys} CL.WINDOW limit:__rand_int__:win 60 60000",
	},
	{
		name: "w3", about: "W3: INCR rl:<rand>:<window> + EXPIRE .. 60 NX", replies: 2, keys: -1,
		newGen: func(keys *keyTable, _ string) generator {
			incr := cat(appendArrayHeader(nil, 2), bulks("INCR"))
			expire := cat(appendArrayHeader(nil, 4), bulks("EXPIRE"))
			tail := bulks(strconv.Itoa(windowSeconds), "NX")
			var key []byte
			return func(g *genState, dst []byte) []byte {
				// The key names the window: rl:<id>:<window start, s>.
				// keys holds "rl:<id>" pre-encoded; the window is appended.
				k := keys.random(g.rng)
				id := k[bytes.IndexByte(k, '\n')+1 : len(k)-2]
				key = append(key[:0], id...)
				key = append(key, ':')
				key = strconv.AppendInt(key, g.nowMs/1000/windowSeconds*windowSeconds, 10)
				dst = append(dst, incr...)
				dst = appendBulk(dst, key)
				dst = append(dst, expire...)
				dst = appendBulk(dst, key)
				return append(dst, tail...)
			}
		},
		benchmark: "-r {keys} INCR rl:__rand_int__",
		benchNote: "INCR only: redis-benchmark cannot pair it with EXPIRE NX",
	},
}

// selectWorkloads resolves the -workloads flag: "all" or a comma list.
func selectWorkloads(spec string) ([]*workload, error) {
	if spec == "" || spec == "all" {
		return workloads, nil
	}
	byName := map[string]*workload{}
	for _, w := range workloads {
		byName[w.name] = w
	}
	var out []*workload
	seen := map[string]bool{}
	for name := range strings.SplitSeq(spec, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		w := byName[name]
		if w == nil {
			return nil, fmt.Errorf("unknown workload %q (have: %s)", name, workloadNames())
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, w)
		}
	}
	return out, nil
}

func workloadNames() string {
	var names []string
	for _, w := range workloads {
		names = append(names, w.name)
	}
	return strings.Join(names, ",")
}

// unknownCommand matches Redis's error for a command it does not have,
// from a client ("unknown command 'zadd', with args ...") and from a script
// ("Unknown Redis command called from script").
var unknownCommand = regexp.MustCompile(`(?i)unknown (?:redis )?command(?: '([^']*)')?`)

// skipReason turns the first error reply of a probe into the report's
// "skipped: ..." text.
func skipReason(errText string, kind serverKind) string {
	if m := unknownCommand.FindStringSubmatch(errText); m != nil {
		if m[1] != "" {
			return fmt.Sprintf("skipped: %s not supported by %s", strings.ToUpper(m[1]), kind)
		}
		return fmt.Sprintf("skipped: a command the script calls is not supported by %s (%s)", kind, oneLine(errText))
	}
	return fmt.Sprintf("skipped: %s replied -%s", kind, oneLine(errText))
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}
