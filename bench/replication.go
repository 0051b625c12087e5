package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Replication mode (-repl): what replication costs a master, and how long
// a full resync takes.
//
//   - Throughput with one replica: each selected workload (by default
//     throttle and w1) at each depth on a master of each server kind,
//     first alone, then with one replica of the same kind attached
//     (REPLICAOF, link up); the "+1 replica" row's ratio is against the
//     same master alone (target for cellserver: at least 0.85x). Rounds
//     alternate the two, detaching the replica (REPLICAOF NO ONE) between.
//     The replica runs on the same machine, so its CPU is not the
//     master's but it does compete for the cores. What the replica spends
//     is reported beside: its process's CPU from before the warm-up
//     until it has caught up with the master's offset after the run, over
//     every operation sent to the master.
//     With -pin the master and the driver share CPU 0 and the replica has
//     CPU 1 (taskset), for the rows without a replica too: the master's
//     throughput and CPU per operation are then what it pays for a
//     replica that has a machine of its own.
//   - Full resync: a master loaded with restart mode's data (-restart-keys
//     throttle keys, -restart-windows W1 windows), then an empty replica
//     of the same kind told REPLICAOF; the time runs from REPLICAOF to
//     master_link_status:up with as many keys as the master, diskless on
//     both (repl-diskless-sync yes, delay 0), and the replica's CPU until
//     then.

// replicaLabel names the rows measured with a replica attached.
const replicaLabel = " +1 replica"

func (b *bench) runRepl() (report, error) {
	rep := report{Env: b.env, Mode: "repl"}
	for _, k := range b.kinds() {
		for _, w := range b.o.workloads {
			if w.module && k == kindRedis {
				continue
			}
			rows, err := b.replThroughput(k, w)
			if err != nil {
				return rep, fmt.Errorf("%s %s: %v", k, w.name, err)
			}
			rep.Rows = append(rep.Rows, rows...)
		}
	}
	if b.o.pin {
		rep.Notes = append(rep.Notes, "-pin: in the throughput rows the master and the load driver ran on CPU 0 and the replica on CPU 1 (taskset), the rows without a replica pinned alike; the full resync ran unpinned.")
	}
	for _, k := range b.kinds() {
		if k != kindRedis && k != kindCell {
			continue
		}
		r, err := b.replFullSync(k)
		if err != nil {
			return rep, fmt.Errorf("%s full resync: %v", k, err)
		}
		rep.Restart = append(rep.Restart, r)
	}
	rep.Notes = append(rep.Notes,
		"Throughput rows: \"+1 replica\" is the same master with one replica of its kind attached and in sync; its ratio is against the master alone.",
		fmt.Sprintf("Full resync rows (\"restart s\" is the resync time): the master holds %d throttle keys and %d W1 windows of %d entries; an empty replica of the same kind is told REPLICAOF, timed until master_link_status:up (the snapshot loaded), \"keys after\" the replica's DBSIZE then (keys expire meanwhile); CPU is the replica's, until then. Both diskless, no delay.",
			b.o.restartKeys, b.o.restartWindows, b.o.restartWindowLen))
	return rep, nil
}

// replThroughput measures w on a master of kind alone and with a replica,
// at every depth, alternating over the rounds.
func (b *bench) replThroughput(k serverKind, w *workload) ([]row, error) {
	m, err := b.start(k)
	if err != nil {
		return nil, err
	}
	defer m.Stop()
	r, err := b.start(k)
	if err != nil {
		return nil, err
	}
	defer r.Stop()
	if b.o.pin {
		for _, p := range []struct {
			pid  int
			cpus string
		}{{m.Pid(), "0"}, {r.Pid(), "1"}, {os.Getpid(), "0"}} {
			if err := pinCPU(p.pid, p.cpus); err != nil {
				return nil, err
			}
		}
		// The full resync after these rows runs on every CPU again.
		defer pinSelf("0-" + strconv.Itoa(runtime.NumCPU()-1))
	}
	keys, sha := b.workloadKeys(w)
	skip, err := b.prepare(m, w, keys)
	if err != nil {
		return nil, err
	}
	if err := configSet(m, "repl-diskless-sync-delay", "0"); err != nil {
		return nil, err
	}
	gen := w.newGen(keys, sha)
	var rows []row
	for _, d := range b.o.depths {
		pair := [2]row{
			{Workload: w.name, About: w.about, Depth: d, Server: string(k), Skipped: skip},
			{Workload: w.name, About: w.about, Depth: d, Server: string(k) + replicaLabel, Skipped: skip},
		}
		for round := 0; round < b.o.rounds && skip == ""; round++ {
			for i := range pair {
				if err := follow(r, m, i == 1); err != nil {
					return nil, err
				}
				fmt.Fprintf(b.log, "bench: repl: %s depth %d on %s (round %d/%d)\n", w.name, d, pair[i].Server, round+1, b.o.rounds)
				got := pair[i]
				cpu0, err := readCPU(r.Pid())
				if err != nil {
					return nil, err
				}
				if err := b.measure(m, w, gen, d, &got); err != nil {
					return nil, err
				}
				if i == 1 {
					if err := replicaCost(r, m, cpu0, &got); err != nil {
						return nil, err
					}
				}
				if round == 0 || got.OpsPerSec > pair[i].OpsPerSec {
					pair[i] = got
				}
				pair[i].Rounds = round + 1
			}
		}
		if pair[0].OpsPerSec > 0 {
			pair[1].OpsRatio = pair[1].OpsPerSec / pair[0].OpsPerSec
			if pair[0].ServerCPUus > 0 {
				pair[1].CPURatio = pair[1].ServerCPUus / pair[0].ServerCPUus
			}
			pair[1].RatioBasis = "no replica"
		}
		rows = append(rows, pair[:]...)
	}
	return rows, nil
}

