package cell

import (
	"log/slog"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Config is the server's settings. The fields are the start-up values;
// settings CONFIG SET can change live in the atomics below them.
type Config struct {
	Bind                   []string // addresses to listen on; empty: none (unix socket only)
	Port                   int      // 0: no TCP listener
	UnixSocket             string
	UnixSocketPerm         uint32
	RequirePass            string
	Databases              int
	MaxClients             int
	Dir                    string
	ProtoMaxBulkLen        int64
	ClientQueryBufferLimit int64
	Shards                 int // per database; 0: chosen from GOMAXPROCS
	Hz                     int // active expiry cycles per second
	// AppendOnly keeps the keyspace durable in Dir (persist.DirName).
	// Only Open honours it; New always makes an in-memory server.
	AppendOnly bool
	// AppendFsync is when the log reaches the disk: FsyncAlways,
	// FsyncEverySec or FsyncNo, with Redis's meanings.
	AppendFsync string
	Version     string
	Logger      *slog.Logger
	// BusyReplyThreshold is how long a script runs before commands that
	// need its shards get -BUSY and SCRIPT KILL may stop it (Redis's
	// busy-reply-threshold, alias lua-time-limit).
	BusyReplyThreshold time.Duration
	// LuaStrictKeys refuses scripts that touch keys they did not list in
	// KEYS, or run whole-keyspace commands (--lua-allow-undeclared-keys
	// no). Off, scripts run as on Redis (script_shards.go).
	LuaStrictKeys bool
	// NoServeInPoller turns off serving plain requests inside the
	// poller's read callback (--serve-in-poller no, pollserve.go): every
	// read then goes through the ordinary loop.
	NoServeInPoller bool
	// EventLoop has connections in their plain state wait for input in
	// one of a few shared loops (--event-loop yes, evloop.go) instead of
	// each in its own goroutine.
	EventLoop bool

	// Observability (logging.go, metrics.go).
	LogLevel    *slog.LevelVar // the Logger's level, for CONFIG GET/SET loglevel; nil: notice
	LogFile     string         // where the Logger writes, for CONFIG GET logfile; "": stderr
	MetricsPort int            // serve GET /metrics on this port; 0: off
	// LimiterPrefixes are the key prefixes, comma-separated, whose limiter
	// decisions INFO limiters and /metrics count apart (limiter_stats.go).
	LimiterPrefixes string
	MetricsBind     string // address for /metrics; "": the first Bind address

	// Operations (ops.go).

	// ConfigFile is the absolute path of the configuration file the server
	// started from, which CONFIG REWRITE rewrites; "" for none.
	ConfigFile string
	// Params are start-up values of CONFIG parameters, by name, as CONFIG
	// GET prints them (CheckParam); they are applied as CONFIG SET would.
	Params map[string]string
	// RenameCommands are rename-command pairs, applied in order: the
	// command takes the new name, or none when it is "".
	RenameCommands [][2]string
	// Users are the configuration file's `user` lines, each the words
	// after "user": a name and its ACL rules (acl_file.go).
	Users [][]string

	// Cluster is the topology of cluster mode (cluster.go); nil: standalone.
	Cluster           *Topology
	ClusterConfigFile string // where Cluster was read from, re-read on SIGHUP
	// ClusterBus is cluster mode on the cluster bus (cluster_bus.go): the
	// node table is kept in ClusterConfigFile (nodes.conf) in Dir.
	ClusterBus bool

	// SlowLoad, for tests only, makes loading the store sleep this long
	// every 1000 keys, so that a test can watch a server while it loads
	// (cellserver reads it from CELLSERVER_TEST_SLOW_LOAD).
	SlowLoad time.Duration

	// persistFS replaces the operating system's file system under the
	// store, and logFault fails the effect log's disk operations; tests
	// use them to make the disk fail.
	persistFS vfs.FS
	logFault  func(op string) error
}

// liveConfig holds the settings CONFIG SET can change while clients run.
type liveConfig struct {
	requirePass            atomic.Pointer[string]
	maxClients             atomic.Int64
	protoMaxBulkLen        atomic.Int64
	clientQueryBufferLimit atomic.Int64
	busyReplyThresholdMs   atomic.Int64
	// zset-max-listpack-entries and -value, read at every sorted-set
	// insert (zset.go).
	zsetMaxListpackEntries atomic.Int64
	zsetMaxListpackValue   atomic.Int64
	// set-max-intset-entries, read at every set insert (cmd_set.go).
	setMaxIntsetEntries atomic.Int64
	// auto-aof-rewrite-min-size and -percentage: when the effect log has
	// grown enough for a checkpoint (checkpoint.go).
	ckptMinSize atomic.Int64
	ckptPercent atomic.Int64
}

// DefaultConfig is what `cellserver` runs with when given no flags: Redis's
// defaults.
func DefaultConfig() Config {
	return Config{
		Bind:                   []string{"127.0.0.1"},
		Port:                   6379,
		Databases:              16,
		MaxClients:             10000,
		Dir:                    ".",
		AppendOnly:             true,
		AppendFsync:            FsyncEverySec,
		ProtoMaxBulkLen:        512 << 20,
		ClientQueryBufferLimit: 1 << 30,
		Hz:                     10,
		Version:                "7.0.15",
		BusyReplyThreshold:     5 * time.Second,
	}
}

// DefaultShards is the shard count for 0: enough that every core works
// without contending for one lock.
func DefaultShards() int {
	n := 16
	for n < 8*runtime.GOMAXPROCS(0) {
		n <<= 1
	}
	return n
}

func (l *liveConfig) load(c *Config) {
	if c.RequirePass != "" {
		p := c.RequirePass
		l.requirePass.Store(&p)
	}
	l.maxClients.Store(int64(c.MaxClients))
	l.protoMaxBulkLen.Store(c.ProtoMaxBulkLen)
	l.clientQueryBufferLimit.Store(c.ClientQueryBufferLimit)
	l.busyReplyThresholdMs.Store(c.BusyReplyThreshold.Milliseconds())
	l.zsetMaxListpackEntries.Store(128)
	l.zsetMaxListpackValue.Store(64)
	l.setMaxIntsetEntries.Store(512) // keyspace.SetMaxIntsetEntries
	l.ckptMinSize.Store(64 << 20)
	l.ckptPercent.Store(100)
}

// ParseMemory reads a size as redis.conf writes it: a number with an
// optional unit, k/m/g powers of 1000 and kb/mb/gb powers of 1024, any case.
func ParseMemory(s string) (int64, bool) {
	units := []struct {
		suffix string
		mul    int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}}
	l := strings.ToLower(s)
	mul := int64(1)
	for _, u := range units {
		if strings.HasSuffix(l, u.suffix) {
			l, mul = strings.TrimSuffix(l, u.suffix), u.mul
			break
		}
	}
	n, err := strconv.ParseInt(l, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mul {
		return 0, false
	}
	return n * mul, true
}
