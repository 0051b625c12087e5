package integration_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRedisPySession runs python/redis_py_session.py (Debian's
// python3-redis, RESP2) against both servers: W1 in
// pipeline(transaction=True), W2 by register_script, W3, a WATCH
// transaction retried by transaction(), W4 by execute_command, and the W8
// operator calls.
func TestRedisPySession(t *testing.T) {
	python := debianPython(t)
	features := cellFeatures(t)
	redis, cell := compareScripts(t, "redis_py_session.py "+strings.Join(features, ","), func(addr string) *exec.Cmd {
		host, port, _ := strings.Cut(addr, ":")
		return exec.Command(python, "python/redis_py_session.py", host, port, strings.Join(features, ","))
	})
	checkThrottle(t, redis, cell, []string{
		`user123 first -> [0, 16, 15, -1, 2]`,
		`user123 second -> [0, 16, 14, -1, 4]`,
		`t3 pipeline -> [[0, 3, 2, -1, 1], [0, 3, 1, -1, 1], [0, 3, 0, -1, 1], [1, 3, 0, 1, 1]]`,
		`bad argument -> ('error', 'ResponseError', "Cell error: Store error: Couldn't parse as integer: x")`,
	})
}
