package integration_test

import "testing"

// configReadable are parameters whose values both servers, started by the
// harness with the same settings, report identically.
var configReadable = []string{
	"maxclients", "databases", "proto-max-bulk-len", "client-query-buffer-limit",
	"bind", "unixsocket", "unixsocketperm", "hz", "requirepass",
	"appendonly", "appendfsync", "maxmemory", "maxmemory-policy", "maxmemory-samples",
	"maxmemory-clients", "maxmemory-eviction-tenacity", "timeout", "tcp-keepalive", "tcp-backlog",
	"zset-max-listpack-entries", "zset-max-listpack-value", "zset-max-ziplist-entries",
	"zset-max-ziplist-value", "hash-max-listpack-entries", "hash-max-listpack-value",
	"hash-max-ziplist-entries", "list-max-listpack-size", "list-max-ziplist-size",
	"set-max-intset-entries", "busy-reply-threshold", "lua-time-limit",
	"notify-keyspace-events", "slowlog-log-slower-than", "slowlog-max-len",
	"latency-monitor-threshold", "latency-tracking", "loglevel", "daemonize", "supervised",
	"protected-mode", "cluster-enabled", "io-threads", "replica-read-only", "slave-read-only",
	"repl-backlog-size", "lazyfree-lazy-eviction", "lazyfree-lazy-user-flush", "dynamic-hz",
	"active-expire-effort", "lfu-log-factor", "lfu-decay-time", "acllog-max-len",
	"stream-node-max-bytes", "stream-node-max-entries", "rdbcompression", "rdbchecksum",
	"dbfilename", "appendfilename", "appenddirname", "always-show-logo",
}

func TestConfigGet(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range configReadable {
			c.Do("CONFIG", "GET", name)
		}
		c.Do("CONFIG", "GET", "MAXCLIENTS")
		c.Do("CONFIG", "GET", "nosuch")
		c.Do("CONFIG", "GET", "nosuch*")
		c.DoMasked(maskConfigValue("dir", "port"), "CONFIG", "GET", "dir", "port")
		c.DoSorted("CONFIG", "GET", "maxmemory*")
		c.DoSorted("CONFIG", "GET", "zset-*")
		c.DoSorted("CONFIG", "GET", "hash-max-*")
		c.DoSorted("CONFIG", "GET", "slowlog-*")
		c.DoSorted("CONFIG", "GET", "lazyfree-*")
		c.DoSorted("CONFIG", "GET", "append*")
		c.DoSorted("CONFIG", "GET", "MAXMEMORY-P?LICY")
		c.DoSorted("CONFIG", "GET", "maxmemory-[ps]*")
		// Several patterns in one call (7.0); each parameter once.
		c.DoSorted("CONFIG", "GET", "maxmemory", "maxmemory", "hz", "maxmemory*")
		c.DoSorted("CONFIG", "GET", "lua-time-limit", "busy-reply-threshold")
		c.Error("CONFIG", "GET")
		c.Error("CONFIG")
		c.Error("CONFIG", "nosuch")
	})
}

