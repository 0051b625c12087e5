package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// pinCPU binds every thread of process pid to the CPUs in list (taskset's
// syntax, "0" or "1-3"); threads the process starts later inherit it. On
// a small machine this is what gives one process cores of its own, as a
// replica has on its own machine, instead of taking its CPU from the
// process measured.
func pinCPU(pid int, list string) error {
	out, err := exec.Command("taskset", "-a", "-p", "-c", list, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset -a -p -c %s %d: %v: %s", list, pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// pinSelf binds the bench's own process (the load driver) to list.
func pinSelf(list string) error { return pinCPU(os.Getpid(), list) }
