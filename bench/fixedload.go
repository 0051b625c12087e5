package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Fixed-load mode (-fixed-load 25,50,75): latency at a given offered load
// rather than at saturation. For each workload (default throttle, set and
// w1) it first measures the reference server's maximum with the closed
// loop at depth 1 (-conns connections, -duration), then offers each given
// percentage of that rate to every server in turn with the open loop
// (openloop.go) and reports p50, p99 and p99.9 side by side.
//
// One open-loop run's percentiles swing by a third from one run to the
// next on a shared machine, so each load runs -rounds times, the servers
// alternating (roundOrder), and a row reports the median of each figure
// over its rounds, with the range of the percentiles beside it. The
// reference's maximum is measured once per workload: every round offers
// the same rate.
//
// The reference is redis for plain workloads. For CL.THROTTLE it is
// redis+module when -redis-module is given; without the module it is
// plain redis running the Lua GCRA (gcra-lua), which is what users of
// Redis without the module run for the same decision, and its row says so.

// fixedRow is one line of the fixed-load table.
type fixedRow struct {
	Workload string `json:"workload"`
	Server   string `json:"server"`
	// Ran is the workload the server ran, when not Workload (redis runs
	// gcra-lua for throttle without the module).
	Ran     string `json:"ran,omitempty"`
	LoadPct int    `json:"load_pct"`
	// RefMax is the reference's closed-loop maximum at depth 1 (ops/s),
	// and Rate the offered load, LoadPct of it.
	RefMax  float64 `json:"reference_max_ops_per_sec"`
	Rate    float64 `json:"offered_ops_per_sec"`
	Skipped string  `json:"skipped,omitempty"`
	// Rounds is how many runs the figures below are medians of (Ops is
	// their total); the Round* lists are each run's percentiles, in the
	// order they ran.
	Rounds      int       `json:"rounds"`
	RoundP50us  []float64 `json:"round_p50_us,omitempty"`
	RoundP99us  []float64 `json:"round_p99_us,omitempty"`
	RoundP999us []float64 `json:"round_p999_us,omitempty"`
	Ops         uint64    `json:"ops"`
	// Latency from each request's scheduled send to its last reply, µs.
	P50us  float64 `json:"p50_us"`
	P99us  float64 `json:"p99_us"`
	P999us float64 `json:"p999_us"`
	MaxUs  float64 `json:"max_us"`
	// LagP99us is how late the driver wrote requests (p99): near the
	// latency, the driver set the numbers.
	LagP99us    float64 `json:"send_lag_p99_us"`
	ServerCPUus float64 `json:"server_cpu_us_per_op"`
	OtherCPU    float64 `json:"other_cpu_pct_of_core"`
	Errors      uint64  `json:"error_replies"`
	FirstError  string  `json:"first_error,omitempty"`
	// P99Ratio is cellserver's p99 over the reference's at the same load.
	P99Ratio float64 `json:"p99_ratio,omitempty"`
}

// fixedWorkloads is the mode's default -workloads.
const fixedWorkloads = "throttle,set,w1"

