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

// TestRedisPyConnectionSetup: redis-py against servers with a password,
// selecting a database and naming its connection.
func TestRedisPyConnectionSetup(t *testing.T) {
	python := debianPython(t)
	s := startServers(t, serverOptions{requirepass: "s3cret"})
	var outs [2]scriptOutput
	for i, p := range []*process{s.redis, s.cell} {
		host, port, _ := strings.Cut(p.addr, ":")
		out, err := runScript(exec.Command(python, "python/redis_py_auth.py", host, port))
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out
	}
	if len(outs[0].Lines) == 0 {
		t.Fatal("redis_py_auth.py recorded nothing against redis-server")
	}
	compareTranscripts(t, "redis_py_auth.py", outs[0].Lines, outs[1].Lines)
}

// TestRedisPyPubSub runs python/redis_py_pubsub.py against both servers:
// redis-py's pubsub() with get_message and run_in_thread.
func TestRedisPyPubSub(t *testing.T) {
	python := debianPython(t)
	compareScripts(t, "redis_py_pubsub.py", func(addr string) *exec.Cmd {
		host, port, _ := strings.Cut(addr, ":")
		return exec.Command(python, "python/redis_py_pubsub.py", host, port)
	})
}
