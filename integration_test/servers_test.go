package integration_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 30 * time.Second

// A process is one server we started. We stop it by its pid and nothing else:
// other Redis servers on the machine are not ours.
type process struct {
	name    string // "redis-server" or "cellserver", for messages
	addr    string // 127.0.0.1:port
	logPath string // its stdout and stderr
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // valid after exited is closed
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
		s.redis.stop()
		s.cell.stop()
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
		redis.stop()
		return nil, err
	}
	return &servers{redis: redis, cell: cell}, nil
}

func redisArgs(port int, dir string, opt serverOptions) []string {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
		"--enable-debug-command", "yes",
	}
	if opt.requirepass != "" {
		args = append(args, "--requirepass", opt.requirepass)
	}
	return append(args, opt.args...)
}

func cellserverArgs(port int, dir string, opt serverOptions) []string {
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		// Persistence off, as redis-server runs (redisArgs): INFO and
		// CONFIG GET then agree. persist_test.go covers persistence.
		"--appendonly", "no",
	}
	if opt.requirepass != "" {
		args = append(args, "--requirepass", opt.requirepass)
	}
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
		port, err := freePort()
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
	logPath := filepath.Join(dir, "output.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	p := &process{
		name:    name,
		addr:    net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		logPath: logPath,
		cmd:     cmd,
		exited:  make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	harness.mu.Lock()
	harness.procs = append(harness.procs, p)
	harness.mu.Unlock()
	if err := p.waitReady(); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s %s: %v\n--- its output:\n%s", name, strings.Join(args, " "), err, p.logTail(40))
	}
	return p, nil
}

// waitReady waits until the server answers PING with any complete reply (with
// a password set, that reply is NOAUTH).
func (p *process) waitReady() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("exited before answering PING: %v", p.waitErr)
		default:
		}
		if c, err := dialRESP(p.addr); err == nil {
			_, err := c.Do("PING")
			c.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer to PING on %s within %v", p.addr, startTimeout)
}

// touch opens and closes one connection.
func (p *process) touch() error {
	c, err := dialRESP(p.addr)
	if err != nil {
		return err
	}
	_, err = c.Do("PING")
	c.Close()
	return err
}

// stop ends the process: SIGTERM, then SIGKILL if it is still there after a
// few seconds. Stopping twice is harmless.
func (p *process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(5 * time.Second):
	}
	p.cmd.Process.Kill()
	<-p.exited
}

// alive reports whether the process is still running.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// logTail returns the last n lines the process wrote.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
