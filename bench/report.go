package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// report is everything one run measured, printed as markdown and
// optionally as JSON.
type report struct {
	Env        environment  `json:"environment"`
	Mode       string       `json:"mode"`
	Rows       []row        `json:"rows,omitempty"`
	Mem        []memRow     `json:"memory,omitempty"`
	Restart    []restartRow `json:"restart,omitempty"`
	Scan       []scanRow    `json:"scan,omitempty"`
	BigArg     []bigArgRow  `json:"bigarg,omitempty"`
	Fixed      []fixedRow   `json:"fixed_load,omitempty"`
	Benchmarks []string     `json:"redis_benchmark,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
}

func (rep *report) writeMarkdown(w io.Writer) {
	e := rep.Env
	fmt.Fprintf(w, "Run %s on %d cores (%s), Linux %s, %s, %s, cellserver %s.\n\n",
		e.Date, e.Cores, e.CPU, e.Kernel, e.Go, e.Redis, e.Cellserver)
	fmt.Fprintf(w, "Command: `%s`\n\n", strings.TrimSpace(e.Command))
	fmt.Fprintf(w, "Persistence: %s; %s.\n\n", e.Persistence, e.CellPersist)
	switch rep.Mode {
	case "memory":
		writeMemTable(w, rep.Mem)
	case "restart", "rdb":
		fmt.Fprintf(w, "Load average at start %s.\n\n", e.LoadAvg)
		writeRestartTable(w, rep.Restart)
	case "repl":
		fmt.Fprintf(w, "%d connections, %s measured after %s warm-up per row, best of %d alternating round(s); load average at start %s.\n\n",
			e.Conns, e.Duration, e.Warmup, e.Rounds, e.LoadAvg)
		writeThroughputTable(w, rep.Rows, "vs no replica")
		writeReplicaCostTable(w, rep.Rows)
		writeRestartTable(w, rep.Restart)
	case "scan":
		fmt.Fprintf(w, "Load average at start %s.\n\n", e.LoadAvg)
		writeScanTable(w, rep.Scan)
	case "bigarg":
		fmt.Fprintf(w, "Load average at start %s.\n\n", e.LoadAvg)
		writeBigArgTable(w, rep.BigArg)
	case "fixed-load":
		fmt.Fprintf(w, "%d connections, %s measured after %s warm-up per row; load average at start %s.\n\n",
			e.Conns, e.Duration, e.Warmup, e.LoadAvg)
		writeFixedTable(w, rep.Fixed)
	default:
		fmt.Fprintf(w, "%d connections, %s measured after %s warm-up per row, best of %d alternating round(s), random keys over %d; load average at start %s.\n"+
			"Latency is %s. CPU is the server process's utime+stime from /proc per operation;\n"+
			"others' CPU is what every other process on the machine used meanwhile, in %% of one core.\n\n",
			e.Conns, e.Duration, e.Warmup, e.Rounds, e.Keys, e.LoadAvg, e.LatencyBasis)
		last := "cellserver vs redis"
		if rep.Mode == "cluster" {
			last = "vs fewest nodes"
		}
		writeThroughputTable(w, rep.Rows, last)
		writeSyscallTable(w, rep.Rows)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(rep.Benchmarks) > 0 {
		fmt.Fprintf(w, "\nThe same loads with redis-benchmark, to cross-check (point -p at either server):\n\n")
		for _, b := range rep.Benchmarks {
			fmt.Fprintf(w, "    %s\n", b)
		}
	}
}

// writeReplicaCostTable prints what the replica of each "+1 replica" row
// spent.
func writeReplicaCostTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "The replica's CPU per operation sent to its master (its process's utime+stime from before the warm-up until it caught up with the master's offset after the run, over every operation of warm-up and run), and how long it took to catch up after the run:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | depth | server | replica CPU µs/op | catch-up s |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|")
	for _, r := range rows {
		if r.ReplicaCPUus > 0 {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %.2f |\n", r.Workload, r.Depth, r.Server, num2(r.ReplicaCPUus), r.CatchUp)
		}
	}
	fmt.Fprintln(w)
}

// writeThroughputTable prints rows; last names the ratio column.
func writeThroughputTable(w io.Writer, rows []row, last string) {
	fmt.Fprintf(w, "| workload | depth | server | ops/s | p50 µs | p99 µs | p99.9 µs | server CPU µs/op | driver CPU µs/op | RSS MiB | others' CPU %% | %s |\n", last)
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var errs []string
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %d | %s | %s | | | | | | | | |\n", r.Workload, r.Depth, r.Server, r.Skipped)
			continue
		}
		ratio := ""
		if r.OpsRatio > 0 {
			ratio = fmt.Sprintf("%.2fx ops/s", r.OpsRatio)
			if r.CPURatio > 0 {
				ratio += fmt.Sprintf(", %.2fx CPU/op", r.CPURatio)
			}
			if r.RatioBasis != "" {
				ratio += " vs " + r.RatioBasis
			}
			if r.Paired != nil {
				ratio += "; " + r.Paired.String()
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.1f | %.0f | %s |\n",
			r.Workload, r.Depth, r.Server, thousands(r.OpsPerSec),
			num(r.P50us), num(r.P99us), num(r.P999us), num2(r.ServerCPUus), num2(r.DriverCPUus),
			float64(r.RSSBytes)/(1<<20), r.OtherCPU, ratio)
		if r.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s depth %d on %s: %d error replies, first: -%s",
				r.Workload, r.Depth, r.Server, r.Errors, oneLine(r.FirstError)))
		}
	}
	fmt.Fprintln(w)
	for _, e := range errs {
		fmt.Fprintf(w, "- %s\n", e)
	}
	var profiled bool
	for _, r := range rows {
		if r.ProfileSummary == "" {
			continue
		}
		if !profiled {
			fmt.Fprintf(w, "\nWhere cellserver's CPU time goes (perf, self time; full reports in %s):\n\n", filepathDir(r.Profile))
			profiled = true
		}
		fmt.Fprintf(w, "- %s\n", r.ProfileSummary)
	}
}

func filepathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// thousands formats a rate as an integer with thin separators: 123,456.
func thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// num prints a latency with about three significant digits.
func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func num2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// benchmarkLines returns the redis-benchmark commands for w at each depth.
func benchmarkLines(w *workload, o *options, keys int, sha string) []string {
	var out []string
	if w.benchmark == "" {
		return []string{fmt.Sprintf("# %s: %s", w.name, w.benchNote)}
	}
	args := strings.NewReplacer("{keys}", strconv.Itoa(keys), "{sha}", sha).Replace(w.benchmark)
	if w.benchNote != "" {
		out = append(out, fmt.Sprintf("# %s: %s", w.name, w.benchNote))
	}
	for _, d := range o.depths {
		out = append(out, fmt.Sprintf("redis-benchmark -h 127.0.0.1 -p <port> -c %d -P %d -n 1000000 %s", o.conns, d, args))
	}
	return out
}
