// Package serverproc starts and stops the server processes that the
// integration tests and the bench driver compare: cellserver and
// redis-server, each on a loopback port in a directory of its own, with its
// output in a log file there.
//
// A process is stopped by its pid and only by it (SIGTERM, then SIGKILL
// after a grace period): other Redis servers on the machine are not ours.
// On Linux the kernel also kills it when the program that started it dies
// (a panic, `go test -timeout`), so no server outlives its run.
package serverproc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Proc is one process we started.
type Proc struct {
	Cmd     *exec.Cmd
	LogPath string // its stdout and stderr
	exited  chan struct{}
	err     error // how it ended; valid once exited is closed
}

// Start runs bin with args in dir, its output going to dir/output.log. With
// ownGroup the process gets a process group of its own, so a terminal's
// Ctrl-C reaches only the program that started it, which stops it itself.
func Start(bin string, args []string, dir string, ownGroup bool) (*Proc, error) {
	logPath := filepath.Join(dir, "output.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	setAttrs(cmd, ownGroup)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %v", bin, err)
	}
	p := &Proc{Cmd: cmd, LogPath: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has ended and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is how the process ended (nil: exit status 0); valid once Exited is
// closed.
func (p *Proc) Err() error { return p.err }

// Pid is the process id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Alive reports whether the process is still running.
func (p *Proc) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop ends the process: SIGTERM, then SIGKILL if it is still there after
// stopGrace. Stopping twice is harmless.
func (p *Proc) Stop() {
	if !p.Alive() {
		return
	}
	p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(stopGrace):
	}
	p.Cmd.Process.Kill()
	<-p.exited
}

// WaitReady polls ping(addr) until it succeeds, the process exits, or
// timeout passes. Where the system can tell (Linux), the answer counts
// only once this process holds the socket listening on addr's port: any
// other server on that port would answer too (listening).
func (p *Proc) WaitReady(addr string, timeout time.Duration, ping func(addr string) error) error {
	port := -1
	if _, ps, err := net.SplitHostPort(addr); err == nil {
		port, _ = strconv.Atoi(ps)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return fmt.Errorf("exited before answering PING: %v", p.err)
		default:
		}
		if ping(addr) == nil && p.holds(port) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer to PING on %s from pid %d within %v", addr, p.Pid(), timeout)
}

// holds reports whether the process (or its child) listens on port, or
// the system cannot tell, or addr named no port.
func (p *Proc) holds(port int) bool {
	if port <= 0 {
		return true
	}
	ours, known := listening(p.Pid(), port)
	return ours || !known
}

// LogTail returns the last n lines the process wrote.
func (p *Proc) LogTail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// FreePort asks the kernel for a free loopback port. Another program may
// take it before the server binds it, so callers retry with a new one.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeClusterPort finds a loopback port p such that p and p+10000 (its
// cluster bus port) are both free, with p+10000 within range, as a node of
// Redis Cluster needs. Like FreePort, it may race with other programs.
func FreeClusterPort() (int, error) {
	var last error
	for range 200 {
		p, err := FreePort()
		if err != nil {
			return 0, err
		}
		if p > 55535 {
			p = 20000 + p%30000 // ephemeral ports sit high: fold into range
		}
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			last = err
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		a.Close()
		if err != nil {
			last = err
			continue
		}
		b.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no port p with p and p+10000 free: %v", last)
}
