package integration_test

import "testing"

// infoExactFields are the INFO fields whose values both servers must agree
// on exactly: identity, limits, and the fixed values of features neither
// uses. Every other field is compared by name and position only.
var infoExactFields = []string{
	"redis_version", "redis_git_sha1", "redis_git_dirty", "redis_mode", "os", "arch_bits",
	"monotonic_clock", "multiplexing_api", "atomicvar_api", "process_supervised",
	"hz", "configured_hz", "config_file", "io_threads_active",
	"cluster_connections", "maxclients", "blocked_clients", "tracking_clients", "clients_in_timeout_table",
	"used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human", "used_memory_scripts_eval",
	"number_of_cached_scripts", "number_of_functions", "number_of_libraries",
	"used_memory_vm_functions", "used_memory_vm_total", "used_memory_vm_total_human",
	"used_memory_functions", "used_memory_scripts", "used_memory_scripts_human",
	"maxmemory", "maxmemory_human", "maxmemory_policy", "mem_not_counted_for_evict",
	"mem_replication_backlog", "mem_total_replication_buffers", "mem_clients_slaves",
	"mem_cluster_links", "mem_aof_buffer", "active_defrag_running", "lazyfree_pending_objects",
	"loading", "async_loading", "current_cow_peak", "current_cow_size", "current_fork_perc",
	"rdb_bgsave_in_progress", "rdb_last_bgsave_status", "rdb_last_bgsave_time_sec",
	"rdb_current_bgsave_time_sec", "rdb_saves", "aof_enabled", "aof_rewrite_in_progress",
	"aof_rewrites", "aof_last_write_status", "module_fork_in_progress",
	"rejected_connections", "sync_full", "sync_partial_ok", "sync_partial_err",
	"evicted_keys", "evicted_clients", "pubsub_channels", "pubsub_patterns", "pubsubshard_channels",
	"latest_fork_usec", "total_forks", "tracking_total_keys", "unexpected_error_replies",
	"dump_payload_sanitizations", "io_threaded_reads_processed",
	"role", "connected_slaves", "master_failover_state", "master_replid2", "master_repl_offset",
	"second_repl_offset", "repl_backlog_active", "repl_backlog_size",
	"repl_backlog_first_byte_offset", "repl_backlog_histlen",
	"cluster_enabled",
}

// TestInfoSections runs on servers of its own: scripts and functions that
// other tests loaded leave memory figures (used_memory_functions, ...)
// that differ between the two programs.
func TestInfoSections(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		// After RESETSTAT both servers have run the same commands, so the
		// per-command sections list the same names.
		c.Do("CONFIG", "RESETSTAT")
		fields := maskInfoValues(infoExactFields)
		c.DoMasked(fields, "INFO")
		c.DoMasked(fields, "INFO", "default")
		c.DoMasked(fields, "INFO", "all")
		c.DoMasked(fields, "INFO", "everything")
		for _, s := range []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu"} {
			c.DoMasked(fields, "INFO", s)
		}
		// Sections come in Redis's order whatever order they are asked in.
		c.DoMasked(fields, "INFO", "keyspace", "CLUSTER", "nosuch", "Server")
		c.DoMasked(fields, "INFO", "server", "default")
		c.Do("INFO", "cluster")
		c.Do("INFO", "modules")
		c.Do("INFO", "keyspace")
		c.DoMasked(fields, "INFO", "latencystats", "commandstats", "errorstats", "nosuch")
		c.Do("INFO", "nosuch")
		c.Do("INFO", "nosuch", "other")
	})
}

func TestInfoCommandStats(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CONFIG", "RESETSTAT")
		c.Do("PING")
		c.Do("PING")
		c.Do("ECHO", "a")
		c.Error("ECHO")             // rejected: arity
		c.Error("SELECT", "99")     // failed
		c.Error("NOSUCHCMD")        // not a command: not counted
		c.Error("CLIENT", "nosuch") // unknown subcommand: not counted
		c.Do("CLIENT", "GETNAME")
		c.Error("CONFIG", "GET")
		c.DoMasked(maskCommandStats, "INFO", "commandstats")
		// Commands run by EXEC count as calls of their own.
		c.Do("CONFIG", "RESETSTAT")
		c.Do("MULTI")
		c.Do("PING")
		c.Do("ECHO", "x")
		c.Do("SELECT", "99")
		c.Do("EXEC")
		c.DoMasked(maskCommandStats, "INFO", "commandstats")
		c.DoMasked(maskInfo("total_commands_processed", "total_error_replies"), "INFO", "stats")
		// INFO inside a transaction.
		c.Do("MULTI")
		c.Do("INFO", "cluster")
		c.Do("INFO", "keyspace")
		c.Do("EXEC")
	})
}

func TestInfoErrorStats(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CONFIG", "RESETSTAT")
		c.Do("INFO", "errorstats")
		c.Error("NOSUCHCMD")
		c.Error("HELLO", "4")
		c.Error("ECHO")
		c.Error("EXEC")
		c.Do("INFO", "errorstats")
		c.DoMasked(maskInfo("total_error_replies", "rejected_connections", "expired_keys", "total_commands_processed"), "INFO", "stats")
	})
}

// TestMemoryCommand: MEMORY PURGE answers +OK on both (bench -mem relies on
// it), and MEMORY USAGE agrees on what is not a size: a missing key, and
// errors for bad SAMPLES. Sizes themselves differ by design.
func TestMemoryCommand(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MEMORY", "PURGE")
		c.Error("MEMORY", "PURGE", "now")
		c.Error("MEMORY")
		c.Error("MEMORY", "nosuch")
		c.Do("MEMORY", "USAGE", "missing")
		c.Do("MEMORY", "USAGE", "missing", "SAMPLES", "0")
		c.Do("SET", "k", "v")
		c.Error("MEMORY", "USAGE", "k", "SAMPLES")
		c.Error("MEMORY", "USAGE", "k", "SAMPLES", "x")
		c.Error("MEMORY", "USAGE", "k", "SAMPLES", "-1")
		c.Error("MEMORY", "USAGE", "k", "BOGUS", "1")
	})
}
