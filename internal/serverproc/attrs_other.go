//go:build !linux

package serverproc

import "os/exec"

// setAttrs: outside Linux there is no death signal (and no portable process
// group); the starter's own cleanup is all there is.
func setAttrs(cmd *exec.Cmd, ownGroup bool) {}
