package cell

import (
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CONFIG GET / SET / RESETSTAT / REWRITE / HELP over a table of Redis 7.0
// parameters. A few are wired to the server (requirepass, maxclients,
// proto-max-bulk-len, client-query-buffer-limit, and from the files of
// their features slowlog-*, latency-monitor-threshold, loglevel and
// logfile, whose get/apply slowlog.go and logging.go set); the others are the ones
// clients and tools commonly read, with Redis's defaults, validated and
// stored as Redis would so that a SET reads back the same, but without
// effect here (see the README for which).

func init() {
	admin := FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	doc := func(summary, since, complexity string) *CommandDoc {
		return &CommandDoc{summary, since, "server", complexity}
	}
	register(
		&Command{Name: "config", Arity: -2, Handler: func(*Ctx) {},
			Doc: doc("A container for server configuration commands", "2.0.0", "Depends on subcommand.")},
		&Command{Name: "config|get", Arity: -3, Flags: admin, Handler: configGet,
			Doc: doc("Get the values of configuration parameters", "2.0.0", "O(N) when N is the number of configuration parameters provided")},
		&Command{Name: "config|set", Arity: -4, Flags: admin, Handler: configSet,
			Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
			Doc:  doc("Set configuration parameters to the given values", "2.0.0", "O(N) when N is the number of configuration parameters provided")},
		&Command{Name: "config|resetstat", Arity: 2, Flags: admin | flagAllDBs, Handler: configResetStat,
			Doc: doc("Reset the stats returned by INFO", "2.0.0", "O(1)")},
		&Command{Name: "config|rewrite", Arity: 2, Flags: admin, Handler: configRewrite,
			Doc: doc("Rewrite the configuration file with the in memory configuration", "2.8.0", "O(1)")},
		&Command{Name: "config|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: configHelp,
			Doc: doc("Show helpful text about the different subcommands", "5.0.0", "O(1)")},
	)
}

// paramKind says how a parameter's value is parsed and printed.
type paramKind int

const (
	kindString      paramKind = iota
	kindBool                  // yes / no
	kindInt                   // integer in [min, max]
	kindMemory                // bytes, with k/kb/m/mb/g/gb units, printed as a plain number
	kindEnum                  // one of choices
	kindSave                  // "seconds changes" pairs
	kindEvents                // notify-keyspace-events classes
	kindPercentiles           // latency-tracking-info-percentiles
)

// configParam is one CONFIG parameter.
type configParam struct {
	name      string
	alias     string // Redis's old name, listed by CONFIG GET * too
	kind      paramKind
	def       string
	min, max  int64
	choices   []string
	immutable bool
	protected bool // refused while enable-protected-configs is no (its default)
	// apply makes a validated value take effect; nil only stores it.
	apply func(s *Server, v string) string // returns an error text or ""
	// get reads the live value; nil reads the stored one.
	get func(s *Server) string
	// check validates a kindString value and prints it canonically
	// (value, error text); nil accepts any string.
	check func(v string) (string, string)
}

const intMax = math.MaxInt32

// configParams is the table. Names are Redis 7.0.15's.
var configParams = []*configParam{
	{name: "requirepass", kind: kindString, get: func(s *Server) string {
		if p := s.live.requirePass.Load(); p != nil {
			return *p
		}
		return ""
	}, apply: func(s *Server, v string) string {
		if v == "" {
			s.live.requirePass.Store(nil)
		} else {
			s.live.requirePass.Store(&v)
		}
		s.setDefaultPassword(v) // acl_file.go
		return ""
	}},
	{name: "maxclients", kind: kindInt, min: 1, max: math.MaxUint32,
		get: func(s *Server) string { return itoa(s.live.maxClients.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.maxClients.Store(n)
			return ""
		}},
	{name: "databases", kind: kindInt, immutable: true, get: func(s *Server) string { return strconv.Itoa(s.ks.DBs()) }},
	{name: "dir", kind: kindString, protected: true, get: func(s *Server) string {
		d, err := filepath.Abs(s.cfg.Dir)
		if err != nil {
			return s.cfg.Dir
		}
		return d
	}},
	{name: "proto-max-bulk-len", kind: kindMemory, min: 1 << 20, max: math.MaxInt64,
		get:   func(s *Server) string { return itoa(s.live.protoMaxBulkLen.Load()) },
		apply: func(s *Server, v string) string { n, _ := ParseMemory(v); s.live.protoMaxBulkLen.Store(n); return "" }},
	{name: "client-query-buffer-limit", kind: kindMemory, min: 1 << 20, max: math.MaxInt64,
		get: func(s *Server) string { return itoa(s.live.clientQueryBufferLimit.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := ParseMemory(v)
			s.live.clientQueryBufferLimit.Store(n)
			return ""
		}},
	{name: "port", kind: kindInt, min: 0, max: 65535, get: func(s *Server) string {
		if v := s.configValue("port"); v != "" {
			return v
		}
		return strconv.Itoa(s.cfg.Port)
	}},
	{name: "bind", kind: kindString, get: func(s *Server) string {
		if v := s.configValue("bind"); v != "" {
			return v
		}
		return strings.Join(s.cfg.Bind, " ")
	}},
	{name: "unixsocket", kind: kindString, immutable: true, get: func(s *Server) string { return s.cfg.UnixSocket }},
	{name: "unixsocketperm", kind: kindInt, immutable: true, get: func(s *Server) string {
		return strconv.FormatUint(uint64(s.cfg.UnixSocketPerm), 8)
	}},
	// Redis clamps the configured hz to 1..500 when it applies it.
	{name: "hz", kind: kindInt, min: 0, max: intMax, get: func(s *Server) string {
		v := s.configValue("hz")
		if v == "" {
			v = strconv.Itoa(s.cfg.Hz)
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return itoa(min(max(n, 1), 500))
	}},
	// Redis's default without a config file. Each rule starts a
	// checkpoint (checkpoint.go), as it starts a BGSAVE in Redis.
	{name: "save", kind: kindSave, def: defaultSaveRules},
	// appendonly reads as the store's state at start (--appendonly).
	// CONFIG SET stores a value, as Redis accepts it, but turning the
	// store on or off takes a restart.
	{name: "appendonly", kind: kindBool, def: "yes", get: func(s *Server) string {
		if v := s.configValue("appendonly"); v != "" {
			return v
		}
		if s.store != nil {
			return "yes"
		}
		return "no"
	}},
	{name: "appendfsync", kind: kindEnum, def: FsyncEverySec, choices: []string{"always", "everysec", "no"},
		get:   func(s *Server) string { return s.fsyncPolicy() },
		apply: func(s *Server, v string) string { s.setFsync(v); return "" }},
	// When the effect log has grown enough to be folded into the snapshot
	// (checkpoint.go): Redis's rule for rewriting its AOF.
	{name: "auto-aof-rewrite-percentage", kind: kindInt, def: "100", min: 0, max: intMax,
		get: func(s *Server) string { return itoa(s.live.ckptPercent.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.ckptPercent.Store(n)
			return ""
		}},
	{name: "auto-aof-rewrite-min-size", kind: kindMemory, def: "67108864", min: 0, max: math.MaxInt64,
		get:   func(s *Server) string { return itoa(s.live.ckptMinSize.Load()) },
		apply: func(s *Server, v string) string { n, _ := ParseMemory(v); s.live.ckptMinSize.Store(n); return "" }},
	// What a start does with an effect log damaged in the middle
	// (persist.Options.SkipDamagedLog): refuse, as Redis refuses an AOF
	// with mid-file damage, or skip exactly the damaged records and
	// report the loss. Read at start only.
	{name: "effectlog-load-damaged", kind: kindEnum, def: LoadDamagedRefuse, immutable: true,
		choices: []string{LoadDamagedRefuse, LoadDamagedSkip}},
	{name: "appendfilename", kind: kindString, def: "appendonly.aof", immutable: true},
	{name: "appenddirname", kind: kindString, def: "appendonlydir", immutable: true},
	{name: "dbfilename", kind: kindString, def: "dump.rdb", protected: true},
	{name: "maxmemory", kind: kindMemory, def: "0", min: 0, max: math.MaxInt64},
	{name: "maxmemory-policy", kind: kindEnum, def: "noeviction", choices: []string{
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}},
	{name: "maxmemory-samples", kind: kindInt, def: "5", min: 1, max: intMax},
	{name: "maxmemory-eviction-tenacity", kind: kindInt, def: "10", min: 0, max: 100},
	{name: "maxmemory-clients", kind: kindMemory, def: "0", min: 0, max: math.MaxInt64},
	{name: "timeout", kind: kindInt, def: "0", min: 0, max: intMax},
	{name: "tcp-keepalive", kind: kindInt, def: "300", min: 0, max: intMax},
	{name: "tcp-backlog", kind: kindInt, def: "511", immutable: true},
	{name: "zset-max-listpack-entries", alias: "zset-max-ziplist-entries", kind: kindInt, def: "128", min: 0, max: math.MaxInt64,
		get: func(s *Server) string { return itoa(s.live.zsetMaxListpackEntries.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.zsetMaxListpackEntries.Store(n)
			return ""
		}},
	{name: "zset-max-listpack-value", alias: "zset-max-ziplist-value", kind: kindInt, def: "64", min: 0, max: math.MaxInt64,
		get: func(s *Server) string { return itoa(s.live.zsetMaxListpackValue.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.zsetMaxListpackValue.Store(n)
			return ""
		}},
	{name: "hash-max-listpack-entries", alias: "hash-max-ziplist-entries", kind: kindInt, def: "512", min: 0, max: math.MaxInt64},
	{name: "hash-max-listpack-value", alias: "hash-max-ziplist-value", kind: kindInt, def: "64", min: 0, max: math.MaxInt64},
	{name: "list-max-listpack-size", alias: "list-max-ziplist-size", kind: kindInt, def: "-2", min: math.MinInt32, max: intMax},
	{name: "set-max-intset-entries", kind: kindInt, def: "512", min: 0, max: math.MaxInt64,
		get: func(s *Server) string { return itoa(s.live.setMaxIntsetEntries.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.setMaxIntsetEntries.Store(n)
			return ""
		}},
	{name: "busy-reply-threshold", alias: "lua-time-limit", kind: kindInt, def: "5000", min: 0, max: math.MaxInt64,
		get: func(s *Server) string { return itoa(s.live.busyReplyThresholdMs.Load()) },
		apply: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.live.busyReplyThresholdMs.Store(n)
			return ""
		}},
	{name: "notify-keyspace-events", kind: kindEvents, def: ""},
	{name: "slowlog-log-slower-than", kind: kindInt, def: "10000", min: -1, max: math.MaxInt64},
	{name: "slowlog-max-len", kind: kindInt, def: "128", min: 0, max: math.MaxInt64},
	{name: "latency-monitor-threshold", kind: kindInt, def: "0", min: 0, max: math.MaxInt64},
	{name: "latency-tracking", kind: kindBool, def: "yes", apply: func(s *Server, v string) string {
		latencyTracking.Store(v == "yes")
		s.setConfigValue("latency-tracking", v)
		return ""
	}},
	{name: "latency-tracking-info-percentiles", kind: kindPercentiles, def: "50 99 99.9"},
	{name: "loglevel", kind: kindEnum, def: "notice", choices: []string{"debug", "verbose", "notice", "warning"}},
	{name: "logfile", kind: kindString, def: "", immutable: true},
	{name: "daemonize", kind: kindBool, def: "no", immutable: true},
	{name: "supervised", kind: kindEnum, def: "no", immutable: true, choices: []string{"upstart", "systemd", "auto", "no"}},
	{name: "pidfile", kind: kindString, def: "", immutable: true},
	{name: "protected-mode", kind: kindBool, def: "yes"},
	{name: "cluster-enabled", kind: kindBool, def: "no", immutable: true, get: func(s *Server) string {
		if s.clusterOn {
			return "yes"
		}
		return "no"
	}},
	{name: "cluster-require-full-coverage", kind: kindBool, def: "yes"},                     // read by cluster_route.go
	{name: "cluster-allow-reads-when-down", kind: kindBool, def: "no"},                      // read by cluster_route.go
	{name: "cluster-node-timeout", kind: kindInt, def: "15000", min: 0, max: math.MaxInt64}, // read by the bus every tick
	{name: "cluster-port", kind: kindInt, def: "0", min: 0, max: 65535, immutable: true},
	// What this node tells the others of its address (cluster_bus.go),
	// and how clients are told of a node (cluster_endpoint.go).
	{name: "cluster-announce-hostname", kind: kindString, def: "", check: checkAnnouncedHostname},
	{name: "cluster-announce-ip", kind: kindString, def: ""},
	{name: "cluster-announce-port", kind: kindInt, def: "0", min: 0, max: 65535},
	{name: "cluster-announce-bus-port", kind: kindInt, def: "0", min: 0, max: 65535},
	{name: "cluster-announce-tls-port", kind: kindInt, def: "0", min: 0, max: 65535},
	{name: "cluster-preferred-endpoint-type", kind: kindEnum, def: endpointIP, choices: []string{endpointIP, endpointHostname, endpointUnknown}},
	{name: "cluster-allow-replica-migration", kind: kindBool, def: "yes"},
	{name: "cluster-replica-validity-factor", kind: kindInt, def: "10", min: 0, max: intMax},
	{name: "cluster-migration-barrier", kind: kindInt, def: "1", min: 0, max: intMax},
	{name: "cluster-replica-no-failover", kind: kindBool, def: "no"},
	{name: "cluster-config-file", kind: kindString, def: "nodes.conf", immutable: true, get: func(s *Server) string {
		if s.cfg.ClusterConfigFile == "" {
			return "nodes.conf"
		}
		return s.cfg.ClusterConfigFile
	}},
	{name: "io-threads", kind: kindInt, def: "1", immutable: true},
	{name: "replica-read-only", alias: "slave-read-only", kind: kindBool, def: "yes"},
	{name: "repl-backlog-size", kind: kindMemory, def: "1048576", min: 1, max: math.MaxInt64,
		get:   func(s *Server) string { return itoa(s.repl.backlogConf()) },
		apply: func(s *Server, v string) string { n, _ := ParseMemory(v); s.repl.backlogMax.Store(n); return "" }},
	{name: "repl-diskless-sync", kind: kindBool, def: "yes"}, // repl_master.go
	{name: "repl-diskless-sync-delay", kind: kindInt, def: "5", min: 0, max: intMax},
	{name: "repl-diskless-sync-max-replicas", kind: kindInt, def: "0", min: 0, max: intMax},
	{name: "repl-ping-replica-period", alias: "repl-ping-slave-period", kind: kindInt, def: "10", min: 1, max: intMax},
	{name: "replica-serve-stale-data", alias: "slave-serve-stale-data", kind: kindBool, def: "yes"},
	{name: "replica-ignore-maxmemory", alias: "slave-ignore-maxmemory", kind: kindBool, def: "yes",
		get: func(s *Server) string {
			if s.ops.mem.replicaObeys.Load() {
				return "no"
			}
			return "yes"
		},
		apply: func(s *Server, v string) string { s.ops.mem.replicaObeys.Store(v == "no"); return "" }},
	{name: "masterauth", kind: kindString, def: ""},
	{name: "masteruser", kind: kindString, def: ""},
	{name: "replica-priority", alias: "slave-priority", kind: kindInt, def: "100", min: 0, max: intMax},
	// What a replica tells its master (REPLCONF ip-address and
	// listening-port) and INFO tells Sentinel (repl_replica.go).
	{name: "replica-announce-ip", alias: "slave-announce-ip", kind: kindString, def: ""},
	{name: "replica-announce-port", alias: "slave-announce-port", kind: kindInt, def: "0", min: 0, max: 65535},
	{name: "replica-announced", kind: kindBool, def: "yes"},
	{name: "min-replicas-to-write", alias: "min-slaves-to-write", kind: kindInt, def: "0", min: 0, max: intMax,
		apply: func(s *Server, v string) string { return s.setMinReplicas("min-replicas-to-write", v) }},
	{name: "min-replicas-max-lag", alias: "min-slaves-max-lag", kind: kindInt, def: "10", min: 0, max: intMax,
		apply: func(s *Server, v string) string { return s.setMinReplicas("min-replicas-max-lag", v) }},
	// The master this server follows: a configuration line starts the
	// link once the data is loaded (startBackground), and CONFIG
	// REWRITE records REPLICAOF's, as Sentinel relies on.
	{name: "replicaof", alias: "slaveof", kind: kindString, def: "", immutable: true, check: checkReplicaOf,
		get: func(s *Server) string {
			if l := s.link.Load(); l != nil {
				return l.host + " " + strconv.Itoa(l.port)
			}
			return ""
		}},
	{name: "lazyfree-lazy-eviction", kind: kindBool, def: "no"},
	{name: "lazyfree-lazy-expire", kind: kindBool, def: "no"},
	{name: "lazyfree-lazy-server-del", kind: kindBool, def: "no"},
	{name: "lazyfree-lazy-user-del", kind: kindBool, def: "no"},
	{name: "lazyfree-lazy-user-flush", kind: kindBool, def: "no"},
	{name: "dynamic-hz", kind: kindBool, def: "yes"},
	{name: "active-expire-effort", kind: kindInt, def: "1", min: 1, max: 10},
	{name: "lfu-log-factor", kind: kindInt, def: "10", min: 0, max: intMax},
	{name: "lfu-decay-time", kind: kindInt, def: "1", min: 0, max: intMax},
	{name: "acllog-max-len", kind: kindInt, def: "128", min: 0, max: math.MaxInt64},
	{name: "aclfile", kind: kindString, immutable: true},
	{name: "acl-pubsub-default", kind: kindEnum, def: "resetchannels", choices: []string{"allchannels", "resetchannels"}},
	{name: "stream-node-max-bytes", kind: kindMemory, def: "4096", min: 0, max: math.MaxInt64},
	{name: "stream-node-max-entries", kind: kindInt, def: "100", min: 0, max: math.MaxInt64},
	{name: "rdbcompression", kind: kindBool, def: "yes"},
	{name: "stop-writes-on-bgsave-error", kind: kindBool, def: "yes"},
	{name: "rdbchecksum", kind: kindBool, def: "yes", immutable: true},
	{name: "always-show-logo", kind: kindBool, def: "no", immutable: true},
}

// configParamByName finds a parameter by its name or alias, any case.
func configParamByName(name string) *configParam {
	for _, p := range configParams {
		if strings.EqualFold(p.name, name) || (p.alias != "" && strings.EqualFold(p.alias, name)) {
			return p
		}
	}
	return nil
}

// configStore holds the values CONFIG SET stored for parameters that have
// no live setting of their own.
type configStore struct {
	mu   sync.Mutex
	vals map[string]string
}

// saveParam is the "save" parameter's value: its save rules.
func saveParam(s *Server) string {
	if v, ok := s.conf.get("save"); ok {
		return v
	}
	return defaultSaveRules
}

// defaultSaveRules is Redis's "save" without a config file.
const defaultSaveRules = "3600 1 300 100 60 10000"

func (c *configStore) get(name string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.vals[name]
	return v, ok
}

func (s *Server) configValue(name string) string {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	return s.conf.vals[name]
}

func (s *Server) setConfigValue(name, v string) {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	if s.conf.vals == nil {
		s.conf.vals = map[string]string{}
	}
	s.conf.vals[name] = v
}

// value is the parameter's current value as CONFIG GET prints it.
func (p *configParam) value(s *Server) string {
	if p.get != nil {
		return p.get(s)
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	if v, ok := s.conf.vals[p.name]; ok {
		return v
	}
	return p.def
}

// configGet is CONFIG GET pattern [pattern ...]: a map of every parameter
// whose name or alias matches a glob pattern (any case), each once.
func configGet(x *Ctx) {
	type pair struct{ k, v string }
	var out []pair
	seen := map[string]bool{}
	add := func(name string, p *configParam) {
		if key := strings.ToLower(name); !seen[key] {
			seen[key] = true
			out = append(out, pair{name, p.value(x.srv)})
		}
	}
	for _, pat := range x.Args[2:] {
		if !hasGlob(pat) {
			// An exact name is echoed as it was sent, in its case.
			if p := configParamByName(string(pat)); p != nil {
				add(string(pat), p)
			}
			continue
		}
		var names []string
		byName := map[string]*configParam{}
		for _, p := range configParams {
			for _, n := range []string{p.name, p.alias} {
				if n != "" && globMatchFold(pat, []byte(n)) {
					names = append(names, n)
					byName[n] = p
				}
			}
		}
		sort.Strings(names)
		for _, n := range names {
			add(n, byName[n])
		}
	}
	x.W.Map(len(out))
	for _, kv := range out {
		x.W.BulkString(kv.k)
		x.W.BulkString(kv.v)
	}
}

func hasGlob(b []byte) bool {
	for _, c := range b {
		if c == '*' || c == '?' || c == '[' {
			return true
		}
	}
	return false
}

// configSet is CONFIG SET name value [name value ...]. As in Redis 7.0 it
// is all or nothing: every name is checked first (unknown, immutable,
// given twice), then every value, and only then is anything applied.
func configSet(x *Ctx) {
	args := x.Args[2:]
	if len(args)%2 != 0 {
		x.Error(ErrSyntax)
		return
	}
	// An alias is a parameter of its own for the duplicate check, as in
	// Redis's table, so "lua-time-limit 1 busy-reply-threshold 2" is
	// accepted and the last one wins.
	params := make([]*configParam, 0, len(args)/2)
	for i := 0; i < len(args); i += 2 {
		p := configParamByName(string(args[i]))
		if p == nil {
			x.Error(errConfigUnknown(cstring(args[i])))
			return
		}
		if p.immutable {
			x.Error(errConfigSet(cstring(args[i]), "can't set immutable config"))
			return
		}
		if p.protected {
			x.Error(errConfigSet(cstring(args[i]), "can't set protected config"))
			return
		}
		for j, q := range params {
			if q == p && sameSpelling(q, args[2*j], args[i]) {
				x.Error(errConfigSet(cstring(args[i]), "duplicate parameter"))
				return
			}
		}
		params = append(params, p)
	}
	vals := make([]string, len(params))
	for j, p := range params {
		v, msg := p.parse(string(args[2*j+1]))
		if msg != "" {
			x.Error(errConfigSet(cstring(args[2*j]), msg))
			return
		}
		vals[j] = v
	}
	for j, p := range params {
		if p.apply != nil {
			if msg := p.apply(x.srv, vals[j]); msg != "" {
				x.Error(errConfigSet(cstring(args[2*j]), msg))
				return
			}
			continue
		}
		x.srv.setConfigValue(p.name, vals[j])
	}
	x.W.OK()
}

// parse validates v for p and returns it as CONFIG GET will print it, or
// Redis's reason for refusing it.
func (p *configParam) parse(v string) (string, string) {
	if p.check != nil {
		return p.check(v)
	}
	switch p.kind {
	case kindBool:
		switch strings.ToLower(v) {
		case "yes":
			return "yes", ""
		case "no":
			return "no", ""
		}
		return "", "argument must be 'yes' or 'no'"
	case kindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !canonicalInt(v) {
			return "", "argument couldn't be parsed into an integer"
		}
		if n < p.min || n > p.max {
			return "", "argument must be between " + itoa(p.min) + " and " + itoa(p.max) + " inclusive"
		}
		return itoa(n), ""
	case kindMemory:
		n, ok := ParseMemory(v)
		if !ok {
			return "", "argument must be a memory value"
		}
		if n < p.min || n > p.max {
			return "", "argument must be between " + itoa(p.min) + " and " + itoa(p.max) + " inclusive"
		}
		return itoa(n), ""
	case kindEnum:
		for _, c := range p.choices {
			if strings.EqualFold(c, v) {
				return c, ""
			}
		}
		return "", "argument(s) must be one of the following: " + strings.Join(p.choices, ", ")
	case kindSave:
		// Redis splits on single spaces, so doubled spaces are refused.
		if v == "" {
			return "", ""
		}
		f := strings.Split(v, " ")
		if len(f)%2 != 0 {
			return "", "Invalid save parameters"
		}
		for _, s := range f {
			if n, err := strconv.ParseInt(s, 10, 64); err != nil || n < 0 || !canonicalInt(s) {
				return "", "Invalid save parameters"
			}
		}
		return strings.Join(f, " "), ""
	case kindPercentiles:
		return parsePercentiles(v)
	case kindEvents:
		out, ok := normalizeKeyspaceEvents(v)
		if !ok {
			return "", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		}
		if keyspaceEventsOn(out) {
			return "", msgNoKeyspaceEvents
		}
		return out, ""
	}
	return v, ""
}

// canonicalInt accepts what Redis's string2ll does: an optional '-' and
// digits without leading zeros.
func canonicalInt(s string) bool {
	if s == "0" {
		return true
	}
	if strings.HasPrefix(s, "-") {
		s = s[1:]
	}
	return s != "" && s[0] >= '1' && s[0] <= '9'
}

// keyspaceEventsOn reports whether a canonical notify-keyspace-events
// value would make Redis publish events: K or E, and a class. cellserver
// has no pub/sub, so it refuses those values rather than take them and
// publish nothing; values that publish nothing in Redis either ("A", "KE",
// "") are kept as Redis keeps them.
func keyspaceEventsOn(v string) bool {
	return strings.ContainsAny(v, "KE") && strings.Trim(v, "KE") != ""
}

// normalizeKeyspaceEvents reads notify-keyspace-events classes and prints
// them back in Redis 7.0's canonical order: A (all of g$lshzxetd) or those
// letters, then n, K, E, m.
func normalizeKeyspaceEvents(v string) (string, bool) {
	const all = "g$lshzxetd"
	set := map[byte]bool{}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == 'A':
			for j := 0; j < len(all); j++ {
				set[all[j]] = true
			}
		case strings.IndexByte(all+"nKEm", c) >= 0:
			set[c] = true
		default:
			return "", false
		}
	}
	var b strings.Builder
	every := true
	for j := 0; j < len(all); j++ {
		every = every && set[all[j]]
	}
	if every {
		b.WriteByte('A')
	} else {
		for j := 0; j < len(all); j++ {
			if set[all[j]] {
				b.WriteByte(all[j])
			}
		}
	}
	for _, c := range []byte("nKEm") {
		if set[c] {
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// configResetStat is CONFIG RESETSTAT: INFO's counters, commandstats and
// errorstats start again from zero. All shards are locked (flagAllDBs) so
// their expiry counters can be reset.
func configResetStat(x *Ctx) {
	x.srv.resetStats()
	x.W.OK()
}

func configHelp(x *Ctx) {
	writeHelp(x, "CONFIG", []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	})
}

// sameSpelling reports whether two names of p are both its name or both its
// alias.
func sameSpelling(p *configParam, a, b []byte) bool {
	isAlias := func(n []byte) bool { return p.alias != "" && strings.EqualFold(p.alias, string(n)) }
	return isAlias(a) == isAlias(b)
}
