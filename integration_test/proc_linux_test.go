package integration_test

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the server if the test binary dies
// without cleaning up (a panic, `go test -timeout`), so no server outlives
// its run.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
