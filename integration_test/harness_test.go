// Package integration_test compares cellserver with a real redis-server 7.0.15
// on the wire.
//
// Each behaviour file reads as a list of Redis behaviours:
//
//	func TestPing(t *testing.T) {
//		forBothProtocols(t, func(t *testing.T, c *pair) {
//			c.Do("PING")             // same bytes from both servers
//			c.Error("PING", "a", "b") // same bytes, and an error
//		})
//	}
//
// A pair holds one connection to each server. Every Do sends the command to
// both and compares the raw reply bytes; a mismatch is a test error quoting
// both replies. Looser comparisons are explicit and narrow: DoSorted for
// unordered replies, DoLoosely for replies whose contents are random, and
// DoMasked with a named mask (maskTime, maskHello, ...) for the few fields
// that legitimately differ between two servers.
//
// The servers are started once per package run, lazily, by the first test
// that needs them: cellserver is built from ./cmd/cellserver and started with
// --bind, --port and --dir; redis-server is started with persistence off. Both
// listen on free loopback ports and are stopped by pid when the run ends.
// Tests run one after another on these shared servers; newPair begins with
// FLUSHALL, so each test starts from an empty keyspace. Tests that need other
// settings (a password) start their own pair of servers with startServers.
//
// Environment:
//
//	CELLSERVER_REQUIRE_PEERS=1   a missing redis-server, redis-cli or python3
//	                             fails the tests that need it instead of
//	                             skipping them (CI sets this).
//	CELLSERVER_DIFF_SELFTEST=1   run a second redis-server in cellserver's
//	                             place. Every test must then pass: this proves
//	                             the harness and its masks, not the server.
//	CELLSERVER_BUILD_FLAGS       extra `go build` flags, e.g. "-race".
//
// The test binary does not import the server, so to keep `go test`'s result
// cache honest the harness opens every Go source file of the module before
// building (the cache then notices when they change).
package integration_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const cellserverPackage = "github.com/cellserver/cellserver/cmd/cellserver"

// harness is the state shared by every test of one package run.
var harness struct {
	tmp string // removed when the run ends

	buildOnce sync.Once
	binary    string
	buildErr  error

	sharedOnce sync.Once
	shared     *servers
	sharedErr  error

	mu    sync.Mutex
	procs []*process // every process started, stopped when the run ends
}

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "cellserver-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	harness.tmp = tmp
	code := m.Run()
	printSkipped()
	harness.mu.Lock()
	procs := harness.procs
	harness.mu.Unlock()
	for _, p := range procs {
		p.Stop()
	}
	if code != 0 && harness.shared != nil {
		if tail := harness.shared.cell.LogTail(40); tail != "" {
			fmt.Fprintf(os.Stderr, "--- last lines of %s's output:\n%s\n", harness.shared.cell.name, tail)
		}
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// selfTest reports whether a second redis-server stands in for cellserver.
func selfTest() bool {
	return os.Getenv("CELLSERVER_DIFF_SELFTEST") == "1"
}

// peerInstallHints says how to get each external program a test may need.
var peerInstallHints = map[string]string{
	"redis-server": "apt-get install redis-server redis-tools",
	"redis-cli":    "apt-get install redis-server redis-tools",
	"python3":      "apt-get install python3 python3-redis",
	"node":         "apt-get install nodejs npm, then npm ci --prefix integration_test/node",
	// Asked for by name when python3 is there but cannot import redis.
	"python3-redis-module": "apt-get install python3-redis",
	"python3-limits":       "apt-get install python3-limits",
	"unshare":              "apt-get install util-linux",
	"ip":                   "apt-get install iproute2",
}

// requirePeer skips t when program is not on PATH, or fails it when
// CELLSERVER_REQUIRE_PEERS=1. It returns the program's path.
func requirePeer(t testing.TB, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	hint := peerInstallHints[program]
	if hint == "" {
		hint = "install it"
	}
	msg := fmt.Sprintf("%s not found; %s", program, hint)
	if os.Getenv("CELLSERVER_REQUIRE_PEERS") == "1" {
		t.Fatalf("%s (CELLSERVER_REQUIRE_PEERS=1)", msg)
	}
	noteSkip(t, msg)
	t.Skip(msg)
	return ""
}

// skipped records the tests skipped for a missing peer, by the message
// that says what is missing, for the summary TestMain prints.
var skipped struct {
	sync.Mutex
	tests map[string][]string
	order []string
}

func noteSkip(t testing.TB, msg string) {
	skipped.Lock()
	defer skipped.Unlock()
	if skipped.tests == nil {
		skipped.tests = map[string][]string{}
	}
	if _, ok := skipped.tests[msg]; !ok {
		skipped.order = append(skipped.order, msg)
	}
	skipped.tests[msg] = append(skipped.tests[msg], t.Name())
}

// printSkipped writes one line per missing peer and the tests (the
// README's "Works with" rows among them) it left unverified. go test
// shows a passing package's output only with -v, so the lines also go to
// the terminal when there is one: a newcomer's "go test ./..." that says
// ok must not hide that the Node or Python clients were never run.
func printSkipped() {
	skipped.Lock()
	defer skipped.Unlock()
	if len(skipped.order) == 0 {
		return
	}
	var b strings.Builder
	for _, msg := range skipped.order {
		tests := skipped.tests[msg]
		fmt.Fprintf(&b, "integration_test: NOT VERIFIED (%s): %d tests skipped: %s\n", msg, len(tests), strings.Join(tests, ", "))
	}
	fmt.Fprint(os.Stdout, b.String())
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprint(tty, b.String())
		tty.Close()
	}
}

// cellserverBinary builds cellserver once per run and returns its path. A
// failed build fails every test that needs the server, with the compiler's
// output.
func cellserverBinary(t testing.TB) string {
	t.Helper()
	harness.buildOnce.Do(func() {
		harness.binary, harness.buildErr = buildCellserver()
	})
	if harness.buildErr != nil {
		t.Fatalf("cannot build cellserver: %v", harness.buildErr)
	}
	return harness.binary
}

func buildCellserver() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	if err := openSources(root); err != nil {
		return "", err
	}
	bin := filepath.Join(harness.tmp, "cellserver")
	args := []string{"build", "-o", bin}
	args = append(args, strings.Fields(os.Getenv("CELLSERVER_BUILD_FLAGS"))...)
	args = append(args, cellserverPackage)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// moduleRoot finds the directory holding go.mod, above the package directory
// the test runs in.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = parent
	}
}

// openSources opens every directory, Go file, go.mod and go.sum of the module
// outside integration_test. The go command records files a test opens and
// reruns the test when one of them changes; without this a cached pass
// would survive changes to the server.
func openSources(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "integration_test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") && name != "go.mod" && name != "go.sum" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		return f.Close()
	})
}
