package cell

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// limiterState is the server's view of its rate limiters.
type limiterState struct {
	// fixedNow, when a test sets it, is the wall clock in Unix ns the
	// limiter commands decide at (Ctx.limiterNow) and every command's
	// clock for expiry (callAt), so that a test runs a limiter and the
	// keys of a pattern it is compared with at the same instants; 0: the
	// real one.
	fixedNow atomic.Int64
	// prefixes counts decisions per key prefix (--limiter-prefixes);
	// nil when none is named, so the hot path pays one load.
	prefixes atomic.Pointer[prefixTable]
	// The top list's lock, taken on sampled refusals, lives on a cache
	// line of its own, away from the two words every command reads.
	_   [64]byte
	top refusedTop
}

// prefixTable is the key prefixes counted apart, with their counts of
// allowed and limited decisions; CONFIG SET limiter-prefixes replaces it
// (and so restarts the counts).
type prefixTable struct {
	spec  string
	names [][]byte
	n     [][2]atomic.Int64
}

// setPrefixes installs the comma-separated prefixes of spec.
func (l *limiterState) setPrefixes(spec string) {
	var t prefixTable
	t.spec = spec
	for _, p := range strings.Split(spec, ",") {
		if p = strings.TrimSpace(p); p != "" {
			t.names = append(t.names, []byte(p))
		}
	}
	if len(t.names) == 0 {
		l.prefixes.Store(nil)
		return
	}
	t.n = make([][2]atomic.Int64, len(t.names))
	l.prefixes.Store(&t)
}

// prefixSpec is CONFIG GET limiter-prefixes.
func (l *limiterState) prefixSpec() string {
	if t := l.prefixes.Load(); t != nil {
		return t.spec
	}
	return ""
}

func init() {
	configParams = append(configParams, &configParam{name: "limiter-prefixes", kind: kindString,
		get:   func(s *Server) string { return s.limiters.prefixSpec() },
		apply: func(s *Server, v string) string { s.limiters.setPrefixes(v); return "" }})
	register(&Command{Name: "cl.toprefused", Arity: -1, Flags: FlagReadonly | FlagFast, Handler: clTopRefused,
		Doc: &CommandDoc{Summary: "Lists the keys rate limiters refused most often recently (sampled estimates)", Complexity: "O(1)"}})
}

// countDecision counts one decision (not an error) of cmd, whose
// arguments are args, made at now (Unix ns), against the prefixes of its
// keys; a refusal by a command that charges is sampled into the top list.
func (l *limiterState) countDecision(cmd limiterCmd, args [][]byte, limited bool, now int64) {
	step := len(args)
	if cmd == limThrottleAll || cmd == limProbeAll {
		step = 5
	}
	// A probe's "limited" refuses nothing: it is no top-list entry.
	top := limited && cmd != limProbe && cmd != limProbeAll
	if !top && l.prefixes.Load() == nil {
		return
	}
	l.countKeys(args, step, limited, top, now)
}

// countKeys counts one decision against the prefixes of the keys of args
// (every step-th argument from the first), and samples each key into the
// top list when top says so.
func (l *limiterState) countKeys(args [][]byte, step int, limited, top bool, now int64) {
	r := 0
	if limited {
		r = 1
	}
	t := l.prefixes.Load()
	for i := 1; i < len(args); i += step {
		key := args[i]
		if t != nil {
			for j, p := range t.names {
				if bytes.HasPrefix(key, p) {
					t.n[j][r].Add(1)
					break
				}
			}
		}
		if top && rand.Uint32()%topSampleEvery == 0 {
			l.top.add(key, now)
		}
	}
}

// topSampleEvery: one refusal in this many is counted by the top list,
// which multiplies its counts back; it bounds the lock taken on the path
// of refused calls.
const topSampleEvery = 8

// topSize is how many keys the top list tracks (space-saving: a key not
// tracked takes the place of the least counted one, inheriting its count
// as its possible over-estimate).
const topSize = 64

// topHalfLife halves every count, so that the list shows what was refused
// recently rather than since start.
const topHalfLife = time.Minute

// refusedTop is a space-saving sketch of the keys refused most often.
//
// add runs on the path of every sampled refusal, so it compares hashes
// before bytes, reuses a replaced key's buffer and takes its time from
// the caller (the command's clock): no allocation and no clock read
// per call.
type refusedTop struct {
	mu    sync.Mutex
	slots []topSlot
	// decayed is when the counts were last halved, in Unix ns; 0:
	// not yet started.
	decayed int64
}

// topSlot is one tracked key.
type topSlot struct {
	hash  uint64
	key   []byte
	count int64
}

