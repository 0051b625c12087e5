//go:build !linux

package integration_test

import "os/exec"

// setDeathSignal has no portable equivalent outside Linux; TestMain's cleanup
// is all there is.
func setDeathSignal(cmd *exec.Cmd) {}
