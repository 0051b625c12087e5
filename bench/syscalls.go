package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// With -syscalls, perf stat counts each server's system calls and context
// switches during the measured window of every row, and the report divides
// them by the operations. Unlike CPU time, these counts hold on a loaded
// machine: at pipeline depth 1 they say how many reads, writes, polls and
// thread wake-ups one request costs each server (bench/results/depth1.md).

// syscallEvents are the counted events, as perf names them; the report's
// columns follow this order.
var syscallEvents = []string{
	"raw_syscalls:sys_enter",
	"syscalls:sys_enter_read",
	"syscalls:sys_enter_write",
	"syscalls:sys_enter_epoll_wait",
	"syscalls:sys_enter_epoll_pwait",
	"syscalls:sys_enter_futex",
	"context-switches",
}

// startSyscallCount starts perf stat on pid once warmup has passed, for
// d; wait returns the counts by event name, or an error when perf could
// not count (not installed, no permission for the tracepoints).
func startSyscallCount(pid int, warmup, d time.Duration, dir string) (wait func() (map[string]float64, error)) {
	out, err := os.CreateTemp(dir, "perfstat-*.csv")
	if err != nil {
		return func() (map[string]float64, error) { return nil, err }
	}
	out.Close()
	done := make(chan error, 1)
	go func() {
		time.Sleep(warmup)
		cmd := exec.Command("perf", "stat", "-x", ",", "-o", out.Name(), "-e", strings.Join(syscallEvents, ","),
			"-p", strconv.Itoa(pid), "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
		if msg, err := cmd.CombinedOutput(); err != nil {
			done <- fmt.Errorf("perf stat: %v: %s", err, oneLine(string(msg)))
			return
		}
		done <- nil
	}()
	return func() (map[string]float64, error) {
		defer os.Remove(out.Name())
		if err := <-done; err != nil {
			return nil, err
		}
		data, err := os.ReadFile(out.Name())
		if err != nil {
			return nil, err
		}
		return parsePerfStat(string(data))
	}
}

// parsePerfStat reads perf stat -x, output: value,unit,event,... per line;
// "<not counted>" and "<not supported>" events are left out.
func parsePerfStat(text string) (map[string]float64, error) {
	counts := map[string]float64{}
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		counts[f[2]] = v
	}
	if len(counts) == 0 {
		return nil, fmt.Errorf("perf stat counted nothing:\n%s", text)
	}
	return counts, nil
}

// perOp divides counts made over d by the operations of a row that ran
// opsPerSec: the counts per operation.
func perOp(counts map[string]float64, opsPerSec float64, d time.Duration) map[string]float64 {
	ops := opsPerSec * d.Seconds()
	if ops <= 0 {
		return nil
	}
	out := map[string]float64{}
	for k, v := range counts {
		out[k] = v / ops
	}
	return out
}

// writeSyscallTable prints the per-operation counts of the rows that have
// them.
func writeSyscallTable(w io.Writer, rows []row) {
	var any bool
	for _, r := range rows {
		any = any || r.PerOp != nil
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\nPer operation, from perf stat on the server over the measured window (epoll: epoll_wait and epoll_pwait):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workload | depth | server | syscalls | read | write | epoll | futex | context switches |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.PerOp == nil {
			continue
		}
		p := r.PerOp
		fmt.Fprintf(w, "| %s | %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", r.Workload, r.Depth, r.Server,
			p["raw_syscalls:sys_enter"], p["syscalls:sys_enter_read"], p["syscalls:sys_enter_write"],
			p["syscalls:sys_enter_epoll_wait"]+p["syscalls:sys_enter_epoll_pwait"], p["syscalls:sys_enter_futex"],
			p["context-switches"])
	}
}
