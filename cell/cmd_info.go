package cell

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cellserver/cellserver/persist"
)

// INFO [section ...], with Redis 7.0.15's sections, field names and order.
// Fields about machinery we do not have (forks, replication, the
// allocator's internals) carry the values an idle Redis without them shows.
// INFO locks every shard (flagAllDBs) to count keys and read the expiry and
// change counters; it is rare enough for that to be cheap.

func init() {
	register(&Command{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale | flagAllDBs, Handler: info,
		ACL:  ACLDangerous,
		Tips: []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
		Doc:  &CommandDoc{"Get information and statistics about the server", "1.0.0", "server", "O(1)"}})
}

// infoSections is the order sections are printed in, whatever order they
// were asked in. def marks those of INFO without arguments; all those of
// INFO all (everything adds the module sections, of which we have none).
var infoSections = []struct {
	name     string
	def, all bool
	gen      func(s *Server, x *Ctx, b *strings.Builder)
}{
	{"Server", true, true, infoServer},
	{"Clients", true, true, infoClients},
	{"Memory", true, true, infoMemory},
	{"Persistence", true, true, infoPersistence},
	{"Stats", true, true, infoStats},
	{"Replication", true, true, infoReplication},
	{"CPU", true, true, infoCPU},
	{"Modules", true, true, func(*Server, *Ctx, *strings.Builder) {}},
	{"Commandstats", false, true, infoCommandStats},
	{"Errorstats", true, true, infoErrorStats},
	{"Latencystats", false, true, infoLatencyStats},
	{"Cluster", true, true, infoCluster},
	{"Keyspace", true, true, infoKeyspace},
	// Ours, printed only when named: Redis's sections stay as they are.
	{"Limiters", false, false, infoLimiters}, // limiter_stats.go
}

func info(x *Ctx) {
	want := map[string]bool{}
	def, all := len(x.Args) == 1, false
	for _, a := range x.Args[1:] {
		switch s := strings.ToLower(string(a)); s {
		case "default":
			def = true
		case "all", "everything":
			all = true
		default:
			want[s] = true
		}
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !(want[strings.ToLower(sec.name)] || all && sec.all || def && sec.def) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("# " + sec.name + "\r\n")
		sec.gen(x.srv, x, &b)
	}
	x.W.Verbatim(b.String())
}

func field(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteByte(':')
	b.WriteString(value)
	b.WriteString("\r\n")
}

// serverIdentity holds the random ids a Redis process picks at start.
type serverIdentity struct {
	runID, replID, buildID string
}

func (s *Server) identity() *serverIdentity {
	s.idOnce.Do(func() {
		s.ident = &serverIdentity{runID: randomHex(20), replID: randomHex(20), buildID: randomHex(8)[:15]}
	})
	return s.ident
}

func randomHex(n int) string {
	buf := make([]byte, n)
	rand.Read(buf)
	return hex.EncodeToString(buf)
}

func infoServer(s *Server, x *Ctx, b *strings.Builder) {
	id := s.identity()
	now := time.Now()
	up := int64(now.Sub(s.start) / time.Second)
	exe, _ := os.Executable()
	hz := configParamByName("hz").value(s)
	field(b, "redis_version", s.cfg.Version)
	field(b, "redis_git_sha1", "00000000")
	field(b, "redis_git_dirty", "0")
	field(b, "redis_build_id", id.buildID)
	field(b, "redis_mode", s.redisMode())
	field(b, "os", osName())
	field(b, "arch_bits", strconv.Itoa(strconv.IntSize))
	field(b, "monotonic_clock", "POSIX clock_gettime")
	field(b, "multiplexing_api", "epoll")
	field(b, "atomicvar_api", "c11-builtin")
	field(b, "gcc_version", "0.0.0")
	field(b, "process_id", strconv.Itoa(os.Getpid()))
	field(b, "process_supervised", "no")
	field(b, "run_id", id.runID)
	field(b, "tcp_port", configParamByName("port").value(s))
	field(b, "server_time_usec", itoa(now.UnixMicro()))
	field(b, "uptime_in_seconds", itoa(up))
	field(b, "uptime_in_days", itoa(up/86400))
	field(b, "hz", hz)
	field(b, "configured_hz", hz)
	field(b, "lru_clock", itoa(now.Unix()&(1<<24-1)))
	field(b, "executable", exe)
	field(b, "config_file", s.cfg.ConfigFile)
	field(b, "io_threads_active", "0")
}

