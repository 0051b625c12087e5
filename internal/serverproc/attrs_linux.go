package serverproc

import (
	"os/exec"
	"syscall"
)

// setAttrs asks the kernel to kill the child when its parent dies.
func setAttrs(cmd *exec.Cmd, ownGroup bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup, Pdeathsig: syscall.SIGKILL}
}
