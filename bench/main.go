package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the driver's flags.
type options struct {
	conns      int
	only       map[serverKind]bool // -servers; empty: all
	rounds     int
	depths     []int
	keys       int
	duration   time.Duration
	warmup     time.Duration
	workloads  []*workload
	quick      bool
	persist    persistence
	module     string
	redisBin   string
	cellBin    string
	json       bool   // JSON instead of markdown on stdout
	jsonPath   string // also write JSON to this file
	mem        bool
	memKeys    int
	memMaxElem int
	memSettle  time.Duration // pause after loading, before reading memory
	memOnly    string        // memory mode: only the shapes whose name contains this
	profileDir string
	// clusterNodes are the cluster sizes of cluster mode; empty: off.
	clusterNodes []int
	// -restart: restart time and disk use (restart.go)
	restart          bool
	restartKeys      int
	restartWindows   int
	restartWindowLen int
	// -rdb: loading redis-server's RDB file (rdbload.go)
	rdb bool
	// cellBase is a second cellserver binary whose durable row
	// alternates with -cellserver's (A/B).
	cellBase string
	// repl is replication mode (replication.go).
	repl bool
	// pin, in replication mode: master and driver on CPU 0, the replica
	// on CPU 1 (bench/pin.go).
	pin bool
	// -scan: SCAN and KEYS over a big keyspace (scan.go)
	scan        bool
	scanKeys    int
	scanCount   int
	scanGetters int
	// -bigarg: memory for a huge argument (bigarg.go)
	bigArg   bool
	bigArgMB int
	// -fixed-load: open-loop latency at these percentages of redis's
	// maximum (fixedload.go); empty: off.
	fixedLoad []int
	// -syscalls: count system calls and context switches per operation
	// with perf stat (syscalls.go).
	syscalls bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{memSettle: time.Second}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.conns, "conns", 50, "client connections per row")
	fs.IntVar(&o.rounds, "rounds", 1, "runs of each row, alternating the servers; the best is reported (fixed-load mode: the median, with the range)")
	depths := fs.String("depths", "1,16", "pipeline depths (operations per round trip), comma-separated")
	fs.IntVar(&o.keys, "keys", 100000, "key space of the random-key workloads")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "measured time per row")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each row")
	wl := fs.String("workloads", "all", "workloads to run, comma-separated: all or "+workloadNames())
	fs.BoolVar(&o.quick, "quick", false, "smoke run: 1s rows, 200ms warm-up, 10k keys")
	persist := fs.String("persist", "off", "persistence of both servers: off, or appendfsync always|everysec|no")
	fs.StringVar(&o.module, "redis-module", "", "path of redis-cell's .so: also run a redis-server with it loaded")
	fs.StringVar(&o.redisBin, "redis-server", "/usr/bin/redis-server", "redis-server binary (7.0)")
	fs.StringVar(&o.cellBin, "cellserver", "", "prebuilt cellserver binary (default: go build ./cmd/cellserver)")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON instead of markdown")
	fs.StringVar(&o.jsonPath, "json-file", "", "also write the results as JSON to this file")
	fs.BoolVar(&o.mem, "mem", false, "memory mode: bytes per key and per element instead of throughput")
	fs.IntVar(&o.memKeys, "mem-keys", 100000, "memory mode: throttle keys and windows per size")
	fs.StringVar(&o.memOnly, "mem-only", "", "memory mode: only the shapes whose name contains this text (\"set of\")")
	fs.IntVar(&o.memMaxElem, "mem-max-elements", 2000000, "memory mode: cap on window elements per size (fewer windows for 1000-entry ones)")
	fs.BoolVar(&o.restart, "restart", false, "restart mode: restart time and disk use with -persist (default everysec here) instead of throughput")
	fs.IntVar(&o.restartKeys, "restart-keys", 1000000, "restart mode: throttle keys")
	fs.IntVar(&o.restartWindows, "restart-windows", 100000, "restart mode: W1 windows")
	fs.IntVar(&o.restartWindowLen, "restart-window", 10, "restart mode: entries per W1 window")
	fs.BoolVar(&o.rdb, "rdb", false, "rdb mode: time to serve a Redis RDB file of restart mode's data (-restart-keys, -restart-windows), redis-server against cellserver")
	fs.StringVar(&o.cellBase, "cellserver-base", "", "rdb mode: also time this cellserver binary's durable load, beside -cellserver's in each of the -rounds (A/B on one file)")
	fs.BoolVar(&o.repl, "repl", false, "replication mode: the throughput and W1 rows with one replica attached against none, and a full resync of restart mode's data (-restart-keys, -restart-windows), redis-server against cellserver")
	fs.BoolVar(&o.pin, "pin", false, "replication mode: pin the master and the load driver to CPU 0 and the replica to CPU 1 with taskset (the rows without a replica pinned alike), as if the replica had a machine of its own")
	fs.BoolVar(&o.scan, "scan", false, "scan mode: a full SCAN and KEYS over -scan-keys keys, and other clients' GET latency meanwhile")
	fs.IntVar(&o.scanKeys, "scan-keys", 1000000, "scan mode: keys loaded")
	fs.IntVar(&o.scanCount, "scan-count", 1000, "scan mode: COUNT of the full SCAN")
	fs.IntVar(&o.scanGetters, "scan-getters", 4, "scan mode: connections sending GET during the SCAN and KEYS")
	fs.BoolVar(&o.bigArg, "bigarg", false, "big-argument mode: RSS for one SET of -bigarg-mb MiB and after three unfinished uploads of it close")
	fs.IntVar(&o.bigArgMB, "bigarg-mb", 500, "big-argument mode: the value's size in MiB (at most proto-max-bulk-len, 512)")
	servers := fs.String("servers", "all", "servers to run, comma-separated: all or redis,redis+module,cellserver,cellserver-off (cellserver with persistence off, beside -persist's: what persistence costs)")
	fs.BoolVar(&o.syscalls, "syscalls", false, "count each server's system calls and context switches per operation with perf stat (needs perf and access to its tracepoints)")
	fs.StringVar(&o.profileDir, "profile", "", "record cellserver with perf during its rows, reports in this directory (skews its numbers)")
	fixedLoad := fs.String("fixed-load", "", "fixed-load mode: open-loop latency at these loads, in percent of redis's maximum at depth 1, e.g. 25,50,75 (default workloads "+fixedWorkloads+")")
	clusterNodes := fs.String("cluster-nodes", "", "cluster mode: cellserver clusters of these sizes, e.g. 1,2,3, each key sent to its slot's node (default workloads throttle,w1)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./bench [flags]\n\n"+
			"Builds cellserver, starts it and redis-server on free 127.0.0.1 ports, drives the\n"+
			"same load at each in turn and prints a markdown table. See bench/doc.go.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["duration"] {
			o.duration = time.Second
		}
		if !set["warmup"] {
			o.warmup = 200 * time.Millisecond
		}
		if !set["keys"] {
			o.keys = 10000
		}
		if !set["mem-keys"] {
			o.memKeys = 10000
		}
		if !set["mem-max-elements"] {
			o.memMaxElem = 200000
		}
		if !set["restart-keys"] {
			o.restartKeys = 20000
		}
		if !set["restart-windows"] {
			o.restartWindows = 2000
		}
		if !set["scan-keys"] {
			o.scanKeys = 20000
		}
		if !set["bigarg-mb"] {
			o.bigArgMB = 32
		}
	}
	for d := range strings.SplitSeq(*depths, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n < 1 || n > 10000 {
			return nil, fmt.Errorf("-depths: %q is not a depth 1..10000", d)
		}
		o.depths = append(o.depths, n)
	}
	var err error
	if o.clusterNodes, err = parseClusterNodes(*clusterNodes); err != nil {
		return nil, err
	}
	if (len(o.clusterNodes) > 0 || o.repl) && *wl == "all" {
		*wl = "throttle,w1"
	}
	if o.fixedLoad, err = parsePercents(*fixedLoad); err != nil {
		return nil, err
	}
	if len(o.fixedLoad) > 0 && *wl == "all" {
		*wl = fixedWorkloads
	}
	if o.workloads, err = selectWorkloads(*wl); err != nil {
		return nil, err
	}
	for _, w := range o.workloads {
		if w.lib != nil && w.script == "" {
			if w.script, err = w.lib.body(); err != nil {
				return nil, fmt.Errorf("workload %s: %v", w.name, err)
			}
		}
		if why := routable(w); why != "" && len(o.clusterNodes) > 0 {
			return nil, fmt.Errorf("-cluster-nodes: workload %s cannot be routed by slot: %s", w.name, why)
		}
	}
	if *servers != "all" && *servers != "" {
		o.only = map[serverKind]bool{}
		for name := range strings.SplitSeq(*servers, ",") {
			k := serverKind(strings.TrimSpace(name))
			if k != kindRedis && k != kindModule && k != kindCell && k != kindCellOff {
				return nil, fmt.Errorf("-servers: unknown server %q", name)
			}
			o.only[k] = true
		}
	}
	o.persist = persistence(*persist)
	if o.restart && !setFlags(fs)["persist"] {
		o.persist = "everysec"
	}
	modes := 0
	for _, on := range []bool{o.mem, o.restart, o.rdb, o.repl, o.scan, o.bigArg, len(o.clusterNodes) > 0, len(o.fixedLoad) > 0} {
		if on {
			modes++
		}
	}
	switch {
	case modes > 1:
		return nil, fmt.Errorf("-mem, -restart, -rdb, -repl, -scan, -bigarg, -cluster-nodes and -fixed-load are separate modes: give one")
	case !o.persist.valid():
		return nil, fmt.Errorf("-persist %q: want off, always, everysec or no", *persist)
	case o.pin && !o.repl:
		return nil, fmt.Errorf("-pin goes with -repl")
	case o.rounds < 1:
		return nil, fmt.Errorf("-rounds must be at least 1")
	case o.conns < 1 || o.conns > 5000:
		return nil, fmt.Errorf("-conns %d: want 1..5000", o.conns)
	case o.keys < 1:
		return nil, fmt.Errorf("-keys must be at least 1")
	case o.duration <= 0 || o.warmup < 0:
		return nil, fmt.Errorf("-duration must be positive and -warmup not negative")
	case o.memKeys < 1 || o.memMaxElem < 10:
		return nil, fmt.Errorf("-mem-keys and -mem-max-elements must be positive")
	case o.bigArgMB < 2 || o.bigArgMB > 512:
		return nil, fmt.Errorf("-bigarg-mb %d: want 2..512", o.bigArgMB)
	case o.scanKeys < 1 || o.scanCount < 1 || o.scanGetters < 1:
		return nil, fmt.Errorf("-scan-keys, -scan-count and -scan-getters must be positive")
	case o.restartKeys < 0 || o.restartWindows < 0 || o.restartWindowLen < 1:
		return nil, fmt.Errorf("-restart-keys and -restart-windows must not be negative, -restart-window positive")
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseOptions(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	tmp, err := os.MkdirTemp("", "cellserver-bench-")
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	// Every exit path stops our servers: the normal one below, and an
	// interrupt, which stops them by pid before exiting.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(stderr, "\nbench: %v: stopping the servers we started\n", sig)
		stopAll()
		os.RemoveAll(tmp)
		os.Exit(130)
	}()
	defer os.RemoveAll(tmp)
	defer stopAll()

	b, err := newBench(o, tmp, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	var rep report
	switch {
	case o.mem:
		rep, err = b.runMem()
	case len(o.clusterNodes) > 0:
		rep, err = b.runCluster()
	case o.restart:
		rep, err = b.runRestart()
	case o.rdb:
		rep, err = b.runRDBLoad()
	case o.repl:
		rep, err = b.runRepl()
	case o.scan:
		rep, err = b.runScan()
	case o.bigArg:
		rep, err = b.runBigArg()
	case len(o.fixedLoad) > 0:
		rep, err = b.runFixedLoad()
	default:
		rep, err = b.runThroughput()
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	if o.json {
		err = writeJSON(stdout, rep)
	} else {
		rep.writeMarkdown(stdout)
	}
	if err == nil && o.jsonPath != "" {
		var f *os.File
		if f, err = os.Create(o.jsonPath); err == nil {
			err = errors.Join(writeJSON(f, rep), f.Close())
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	return 0
}

func writeJSON(w io.Writer, rep report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// bench holds a run's servers and settings.
type bench struct {
	o        *options
	tmp      string
	log      io.Writer
	cellBin  string
	cellFlag cellFlags
	env      environment
}

// environment describes the run for the report's header.
type environment struct {
	Date         string `json:"date"`
	Cores        int    `json:"cores"`
	CPU          string `json:"cpu"`
	Kernel       string `json:"kernel"`
	Go           string `json:"go"`
	Redis        string `json:"redis"`
	Cellserver   string `json:"cellserver"`
	Command      string `json:"command"`
	Persistence  string `json:"persistence"`
	CellPersist  string `json:"cellserver_persistence"`
	Conns        int    `json:"conns"`
	Keys         int    `json:"keys"`
	Duration     string `json:"duration"`
	Warmup       string `json:"warmup"`
	Rounds       int    `json:"rounds"`
	LoadAvg      string `json:"loadavg_at_start"`
	LatencyBasis string `json:"latency_basis"`
}

func newBench(o *options, tmp string, log io.Writer) (*bench, error) {
	b := &bench{o: o, tmp: tmp, log: log}
	if _, err := os.Stat(o.redisBin); err != nil {
		return nil, fmt.Errorf("redis-server: %v (apt-get install redis-server)", err)
	}
	if o.cellBin != "" {
		b.cellBin = o.cellBin
	} else {
		fmt.Fprintln(log, "bench: building ./cmd/cellserver")
		bin, err := buildCellserver(tmp)
		if err != nil {
			return nil, err
		}
		b.cellBin = bin
	}
	b.cellFlag = probeCellFlags(b.cellBin)
	_, note := cellArgs(0, tmp, o.persist, b.cellFlag)
	if o.only[kindCellOff] {
		_, off := cellArgs(0, tmp, "off", b.cellFlag)
		note += "; cellserver-off: " + strings.TrimPrefix(off, "cellserver ")
	}
	b.env = environment{
		Date:         time.Now().UTC().Format("2006-01-02 15:04 MST"),
		Cores:        runtime.NumCPU(),
		CPU:          cpuModel(),
		Kernel:       strings.TrimSpace(readFile("/proc/sys/kernel/osrelease")),
		Go:           runtime.Version(),
		Redis:        firstLine(exec.Command(o.redisBin, "--version").Output()),
		Cellserver:   gitDescribe(),
		Command:      "go run ./bench " + strings.Join(os.Args[1:], " "),
		Persistence:  redisPersistNote(o.persist),
		CellPersist:  note,
		Conns:        o.conns,
		Keys:         o.keys,
		Duration:     o.duration.String(),
		Warmup:       o.warmup.String(),
		Rounds:       o.rounds,
		LoadAvg:      strings.Join(strings.Fields(readFile("/proc/loadavg"))[:3:3], " "),
		LatencyBasis: "per pipeline round trip (one batch of <depth> operations), not divided by depth",
	}
	return b, nil
}

// kinds are the servers of this run, in the order each row drives them.
func (b *bench) kinds() []serverKind {
	var out []serverKind
	for _, k := range []serverKind{kindRedis, kindModule, kindCell, kindCellOff} {
		if k == kindModule && b.o.module == "" || k == kindCellOff && !b.o.only[k] {
			continue
		}
		if b.o.only == nil || b.o.only[k] {
			out = append(out, k)
		}
	}
	return out
}

// start starts one server of the given kind.
func (b *bench) start(kind serverKind) (*server, error) {
	switch kind {
	case kindCell, kindCellOff:
		p := b.o.persist
		if kind == kindCellOff {
			p = "off"
		}
		return startServer(kind, b.cellBin, b.tmp, func(port int, dir string) []string {
			args, _ := cellArgs(port, dir, p, b.cellFlag)
			return args
		})
	case kindModule:
		return startServer(kind, b.o.redisBin, b.tmp, func(port int, dir string) []string {
			return redisArgs(port, dir, b.o.persist, b.o.module)
		})
	default:
		return startServer(kind, b.o.redisBin, b.tmp, func(port int, dir string) []string {
			return redisArgs(port, dir, b.o.persist, "")
		})
	}
}

func redisPersistNote(p persistence) string {
	if p == "off" {
		return "redis --save '' --appendonly no"
	}
	return "redis --save '' --appendonly yes --appendfsync " + string(p)
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func firstLine(out []byte, err error) string {
	if err != nil {
		return "unknown"
	}
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s)
}

func cpuModel() string {
	for line := range strings.SplitSeq(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// gitDescribe names the cellserver commit measured, "+dirty" when the tree
// has changes.
func gitDescribe() string {
	root, err := moduleRoot()
	if err != nil {
		return "unknown"
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = root
	return firstLine(cmd.Output())
}

// profileArgs is the perf command that samples pid for d.
func profileArgs(pid int, out string, d time.Duration) []string {
	return []string{"record", "-F", "999", "-g", "-p", strconv.Itoa(pid), "-o", out, "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 2, 64)}
}

// profileName is a file name for one row's profile.
func profileName(dir, workload string, depth int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-P%d", workload, depth))
}

// setFlags names the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