// osName is what uname says, as "Linux 6.1.0 x86_64".
func osName() string {
	rel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	name := strings.ToUpper(runtime.GOOS[:1]) + runtime.GOOS[1:]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[runtime.GOARCH]
	if arch == "" {
		arch = runtime.GOARCH
	}
	if err != nil {
		return name + " " + arch
	}
	return name + " " + strings.TrimSpace(string(rel)) + " " + arch
}

func infoClients(s *Server, x *Ctx, b *strings.Builder) {
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	field(b, "connected_clients", strconv.Itoa(n))
	field(b, "cluster_connections", "0")
	field(b, "maxclients", itoa(s.live.maxClients.Load()))
	field(b, "client_recent_max_input_buffer", "0")
	field(b, "client_recent_max_output_buffer", "0")
	blocked, timed := s.blockers.counts()
	field(b, "blocked_clients", itoa(int64(blocked)))
	field(b, "tracking_clients", "0")
	field(b, "clients_in_timeout_table", itoa(int64(timed)))
}

// memSample reads the Go runtime's memory figures cheaply (runtime/metrics
// does not stop the world, unlike ReadMemStats).
func memSample() (heap, total, released uint64) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(samples)
	get := func(i int) uint64 {
		if samples[i].Value.Kind() == metrics.KindUint64 {
			return samples[i].Value.Uint64()
		}
		return 0
	}
	return get(0), get(1), get(2)
}

// peakMemory is the highest used_memory INFO has seen.
var peakMemory atomic.Uint64

// bytesToHuman prints a size as Redis's bytesToHuman does.
func bytesToHuman(n uint64) string {
	d := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", d/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", d/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", d/(1<<30))
	case n < 1<<50:
		return fmt.Sprintf("%.2fT", d/(1<<40))
	}
	return fmt.Sprintf("%.2fP", d/(1<<50))
}

