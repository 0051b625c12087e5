package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cellserver/cellserver/cell"
)

// parseFlags reads an optional configuration file and redis-server style
// flags (--port 6380, -port=6380, --bind 127.0.0.1 ::1) over the embedded
// defaults (directives.go). --help and --version print to out.
func parseFlags(args []string, out io.Writer) (cfg cell.Config, err error) {
	cfg = cell.DefaultConfig()
	var ds []directive
	defer func() { err = blameDirective(ds, err) }() // a file's bad value names its line
	fs := flag.NewFlagSet("cellserver", flag.ContinueOnError)
	fs.SetOutput(out)
	bind := strings.Join(cfg.Bind, " ")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "TCP port to listen on (0: no TCP)")
	fs.StringVar(&bind, "bind", bind, "space-separated addresses to listen on")
	fs.StringVar(&cfg.UnixSocket, "unixsocket", "", "path of a unix socket to listen on as well")
	perm := fs.String("unixsocketperm", "0", "permissions of the unix socket, octal (0: umask)")
	fs.StringVar(&cfg.RequirePass, "requirepass", "", "password clients must AUTH with (empty: none)")
	fs.IntVar(&cfg.Databases, "databases", cfg.Databases, "number of databases (SELECT 0..n-1)")
	fs.IntVar(&cfg.MaxClients, "maxclients", cfg.MaxClients, "maximum simultaneous clients")
	fs.StringVar(&cfg.Dir, "dir", cfg.Dir, "working directory for data files")
	bulk := sizeFlag{&cfg.ProtoMaxBulkLen}
	fs.Var(bulk, "proto-max-bulk-len", "largest bulk argument a client may send, in `bytes` (512mb)")
	qbuf := sizeFlag{&cfg.ClientQueryBufferLimit}
	fs.Var(qbuf, "client-query-buffer-limit", "largest unparsed input per client, in `bytes` (1gb)")
	fs.IntVar(&cfg.Shards, "shards", 0, fmt.Sprintf("key shards per database, a power of two (0: %d here)", cell.DefaultShards()))
	fs.IntVar(&cfg.Hz, "hz", cfg.Hz, "active expiry cycles per second")
	appendonly := fs.String("appendonly", "yes", "keep the data durable in --dir (yes|no)")
	fs.StringVar(&cfg.AppendFsync, "appendfsync", cfg.AppendFsync, "when writes reach the disk: always (before the reply), everysec, no (every 30 s)")
	busy := msFlag{&cfg.BusyReplyThreshold}
	fs.Var(busy, "busy-reply-threshold", "`ms` a script runs before others get -BUSY and SCRIPT KILL applies")
	fs.Var(busy, "lua-time-limit", "`ms`: alias of --busy-reply-threshold")
	fs.Var(notFlag{&cfg.LuaStrictKeys}, "lua-allow-undeclared-keys",
		"yes: scripts may touch keys not listed in KEYS and whole-keyspace commands, as on Redis;\nno: refuse them with an error")
	fs.Var(notFlag{&cfg.NoServeInPoller}, "serve-in-poller",
		"yes: serve plain key commands inside the network poller's callback, one system call fewer per request;\nno: always through the connection's ordinary loop")
	fs.BoolVar(&cfg.EventLoop, "event-loop", false,
		"yes: connections between requests wait in one event loop per core, which serves each as its input comes;\nno: each connection waits in its own goroutine")
	// Observability.
	loglevel := fs.String("loglevel", "notice", "log level: debug, verbose, notice or warning")
	fs.StringVar(&cfg.LogFile, "logfile", "", "file to append the log to (empty: stderr)")
	fs.IntVar(&cfg.MetricsPort, "metrics-port", 0, "serve Prometheus metrics at GET /metrics on this port (0: off)")
	fs.StringVar(&cfg.LimiterPrefixes, "limiter-prefixes", "", "key prefixes, comma-separated (\"api:,login:\"), whose limiter decisions INFO limiters and /metrics count apart")
	fs.StringVar(&cfg.MetricsBind, "metrics-bind", "", "address for --metrics-port (empty: the first --bind address)")
	// Operations (directives.go, ops_flags.go).
	addOpsFlags(fs, &cfg)
	// Cluster mode (cluster.go).
	clusterEnabled := fs.String("cluster-enabled", "no", "yes: Redis Cluster mode, on the cluster bus (port + 10000) unless --cluster-config-file is a topology file")
	fs.StringVar(&cfg.ClusterConfigFile, "cluster-config-file", "", "the node table the cluster bus keeps, in --dir (nodes.conf), or a topology file shared by all nodes (README: Cluster mode)")
	clusterNodeID := fs.String("cluster-node-id", "", "this node's id in the topology file (empty: the line with --port)")
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: cellserver [/path/to/cellserver.conf] [--flag value ...]\n\nA Redis 7.0 + redis-cell compatible server for rate limiting.\n\nFlags:\n")
		printFlags(out, fs)
		fmt.Fprint(out, opsUsage)
	}
	if ds, err = parseDirectives(fs, &cfg, args, out); err != nil {
		return cfg, err
	}
	cfg.Bind = strings.Fields(bind)
	switch strings.ToLower(*appendonly) {
	case "yes":
		cfg.AppendOnly = true
	case "no":
		cfg.AppendOnly = false
	default:
		return cfg, fmt.Errorf("--appendonly %q: must be yes or no", *appendonly)
	}
	cfg.AppendFsync = strings.ToLower(cfg.AppendFsync)
	switch cfg.AppendFsync {
	case cell.FsyncAlways, cell.FsyncEverySec, cell.FsyncNo:
	default:
		return cfg, fmt.Errorf("--appendfsync %q: must be always, everysec or no", cfg.AppendFsync)
	}
	p, err := strconv.ParseUint(*perm, 8, 32)
	if err != nil {
		return cfg, fmt.Errorf("--unixsocketperm %q: not an octal number", *perm)
	}
	cfg.UnixSocketPerm = uint32(p)
	level, ok := cell.ParseLogLevel(*loglevel)
	if !ok {
		return cfg, fmt.Errorf("--loglevel %q: must be debug, verbose, notice or warning", *loglevel)
	}
	cfg.LogLevel = new(slog.LevelVar)
	cfg.LogLevel.Set(level)
	if err := clusterFlags(&cfg, *clusterEnabled, *clusterNodeID); err != nil {
		return cfg, err
	}
	if cfg.MetricsPort < 0 || cfg.MetricsPort > 65535 {
		return cfg, fmt.Errorf("--metrics-port %d: must be 0..65535", cfg.MetricsPort)
	}
	switch {
	case cfg.Port < 0 || cfg.Port > 65535:
		return cfg, fmt.Errorf("--port %d: must be 0..65535", cfg.Port)
	case cfg.Databases < 1:
		return cfg, errors.New("--databases must be at least 1")
	case cfg.MaxClients < 1:
		return cfg, errors.New("--maxclients must be at least 1")
	case cfg.Shards < 0 || cfg.Shards&(cfg.Shards-1) != 0:
		return cfg, fmt.Errorf("--shards %d: must be a power of two", cfg.Shards)
	case cfg.Hz < 1 || cfg.Hz > 500:
		return cfg, errors.New("--hz must be 1..500")
	case cfg.BusyReplyThreshold < 0:
		return cfg, errors.New("--busy-reply-threshold must not be negative")
	case cfg.ProtoMaxBulkLen < 1:
		return cfg, errors.New("--proto-max-bulk-len must be positive")
	case cfg.ClientQueryBufferLimit < 1<<20:
		return cfg, errors.New("--client-query-buffer-limit must be at least 1mb")
	}
	return cfg, nil
}