// topEntry is a key of the list and its sampled count.
type topEntry struct {
	key   string
	count int64
}

// topSeed seeds the sketch's key hashes.
var topSeed = maphash.MakeSeed()

// add counts one sampled refusal of key at now (Unix ns).
func (t *refusedTop) add(key []byte, now int64) {
	h := maphash.Bytes(topSeed, key)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.decay(now)
	for i := range t.slots {
		if s := &t.slots[i]; s.hash == h && bytes.Equal(s.key, key) {
			s.count++
			return
		}
	}
	if len(t.slots) < topSize {
		t.slots = append(t.slots, topSlot{h, append([]byte(nil), key...), 1})
		return
	}
	m := 0
	for i := range t.slots {
		if t.slots[i].count < t.slots[m].count {
			m = i
		}
	}
	s := &t.slots[m]
	s.hash, s.key, s.count = h, append(s.key[:0], key...), s.count+1
}

// decay halves the counts once per topHalfLife up to now (Unix ns),
// dropping those at 0.
func (t *refusedTop) decay(now int64) {
	if t.decayed == 0 {
		t.decayed = now
	}
	for now-t.decayed >= int64(topHalfLife) && len(t.slots) > 0 {
		t.decayed += int64(topHalfLife)
		out := t.slots[:0]
		for _, s := range t.slots {
			if s.count /= 2; s.count > 0 {
				out = append(out, s)
			}
		}
		clear(t.slots[len(out):]) // let the dropped keys' buffers go
		t.slots = out
	}
}

// list returns up to n entries, most refused first.
func (t *refusedTop) list(n int, now int64) []topEntry {
	t.mu.Lock()
	t.decay(now)
	out := make([]topEntry, len(t.slots))
	for i, s := range t.slots {
		out[i] = topEntry{string(s.key), s.count}
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].key < out[j].key
	})
	return out[:min(n, len(out))]
}

// clTopRefused is our CL.TOPREFUSED [count]: the keys refused most often
// recently by CL.THROTTLE, CL.THROTTLEALL and CL.WINDOW, as [key, estimate]
// pairs, most first (count defaults to 10). The estimates come from a
// sample of the refusals, so rare ones may be missing.
func clTopRefused(x *Ctx) {
	n := int64(10)
	switch len(x.Args) {
	case 1:
	case 2:
		v, ok := resp.ParseInt(x.Args[1])
		if !ok || v < 0 {
			x.Error(ErrNotInteger)
			return
		}
		n = v
	default:
		x.Error(ErrSyntax)
		return
	}
	es := x.srv.limiters.top.list(int(min(n, topSize)), x.wallNow())
	x.W.Array(len(es))
	for _, e := range es {
		x.W.Array(2)
		x.W.BulkString(e.key)
		x.W.Int(e.count * topSampleEvery)
	}
}

// limiterCmd indexes the rate limiting commands in their outcome counters
// (throttleCounters, metrics.go).
type limiterCmd int

const (
	limThrottle limiterCmd = iota
	limProbe
	limThrottleAll
	limProbeAll
	limWindow
	limiterCmds
)

// limiterCmdNames are the commands' names, by limiterCmd.
var limiterCmdNames = [limiterCmds]string{"cl.throttle", "cl.probe", "cl.throttleall", "cl.probeall", "cl.window"}

// infoLimiters is INFO's limiters section (ours; asked for by name): per
// command, the calls allowed, limited and answered with an error, as
// limiter_<cmd>:allowed=N,limited=N,errors=N with the dot an underscore.
func infoLimiters(s *Server, _ *Ctx, b *strings.Builder) {
	nativeInfo(s, b) // native_scripts.go
	for i, name := range limiterCmdNames {
		c := &s.obs.throttle[i]
		b.WriteString("limiter_" + strings.ReplaceAll(name, ".", "_") + ":allowed=")
		b.WriteString(strconv.FormatInt(c[throttleAllowed].Load(), 10))
		b.WriteString(",limited=")
		b.WriteString(strconv.FormatInt(c[throttleLimited].Load(), 10))
		b.WriteString(",errors=")
		b.WriteString(strconv.FormatInt(c[throttleError].Load(), 10))
		b.WriteString("\r\n")
	}
	if t := s.limiters.prefixes.Load(); t != nil {
		for i, p := range t.names {
			b.WriteString("limiter_prefix_" + strconv.Itoa(i) + ":prefix=" + string(p) + ",allowed=")
			b.WriteString(strconv.FormatInt(t.n[i][0].Load(), 10))
			b.WriteString(",limited=")
			b.WriteString(strconv.FormatInt(t.n[i][1].Load(), 10))
			b.WriteString("\r\n")
		}
	}
}