func totalSystemMemory() uint64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func infoMemory(s *Server, x *Ctx, b *strings.Builder) {
	used, total, released := memSample()
	rss := total - released
	for {
		p := peakMemory.Load()
		if used <= p || peakMemory.CompareAndSwap(p, used) {
			break
		}
	}
	peak := max(peakMemory.Load(), 1)
	const startup = 1 << 20
	overhead := uint64(startup)
	dataset := uint64(0)
	if used > overhead {
		dataset = used - overhead
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	pct := func(a, b uint64) string {
		if b == 0 {
			return "0.00%"
		}
		return fmt.Sprintf("%.2f%%", float64(a)*100/float64(b))
	}
	ratio := func(a, b uint64) string {
		if b == 0 {
			return "0.00"
		}
		return fmt.Sprintf("%.2f", float64(a)/float64(b))
	}
	maxmem, _ := strconv.ParseUint(configParamByName("maxmemory").value(s), 10, 64)
	sys := totalSystemMemory()
	field(b, "used_memory", u(used))
	field(b, "used_memory_human", bytesToHuman(used))
	field(b, "used_memory_rss", u(rss))
	field(b, "used_memory_rss_human", bytesToHuman(rss))
	field(b, "used_memory_peak", u(peak))
	field(b, "used_memory_peak_human", bytesToHuman(peak))
	field(b, "used_memory_peak_perc", pct(used, peak))
	field(b, "used_memory_overhead", u(overhead))
	field(b, "used_memory_startup", u(startup))
	field(b, "used_memory_dataset", u(dataset))
	field(b, "used_memory_dataset_perc", pct(dataset, max(used-min(used, startup), 1)))
	field(b, "allocator_allocated", u(used))
	field(b, "allocator_active", u(rss))
	field(b, "allocator_resident", u(rss))
	field(b, "total_system_memory", u(sys))
	field(b, "total_system_memory_human", bytesToHuman(sys))
	luaMem, scriptsMem := uint64(s.LuaMemory()), uint64(s.scripts.CacheBytes())
	field(b, "used_memory_lua", u(luaMem))
	field(b, "used_memory_vm_eval", u(luaMem))
	field(b, "used_memory_lua_human", bytesToHuman(luaMem))
	field(b, "used_memory_scripts_eval", u(scriptsMem))
	field(b, "number_of_cached_scripts", strconv.Itoa(s.CachedScripts()))
	field(b, "number_of_functions", "0")
	field(b, "number_of_libraries", "0")
	field(b, "used_memory_vm_functions", "33792")
	field(b, "used_memory_vm_total", u(luaMem+33792))
	field(b, "used_memory_vm_total_human", bytesToHuman(luaMem+33792))
	field(b, "used_memory_functions", "200")
	field(b, "used_memory_scripts", u(scriptsMem+200))
	field(b, "used_memory_scripts_human", bytesToHuman(scriptsMem+200))
	field(b, "maxmemory", u(maxmem))
	field(b, "maxmemory_human", bytesToHuman(maxmem))
	field(b, "maxmemory_policy", configParamByName("maxmemory-policy").value(s))
	field(b, "allocator_frag_ratio", ratio(rss, used))
	field(b, "allocator_frag_bytes", u(rss-min(rss, used)))
	field(b, "allocator_rss_ratio", "1.00")
	field(b, "allocator_rss_bytes", "0")
	field(b, "rss_overhead_ratio", "1.00")
	field(b, "rss_overhead_bytes", "0")
	field(b, "mem_fragmentation_ratio", ratio(rss, used))
	field(b, "mem_fragmentation_bytes", u(rss-min(rss, used)))
	field(b, "mem_not_counted_for_evict", "0")
	field(b, "mem_replication_backlog", "0")
	field(b, "mem_total_replication_buffers", "0")
	field(b, "mem_clients_slaves", "0")
	field(b, "mem_clients_normal", "0")
	field(b, "mem_cluster_links", "0")
	field(b, "mem_aof_buffer", "0")
	field(b, "mem_allocator", "go-"+runtime.Version())
	field(b, "active_defrag_running", "0")
	field(b, "lazyfree_pending_objects", "0")
	field(b, "lazyfreed_objects", "0")
}

// shardTotals sums the per-shard counters. The shards are locked by
// dispatch (flagAllDBs).
func (s *Server) shardTotals() (dirty, expired int64) {
	if s.loading.Load() {
		return 0, 0 // the loader fills the shards unlocked (loading.go)
	}
	for d := range s.ks.DBs() {
		c := s.ks.Counts(d, false)
		dirty += c.Dirty
		expired += c.Expired
	}
	return dirty, expired
}

// infoPersistence reports the store (persist.go) in Redis's fields: a save
// is a checkpoint (rdb_*), the effect log is the AOF and the snapshot its
// base (aof_*). Fields about forks keep their idle values: there are none
// here.
func infoPersistence(s *Server, x *Ctx, b *strings.Builder) {
	dirty, _ := s.shardTotals()
	aof, writeStatus, bgStatus := "0", "ok", "ok"
	if s.store != nil {
		aof = "1"
		if s.store.Err() != nil {
			writeStatus = "err"
		}
	}
	if s.bgsaveFailed.Load() {
		bgStatus = "err"
	}
	// The loader writes what the last load found until it ends.
	loadingFlag, loadedKeys, loadedExpired, corrupt, d := "1", int64(0), int64(0), int64(0), persist.LogDamage{}
	if !s.loading.Load() {
		loadingFlag, loadedKeys, loadedExpired, corrupt, d = "0", s.loadedKeys, s.loadedExpired, s.loadCorrupt, s.loadDamage
	}
	inProgress, current := "0", "-1"
	if s.bgsave.Load() {
		inProgress, current = "1", itoa(time.Now().Unix()-s.bgsaveStart.Load())
	}
	for _, kv := range [][2]string{
		{"loading", loadingFlag}, {"async_loading", "0"}, {"current_cow_peak", "0"},
		{"current_cow_size", "0"}, {"current_cow_size_age", "0"}, {"current_fork_perc", "0.00"},
		{"current_save_keys_processed", "0"}, {"current_save_keys_total", "0"},
		{"rdb_changes_since_last_save", itoa(max(dirty-s.dirtyAtSave.Load(), 0))}, {"rdb_bgsave_in_progress", inProgress},
		{"rdb_last_save_time", itoa(s.lastSave.Load())}, {"rdb_last_bgsave_status", bgStatus},
		{"rdb_last_bgsave_time_sec", itoa(s.bgsaveSecs.Load())}, {"rdb_current_bgsave_time_sec", current},
		{"rdb_saves", itoa(s.saves.Load())}, {"rdb_last_cow_size", "0"}, {"rdb_last_load_keys_expired", itoa(loadedExpired)},
		{"rdb_last_load_keys_loaded", itoa(loadedKeys)}, {"aof_enabled", aof}, {"aof_rewrite_in_progress", "0"},
		{"aof_rewrite_scheduled", "0"}, {"aof_last_rewrite_time_sec", itoa(s.lastRewrite.Load())},
		{"aof_current_rewrite_time_sec", "-1"}, {"aof_last_bgrewrite_status", "ok"},
		{"aof_rewrites", itoa(s.rewrites.Load())}, {"aof_rewrites_consecutive_failures", "0"},
		{"aof_last_write_status", writeStatus}, {"aof_last_cow_size", "0"},
		{"module_fork_in_progress", "0"}, {"module_fork_last_cow_size", "0"},
	} {
		field(b, kv[0], kv[1])
	}
	if s.store != nil {
		// Redis's AOF is its base (the rewrite) plus what was appended
		// since; here the snapshot plus the log since its checkpoint.
		base := int64(s.store.SnapshotSize())
		field(b, "aof_current_size", itoa(base+s.store.LogSize()))
		field(b, "aof_base_size", itoa(base))
		field(b, "aof_pending_rewrite", "0")
		field(b, "aof_buffer_length", "0")
		field(b, "aof_pending_bio_fsync", "0")
		field(b, "aof_delayed_fsync", "0")
		// What the last start dropped as damaged (persist_damage.go).
		field(b, "aof_last_load_corrupt_skipped", itoa(corrupt))
		field(b, "aof_last_load_damaged_stretches", itoa(int64(d.Stretches)))
		field(b, "aof_last_load_damaged_records", itoa(d.Records))
		field(b, "aof_last_load_damaged_bytes", itoa(d.Bytes))
		field(b, "aof_last_load_damaged_keys", itoa(d.KeyCount))
	}
	infoLoading(s, b) // loading.go
}

// totalCommands is total_commands_processed since the last RESETSTAT.
func (s *Server) totalCommands() int64 {
	n := s.stats.closedCommands.Load()
	for _, c := range s.clientsByID() {
		n += c.ncmds.Load()
	}
	return n - s.stats.commandsBase.Load()
}

func infoStats(s *Server, x *Ctx, b *strings.Builder) {
	_, expired := s.shardTotals()
	zero := []string{}
	f := func(name, v string) { field(b, name, v) }
	f("total_connections_received", itoa(s.stats.connections.Load()))
	f("total_commands_processed", itoa(s.totalCommands()))
	cs := s.connStats() // stats_sample.go
	inst := &s.stats.inst
	f("instantaneous_ops_per_sec", itoa(int64(loadRate(&inst.ops))))
	f("total_net_input_bytes", itoa(cs.netIn))
	f("total_net_output_bytes", itoa(cs.netOut))
	f("total_net_repl_input_bytes", "0")
	f("total_net_repl_output_bytes", "0")
	f("instantaneous_input_kbps", strconv.FormatFloat(loadRate(&inst.inKbps), 'f', 2, 64))
	f("instantaneous_output_kbps", strconv.FormatFloat(loadRate(&inst.outKbps), 'f', 2, 64))
	f("instantaneous_input_repl_kbps", "0.00")
	f("instantaneous_output_repl_kbps", "0.00")
	f("rejected_connections", itoa(s.stats.rejectedConns.Load()))
	f("sync_full", itoa(s.repl.syncFull.Load())) // repl_master.go
	f("sync_partial_ok", itoa(s.repl.partialOK.Load()))
	f("sync_partial_err", itoa(s.repl.partialErr.Load()))
	f("expired_keys", itoa(expired-s.stats.expiredBase.Load()))
	f("expired_stale_perc", "0.00")
	f("expired_time_cap_reached_count", "0")
	f("expire_cycle_cpu_milliseconds", "0")
	f("evicted_keys", itoa(s.ops.mem.evicted.Load())) // maxmemory.go
	f("evicted_clients", "0")
	f("total_eviction_exceeded_time", "0")
	f("current_eviction_exceeded_time", "0")
	f("keyspace_hits", itoa(cs.hits))
	f("keyspace_misses", itoa(cs.misses))
	f("pubsub_channels", itoa(s.pubsub.channels.Load())) // pubsub.go
	f("pubsub_patterns", itoa(s.pubsub.patterns.Load()))
	f("pubsubshard_channels", itoa(s.spubsub.channels.Load()))
	zero = append(zero,
		"latest_fork_usec", "total_forks", "migrate_cached_sockets", "slave_expires_tracked_keys",
		"active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits", "active_defrag_key_misses",
		"total_active_defrag_time", "current_active_defrag_time", "tracking_total_keys",
		"tracking_total_items", "tracking_total_prefixes", "unexpected_error_replies")
	for _, n := range zero {
		f(n, "0")
	}
	f("total_error_replies", itoa(s.stats.errorReplies.Load()))
	f("dump_payload_sanitizations", "0")
	f("total_reads_processed", itoa(s.totalCommands()))
	f("total_writes_processed", itoa(s.totalCommands()))
	for _, n := range []string{"io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks", "reply_buffer_expands"} {
		f(n, "0")
	}
}

// infoCPU reports getrusage. Go runs on many threads, so the "main thread"
// figures are the process's.
func infoCPU(s *Server, x *Ctx, b *strings.Builder) {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) string { return fmt.Sprintf("%d.%06d", t.Sec, t.Usec) }
	field(b, "used_cpu_sys", tv(self.Stime))
	field(b, "used_cpu_user", tv(self.Utime))
	field(b, "used_cpu_sys_children", tv(children.Stime))
	field(b, "used_cpu_user_children", tv(children.Utime))
	field(b, "used_cpu_sys_main_thread", tv(self.Stime))
	field(b, "used_cpu_user_main_thread", tv(self.Utime))
}

