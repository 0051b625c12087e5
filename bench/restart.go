package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cellserver/cellserver/internal/serverproc"
)

// Restart mode (-restart): how long a server takes to come back with a
// rate limiter's data, and how much disk that data takes.
//
// Each server gets a fresh directory with persistence on (-persist, by
// default everysec), is loaded with -restart-keys throttle keys
// (CL.THROTTLE on cellserver; the Lua GCRA's keys on redis, which has no
// module here) and -restart-windows W1 windows of -restart-window entries,
// and is then stopped and started again on the same directory. The restart
// time runs from the exec of the new process until it answers PING with
// PONG and INFO persistence says loading:0; a server still loading answers
// -LOADING and is polled again. The disk use is every file under the
// directory after the stop.
//
// The stops measured:
//   - cellserver after SIGTERM: its shutdown saves (a checkpoint), so the
//     restart reads the snapshot only;
//   - cellserver after SIGKILL, a second after the load: the restart
//     also replays the effect log since the last checkpoint, the crash
//     case;
//   - redis after SIGTERM with the append-only file on: it replays the
//     AOF the load wrote;
//   - redis from an RDB snapshot: SAVE after the load, then a start with
//     the append-only file off, which loads dump.rdb.

// restartRow is one line of the restart table.
type restartRow struct {
	Server    string  `json:"server"`
	Stop      string  `json:"stop"`
	Keys      int     `json:"keys_loaded"`
	Elements  int     `json:"window_elements"`
	LoadSecs  float64 `json:"load_seconds"`
	DiskBytes int64   `json:"disk_bytes"`
	// RestartSecs: exec to PONG with loading:0; RestartCPUSecs: the CPU
	// the new process used until then (user+system, all threads), which
	// a busy machine does not inflate.
	RestartSecs    float64 `json:"restart_seconds"`
	RestartCPUSecs float64 `json:"restart_cpu_seconds"`
	KeysAfter      int64   `json:"keys_after_restart"`
	Skipped        string  `json:"skipped,omitempty"`
}

func (b *bench) runRestart() (report, error) {
	rep := report{Env: b.env, Mode: "restart"}
	if b.o.persist == "off" {
		return rep, errors.New("-restart needs persistence: -persist always|everysec|no")
	}
	kinds := b.kinds()
	if slices.Contains(kinds, kindRedis) {
		rows, err := b.restartRedis()
		if err != nil {
			return rep, fmt.Errorf("redis: %v", err)
		}
		rep.Restart = append(rep.Restart, rows...)
	}
	if slices.Contains(kinds, kindCell) {
		for _, kill := range []bool{false, true} {
			r, err := b.restartCell(kill)
			if err != nil {
				return rep, fmt.Errorf("cellserver: %v", err)
			}
			rep.Restart = append(rep.Restart, r)
		}
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Data: %d throttle keys (CL.THROTTLE 15 30 3600 1 on cellserver, a TTL of about 30 minutes so that none expires during the run; the Lua GCRA's string keys with PX on redis) and %d W1 windows of %d entries (ZADD of 13-digit timestamps, EXPIRE 600), loaded in pipelines of 1000 commands.",
			b.o.restartKeys, b.o.restartWindows, b.o.restartWindowLen),
		"Restart: from the exec of the new process to PONG with INFO persistence loading:0; restart CPU: the CPU time the new process used until then (utime+stime of all its threads, /proc), the figure a busy machine does not inflate. Disk: every file in the server's directory after the stop.",
		"Redis's AOF here holds the commands of the load; after real traffic it holds every command since the last rewrite (auto-aof-rewrite-percentage 100), so it is larger and replays slower than this one. cellserver's disk holds the data, whatever the history.")
	return rep, nil
}

// loadRestartData fills a server through c and returns how many keys it
// wrote. sha is the Lua GCRA's (redis) or "" for CL.THROTTLE.
func (b *bench) loadRestartData(c *conn, sha string) (int, error) {
	var batch []byte
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		e, err := c.pipeline(batch, n)
		batch, n = batch[:0], 0
		if err == nil && e != "" {
			err = errors.New(e)
		}
		return err
	}
	add := func(cmd []byte) error {
		batch = append(batch, cmd...)
		n++
		if n >= 1000 {
			return flush()
		}
		return nil
	}
	for i := range b.o.restartKeys {
		cmd := throttleLoadCommand(i, sha, "3600")
		if err := add(cmd); err != nil {
			return 0, err
		}
	}
	base := time.Now().UnixMilli() - 60_000
	for i := range b.o.restartWindows {
		key := "limit:" + strconv.Itoa(i) + ":w1"
		for from := 0; from < b.o.restartWindowLen; from += 100 {
			to := min(from+100, b.o.restartWindowLen)
			args := []string{"ZADD", key}
			for j := from; j < to; j++ {
				ts := strconv.FormatInt(base+int64(j), 10)
				args = append(args, ts, ts)
			}
			if err := add(encodeCommand(args...)); err != nil {
				return 0, err
			}
		}
		if err := add(encodeCommand("EXPIRE", key, "600")); err != nil {
			return 0, err
		}
	}
	return b.o.restartKeys + b.o.restartWindows, flush()
}