// runFixedLoad runs fixed-load mode.
func (b *bench) runFixedLoad() (report, error) {
	rep := report{Env: b.env, Mode: "fixed-load"}
	servers := map[serverKind]*server{}
	for _, k := range b.kinds() {
		s, err := b.start(k)
		if err != nil {
			return rep, err
		}
		servers[k] = s
		fmt.Fprintf(b.log, "bench: %s pid %d on %s\n", k, s.Pid(), s.addr)
	}
	for _, w := range b.o.workloads {
		// Each server's part: which workload it runs and why it does not.
		type part struct {
			kind   serverKind
			w      *workload
			gen    generator
			reason string
		}
		var parts []part
		for _, k := range b.kinds() {
			rw := w
			switch {
			case w.module && k == kindRedis && b.o.module != "":
				continue // redis+module is the reference
			case w.module && k == kindRedis:
				rw = workloadByName(luaCounterpart[w.name])
			case !w.module && k == kindModule:
				continue // the same server as redis for plain commands
			}
			if rw == nil {
				continue
			}
			keys, sha := b.workloadKeys(rw)
			reason, err := b.prepare(servers[k], rw, keys)
			if err != nil {
				reason = "failed: " + oneLine(err.Error())
			}
			parts = append(parts, part{kind: k, w: rw, gen: rw.newGen(keys, sha), reason: reason})
		}
		if len(parts) == 0 {
			continue
		}
		ref := parts[0] // redis or redis+module: kinds() lists them first
		var refMax float64
		if ref.kind == kindCell || ref.kind == kindCellOff {
			ref.reason = "no redis in this run (-servers)"
		}
		if ref.reason == "" {
			fmt.Fprintf(b.log, "bench: %s: %s's maximum at depth 1\n", w.name, ref.kind)
			var r row
			if err := b.measure(servers[ref.kind], ref.w, ref.gen, 1, &r); err != nil {
				ref.reason = "failed: " + oneLine(err.Error())
			}
			refMax = r.OpsPerSec
		}
		for _, pct := range b.o.fixedLoad {
			rate := refMax * float64(pct) / 100
			rows := make([]fixedRow, len(parts))
			for i, p := range parts {
				fr := fixedRow{Workload: w.name, Server: string(p.kind), LoadPct: pct, RefMax: refMax, Rate: rate, Skipped: p.reason}
				if p.w != w {
					fr.Ran = p.w.name
				}
				if fr.Skipped == "" && ref.reason != "" {
					fr.Skipped = "no reference rate: " + ref.kind.String() + " " + ref.reason
				}
				rows[i] = fr
			}
			fixedRounds(rows, b.o.rounds, func(i, round int) (openMeasurement, error) {
				p := parts[i]
				fmt.Fprintf(b.log, "bench: %s at %d%% (%.0f ops/s) on %s (round %d/%d)\n", w.name, pct, rate, p.kind, round+1, b.o.rounds)
				return runOpenLoad(servers[p.kind].addr, servers[p.kind].Pid(), p.w, p.gen,
					openConfig{conns: b.o.conns, rate: rate, warmup: b.o.warmup, duration: b.o.duration})
			})
			if len(rows) > 1 && rows[0].Skipped == "" && rows[0].P99us > 0 {
				for i := 1; i < len(rows); i++ {
					if rows[i].Server == string(kindCell) && rows[i].Skipped == "" {
						rows[i].P99Ratio = rows[i].P99us / rows[0].P99us
					}
				}
			}
			rep.Fixed = append(rep.Fixed, rows...)
		}
	}
	return rep, nil
}

func (k serverKind) String() string { return string(k) }