// infoCommandStats lists every command and subcommand that was called,
// rejected or failed, sorted by name (Redis's order is its hash table's).
func infoCommandStats(s *Server, x *Ctx, b *strings.Builder) {
	for _, c := range allCommands() {
		cs := s.statsOf(c)
		calls, usec := cs.calls.Load(), cs.usec.Load()
		rej, failed := cs.rejected.Load(), cs.failed.Load()
		if calls == 0 && rej == 0 && failed == 0 {
			continue
		}
		per := 0.0
		if calls > 0 {
			per = float64(usec) / float64(calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			c.Name, calls, usec, per, rej, failed)
	}
}

func infoErrorStats(s *Server, x *Ctx, b *strings.Builder) {
	s.stats.mu.Lock()
	codes := make([]string, 0, len(s.stats.errors))
	for c := range s.stats.errors {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		field(b, "errorstat_"+c, "count="+itoa(s.stats.errors[c]))
	}
	s.stats.mu.Unlock()
}

// infoKeyspace lists the databases that hold keys. Like Redis, it counts
// keys past their expiry that nobody has reaped yet; avg_ttl is the
// expiry cycle's running estimate, in ms, as Redis's.
func infoKeyspace(s *Server, x *Ctx, b *strings.Builder) {
	if s.loading.Load() {
		return // the loader fills the shards unlocked (loading.go)
	}
	for d := range s.ks.DBs() {
		c := s.ks.Counts(d, false)
		keys, expires := c.Keys, c.Expires
		if keys > 0 {
			field(b, "db"+strconv.Itoa(d), "keys="+strconv.Itoa(keys)+",expires="+strconv.Itoa(expires)+",avg_ttl="+itoa(c.AvgTTL))
		}
	}
}

// resetStats is CONFIG RESETSTAT. The shards are locked by dispatch.
func (s *Server) resetStats() {
	st := &s.stats
	st.connections.Store(0)
	st.rejectedConns.Store(0)
	st.errorReplies.Store(0)
	st.mu.Lock()
	st.errors = nil
	st.mu.Unlock()
	st.commandsBase.Store(0)
	st.commandsBase.Store(s.totalCommands())
	_, expired := s.shardTotals()
	st.expiredBase.Store(expired)
	s.resetConnStats()
	for i := range s.cmdStats {
		s.cmdStats[i].reset()
	}
}

func (cs *cmdStats) reset() {
	cs.latency.Store(nil)
	cs.calls.Store(0)
	cs.usec.Store(0)
	cs.rejected.Store(0)
	cs.failed.Store(0)
}
