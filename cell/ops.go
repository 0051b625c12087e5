package cell

import (
	"crypto/tls"
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Running it for real: start-up values of CONFIG parameters (from a
// configuration file or flags), renamed commands, protected mode, the idle
// timeout and output buffer limits. TLS, maxmemory, SHUTDOWN and CONFIG
// REWRITE have files of their own (tls.go, maxmemory.go, cmd_shutdown.go,
// config_rewrite.go).

// opsState is the live state of those settings; CONFIG SET changes it
// while clients run.
type opsState struct {
	timeoutSec    atomic.Int64 // idle clients are closed after this; 0: never
	protectedMode atomic.Bool
	outLimit      atomic.Pointer[outputLimits]

	// commands is the command table with rename-command applied; nil when
	// nothing is renamed, so the shared table serves.
	commands map[string]*Command

	tls       atomic.Pointer[tls.Config] // nil without TLS
	mem       memoryState                // maxmemory.go
	exit      chan struct{}              // closed by SHUTDOWN (cmd_shutdown.go)
	exitOnce  sync.Once
	exitMode  atomic.Pointer[ShutdownMode]
	rewriteMu sync.Mutex // one CONFIG REWRITE at a time
}

// startOps applies the start-up parameter values and starts the
// once-a-second client checks. New calls it before anything listens.
func (s *Server) startOps() {
	s.ops.exit = make(chan struct{})
	s.ops.protectedMode.Store(true)
	s.setOutputLimits(defaultOutputLimits)
	s.ops.mem.init()
	if len(s.cfg.RenameCommands) > 0 {
		s.ops.commands, _ = renamedTable(s.cfg.RenameCommands)
	}
	for _, p := range configParams {
		v, ok := s.cfg.Params[p.name]
		if !ok {
			continue
		}
		if p.apply != nil {
			if msg := p.apply(s, v); msg != "" {
				s.log.Warn("start-up value refused", "parameter", p.name, "value", v, "reason", msg)
			}
			continue
		}
		s.setConfigValue(p.name, v)
	}
	go s.clientsCron()
}

// CheckParam validates a CONFIG parameter given at start-up (a
// configuration file line or a flag) as CONFIG SET would, and returns the
// value as CONFIG GET will print it. Its arguments are joined by spaces:
// "save 3600 1 300 100" is save "3600 1 300 100".
func CheckParam(name string, args []string) (string, error) {
	p := configParamByName(name)
	if p == nil {
		return "", BadDirectiveError
	}
	if len(args) == 0 {
		if p.kind != kindSave {
			return "", errors.New(MsgWrongArgs)
		}
		args = []string{""}
	}
	if len(args) > 1 && !p.multiArg() {
		return "", errors.New(MsgWrongArgs)
	}
	if p.kind == kindInt && p.min == 0 && p.max == 0 {
		// No range in the table (databases): the flag checks it.
		wide := *p
		wide.min, wide.max = math.MinInt64, math.MaxInt64
		p = &wide
	}
	v, msg := p.parse(strings.Join(args, " "))
	if msg != "" {
		return "", errors.New(msg)
	}
	return v, nil
}

// multiArg reports whether the parameter's value is several words on a
// configuration line.
func (p *configParam) multiArg() bool {
	switch p.kind {
	case kindSave, kindPercentiles:
		return true
	}
	return p.name == "bind" || p.name == "client-output-buffer-limit"
}

// SetParam records a parameter's start-up value in cfg.
func SetParam(cfg *Config, name, v string) {
	p := configParamByName(name)
	if p == nil {
		return
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if p.name == "client-output-buffer-limit" {
		// Each line sets its classes; the others keep their values.
		v = mergeOutputLimits(cfg.Params[p.name], v)
	}
	cfg.Params[p.name] = v
}

// ConfigQuote prints a word so that a configuration line reads it back:
// as it is when it is plain, else in double quotes with escapes, as
// Redis's sdscatrepr.
func ConfigQuote(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\'
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c < ' ' || c >= 0x7f {
				b.WriteString(`\x`)
				b.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
				b.WriteString(strconv.FormatUint(uint64(c)&15, 16))
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CheckRenames validates rename-command pairs, applied in order, with
// Redis's texts.
func CheckRenames(pairs [][2]string) error {
	_, err := renamedTable(pairs)
	return err
}

// renamedTable copies the command table with each pair applied in order:
// the command leaves its old name and, unless the new one is "", takes
// the new. Subcommands follow their container.
//
// Unlike Redis, disabling a command the server does not have
// (rename-command DEBUG "", common in hardened redis.conf files) is
// accepted: it is already unavailable. Renaming one to a new name is
// refused with Redis's error.
func renamedTable(pairs [][2]string) (map[string]*Command, error) {
	t := make(map[string]*Command, len(commands))
	for k, v := range commands {
		t[k] = v
	}
	for _, p := range pairs {
		from, to := strings.ToLower(p[0]), strings.ToLower(p[1])
		cmd, ok := t[from]
		if !ok && to == "" {
			continue
		}
		if !ok {
			return nil, errors.New(MsgNoSuchRename)
		}
		if to != "" {
			if _, taken := t[to]; taken {
				return nil, errors.New(MsgRenameTaken)
			}
		}
		delete(t, from)
		if to != "" {
			t[to] = cmd
		}
	}
	return t, nil
}

// lookupCommand finds a top-level command by the name clients call it,
// rename-command applied.
func (s *Server) lookupCommand(name []byte) *Command {
	if s.ops.commands == nil {
		return lookupCommand(commands, name)
	}
	if len(name) > 64 {
		return nil
	}
	return s.ops.commands[strings.ToLower(string(name))]
}

// listenBind listens on one bind address as redis.conf writes them: "*"
// is every IPv4 address, "::*" every IPv6 one, and a leading "-" makes
// the address optional: if it cannot be bound (no IPv6 here) it is
// skipped with a nil listener instead of failing the start.
func listenBind(addr string, port int) (net.Listener, error) {
	optional := strings.HasPrefix(addr, "-")
	host := strings.TrimPrefix(addr, "-")
	switch host {
	case "*":
		host = "0.0.0.0"
	case "::*":
		host = "::"
	}
	// Each address family on its own socket, as Redis does (Go would
	// make 0.0.0.0 a dual-stack socket, and "* ::*" would then collide).
	network := "tcp"
	if ip := net.ParseIP(host); ip != nil {
		network = "tcp6"
		if ip.To4() != nil {
			network = "tcp4"
		}
	}
	ln, err := net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil && optional {
		return nil, nil
	}
	return ln, err
}

// protectedModeDenies reports whether Redis's protected mode refuses the
// client: it is on, no password is set, and the client is neither on the
// unix socket nor at 127.0.0.1 or ::1 (Redis 7.0 compares those two
// strings, so 127.0.0.2 is not local).
func (s *Server) protectedModeDenies(c *Client) bool {
	if !s.ops.protectedMode.Load() || s.live.requirePass.Load() != nil || c.isUnix {
		return false
	}
	ta, ok := c.nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return false
	}
	ip := ta.IP.String()
	return ip != "127.0.0.1" && ip != "::1"
}

// denyProtected sends the DENIED explanation and reports that the client
// must be closed, as Redis's clientAcceptHandler does.
func (c *Client) denyProtected() bool {
	if !c.srv.protectedModeDenies(c) {
		return false
	}
	c.srv.stats.rejectedConns.Add(1)
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.nc.Write([]byte("-" + ErrProtectedMode + "\r\n"))
	return true
}

// refuseConn sends an error to a connection the server will not serve
// and closes it. It runs in a goroutine of its own and within a deadline:
// on the TLS port the write first runs the handshake, which a client
// could stall.
func refuseConn(nc net.Conn, msg string) {
	nc.SetDeadline(time.Now().Add(time.Second))
	nc.Write([]byte("-" + msg + "\r\n"))
	nc.Close()
}

// clientsCron closes clients idle for longer than timeout, once a second,
// as Redis's clientsCron does.
func (s *Server) clientsCron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if sec := s.ops.timeoutSec.Load(); sec > 0 {
			s.closeIdle(time.Now().UnixMilli() - sec*1000)
		}
	}
}

// closeIdle closes every client whose last command began before cutoff
// (Unix ms). A client running a command is not idle.
func (s *Server) closeIdle(cutoff int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		if c.lastActive.Load() < cutoff && !c.running.Load() {
			s.log.Info("closing idle client", "id", c.id, "addr", c.addr)
			c.nc.Close()
		}
	}
}

// outputLimits is client-output-buffer-limit for the normal class: the
// replies a client has not read yet. 0 disables a limit.
//
// Redis queues replies without bound and checks these limits as it does;
// cellserver writes each batch of replies before it reads more commands,
// so a client that stops reading stops being served (TCP backpressure)
// and its unsent replies stay within about one batch (64 KiB plus the last
// reply), whatever the limits. The limits then close clients whose unsent
// replies stay large: at once past hard, or after softSec above soft.
type outputLimits struct {
	hard, soft int64
	softSec    int64
	// pubsub is the class of subscribed clients, whose messages are queued
	// for them as in Redis (outsink.go).
	pubsub classLimits
	// text is the whole parameter as CONFIG GET prints it, the replica
	// class included (kept, not used: there are no replicas here).
	text string
}

// classLimits is one class's hard and soft limits in bytes (0: none) and
// the soft limit's seconds.
type classLimits struct {
	hard, soft, softSec int64
}

const defaultOutputLimits = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"

// parseOutputLimits validates "class hard soft seconds ..." as Redis's
// CONFIG SET client-output-buffer-limit and returns it with sizes in
// bytes; the classes it does not name keep their values (apply merges).
func parseOutputLimits(v string) (string, string) {
	merged := mergeOutputLimits(defaultOutputLimits, v)
	switch merged {
	case "":
		return "", MsgOutputLimitArgs
	case "!":
		return "", MsgOutputLimitClass
	case "?":
		return "", MsgOutputLimitNumber
	}
	// Only the classes given, normalised: merging them into the default
	// picks their numbers out.
	f, m := strings.Fields(v), strings.Fields(merged)
	var out []string
	for i := 0; i+3 < len(f); i += 4 {
		class := strings.ToLower(f[i])
		if class == "replica" {
			class = "slave"
		}
		for k := 0; k+3 < len(m); k += 4 {
			if m[k] == class {
				out = append(out, m[k:k+4]...)
			}
		}
	}
	return strings.Join(out, " "), ""
}

// mergeOutputLimits applies the classes set in v over base (both in the
// CONFIG GET form). It returns "" for a wrong word count, "!" for an
// unknown class and "?" for a bad number, the caller's cue for the error.
func mergeOutputLimits(base, v string) string {
	if base == "" {
		base = defaultOutputLimits
	}
	f := strings.Fields(v)
	if len(f) == 0 || len(f)%4 != 0 {
		return ""
	}
	cur := strings.Fields(base)
	for i := 0; i < len(f); i += 4 {
		class := strings.ToLower(f[i])
		switch class {
		case "replica":
			class = "slave"
		case "normal", "slave", "pubsub":
		default:
			return "!"
		}
		var nums [3]string
		for j := 0; j < 3; j++ {
			var n int64
			var ok bool
			if j < 2 {
				n, ok = ParseMemory(f[i+1+j])
			} else {
				var err error
				n, err = strconv.ParseInt(f[i+1+j], 10, 64)
				ok = err == nil && n >= 0
			}
			if !ok {
				return "?"
			}
			nums[j] = itoa(n)
		}
		for k := 0; k+3 < len(cur); k += 4 {
			if cur[k] == class {
				copy(cur[k+1:k+4], nums[:])
			}
		}
	}
	return strings.Join(cur, " ")
}

// setOutputLimits makes a validated parameter value live.
func (s *Server) setOutputLimits(v string) {
	f := strings.Fields(v)
	l := &outputLimits{text: v}
	for k := 0; k+3 < len(f); k += 4 {
		var cl classLimits
		cl.hard, _ = strconv.ParseInt(f[k+1], 10, 64)
		cl.soft, _ = strconv.ParseInt(f[k+2], 10, 64)
		cl.softSec, _ = strconv.ParseInt(f[k+3], 10, 64)
		switch f[k] {
		case "normal":
			l.hard, l.soft, l.softSec = cl.hard, cl.soft, cl.softSec
		case "pubsub":
			l.pubsub = cl
		}
	}
	s.ops.outLimit.Store(l)
}

// writeLimited writes b under the output buffer limits: it refuses to
// start past the hard limit and gives up when more than soft bytes have
// stayed unsent for softSec. It reports whether everything was written.
func (c *Client) writeLimited(b []byte, l *outputLimits) bool {
	if l.hard > 0 && int64(len(b)) > l.hard {
		c.srv.log.Warn("closing client that reached max output buffer length",
			"id", c.id, "addr", c.addr, "pending", len(b), "class", "normal")
		return false
	}
	const chunk = 16 << 10
	var over time.Time // when the unsent bytes went above soft
	for len(b) > 0 {
		dl := time.Time{}
		if l.soft > 0 && int64(len(b)) > l.soft {
			if over.IsZero() {
				over = time.Now()
			}
			dl = over.Add(time.Duration(l.softSec) * time.Second)
		} else {
			over = time.Time{}
		}
		c.nc.SetWriteDeadline(dl)
		n, err := c.nc.Write(b[:min(len(b), chunk)])
		b = b[n:]
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.srv.log.Warn("closing client that reached max output buffer length",
					"id", c.id, "addr", c.addr, "pending", len(b), "class", "normal")
			}
			return false
		}
	}
	c.nc.SetWriteDeadline(time.Time{})
	return true
}