// workloadByName is the workload of that name, or nil.
func workloadByName(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// record fills r from an open-loop measurement.
func (r *fixedRow) record(m openMeasurement) {
	tick := 1e6 / float64(clockTicks())
	r.Ops = m.ops
	r.P50us = float64(m.hist.percentile(0.50)) / 1e3
	r.P99us = float64(m.hist.percentile(0.99)) / 1e3
	r.P999us = float64(m.hist.percentile(0.999)) / 1e3
	r.MaxUs = float64(m.hist.max) / 1e3
	r.LagP99us = float64(m.lag.percentile(0.99)) / 1e3
	if m.ops > 0 {
		r.ServerCPUus = float64(m.serverTicks) * tick / float64(m.ops)
	}
	if s := m.elapsed.Seconds(); s > 0 {
		r.OtherCPU = 100 * float64(m.otherTicks) / float64(clockTicks()) / s
	}
	r.Errors = m.errors
	r.FirstError = m.firstErr
}

// fixedRounds runs each row not already skipped n times, the rows
// alternating (roundOrder), and sets its figures from its rounds
// (combine). run measures row i in round (from 0). A row whose run fails
// is skipped with the error, and runs no more rounds.
func fixedRounds(rows []fixedRow, n int, run func(i, round int) (openMeasurement, error)) {
	runs := make([][]fixedRow, len(rows))
	for round := range n {
		for _, i := range roundOrder(len(rows), round) {
			if rows[i].Skipped != "" {
				continue
			}
			m, err := run(i, round)
			if err != nil {
				rows[i].Skipped = fmt.Sprintf("failed in round %d: %s", round+1, oneLine(err.Error()))
				continue
			}
			var one fixedRow
			one.record(m)
			runs[i] = append(runs[i], one)
		}
	}
	for i := range rows {
		if rows[i].Skipped == "" {
			rows[i].combine(runs[i])
		}
	}
}

// combine sets r's figures from its rounds (each filled by record): the
// median of each, the total of the operations and errors, and each
// round's percentiles.
func (r *fixedRow) combine(rounds []fixedRow) {
	r.Rounds = len(rounds)
	if len(rounds) == 0 {
		return
	}
	med := func(f func(*fixedRow) float64) float64 {
		xs := make([]float64, len(rounds))
		for i := range rounds {
			xs[i] = f(&rounds[i])
		}
		return median(xs)
	}
	r.RoundP50us, r.RoundP99us, r.RoundP999us = nil, nil, nil
	r.Ops, r.Errors, r.FirstError = 0, 0, ""
	for i := range rounds {
		q := &rounds[i]
		r.RoundP50us = append(r.RoundP50us, q.P50us)
		r.RoundP99us = append(r.RoundP99us, q.P99us)
		r.RoundP999us = append(r.RoundP999us, q.P999us)
		r.Ops += q.Ops
		r.Errors += q.Errors
		if r.FirstError == "" {
			r.FirstError = q.FirstError
		}
	}
	r.P50us = med(func(q *fixedRow) float64 { return q.P50us })
	r.P99us = med(func(q *fixedRow) float64 { return q.P99us })
	r.P999us = med(func(q *fixedRow) float64 { return q.P999us })
	r.MaxUs = med(func(q *fixedRow) float64 { return q.MaxUs })
	r.LagP99us = med(func(q *fixedRow) float64 { return q.LagP99us })
	r.ServerCPUus = med(func(q *fixedRow) float64 { return q.ServerCPUus })
	r.OtherCPU = med(func(q *fixedRow) float64 { return q.OtherCPU })
}

// spread is a percentile's median with its range over the rounds:
// "812 (640-1,210)", or the median alone for one round.
func spread(median float64, rounds []float64) string {
	if len(rounds) < 2 {
		return num(median)
	}
	lo, hi := slices.Min(rounds), slices.Max(rounds)
	return fmt.Sprintf("%s (%s-%s)", num(median), num(lo), num(hi))
}

// parsePercents reads -fixed-load: a comma list of loads in percent.
func parsePercents(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 200 {
			return nil, fmt.Errorf("-fixed-load: %q is not a load in percent, 1..200", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func writeFixedTable(w io.Writer, rows []fixedRow) {
	fmt.Fprintln(w, "Open loop: requests leave on a fixed schedule whatever the replies, and latency runs from each")
	fmt.Fprintln(w, "request's scheduled send to its last reply. The load is a percentage of the reference's maximum")
	fmt.Fprintln(w, "at depth 1 (closed loop, same connections); send lag is how late the driver wrote (p99).")
	fmt.Fprintln(w, "Each load ran in rounds, the servers alternating: every figure is the median over the rounds,")
	fmt.Fprintln(w, "with the range of the percentiles in brackets; p99 vs reference is the ratio of the medians.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | load | offered ops/s | server | rounds | p50 µs | p99 µs | p99.9 µs | max µs | send lag p99 µs | server CPU µs/op | others' CPU % | p99 vs reference |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var errs []string
	for _, r := range rows {
		server := r.Server
		if r.Ran != "" {
			server += " (" + r.Ran + ")"
		}
		load := fmt.Sprintf("%d%% of %s", r.LoadPct, thousands(r.RefMax))
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s | %s | %s | | %s | | | | | | | |\n", r.Workload, load, thousands(r.Rate), server, r.Skipped)
			continue
		}
		ratio := ""
		if r.P99Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", r.P99Ratio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %.0f | %s |\n",
			r.Workload, load, thousands(r.Rate), server, r.Rounds, spread(r.P50us, r.RoundP50us), spread(r.P99us, r.RoundP99us),
			spread(r.P999us, r.RoundP999us), num(r.MaxUs), num(r.LagP99us), num2(r.ServerCPUus), r.OtherCPU, ratio)
		if r.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s at %d%% on %s: %d error replies, first: -%s",
				r.Workload, r.LoadPct, r.Server, r.Errors, oneLine(r.FirstError)))
		}
	}
	fmt.Fprintln(w)
	for _, e := range errs {
		fmt.Fprintf(w, "- %s\n", e)
	}
}
