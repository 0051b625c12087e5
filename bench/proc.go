package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Server cost is read from the kernel's accounting of the server process,
// not from anything the server says about itself, so both servers are
// measured by the same ruler: /proc/PID/stat's utime and stime (CPU time
// in clock ticks, all threads) and /proc/PID/status's VmRSS.

// procCPU is a process's user and system CPU time in clock ticks.
type procCPU struct{ utime, stime uint64 }

func (c procCPU) ticks() uint64 { return c.utime + c.stime }

// parseStat reads utime and stime (fields 14 and 15) from the text of
// /proc/PID/stat. The command name (field 2) is in parentheses and may
// itself hold spaces and parentheses, so fields are counted from the last ')'.
func parseStat(data []byte) (procCPU, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procCPU{}, errors.New("stat: no ')' after the command name")
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state), so field k is f[k-3].
	if len(f) < 13 {
		return procCPU{}, fmt.Errorf("stat: %d fields after the command name", len(f))
	}
	u, err1 := strconv.ParseUint(f[14-3], 10, 64)
	s, err2 := strconv.ParseUint(f[15-3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procCPU{}, fmt.Errorf("stat: %v", err)
	}
	return procCPU{utime: u, stime: s}, nil
}

// parseRSS returns VmRSS in bytes from the text of /proc/PID/status.
func parseRSS(data []byte) (int64, error) { return parseStatusKB(data, "VmRSS") }

// parseStatusKB returns a field of /proc/PID/status given in kB, in bytes.
func parseStatusKB(data []byte, field string) (int64, error) {
	for line := range strings.SplitSeq(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("status: unexpected %s line %q", field, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("status: %v", err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("status: no %s line (a zombie, or not Linux)", field)
}

func readCPU(pid int) (procCPU, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procCPU{}, err
	}
	return parseStat(data)
}

// readCPUs is the CPU ticks of several processes, summed.
func readCPUs(pids []int) (uint64, error) {
	var sum uint64
	for _, pid := range pids {
		c, err := readCPU(pid)
		if err != nil {
			return 0, err
		}
		sum += c.ticks()
	}
	return sum, nil
}

func readRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseRSS(data)
}

// clockTicks is sysconf(_SC_CLK_TCK), the unit of utime and stime. Go has
// no sysconf without cgo, so we ask getconf once; Linux has used 100 on
// every architecture for decades, which is the fallback.
var clockTicks = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
})

// parseMachineBusy returns the busy clock ticks of all CPUs (everything
// but idle and iowait) from the first line of /proc/stat. With the server's
// and the driver's own ticks subtracted, it shows how much of the machine
// other programs took during a row: a noisy neighbour on a 2-core machine
// moves the numbers more than most optimisations.
func parseMachineBusy(data []byte) (uint64, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, errors.New("stat: no aggregate cpu line")
	}
	var busy uint64
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat: %v", err)
		}
		// Fields: user nice system idle iowait irq softirq steal guest
		// guest_nice. guest time is already counted in user.
		switch i {
		case 3, 4, 8, 9:
			continue
		}
		busy += v
	}
	return busy, nil
}

func readMachineBusy() (uint64, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineBusy(data)
}
