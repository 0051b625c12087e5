package cell

import (
	"crypto/tls"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Running it for real: start-up values of CONFIG parameters (from a
// configuration file or flags) and the idle timeout, here; renamed
// commands (command_rename.go), listeners and protected mode (listen.go),
// output buffer limits (output_limits.go), TLS, maxmemory, SHUTDOWN and
// CONFIG REWRITE (tls.go, maxmemory.go, cmd_shutdown.go,
// config_rewrite.go) have files of their own.

// opsState is the live state of those settings; CONFIG SET changes it
// while clients run.
type opsState struct {
	timeoutSec    atomic.Int64 // idle clients are closed after this; 0: never
	protectedMode atomic.Bool
	outLimit      atomic.Pointer[outputLimits]

	// commands is the command table with rename-command applied; nil when
	// nothing is renamed, so the shared table serves.
	commands map[string]*Command

	tls      atomic.Pointer[tls.Config] // nil without TLS
	mem      memoryState                // maxmemory.go
	exit     chan struct{}              // closed by SHUTDOWN (cmd_shutdown.go)
	exitOnce sync.Once
	exitMode atomic.Pointer[ShutdownMode]
	// stopSaved: SHUTDOWN's save (beforeExit) was done, so the stop that
	// follows does not write the RDB file again.
	stopSaved atomic.Bool
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
	return p.name == "bind" || p.name == "client-output-buffer-limit" || p.name == "replicaof"
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

// clientsCron closes clients idle for longer than timeout, once a second,
// as Redis's clientsCron does.
func (s *Server) clientsCron() {
	s.every(time.Second, func() bool {
		if sec := s.ops.timeoutSec.Load(); sec > 0 {
			s.closeIdle(time.Now().UnixMilli() - sec*1000)
		}
		return true
	})
}

// every runs fn each period until the server stops or fn returns false:
// the shape of the server's crons.
func (s *Server) every(period time.Duration, fn func() bool) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if !fn() {
			return
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
			c.closeConn()
		}
	}
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
