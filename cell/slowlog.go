package cell

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SLOWLOG GET / LEN / RESET / HELP: Redis 7.0's slow log. A command whose
// execution took at least slowlog-log-slower-than µs (negative: off, 0:
// every command) is logged, newest first, keeping slowlog-max-len entries.
// Commands flagged skip_slowlog (EXEC) are not logged; the commands an EXEC
// runs are, one by one, as in Redis. Rejected commands (unknown, arity,
// NOAUTH) never ran and are not logged. Entries are taken only on the slow
// path behind the observer's gate (observe.go).

func init() {
	admin := FlagAdmin | FlagLoading | FlagStale
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "server", complexity}
	}
	register(
		&Command{Name: "slowlog", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for slow log commands", "2.2.12", "Depends on subcommand.")},
		&Command{Name: "slowlog|get", Arity: -2, Flags: admin, Handler: slowlogGet,
			Tips: []string{"request_policy:all_nodes", "nondeterministic_output"},
			Doc:  doc("Get the slow log's entries", "2.2.12", "O(N) where N is the number of entries returned")},
		&Command{Name: "slowlog|len", Arity: 2, Flags: admin, Handler: slowlogLen,
			Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"},
			Doc:  doc("Get the slow log's length", "2.2.12", "O(1)")},
		&Command{Name: "slowlog|reset", Arity: 2, Flags: admin, Handler: slowlogReset,
			Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			Doc:  doc("Clear all entries from the slow log", "2.2.12", "O(N) where N is the number of entries in the slowlog")},
		&Command{Name: "slowlog|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: slowlogHelp,
			Doc: doc("Show helpful text about the different subcommands", "6.2.0", "O(1)")},
	)
	// The parameters are in CONFIG's table (cmd_config.go); here they are
	// made live.
	liveInt := func(name string, v func(*observer) *atomic.Int64) {
		p := configParamByName(name)
		p.get = func(s *Server) string { return itoa(v(&s.obs).Load()) }
		p.apply = func(s *Server, val string) string {
			n, _ := strconv.ParseInt(val, 10, 64)
			v(&s.obs).Store(n)
			s.obs.updateGate()
			if t := s.obs.slowlogThreshold.Load(); t >= 0 {
				// Redis trims on the next command, which is this CONFIG SET.
				s.obs.slowlog.trim(s.obs.slowlogMaxLen.Load())
			}
			return ""
		}
	}
	liveInt("slowlog-log-slower-than", func(o *observer) *atomic.Int64 { return &o.slowlogThreshold })
	liveInt("slowlog-max-len", func(o *observer) *atomic.Int64 { return &o.slowlogMaxLen })
	liveInt("latency-monitor-threshold", func(o *observer) *atomic.Int64 { return &o.latencyThreshold })
}

// Redis's limits on what one entry keeps (SLOWLOG_ENTRY_MAX_ARGC and
// SLOWLOG_ENTRY_MAX_STRING).
const (
	slowlogMaxArgc   = 32
	slowlogMaxString = 128
)

// slowlogEntry is one logged command, its arguments already cut to
// Redis's limits and copied out of the client's read buffer.
type slowlogEntry struct {
	id, unix, usec int64
	argv           [][]byte
	peer, name     string
}

// slowlog holds the entries oldest first (so pushing is an append); GET
// reads them backwards. Dropped entries are sliced off the front.
type slowlog struct {
	mu      sync.Mutex
	nextID  int64
	entries []*slowlogEntry
}

// push logs a command that ran for usec µs and drops the oldest entries
// past maxLen. Redis's entry ids keep counting across RESET and across
// entries dropped at once by a zero maxLen.
func (l *slowlog) push(c *Client, cmd *Command, args [][]byte, usec, maxLen int64) {
	l.pushFrom(c.addr, c.Name(), cmd, args, usec, maxLen)
}

// pushFrom is push for a command of a client that is not a connection: a
// script's commands are logged as Redis's Lua client, peer "?:0".
func (l *slowlog) pushFrom(peer, name string, cmd *Command, args [][]byte, usec, maxLen int64) {
	e := &slowlogEntry{unix: time.Now().Unix(), usec: usec, peer: peer, name: name}
	argc := min(len(args), slowlogMaxArgc)
	e.argv = make([][]byte, argc)
	red := redactions(cmd, args)
	for i := range argc {
		a := args[i]
		switch {
		case argc != len(args) && i == argc-1:
			a = []byte("... (" + strconv.Itoa(len(args)-argc+1) + " more arguments)")
		case red != nil && red[i]:
			a = []byte(redactedArg)
		case len(a) > slowlogMaxString:
			a = append(a[:slowlogMaxString:slowlogMaxString], "... ("+strconv.Itoa(len(a)-slowlogMaxString)+" more bytes)"...)
		default:
			a = append([]byte(nil), a...)
		}
		e.argv[i] = a
	}
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.trimLocked(maxLen)
	l.mu.Unlock()
}

// logged is how many commands were ever logged (the next entry's id).
func (l *slowlog) logged() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nextID
}

func (l *slowlog) trim(maxLen int64) {
	l.mu.Lock()
	l.trimLocked(maxLen)
	l.mu.Unlock()
}

func (l *slowlog) trimLocked(maxLen int64) {
	if over := int64(len(l.entries)) - maxLen; over > 0 {
		clear(l.entries[:over])
		l.entries = l.entries[over:]
	}
}

// slowlogGet is SLOWLOG GET [count]: the newest count entries (10 by
// default, -1 for all).
func slowlogGet(x *Ctx) {
	if len(x.Args) > 3 {
		x.Error(errSubcommandSyntax(x.Args[0], x.Args[1]))
		return
	}
	count := int64(10)
	if len(x.Args) == 3 {
		n, err := strconv.ParseInt(string(x.Args[2]), 10, 64)
		if err != nil || !canonicalInt(string(x.Args[2])) || n < -1 {
			x.Error(ErrSlowlogCount)
			return
		}
		count = n
	}
	l := &x.srv.obs.slowlog
	l.mu.Lock()
	n := len(l.entries)
	if count >= 0 && int64(n) > count {
		n = int(count)
	}
	out := make([]*slowlogEntry, n)
	for i := range out {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	l.mu.Unlock()
	x.W.Array(len(out))
	for _, e := range out {
		x.W.Array(6)
		x.W.Int(e.id)
		x.W.Int(e.unix)
		x.W.Int(e.usec)
		x.W.Array(len(e.argv))
		for _, a := range e.argv {
			x.W.Bulk(a)
		}
		x.W.BulkString(e.peer)
		x.W.BulkString(e.name)
	}
}

func slowlogLen(x *Ctx) {
	l := &x.srv.obs.slowlog
	l.mu.Lock()
	n := len(l.entries)
	l.mu.Unlock()
	x.W.Int(int64(n))
}

func slowlogReset(x *Ctx) {
	l := &x.srv.obs.slowlog
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
	x.W.OK()
}

func slowlogHelp(x *Ctx) {
	writeHelp(x, "SLOWLOG", strings.Split(`GET [<count>]
    Return top <count> entries from the slowlog (default: 10, -1 mean all).
    Entries are made of:
    id, timestamp, time in microseconds, arguments array, client IP and port,
    client name
LEN
    Return the length of the slowlog.
RESET
    Reset the slowlog.`, "\n"))
}