func TestConfigSet(t *testing.T) {
	s := sharedServers(t)
	t.Cleanup(func() {
		c := newPairOn(t, s)
		c.Do("CONFIG", "SET", "maxmemory", "0", "hz", "10", "maxmemory-policy", "noeviction",
			"appendonly", "no", "notify-keyspace-events", "", "save", "", "timeout", "0",
			"slowlog-max-len", "128", "busy-reply-threshold", "5000", "maxclients", "10000",
			"zset-max-listpack-entries", "128", "latency-tracking-info-percentiles", "50 99 99.9")
	})
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CONFIG", "SET", "maxmemory", "10mb")
		c.Do("CONFIG", "GET", "maxmemory")
		c.Do("CONFIG", "SET", "maxmemory", "1GB")
		c.Do("CONFIG", "GET", "maxmemory")
		c.Do("CONFIG", "SET", "maxmemory", "1g")
		c.Do("CONFIG", "GET", "maxmemory")
		c.Do("CONFIG", "SET", "maxmemory", "0")
		c.Do("CONFIG", "SET", "hz", "0")
		c.Do("CONFIG", "GET", "hz")
		c.Do("CONFIG", "SET", "hz", "1000")
		c.Do("CONFIG", "GET", "hz")
		c.Do("CONFIG", "SET", "hz", "10")
		c.Do("CONFIG", "SET", "appendonly", "YES")
		c.Do("CONFIG", "GET", "appendonly")
		c.Do("CONFIG", "SET", "appendonly", "no")
		c.Do("CONFIG", "SET", "maxmemory-policy", "ALLKEYS-LRU")
		c.Do("CONFIG", "GET", "maxmemory-policy")
		c.Do("CONFIG", "SET", "maxmemory-policy", "noeviction")
		c.Do("CONFIG", "SET", "save", "3600 1 300 100")
		c.Do("CONFIG", "GET", "save")
		c.Do("CONFIG", "SET", "save", "")
		c.Do("CONFIG", "GET", "save")
		c.Do("CONFIG", "SET", "lua-time-limit", "7000")
		c.Do("CONFIG", "GET", "busy-reply-threshold")
		c.Do("CONFIG", "SET", "busy-reply-threshold", "5000")
		c.Do("CONFIG", "SET", "zset-max-ziplist-entries", "64")
		c.Do("CONFIG", "GET", "zset-max-listpack-entries")
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128")
		// Values that publish nothing (no K or E, or no class) are kept as
		// Redis keeps them; cellserver has no pub/sub and refuses the
		// others (cell's TestConfigParse).
		for _, ev := range []string{"A", "$lshzxetd", "g$lshzxetdm", "tm", "KE", "E", ""} {
			c.Do("CONFIG", "SET", "notify-keyspace-events", ev)
			c.Do("CONFIG", "GET", "notify-keyspace-events")
		}
		c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50.0 99.90 1e1")
		c.Do("CONFIG", "GET", "latency-tracking-info-percentiles")
		c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "0 100 0.5")
		c.Do("CONFIG", "RESETSTAT")
		c.Do("PING")
		c.DoMasked(maskInfoValues(nil), "INFO", "latencystats")
		c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "")
		c.Do("CONFIG", "GET", "latency-tracking-info-percentiles")
		c.DoMasked(maskInfoValues(nil), "INFO", "latencystats")
		c.Error("CONFIG", "SET", "latency-tracking-info-percentiles", "50 abc")
		c.Error("CONFIG", "SET", "latency-tracking-info-percentiles", "101")
		c.Do("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
		// Several pairs at once, all or nothing.
		c.Do("CONFIG", "SET", "timeout", "30", "slowlog-max-len", "64")
		c.DoSorted("CONFIG", "GET", "timeout", "slowlog-max-len")
		c.Error("CONFIG", "SET", "timeout", "0", "slowlog-max-len", "abc")
		c.DoSorted("CONFIG", "GET", "timeout", "slowlog-max-len")
		c.Do("CONFIG", "SET", "timeout", "0", "slowlog-max-len", "128")

		c.Error("CONFIG", "SET", "nosuch", "x")
		c.Error("CONFIG", "SET", "hz", "10", "nosuch", "x")
		c.Error("CONFIG", "SET", "maxclients", "abc")
		c.Error("CONFIG", "SET", "maxclients", "0")
		c.Error("CONFIG", "SET", "databases", "10")
		c.Error("CONFIG", "SET", "unixsocket", "/tmp/x")
		c.Error("CONFIG", "SET", "dir", "/tmp")
		c.Error("CONFIG", "SET", "dbfilename", "x.rdb")
		c.Error("CONFIG", "SET", "hz", "20", "hz", "30")
		c.Error("CONFIG", "SET", "HZ", "20", "hz", "30")
		c.Error("CONFIG", "SET", "lua-time-limit", "1", "LUA-TIME-LIMIT", "2")
		// An alias and its parameter are not duplicates: the last one wins.
		c.Do("CONFIG", "SET", "lua-time-limit", "1", "busy-reply-threshold", "2")
		c.DoSorted("CONFIG", "GET", "lua-time-limit", "busy-reply-threshold")
		c.Do("CONFIG", "SET", "busy-reply-threshold", "5000")
		c.Error("CONFIG", "SET", "hz")
		c.Error("CONFIG", "SET", "hz", "10", "maxmemory")
		c.Error("CONFIG", "SET", "hz", "-5")
		c.Error("CONFIG", "SET", "hz", "05")
		c.Error("CONFIG", "SET", "hz", "+5")
		c.Error("CONFIG", "SET", "port", "abc")
		c.Error("CONFIG", "SET", "timeout", "-1")
		c.Error("CONFIG", "SET", "appendonly", "maybe")
		c.Error("CONFIG", "SET", "maxmemory-policy", "foo")
		c.Error("CONFIG", "SET", "maxmemory", "-1")
		c.Error("CONFIG", "SET", "maxmemory", "1x")
		c.Error("CONFIG", "SET", "proto-max-bulk-len", "100")
		c.Error("CONFIG", "SET", "client-query-buffer-limit", "10")
		c.Error("CONFIG", "SET", "save", "100 10 200")
		c.Error("CONFIG", "SET", "save", " 100   10 ")
		c.Error("CONFIG", "SET", "save", "abc")
		c.Error("CONFIG", "SET", "notify-keyspace-events", "xyz")
		c.Error("CONFIG", "SET", "slowlog-log-slower-than", "-5")
		c.Error("CONFIG", "SET", "maxmemory-eviction-tenacity", "101")
		c.Do("CONFIG", "GET", "hz")
	})
}

func TestConfigOther(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CONFIG", "RESETSTAT")
		c.Error("CONFIG", "RESETSTAT", "x")
		c.Error("CONFIG", "REWRITE")
		c.Error("CONFIG", "REWRITE", "x")
		c.Do("CONFIG", "HELP")
		c.Error("CONFIG", "HELP", "x")
	})
}
