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
// monitor client's own replies go through the same sink to stay in order.

func init() {
	register(&Command{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale, Handler: monitorCmd,
		Doc: &CommandDoc{Summary: "Listen for all requests received by the server in real time", Since: "1.0.0", Group: "server"}})
}

// monitorOutputLimit is how much a monitor may fall behind before it is
// disconnected, so one slow reader cannot hold unbounded memory.
const monitorOutputLimit = 64 << 20

// monitorSet is the attached monitors. count is read on the slow path to
// decide whether to format a line at all.
type monitorSet struct {
	count atomic.Int32
	mu    sync.Mutex
	sinks []*monitorSink
}

// monitorSink is one monitor's pending output and the goroutine writing it.
type monitorSink struct {
	c    *Client
	mu   sync.Mutex
	buf  []byte
	dead bool          // over the limit or the socket failed: drop everything
	wake chan struct{} // capacity 1: "buf has data"
	quit chan struct{}
	done chan struct{}
}

func monitorCmd(x *Ctx) {
	c := x.cl
	if x != &c.ctx {
		// Only EXEC runs a command with a Ctx of its own; Redis refuses
		// MONITOR there (CLIENT_DENY_BLOCKING).
		x.Error(ErrMonitorDenyBlocking)
		return
	}
	if c.mon != nil {
		return // Redis ignores MONITOR from a monitor, without a reply
	}
	x.W.OK()
	m := &monitorSink{c: c, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	// Replies so far (and this +OK) go out before any monitor line.
	m.push(c.w.Bytes(), nil)
	c.w.Reset()
	c.mon = m
	go m.run()
	ms := &x.srv.obs.monitors
	ms.mu.Lock()
	ms.sinks = append(ms.sinks, m)
	ms.count.Add(1)
	ms.mu.Unlock()
	x.srv.obs.updateGate()
	setClientFlag(&c.shared.flags, cflagMonitor, true)
}

// stopMonitor leaves monitor mode (RESET, disconnect): the sink is
// detached, its writer stopped, and what it had not sent yet is written
// before anything else the client sends.
func (c *Client) stopMonitor() {
	m := c.mon
	if m == nil {
		return
	}
	c.mon = nil
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
	close(m.quit)
	<-m.done
	m.mu.Lock()
	rest, dead := m.buf, m.dead
	m.buf = nil
	m.mu.Unlock()
	if !dead && len(rest) > 0 {
		c.nc.Write(rest)
	}
	setClientFlag(&c.shared.flags, cflagMonitor, false)
}

// flushMonitor is flush for a client in monitor mode: its replies join the
// monitor lines in its sink.
func (c *Client) flushMonitor() bool {
	c.mon.push(c.w.Bytes(), nil)
	c.w.Reset()
	c.mon.mu.Lock()
	defer c.mon.mu.Unlock()
	return !c.mon.dead
}

func (m *monitorSink) push(a, b []byte) {
	if len(a)+len(b) == 0 {
		return
	}
	m.mu.Lock()
	if m.dead {
		m.mu.Unlock()
		return
	}
	m.buf = append(m.buf, a...)
	m.buf = append(m.buf, b...)
	if len(m.buf) > monitorOutputLimit {
		m.dead, m.buf = true, nil
		m.mu.Unlock()
		m.c.srv.log.Warn("closing monitor client that reached the output buffer limit",
			"id", m.c.id, "addr", m.c.addr, "limit", monitorOutputLimit)
		m.c.nc.Close()
		return
	}
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// run writes the sink to the socket until stopped; buffers are swapped so
// pushers never wait for the network.
func (m *monitorSink) run() {
	defer close(m.done)
	var out []byte
	for {
		select {
		case <-m.wake:
		case <-m.quit:
			return
		}
		m.mu.Lock()
		out, m.buf = m.buf, out[:0]
		m.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		if _, err := m.c.nc.Write(out); err != nil {
			m.mu.Lock()
			m.dead, m.buf = true, nil
			m.mu.Unlock()
			m.c.nc.Close()
			return
		}
	}
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
