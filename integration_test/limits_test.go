package integration_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPythonLimitsStorage runs python/limits_storage.py (Debian's
// python3-limits, with python3-redis) against both servers on default
// settings: its reset() runs KEYS and DEL inside a script on keys it does
// not declare, which cellserver must run as Redis does.
func TestPythonLimitsStorage(t *testing.T) {
	python := debianPython(t)
	if exec.Command(python, "-c", "import limits.storage").Run() != nil {
		requirePeer(t, "python3-limits")
	}
	compareScripts(t, "limits_storage.py", func(addr string) *exec.Cmd {
		host, port, _ := strings.Cut(addr, ":")
		return exec.Command(python, "python/limits_storage.py", host, port)
	})
}