// printFlags lists the flags as they are written everywhere else, --name
// (Go's PrintDefaults shows -name).
func printFlags(out io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if _, ok := f.Value.(interface{ IsBoolFlag() bool }); ok {
			arg = "" // alone means yes; "--name no" turns it off
		}
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" && !strings.Contains(usage, "("+d+")") {
			usage += " (default " + d + ")"
		}
		fmt.Fprintf(out, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// sizeFlag is a byte size in Redis's notation: 1000, 1k, 1kb, 512mb, 1gb.
type sizeFlag struct{ v *int64 }

func (f sizeFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatInt(*f.v, 10)
}

func (f sizeFlag) Set(s string) error {
	n, ok := cell.ParseMemory(s)
	if !ok {
		return fmt.Errorf("invalid size %q (e.g. 1048576, 512mb, 1gb)", s)
	}
	*f.v = n
	return nil
}

// notFlag is a yes/no flag stored negated: the setting's name says what
// is allowed, the config field what is refused (its zero is the default).
type notFlag struct{ v *bool }

func (f notFlag) String() string {
	if f.v == nil || !*f.v {
		return "true"
	}
	return "false"
}

func (f notFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.v = !b
	return nil
}

func (f notFlag) IsBoolFlag() bool { return true }

// msFlag is a duration given in milliseconds, as redis.conf gives them.
type msFlag struct{ v *time.Duration }

func (f msFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatInt(f.v.Milliseconds(), 10)
}

func (f msFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("invalid milliseconds %q", s)
	}
	*f.v = time.Duration(n) * time.Millisecond
	return nil
}