// flushOps writes the pending replies, under output limits when some are
// set. It replaces a plain Write in Client.flush.
func (c *Client) flushOps() bool {
	if l := c.srv.ops.outLimit.Load(); l != nil && (l.hard > 0 || l.soft > 0) {
		return c.writeLimited(c.w.Bytes(), l)
	}
	_, err := c.nc.Write(c.w.Bytes())
	return err == nil
}

// opsParams wires the operational parameters of the CONFIG table to the
// server and adds the ones the table lacks.
func init() {
	wire := func(name string, apply func(s *Server, v string) string, get func(s *Server) string) {
		p := configParamByName(name)
		if p == nil {
			panic("cell: no CONFIG parameter " + name)
		}
		p.apply, p.get = apply, get
	}
	wire("timeout", func(s *Server, v string) string {
		n, _ := strconv.ParseInt(v, 10, 64)
		s.ops.timeoutSec.Store(n)
		return ""
	}, func(s *Server) string { return itoa(s.ops.timeoutSec.Load()) })
	wire("protected-mode", func(s *Server, v string) string {
		s.ops.protectedMode.Store(v == "yes")
		return ""
	}, func(s *Server) string { return yesNo(s.ops.protectedMode.Load()) })
	wire("maxmemory", func(s *Server, v string) string {
		n, _ := ParseMemory(v)
		s.ops.mem.setLimit(n)
		return ""
	}, func(s *Server) string { return itoa(s.ops.mem.limit.Load()) })
	wire("maxmemory-policy", func(s *Server, v string) string {
		s.ops.mem.policy.Store(int32(policyByName(v)))
		return ""
	}, func(s *Server) string { return evictionPolicies[s.ops.mem.policy.Load()] })
	wire("maxmemory-samples", func(s *Server, v string) string {
		n, _ := strconv.ParseInt(v, 10, 64)
		s.ops.mem.samples.Store(n)
		return ""
	}, func(s *Server) string { return itoa(s.ops.mem.samples.Load()) })
	configParams = append(configParams,
		&configParam{name: "client-output-buffer-limit", kind: kindString, def: defaultOutputLimits,
			check: parseOutputLimits,
			apply: func(s *Server, v string) string {
				s.setOutputLimits(mergeOutputLimits(s.ops.outLimit.Load().text, v))
				return ""
			},
			get: func(s *Server) string { return s.ops.outLimit.Load().text }},
		&configParam{name: "tls-port", kind: kindInt, def: "0", min: 0, max: 65535, immutable: true},
		&configParam{name: "tls-cert-file", kind: kindString, def: "", apply: applyTLS("tls-cert-file")},
		&configParam{name: "tls-key-file", kind: kindString, def: "", apply: applyTLS("tls-key-file")},
		&configParam{name: "tls-ca-cert-file", kind: kindString, def: "", apply: applyTLS("tls-ca-cert-file")},
		&configParam{name: "tls-auth-clients", kind: kindEnum, def: "yes", apply: applyTLS("tls-auth-clients"),
			choices: []string{"no", "yes", "optional"}},
	)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// paramInt is a stored integer parameter's value (tls-port).
func (s *Server) paramInt(name string) int64 {
	n, err := strconv.ParseInt(configParamByName(name).value(s), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0
	}
	return n
}
