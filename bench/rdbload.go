package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// RDB mode (-rdb): how long a server takes to serve a Redis RDB file, the
// way a migration from Redis starts (README: Migrating from Redis).
//
// redis-server is loaded with restart mode's data (-restart-keys throttle
// keys, the Lua GCRA's strings with a TTL, and -restart-windows W1 windows
// of -restart-window entries) and SAVEs it. Each row then starts a server
// on a fresh directory holding only a copy of that dump.rdb and times it
// from exec to PONG with loading:0 (restart mode's timeRestart), then
// checks DBSIZE:
//   - redis-server with its AOF off, which loads dump.rdb;
//   - cellserver with -persist's policy: it loads the file into its empty
//     store, writing each key into the store's new base as it goes, and
//     puts the base in force (a checkpoint) before it serves, so the time
//     includes making every key durable;
//   - with -cellserver-base, the same for that binary (A/B);
//   - cellserver with --appendonly no: the load alone.
//
// With -rounds N every row runs N times, the rows in turn each round, so
// that a machine shared with other work weighs on all of them alike.

func (b *bench) runRDBLoad() (report, error) {
	rep := report{Env: b.env, Mode: "rdb"}
	aof := func(port int, dir string) []string { return redisArgs(port, dir, "off", "") }
	file, err := b.rdbFile(aof)
	if err != nil {
		return rep, err
	}
	fresh := func() (string, error) {
		d, err := os.MkdirTemp(b.tmp, "rdb-")
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "dump.rdb"), file, 0o644)
		}
		return d, err
	}
	type rowSpec struct {
		kind serverKind
		bin  string
		stop string
		args func(port int, dir string) []string
	}
	var specs []rowSpec
	kinds := b.kinds()
	if slices.Contains(kinds, kindRedis) {
		specs = append(specs, rowSpec{kindRedis, b.o.redisBin, "RDB load, AOF off", aof})
	}
	if slices.Contains(kinds, kindCell) {
		p := b.o.persist
		if p == "off" {
			p = "everysec"
		}
		durable := func(port int, dir string) []string { a, _ := cellArgs(port, dir, p, b.cellFlag); return a }
		memory := func(port int, dir string) []string { a, _ := cellArgs(port, dir, "off", b.cellFlag); return a }
		how := "RDB load into an empty store, made durable (appendfsync " + string(p) + ")"
		if b.o.cellBase != "" {
			specs = append(specs, rowSpec{kindCell, b.o.cellBase, how + ", -cellserver-base", durable})
		}
		specs = append(specs,
			rowSpec{kindCell, b.cellBin, how, durable},
			rowSpec{kindCell, b.cellBin, "RDB load, --appendonly no", memory})
	}
	// Each round runs every row once, in turn, so that a machine shared
	// with other work loads every row alike.
	for round := 1; round <= b.o.rounds; round++ {
		for _, sp := range specs {
			d, err := fresh()
			if err != nil {
				return rep, err
			}
			r := restartRow{Server: string(sp.kind), Stop: sp.stop, Elements: b.o.restartWindows * b.o.restartWindowLen}
			if b.o.rounds > 1 {
				r.Stop = fmt.Sprintf("%s, round %d", sp.stop, round)
			}
			row, err := b.timeRestart(r, sp.kind, sp.bin, d, sp.args)
			if err != nil {
				return rep, fmt.Errorf("%s: %v", sp.kind, err)
			}
			row.DiskBytes = int64(len(file))
			rep.Restart = append(rep.Restart, row)
			os.RemoveAll(d)
		}
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("Data: redis-server's SAVE of %d throttle keys (the Lua GCRA's string keys with PX) and %d W1 windows of %d entries (sorted sets of 13-digit timestamps, EXPIRE 600): one dump.rdb of %d bytes, copied into each server's empty directory.",
			b.o.restartKeys, b.o.restartWindows, b.o.restartWindowLen, len(file)),
		"Time: from the exec of the server to PONG with INFO persistence loading:0 (cellserver loads before it listens); CPU: the new process's utime+stime until then. Disk: the RDB file's size.")
	return rep, nil
}

// rdbFile is the RDB file of the rows: the one redis-server SAVEs after
// loading restart mode's data. Made afresh on each run: its keys' TTLs
// run out within minutes, and a server drops expired keys as it loads.
func (b *bench) rdbFile(aof func(port int, dir string) []string) ([]byte, error) {
	s, dir, _, err := b.loadFresh(kindRedis, b.o.redisBin, aof, true)
	if err != nil {
		return nil, fmt.Errorf("redis: %v", err)
	}
	c, err := dial(s.addr)
	if err != nil {
		s.Stop()
		return nil, err
	}
	saved, err := c.do("SAVE")
	c.close()
	s.Stop()
	if err != nil || saved.err != "" {
		return nil, fmt.Errorf("redis SAVE: %v %s", err, saved.err)
	}
	return os.ReadFile(filepath.Join(dir, "dump.rdb"))
}
