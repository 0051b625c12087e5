package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// serverKind names the servers a run can compare.
type serverKind string

const (
	kindRedis  serverKind = "redis"
	kindModule serverKind = "redis+module"
	kindCell   serverKind = "cellserver"
	// kindCellOff is cellserver with persistence off, next to a
	// cellserver with -persist: the rows of one process alternate the
	// two, which is what it takes to measure what persistence costs on
	// a machine whose speed drifts from minute to minute. Only run when
	// -servers names it.
	kindCellOff serverKind = "cellserver-off"
)

// server is one process we started (serverproc stops it by its pid, and
// only by that).
type server struct {
	*serverproc.Proc
	kind serverKind
	addr string
	port int
}

// running tracks every process started, so that an interrupt stops them all.
var running struct {
	mu    sync.Mutex
	procs []*server
}

// stopAll stops every server still running, each by its pid.
func stopAll() {
	running.mu.Lock()
	procs := running.procs
	running.procs = nil
	running.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(p.Stop)
	}
	wg.Wait()
}

// persistence says how both servers persist, matched: "off" (no
// persistence at all), or an appendfsync policy "always", "everysec", "no"
// with the append-only file on.
type persistence string

func (p persistence) valid() bool {
	switch p {
	case "off", "always", "everysec", "no":
		return true
	}
	return false
}

func redisArgs(port int, dir string, p persistence, module string) []string {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--daemonize", "no",
		"--save", "",
	}
	if p == "off" {
		args = append(args, "--appendonly", "no")
	} else {
		args = append(args, "--appendonly", "yes", "--appendfsync", string(p))
	}
	if module != "" {
		args = append(args, "--loadmodule", module)
	}
	return args
}

// cellFlags are the persistence flags cellserver's --help lists. The bench
// learns them at run time because persistence is being added while the
// bench is written; a cellserver without them runs without persistence and
// the report says so.
type cellFlags struct {
	appendonly, appendfsync, save bool
	// appendonlyBool: --appendonly is a Go bool flag, so it takes
	// --appendonly=false rather than --appendonly no.
	appendonlyBool bool
}

// parseCellHelp reads Go flag package usage text: each flag on a line of
// its own, "  -name type" with no type for booleans.
func parseCellHelp(help string) cellFlags {
	var f cellFlags
	for line := range strings.SplitSeq(help, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "-") {
			continue
		}
		switch strings.TrimLeft(fields[0], "-") {
		case "appendonly":
			f.appendonly = true
			f.appendonlyBool = len(fields) == 1
		case "appendfsync":
			f.appendfsync = true
		case "save":
			f.save = true
		}
	}
	return f
}

func probeCellFlags(bin string) cellFlags {
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	return parseCellHelp(string(out))
}

// cellArgs returns cellserver's arguments and a note on persistence for
// the report.
func cellArgs(port int, dir string, p persistence, f cellFlags) ([]string, string) {
	args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir}
	if f.save {
		args = append(args, "--save", "")
	}
	appendonly := func(on bool) []string {
		switch {
		case f.appendonlyBool && on:
			return []string{"--appendonly=true"}
		case f.appendonlyBool:
			return []string{"--appendonly=false"}
		case on:
			return []string{"--appendonly", "yes"}
		default:
			return []string{"--appendonly", "no"}
		}
	}
	switch {
	case p == "off" && f.appendonly:
		a := appendonly(false)
		return append(args, a...), "cellserver " + strings.Join(a, " ")
	case p == "off":
		return args, "cellserver has no persistence flag (none to turn off)"
	case f.appendonly && f.appendfsync:
		a := append(appendonly(true), "--appendfsync", string(p))
		return append(args, a...), "cellserver " + strings.Join(a, " ")
	case f.appendfsync:
		return append(args, "--appendfsync", string(p)), "cellserver --appendfsync " + string(p)
	default:
		return args, "cellserver has no --appendfsync flag: it runs WITHOUT persistence, unlike redis"
	}
}

// buildCellserver compiles ./cmd/cellserver of the module around the
// working directory into dir.
func buildCellserver(dir string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "cellserver")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cellserver")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cellserver: %v\n%s", err, out)
	}
	return bin, nil
}

// moduleRoot is the directory of the module's go.mod, found from the
// working directory upwards (go run ./bench runs in the module).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if mod := strings.TrimSpace(string(out)); mod != "" && mod != os.DevNull {
			return filepath.Dir(mod), nil
		}
	}
	return "", errors.New("run the bench inside the cellserver module (go run ./bench)")
}

// startServer starts bin on a free loopback port in a directory of its own
// under tmp and waits until it answers PING. Another program may take the
// port between our probe and the server's bind, so it tries a few ports.
func startServer(kind serverKind, bin, tmp string, args func(port int, dir string) []string) (*server, error) {
	var lastErr error
	for try := range 3 {
		port, err := serverproc.FreePort()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(tmp, fmt.Sprintf("%s-%d-%d", strings.ReplaceAll(string(kind), "+", "-"), port, try))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		s, err := launch(kind, bin, args(port, dir), dir, port)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(kind serverKind, bin string, args []string, dir string, port int) (*server, error) {
	// A process group of its own keeps the terminal's Ctrl-C from reaching
	// the server directly: we stop it ourselves, after the report.
	sp, err := serverproc.Start(bin, args, dir, true)
	if err != nil {
		return nil, err
	}
	s := &server{Proc: sp, kind: kind, port: port, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	running.mu.Lock()
	running.procs = append(running.procs, s)
	running.mu.Unlock()
	if err := s.WaitReady(s.addr, 30*time.Second, ping); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%s %s: %v\n--- its output:\n%s", bin, strings.Join(args, " "), err, s.LogTail(20))
	}
	return s, nil
}

// ping sends one PING to addr and reads its reply.
func ping(addr string) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	_, err = c.do("PING")
	c.close()
	return err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// conn is a plain connection for set-up, probes and INFO: one command at a
// time, whole replies kept.
type conn struct {
	nc net.Conn
	rr *replyReader
	w  *bufio.Writer
}

func dial(addr string) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	rr := newReplyReader(nc)
	rr.keepValues = true
	return &conn{nc: nc, rr: rr, w: bufio.NewWriterSize(nc, 64<<10)}, nil
}

func (c *conn) close() { c.nc.Close() }

// do sends one command and returns its reply. An error reply is a reply,
// not an error: the caller decides what it means.
func (c *conn) do(args ...string) (reply, error) {
	c.nc.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.nc.Write(encodeCommand(args...)); err != nil {
		return reply{}, err
	}
	return c.rr.next()
}

// pipeline sends pre-encoded commands holding n replies and reads them,
// returning the first error reply.
func (c *conn) pipeline(cmds []byte, n int) (string, error) {
	c.nc.SetDeadline(time.Now().Add(120 * time.Second))
	var firstErr string
	done := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(cmds)
		done <- err
	}()
	keep := c.rr.keepValues
	c.rr.keepValues = false
	defer func() { c.rr.keepValues = keep }()
	for range n {
		r, err := c.rr.next()
		if err != nil {
			return firstErr, err
		}
		if firstErr == "" {
			firstErr = r.err
		}
	}
	return firstErr, <-done
}

// infoField returns a numeric field of INFO section's text, if present.
func (c *conn) infoField(section, field string) (int64, bool) {
	r, err := c.do("INFO", section)
	if err != nil || r.kind != '$' {
		return 0, false
	}
	for line := range strings.SplitSeq(string(r.bulk), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