// loadFresh starts kind with args on a fresh directory and loads the data.
func (b *bench) loadFresh(kind serverKind, bin string, args func(port int, dir string) []string, lua bool) (*server, string, restartRow, error) {
	r := restartRow{Server: string(kind), Elements: b.o.restartWindows * b.o.restartWindowLen}
	s, err := startServer(kind, bin, b.tmp, args)
	if err != nil {
		return nil, "", r, err
	}
	c, err := dial(s.addr)
	if err != nil {
		s.Stop()
		return nil, "", r, err
	}
	defer c.close()
	sha := ""
	if lua {
		rep, err := c.do("SCRIPT", "LOAD", gcraScript)
		if err != nil || rep.err != "" {
			s.Stop()
			return nil, "", r, fmt.Errorf("SCRIPT LOAD: %v %s", err, rep.err)
		}
		sha = string(rep.bulk)
	}
	fmt.Fprintf(b.log, "bench: restart: loading %s\n", kind)
	start := time.Now()
	if r.Keys, err = b.loadRestartData(c, sha); err != nil {
		s.Stop()
		return nil, "", r, err
	}
	r.LoadSecs = time.Since(start).Seconds()
	return s, filepath.Dir(s.LogPath), r, nil
}

func (b *bench) restartCell(kill bool) (restartRow, error) {
	args := func(port int, dir string) []string {
		a, _ := cellArgs(port, dir, b.o.persist, b.cellFlag)
		return a
	}
	s, dir, r, err := b.loadFresh(kindCell, b.cellBin, args, false)
	if err != nil {
		return r, err
	}
	if kill {
		r.Stop = "SIGKILL 1 s after the load"
		time.Sleep(time.Second)
		s.Cmd.Process.Kill()
		<-s.Exited()
	} else {
		r.Stop = "SIGTERM (saves)"
		s.Stop()
	}
	return b.timeRestart(r, kindCell, b.cellBin, dir, args)
}

func (b *bench) restartRedis() ([]restartRow, error) {
	aof := func(port int, dir string) []string { return redisArgs(port, dir, b.o.persist, "") }
	s, dir, r, err := b.loadFresh(kindRedis, b.o.redisBin, aof, true)
	if err != nil {
		return nil, err
	}
	// The RDB of the same data, for the second row; SAVE blocks until
	// it is written.
	c, err := dial(s.addr)
	if err != nil {
		s.Stop()
		return nil, err
	}
	rep, err := c.do("SAVE")
	c.close()
	if err != nil || rep.err != "" {
		s.Stop()
		return nil, fmt.Errorf("SAVE: %v %s", err, rep.err)
	}
	s.Stop()
	rdbSize := dirSize(filepath.Join(dir, "dump.rdb"))
	r.Stop = "SIGTERM, AOF replay (appendfsync " + string(b.o.persist) + ")"
	rAOF, err := b.timeRestart(r, kindRedis, b.o.redisBin, dir, aof)
	if err != nil {
		return nil, err
	}
	rAOF.DiskBytes -= rdbSize // the AOF directory, not the RDB beside it
	rdb := func(port int, dir string) []string { return redisArgs(port, dir, "off", "") }
	r.Stop = "RDB load (SAVE, then started with AOF off)"
	rRDB, err := b.timeRestart(r, kindRedis, b.o.redisBin, dir, rdb)
	if err != nil {
		return nil, err
	}
	rRDB.DiskBytes = rdbSize
	return []restartRow{rAOF, rRDB}, nil
}

// timeRestart starts a server of kind on dir and measures how long it
// takes to serve its data; it stops the server again.
func (b *bench) timeRestart(r restartRow, kind serverKind, bin, dir string, args func(port int, dir string) []string) (restartRow, error) {
	r.DiskBytes = dirSize(dir)
	port, err := serverproc.FreePort()
	if err != nil {
		return r, err
	}
	start := time.Now()
	s, err := launch(kind, bin, args(port, dir), dir, port)
	if err != nil {
		return r, err
	}
	defer s.Stop()
	c, err := waitLoaded(s)
	if err != nil {
		return r, err
	}
	r.RestartSecs = time.Since(start).Seconds()
	defer c.close()
	if cpu, err := readCPU(s.Pid()); err == nil {
		r.RestartCPUSecs = float64(cpu.ticks()) / float64(clockTicks())
	}
	rep, err := c.do("DBSIZE")
	if err != nil {
		return r, err
	}
	r.KeysAfter = rep.int
	fmt.Fprintf(b.log, "bench: restart: %s (%s): %.2f s, %d keys\n", kind, r.Stop, r.RestartSecs, r.KeysAfter)
	return r, nil
}

// waitLoaded polls s until PING answers PONG and INFO persistence says
// loading:0, and returns the connection that saw it.
func waitLoaded(s *server) (*conn, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if !s.Alive() {
			return nil, fmt.Errorf("exited while loading:\n%s", s.LogTail(20))
		}
		c, err := dial(s.addr)
		if err != nil {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		for time.Now().Before(deadline) {
			rep, err := c.do("PING")
			if err != nil {
				break
			}
			if rep.err == "" {
				if v, ok := c.infoField("persistence", "loading"); ok && v == 0 {
					return c, nil
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		c.close()
	}
	return nil, errors.New("not loaded within 10 minutes")
}

// dirSize is the disk the files under dir take, as du counts it: their
// allocated blocks, so that a file with a sparse tail (the effect log's
// segments reserve their blocks as they fill) counts what it uses.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += diskUsage(info)
			}
		}
		return nil
	})
	return n
}

// diskUsage is a file's allocated bytes where the system reports them,
// else its size.
func diskUsage(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}

func writeRestartTable(w io.Writer, rows []restartRow) {
	fmt.Fprintln(w, "| server | stop and restart | keys | window elements | load s | disk MB | restart s | restart CPU s | keys after |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %.1f | %.1f | %.2f | %.2f | %d |\n",
			r.Server, strings.ReplaceAll(r.Stop, "|", "/"), r.Keys, r.Elements, r.LoadSecs,
			float64(r.DiskBytes)/(1<<20), r.RestartSecs, r.RestartCPUSecs, r.KeysAfter)
	}
	fmt.Fprintln(w)
}
