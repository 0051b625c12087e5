package serverproc

import (
	"os"
	"os/exec"
	"testing"
)

// RequirePeer returns the path of program (redis-server, redis-cli, ...),
// skipping tb when it is not installed, or failing it under
// CELLSERVER_REQUIRE_PEERS=1 (as CI sets), with hint saying how to get it.
func RequirePeer(tb testing.TB, program, hint string) string {
	tb.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	msg := program + " not found; " + hint
	if os.Getenv("CELLSERVER_REQUIRE_PEERS") == "1" {
		tb.Fatal(msg + " (CELLSERVER_REQUIRE_PEERS=1)")
	}
	tb.Skip(msg)
	return ""
}
