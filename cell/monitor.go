package cell

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MONITOR, as in Redis 7.0: after +OK the client receives one status line
// per command any client runs,
//
//	+1700000000.123456 [0 127.0.0.1:50000] "SET" "k" "v"
//
// taken after the command ran (so SELECT shows its new database and the
// commands of an EXEC come before the EXEC line), with the arguments quoted
// as Redis's sdscatrepr does and AUTH/HELLO secrets shown as "(redacted)".
// Admin and skip_monitor commands, and commands refused before running, are
// not shown. A monitor client may still run commands that do not touch the
// keyspace (it is a replica to Redis); RESET or disconnecting ends the mode.
//
// Lines are produced by the goroutine of the client that ran the command,
// behind the observer's gate (the gate is 0 while a monitor is attached), and
// appended to each monitor's sink under one lock, so every monitor sees the
// same order. A goroutine per monitor writes its sink to the socket, and the
// monitor client's own replies go through the same sink to stay in order
// (outsink.go).

func init() {
	register(&Command{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: monitorCmd,
		Doc: &CommandDoc{Summary: "Listen for all requests received by the server in real time", Since: "1.0.0", Group: "server"}})
}

// monitorOutputLimit is how much a monitor may fall behind before it is
// disconnected, so one slow reader cannot hold unbounded memory (the sink,
// outsink.go, applies it).
const monitorOutputLimit = 64 << 20

// monitorSet is the attached monitors. count is read on the slow path to
// decide whether to format a line at all.
type monitorSet struct {
	count atomic.Int32
	mu    sync.Mutex
	sinks []*outSink
}

func monitorCmd(x *Ctx) {
	c := x.cl
	if x != &c.ctx {
		// Only EXEC runs a command with a Ctx of its own; Redis refuses
		// MONITOR there (CLIENT_DENY_BLOCKING).
		x.Error(ErrMonitorDenyBlocking)
		return
	}
	if c.monitoring {
		return // Redis ignores MONITOR from a monitor, without a reply
	}
	x.W.OK()
	// Replies so far (and this +OK) go out before any monitor line.
	m := c.attachSink()
	c.monitoring = true
	// Registered once the +OK is in the sink: once the client can read it,
	// every command another client runs must reach it (Redis adds the
	// monitor before replying).
	ms := &x.srv.obs.monitors
	ms.mu.Lock()
	ms.sinks = append(ms.sinks, m)
	ms.count.Add(1)
	ms.mu.Unlock()
	x.srv.obs.updateGate()
	setClientFlag(&c.shared.flags, cflagMonitor, true)
}

// stopMonitor leaves monitor mode (RESET, disconnect): the sink is
// detached from the monitors, and stopped unless subscriptions use it.
func (c *Client) stopMonitor() {
	if !c.monitoring {
		return
	}
	c.monitoring = false
	m := c.out
	ms := &c.srv.obs.monitors
	ms.mu.Lock()
	for i, s := range ms.sinks {
		if s == m {
			ms.sinks = append(ms.sinks[:i:i], ms.sinks[i+1:]...)
			ms.count.Add(-1)
			break
		}
	}
	ms.mu.Unlock()
	c.srv.obs.updateGate()
	c.releaseSink()
	setClientFlag(&c.shared.flags, cflagMonitor, false)
}

// feedMonitors sends the command c just ran to every monitor, as Redis's
// replicationFeedMonitors formats it. The time is read under the lock so
// that lines are in time order.
func (c *Client) feedMonitors(cmd *Command, args [][]byte) {
	c.feedMonitorsAs(cmd, args, c.db, "")
}

// feedMonitorsAs is feedMonitors for a command run on c's behalf in db by
// someone else: from is "lua" for the commands of c's script.
func (c *Client) feedMonitorsAs(cmd *Command, args [][]byte, db int, from string) {
	red := redactions(cmd, args)
	line := make([]byte, 0, 64+16*len(args))
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(db), 10)
	line = append(line, ' ')
	switch {
	case from != "":
		line = append(line, from...)
	case c.isUnix:
		line = append(line, "unix:"...)
		line = append(line, c.srv.cfg.UnixSocket...)
	default:
		line = append(line, c.addr...)
	}
	line = append(line, "] "...)
	for i, a := range args {
		if i > 0 {
			line = append(line, ' ')
		}
		if red != nil && red[i] {
			a = []byte(redactedArg)
		}
		line = appendRepr(line, a)
	}
	line = append(line, '\r', '\n')
	ms := &c.srv.obs.monitors
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var stamp [32]byte
	now := time.Now()
	ts := append(stamp[:0], '+')
	ts = strconv.AppendInt(ts, now.Unix(), 10)
	us := now.Nanosecond() / 1000
	ts = append(ts, '.', byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	for _, m := range ms.sinks {
		if m.c == c {
			// A monitor's own command: its reply comes before its line.
			m.push(c.w.Bytes(), nil)
			c.w.Reset()
		}
		m.push(ts, line)
	}
}

// appendRepr quotes s as Redis's sdscatrepr: printable ASCII as is, \" \\
// \n \r \t \a \b escaped, every other byte as \xhh.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= 0x20 && ch <= 0x7e {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}
