package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// row is one line of the throughput table: one workload at one depth on
// one server.
type row struct {
	Workload string `json:"workload"`
	About    string `json:"about"`
	Depth    int    `json:"depth"`
	Server   string `json:"server"`
	Skipped  string `json:"skipped,omitempty"`

	Ops uint64 `json:"ops"`
	// AllOps also counts the warm-up's operations.
	AllOps    uint64  `json:"ops_incl_warmup,omitempty"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Latency of one pipeline round trip (depth operations), microseconds.
	P50us  float64 `json:"p50_us"`
	P99us  float64 `json:"p99_us"`
	P999us float64 `json:"p999_us"`
	// CPU time per operation: the server's (all threads, user+system) and
	// this driver's, microseconds.
	ServerCPUus float64 `json:"server_cpu_us_per_op"`
	DriverCPUus float64 `json:"driver_cpu_us_per_op"`
	RSSBytes    int64   `json:"rss_bytes"`
	// OtherCPU is the CPU other processes on the machine used during the
	// window, in percent of one core: noise when it is more than a few.
	OtherCPU float64 `json:"other_cpu_pct_of_core"`
	// ReplicaCPUus is, in replication mode, the replica's CPU per
	// operation sent to its master: the replica process's over the
	// warm-up, the run and its catching up after, over AllOps; CatchUp is
	// how long it took to reach the master's offset after the run.
	ReplicaCPUus float64 `json:"replica_cpu_us_per_op,omitempty"`
	CatchUp      float64 `json:"replica_catch_up_s,omitempty"`
	Errors       uint64  `json:"error_replies"`
	FirstError   string  `json:"first_error,omitempty"`
	// Against the reference row (redis+module for CL.THROTTLE, redis
	// otherwise): ops/s ratio and server CPU per op ratio; 0 when there is
	// no reference.
	OpsRatio float64 `json:"ops_ratio,omitempty"`
	CPURatio float64 `json:"cpu_ratio,omitempty"`
	// RatioBasis names the reference when it is not the same workload on
	// redis: CL.THROTTLE without the module is compared with the Lua GCRA,
	// which is what such users run instead.
	RatioBasis string `json:"ratio_basis,omitempty"`
	Profile    string `json:"profile,omitempty"`
	// ProfileSummary is the profile in a paragraph: time by part of the
	// process, then the top symbols.
	ProfileSummary string `json:"profile_summary,omitempty"`
	// Rounds is how many times the row ran; the best round is reported.
	Rounds int `json:"rounds"`
	// RoundOps and RoundCPU are every round's ops/s and server CPU µs/op,
	// in order, for the paired ratios (Paired).
	RoundOps []float64 `json:"round_ops_per_sec,omitempty"`
	RoundCPU []float64 `json:"round_server_cpu_us_per_op,omitempty"`
	// Paired is the ratio against the reference round by round, when both
	// ran the same rounds alternately (paired.go).
	Paired *pairedRatio `json:"paired_ratio,omitempty"`
	// PerOp is perf stat's counts per operation, with -syscalls
	// (syscalls.go).
	PerOp map[string]float64 `json:"per_op_events,omitempty"`
}

// runThroughput runs every selected workload at every depth on every
// server, one server at a time.
func (b *bench) runThroughput() (report, error) {
	rep := report{Env: b.env, Mode: "throughput"}
	servers := map[serverKind]*server{}
	for _, k := range b.kinds() {
		s, err := b.start(k)
		if err != nil {
			return rep, err
		}
		servers[k] = s
		fmt.Fprintf(b.log, "bench: %s pid %d on %s\n", k, s.Pid(), s.addr)
	}
	if b.o.profileDir != "" {
		if err := os.MkdirAll(b.o.profileDir, 0o755); err != nil {
			return rep, err
		}
	}
	for _, w := range b.o.workloads {
		keys, sha := b.workloadKeys(w)
		rep.Benchmarks = append(rep.Benchmarks, benchmarkLines(w, b.o, keys.len(), sha)...)
		skips := map[serverKind]string{}
		for _, k := range b.kinds() {
			if w.module && k == kindRedis {
				skips[k] = "n/a: no CL.THROTTLE without the redis-cell module"
				continue
			}
			// A server that died in an earlier row is started afresh, so
			// one crash costs its rows, not the rest of the run.
			if s := servers[k]; !s.Alive() {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s exited (%v) before %s and was restarted; its last output:\n\n%s\n",
					k, s.Err(), w.name, indent(s.LogTail(20))))
				ns, err := b.start(k)
				if err != nil {
					return rep, err
				}
				servers[k] = ns
			}
			reason, err := b.prepare(servers[k], w, keys)
			if err != nil {
				reason = "failed: " + oneLine(err.Error())
			}
			skips[k] = reason
		}
		gen := w.newGen(keys, sha)
		for _, d := range b.o.depths {
			var rows []row
			for _, k := range b.kinds() {
				rows = append(rows, row{Workload: w.name, About: w.about, Depth: d, Server: string(k), Skipped: skips[k]})
			}
			// Rounds alternate the servers, and each keeps its best round:
			// other programs on the machine only ever slow a row down.
			kinds := b.kinds()
			for round := range b.o.rounds {
				for _, i := range roundOrder(len(kinds), round) {
					k := kinds[i]
					if skips[k] != "" {
						continue
					}
					fmt.Fprintf(b.log, "bench: %s depth %d on %s (round %d/%d)\n", w.name, d, k, round+1, b.o.rounds)
					r := rows[i]
					if err := b.measure(servers[k], w, gen, d, &r); err != nil {
						// The row reports the failure; later rows go on.
						r = rows[i]
						r.Skipped = "failed: " + oneLine(err.Error())
						rows[i] = r
						skips[k] = r.Skipped
						continue
					}
					roundOps := append(rows[i].RoundOps, r.OpsPerSec)
					roundCPU := append(rows[i].RoundCPU, r.ServerCPUus)
					if round == 0 || r.OpsPerSec > rows[i].OpsPerSec {
						rows[i] = r
					}
					rows[i].Rounds = round + 1
					rows[i].RoundOps, rows[i].RoundCPU = roundOps, roundCPU
				}
			}
			setRatios(rows, w.module)
			rep.Rows = append(rep.Rows, rows...)
		}
	}
	setLuaRatios(rep.Rows)
	return rep, nil
}

// workloadKeys is w's key table (-keys keys, or w's own count) and the
// SHA1 of its script, if it has one.
func (b *bench) workloadKeys(w *workload) (*keyTable, string) {
	nkeys := w.keys
	if nkeys < 0 {
		nkeys = b.o.keys
	}
	prefix, suffix := keyPrefix(w)
	sha := ""
	if w.script != "" {
		sha = scriptSHA(w.script)
	}
	return newKeyTable(prefix, suffix, nkeys), sha
}

// prepare readies s for w: an empty keyspace, the script loaded, the keys
// populated, and one probe operation. A server that answers the probe with
// an error gets a "skipped: ..." reason instead of a row of errors.
func (b *bench) prepare(s *server, w *workload, keys *keyTable) (string, error) {
	c, err := dial(s.addr)
	if err != nil {
		return "", err
	}
	defer c.close()
	if r, err := c.do("FLUSHALL"); err != nil {
		return "", err
	} else if r.err != "" {
		fmt.Fprintf(b.log, "bench: FLUSHALL on %s: -%s (continuing)\n", s.kind, r.err)
	}
	sha := ""
	if w.script != "" {
		r, err := c.do("SCRIPT", "LOAD", w.script)
		if err != nil {
			return "", err
		}
		if r.err != "" {
			return skipReason(r.err, s.kind), nil
		}
		sha = scriptSHA(w.script)
		if string(r.bulk) != sha {
			return "", fmt.Errorf("SCRIPT LOAD returned %q, want the SHA1 %s", r.bulk, sha)
		}
	}
	if w.populate {
		val := strings.Repeat("x", valueSize)
		var cmds []byte
		for i := range keys.len() {
			cmds = append(cmds, encodeCommand("SET", keys.name(i), val)...)
			if (i+1)%1000 == 0 || i == keys.len()-1 {
				n := i%1000 + 1
				firstErr, err := c.pipeline(cmds, n)
				if err != nil {
					return "", err
				}
				if firstErr != "" {
					return skipReason(firstErr, s.kind), nil
				}
				cmds = cmds[:0]
			}
		}
	}
	g := &genState{nowMs: time.Now().UnixMilli()}
	g.rng = newRand(1)
	firstErr, err := c.pipeline(w.newGen(keys, sha)(g, nil), w.replies)
	if err != nil {
		return "", err
	}
	if firstErr != "" {
		return skipReason(firstErr, s.kind), nil
	}
	return "", nil
}

// measure runs one row, with perf recording cellserver when asked.
func (b *bench) measure(s *server, w *workload, gen generator, depth int, r *row) error {
	var perf *exec.Cmd
	if b.o.profileDir != "" && s.kind == kindCell {
		r.Profile = profileName(b.o.profileDir, w.name, depth)
		os.Remove(r.Profile + ".perf.data") // else perf keeps it as .old
		perf = exec.Command("perf", profileArgs(s.Pid(), r.Profile+".perf.data", b.o.warmup+b.o.duration)...)
		perf.Stdout, perf.Stderr = b.log, b.log
		if err := perf.Start(); err != nil {
			fmt.Fprintf(b.log, "bench: perf: %v (no profile)\n", err)
			perf, r.Profile = nil, ""
		}
	}
	var counted func() (map[string]float64, error)
	if b.o.syscalls {
		counted = startSyscallCount(s.Pid(), b.o.warmup, b.o.duration, b.tmp)
	}
	m, err := runLoad([]target{{s.addr, gen}}, []int{s.Pid()}, w, b.loadConfig(depth))
	if counted != nil {
		counts, cerr := counted()
		if cerr != nil {
			fmt.Fprintf(b.log, "bench: -syscalls: %v\n", cerr)
		} else if err == nil && m.ops > 0 {
			r.PerOp = perOp(counts, float64(m.ops)/m.elapsed.Seconds(), b.o.duration)
		}
	}
	if perf != nil {
		perf.Wait()
		writePerfReport(r.Profile, b.log)
		if self, err := os.ReadFile(r.Profile + ".self.txt"); err == nil {
			r.ProfileSummary = profileSummary(fmt.Sprintf("%s, depth %d", w.name, depth), string(self), 8)
		}
	}
	if err != nil {
		return err
	}
	return r.record(m, b.o.duration)
}

// loadConfig is the load of one row at depth.
func (b *bench) loadConfig(depth int) loadConfig {
	return loadConfig{conns: b.o.conns, depth: depth, warmup: b.o.warmup, duration: b.o.duration}
}

// record fills r from a measurement, or says why it measured nothing.
func (r *row) record(m measurement, d time.Duration) error {
	if m.connectFails != nil {
		return fmt.Errorf("connection lost during the run: %v", m.connectFails)
	}
	if m.ops == 0 {
		return fmt.Errorf("no operation completed in %v (server hung?)", d)
	}
	tick := 1e6 / float64(clockTicks())
	r.Ops = m.ops
	r.AllOps = m.allOps
	r.Seconds = m.elapsed.Seconds()
	r.OpsPerSec = float64(m.ops) / r.Seconds
	r.P50us = float64(m.hist.percentile(0.50)) / 1e3
	r.P99us = float64(m.hist.percentile(0.99)) / 1e3
	r.P999us = float64(m.hist.percentile(0.999)) / 1e3
	if m.ops > 0 {
		r.ServerCPUus = float64(m.serverTicks) * tick / float64(m.ops)
		r.DriverCPUus = float64(m.clientTicks) * tick / float64(m.ops)
	}
	r.RSSBytes = m.rss
	r.OtherCPU = 100 * float64(m.otherTicks) / float64(clockTicks()) / r.Seconds
	r.Errors = m.errors
	r.FirstError = m.firstErr
	return nil
}

// writePerfReport turns perf.data into two text reports next to it: self
// time by symbol and time including callees.
func writePerfReport(base string, log interface{ Write([]byte) (int, error) }) {
	for _, v := range []struct{ suffix, mode string }{{".self.txt", "--no-children"}, {".children.txt", "--children"}} {
		out, err := exec.Command("perf", "report", "--stdio", v.mode, "--sort", "symbol",
			"-g", "none", "--percent-limit", "0.1", "-i", base+".perf.data").Output()
		if err != nil {
			fmt.Fprintf(log, "bench: perf report: %v\n", err)
			return
		}
		os.WriteFile(base+v.suffix, out, 0o644)
	}
}

// setRatios fills the cellserver row's ratios against its reference:
// redis (redis+module for the module's workloads), or, in a run without
// it, cellserver-off.
func setRatios(rows []row, module bool) {
	ref := string(kindRedis)
	if module {
		ref = string(kindModule)
	}
	var base, off, cell *row
	for i := range rows {
		switch rows[i].Server {
		case ref:
			base = &rows[i]
		case string(kindCellOff):
			off = &rows[i]
		case string(kindCell):
			cell = &rows[i]
		}
	}
	if base == nil || base.Skipped != "" {
		base = off
		if cell != nil {
			cell.RatioBasis = string(kindCellOff)
		}
	}
	if base == nil || cell == nil || base.Skipped != "" || cell.Skipped != "" || base.OpsPerSec == 0 {
		if cell != nil {
			cell.RatioBasis = ""
		}
		return
	}
	cell.OpsRatio = cell.OpsPerSec / base.OpsPerSec
	if base.ServerCPUus > 0 {
		cell.CPURatio = cell.ServerCPUus / base.ServerCPUus
	}
	cell.Paired = pairRounds(cell, base)
}

// luaCounterpart maps the CL.THROTTLE workloads to the Lua GCRA ones.
var luaCounterpart = map[string]string{"throttle": "gcra-lua", "throttle-hot": "gcra-lua-hot"}

// setLuaRatios compares cellserver's CL.THROTTLE rows that have no
// redis+module reference with plain redis running the Lua GCRA at the same
// depth.
func setLuaRatios(rows []row) {
	for i := range rows {
		c := &rows[i]
		lua, ok := luaCounterpart[c.Workload]
		if !ok || c.Server != string(kindCell) || c.Skipped != "" || c.OpsRatio != 0 {
			continue
		}
		for _, r := range rows {
			if r.Workload == lua && r.Depth == c.Depth && r.Server == string(kindRedis) && r.Skipped == "" && r.OpsPerSec > 0 {
				c.OpsRatio = c.OpsPerSec / r.OpsPerSec
				if r.ServerCPUus > 0 {
					c.CPURatio = c.ServerCPUus / r.ServerCPUus
				}
				c.RatioBasis = "redis " + lua
			}
		}
	}
}