// replicaCost waits for replica r to reach its master m's offset, and
// sets row's replica CPU per operation: r's CPU since cpu0 (read before
// the warm-up) over every operation sent since.
func replicaCost(r, m *server, cpu0 procCPU, row *row) error {
	start := time.Now()
	for {
		mo, err := infoInt(m, "replication", "master_repl_offset")
		if err != nil {
			return err
		}
		ro, err := infoInt(r, "replication", "slave_repl_offset")
		if err != nil {
			return err
		}
		if ro >= mo {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("the replica is still %d bytes behind after %v", mo-ro, time.Since(start))
		}
		time.Sleep(20 * time.Millisecond)
	}
	row.CatchUp = time.Since(start).Seconds()
	cpu1, err := readCPU(r.Pid())
	if err != nil {
		return err
	}
	if row.AllOps > 0 {
		row.ReplicaCPUus = float64(cpu1.ticks()-cpu0.ticks()) * 1e6 / float64(clockTicks()) / float64(row.AllOps)
	}
	return nil
}

// infoInt reads one integer field of an INFO section of s.
func infoInt(s *server, section, field string) (int64, error) {
	c, err := dial(s.addr)
	if err != nil {
		return 0, err
	}
	defer c.close()
	rep, err := c.do("INFO", section)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(rep.bulk), "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO %s has no %s", section, field)
}

// follow attaches replica r to master m (on) and waits for its link, or
// detaches it.
func follow(r, m *server, on bool) error {
	c, err := dial(r.addr)
	if err != nil {
		return err
	}
	defer c.close()
	args := []string{"REPLICAOF", "NO", "ONE"}
	if on {
		args = []string{"REPLICAOF", "127.0.0.1", strconv.Itoa(m.port)}
	}
	if rep, err := c.do(args...); err != nil || rep.err != "" {
		return fmt.Errorf("%s: %v %s", strings.Join(args, " "), err, rep.err)
	}
	if !on {
		return nil
	}
	return waitLink(c, 10*time.Minute)
}

// waitLink polls c, a replica, until its link is up: both servers raise
// it once the snapshot is loaded.
func waitLink(c *conn, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		r, err := c.do("INFO", "replication")
		if err != nil {
			return err
		}
		if strings.Contains(string(r.bulk), "master_link_status:up") {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return errors.New("the replica's link did not come up in time")
}

func configSet(s *server, name, value string) error {
	c, err := dial(s.addr)
	if err != nil {
		return err
	}
	defer c.close()
	if r, err := c.do("CONFIG", "SET", name, value); err != nil || r.err != "" {
		return fmt.Errorf("CONFIG SET %s %s: %v %s", name, value, err, r.err)
	}
	return nil
}

// replFullSync times a full resync of restart mode's data from a master
// of kind to an empty replica of kind.
func (b *bench) replFullSync(k serverKind) (restartRow, error) {
	bin := b.cellBin
	args := func(port int, dir string) []string { a, _ := cellArgs(port, dir, "off", b.cellFlag); return a }
	if k == kindRedis {
		bin = b.o.redisBin
		args = func(port int, dir string) []string { return redisArgs(port, dir, "off", "") }
	}
	m, _, r, err := b.loadFresh(k, bin, args, k == kindRedis)
	if err != nil {
		return r, err
	}
	defer m.Stop()
	r.Stop = "full resync to an empty replica (diskless)"
	for _, kv := range [][2]string{{"repl-diskless-sync", "yes"}, {"repl-diskless-sync-delay", "0"}} {
		if err := configSet(m, kv[0], kv[1]); err != nil {
			return r, err
		}
	}
	mc, err := dial(m.addr)
	if err != nil {
		return r, err
	}
	size, err := mc.do("DBSIZE")
	mc.close()
	if err != nil {
		return r, err
	}
	rs, err := startServer(k, bin, b.tmp, args)
	if err != nil {
		return r, err
	}
	defer rs.Stop()
	c, err := dial(rs.addr)
	if err != nil {
		return r, err
	}
	defer c.close()
	cpu0, _ := readCPU(rs.Pid())
	start := time.Now()
	if rep, err := c.do("REPLICAOF", "127.0.0.1", strconv.Itoa(m.port)); err != nil || rep.err != "" {
		return r, fmt.Errorf("REPLICAOF: %v %s", err, rep.err)
	}
	if err := waitLink(c, 10*time.Minute); err != nil {
		return r, err
	}
	r.RestartSecs = time.Since(start).Seconds()
	if cpu1, err := readCPU(rs.Pid()); err == nil {
		r.RestartCPUSecs = float64(cpu1.ticks()-cpu0.ticks()) / float64(clockTicks())
	}
	if n, err := c.do("DBSIZE"); err == nil {
		r.KeysAfter = n.int
	}
	fmt.Fprintf(b.log, "bench: repl: full resync %s: %.2f s, %d keys (the master: %d)\n", k, r.RestartSecs, r.KeysAfter, size.int)
	return r, nil
}
