package integration_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 30 * time.Second

// A process is one server we started (serverproc stops it by its pid and
// nothing else).
type process struct {
	*serverproc.Proc
	name string // "redis-server" or "cellserver", for messages
	addr string // 127.0.0.1:port
}

// servers is a redis-server and the cellserver compared with it.
type servers struct {
	redis *process
	cell  *process // in self-test mode, a second redis-server
}

// serverOptions are the settings a test may give its own servers. Only
// options both servers spell the same way belong here.
type serverOptions struct {
	requirepass string
	// args are more settings, as both servers take them on the command
	// line ("--rename-command", "KEYS", "").
	args []string
	// aclfile, when not nil, is written to users.acl in each server's
	// directory, which the server then uses as its ACL file.
	aclfile *string
	// conf, when not empty, is written to server.conf in each server's
	// directory, which the server then reads as its configuration file.
	conf string
}

// confFileArgs writes the configuration file of opt in dir and names it,
// for the front of the command line.
func confFileArgs(dir string, opt serverOptions) []string {
	if opt.conf == "" {
		return nil
	}
	path := filepath.Join(dir, "server.conf")
	os.WriteFile(path, []byte(opt.conf), 0o644)
	return []string{path}
}

// aclFileArgs writes the ACL file of opt in dir and names it.
func aclFileArgs(dir string, opt serverOptions) []string {
	if opt.aclfile == nil {
		return nil
	}
	os.WriteFile(filepath.Join(dir, "users.acl"), []byte(*opt.aclfile), 0o644)
	return []string{"--aclfile", "users.acl"}
}

// sharedServers returns the servers every test shares, starting them on first
// use. A failure to start fails each test that asks.
func sharedServers(t testing.TB) *servers {
	t.Helper()
	requirePeer(t, "redis-server")
	if !selfTest() {
		cellserverBinary(t)
	}
	harness.sharedOnce.Do(func() {
		harness.shared, harness.sharedErr = launchServers(serverOptions{})
	})
	if harness.sharedErr != nil {
		t.Fatal(harness.sharedErr)
	}
	return harness.shared
}

// startServers starts a pair of servers for t alone, stopped when t ends.
func startServers(t testing.TB, opt serverOptions) *servers {
	t.Helper()
	requirePeer(t, "redis-server")
	if !selfTest() {
		cellserverBinary(t)
	}
	s, err := launchServers(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.redis.Stop()
		s.cell.Stop()
	})
	return s
}

func launchServers(opt serverOptions) (*servers, error) {
	redis, err := startProcess("redis-server", "redis-server", func(port int, dir string) []string {
		return redisArgs(port, dir, opt)
	})
	if err != nil {
		return nil, err
	}
	var cell *process
	if selfTest() {
		cell, err = startProcess("redis-server (as cellserver)", "redis-server", func(port int, dir string) []string {
			return redisArgs(port, dir, opt)
		})
		if err == nil {
			// Two fresh servers hand out the same client ids; burn one so
			// that a test comparing ids without a mask fails here too.
			err = cell.touch()
		}
	} else {
		cell, err = startProcess("cellserver", harness.binary, func(port int, dir string) []string {
			return cellserverArgs(port, dir, opt)
		})
	}
	if err != nil {
		redis.Stop()
		return nil, err
	}
	return &servers{redis: redis, cell: cell}, nil
}

func redisArgs(port int, dir string, opt serverOptions) []string {
	args := append(confFileArgs(dir, opt),
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--enable-debug-command", "yes",
		// No wait before a diskless full resync: the tests sync often.
		"--repl-diskless-sync-delay", "0",
	)
	if opt.requirepass != "" {
		args = append(args, "--requirepass", opt.requirepass)
	}
	args = append(args, aclFileArgs(dir, opt)...)
	return append(args, opt.args...)
}

func cellserverArgs(port int, dir string, opt serverOptions) []string {
	args := append(confFileArgs(dir, opt),
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		// Persistence off, as redis-server runs (redisArgs): INFO and
		// CONFIG GET then agree. persist_test.go covers persistence.
		"--appendonly", "no",
		"--repl-diskless-sync-delay", "0", // as redisArgs
	)
	if opt.requirepass != "" {
		args = append(args, "--requirepass", opt.requirepass)
	}
	args = append(args, aclFileArgs(dir, opt)...)
	return append(args, opt.args...)
}

// processSeq numbers the working directories of the processes we start.
var processSeq atomic.Int64

// startProcess starts bin on a free port in a directory of its own and waits
// until it answers PING. Another program may take the port between our
// probe and the server's bind, so it tries a few ports.
func startProcess(name, bin string, args func(port int, dir string) []string) (*process, error) {
	var lastErr error
	for range 3 {
		n := processSeq.Add(1)
		dir := filepath.Join(harness.tmp, fmt.Sprintf("%s-%d", filepath.Base(bin), n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		port, err := serverproc.FreePort()
		if err != nil {
			return nil, err
		}
		p, err := launch(name, bin, args(port, dir), dir, port)
		if err == nil {
			return p, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(name, bin string, args []string, dir string, port int) (*process, error) {
	sp, err := serverproc.Start(bin, args, dir, false)
	if err != nil {
		return nil, err
	}
	p := &process{Proc: sp, name: name, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	harness.mu.Lock()
	harness.procs = append(harness.procs, p)
	harness.mu.Unlock()
	// Any complete reply will do: with a password set, it is NOAUTH.
	if err := p.WaitReady(p.addr, startTimeout, pingRESP); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s %s: %v\n--- its output:\n%s", name, strings.Join(args, " "), err, p.LogTail(40))
	}
	return p, nil
}

// pingRESP sends one PING to addr and reads its reply, whatever it is
// but -LOADING: a server that listens while it loads its data is ready
// once it has loaded it.
func pingRESP(addr string) error {
	r, err := answerRESP(addr)
	if err == nil && strings.HasPrefix(string(r), "-LOADING") {
		return errors.New("still loading")
	}
	return err
}

// answerRESP sends one PING to addr and returns its reply, whatever it is.
func answerRESP(addr string) ([]byte, error) {
	c, err := dialRESP(addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do("PING")
}

// touch opens and closes one connection.
func (p *process) touch() error { return pingRESP(p.addr) }
