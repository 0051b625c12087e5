package integration_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Persistence: the built binary is written to, stopped (SIGTERM) or killed
// (SIGKILL), restarted on the same --dir and read back.

// cellOnDir starts cellserver with its data in dataDir; its output goes to
// a directory of its own, so restarts keep every log.
func cellOnDir(t *testing.T, dataDir string, args ...string) *process {
	t.Helper()
	p, err := startCellOnDir(dataDir, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func startCellOnDir(dataDir string, args ...string) (*process, error) {
	return startProcess("cellserver", harness.binary, func(port int, _ string) []string {
		return append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dataDir}, args...)
	})
}

// kill ends p with SIGKILL: no shutdown, no final sync.
func (p *process) kill() {
	p.Cmd.Process.Kill()
	<-p.Exited()
}

func mustDial(t *testing.T, p *process) *respConn {
	t.Helper()
	c, err := dialRESP(p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ints reads the integers of a reply: ":5\r\n" or an array of them.
func ints(r string) []int64 {
	var out []int64
	for _, line := range strings.Split(r, "\r\n") {
		if strings.HasPrefix(line, ":") {
			n, _ := strconv.ParseInt(line[1:], 10, 64)
			out = append(out, n)
		}
	}
	return out
}

// throttleArgs: a limiter whose remaining count drops by one per call and
// does not refill during a test (one token an hour), so the count says
// exactly how many calls the server kept. CL.PROBE answers what the next
// call would: one less than the last call's remaining count.
func throttleArgs(key string) []string {
	return []string{"CL.THROTTLE", key, strconv.Itoa(burst), "1", "3600"}
}

func probeArgs(key string) []string {
	return []string{"CL.PROBE", key, strconv.Itoa(burst), "1", "3600"}
}

// burst is the limiter's max_burst: a fresh key's first call leaves burst.
const burst = 100000

// remaining is the remaining count of a CL.THROTTLE or CL.PROBE reply.
func remaining(r string) int64 {
	if v := ints(r); len(v) == 5 {
		return v[2]
	}
	return -1
}

// TestPersistRestart: SIGTERM, restart on the same --dir: strings, hashes,
// lists and sorted sets read back the same, expiries stay absolute, and the limiter
// continues exactly where it stopped, in every database.
func TestPersistRestart(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	p := cellOnDir(t, dir)
	c := mustDial(t, p)
	var want []int64
	for db := range 16 {
		mustDo(t, c, "SELECT", strconv.Itoa(db))
		for range db + 1 {
			want = append(want, remaining(mustDo(t, c, throttleArgs("limit\x00\xff")...)))
		}
	}
	// Every type, absolute expiries and binary data, read back with the
	// same commands after the restart.
	mustDo(t, c, "SELECT", "5")
	pxat := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	for _, cmd := range [][]string{
		{"SET", "s\x00", "v\r\n\x00", "PXAT", pxat}, {"INCRBY", "n", "42"},
		{"HSET", "h", "f1", "v1", "f2", "", "f3", "v3"}, {"HDEL", "h", "f2"}, {"PEXPIREAT", "h", pxat},
		{"RPUSH", "l", "a", "b", "c"}, {"LPUSH", "l", "z"}, {"LREM", "l", "1", "b"},
		{"SET", "gone", "x"}, {"DEL", "gone"}, {"SET", "short", "x", "PX", "1"},
		{"ZADD", "win", "1", "a", "2", "b\x00", "3", "c"}, {"ZREMRANGEBYSCORE", "win", "-inf", "1"}, {"PEXPIREAT", "win", pxat},
	} {
		mustDo(t, c, cmd...)
	}
	reads := [][]string{
		{"GET", "s\x00"}, {"PEXPIRETIME", "s\x00"}, {"GET", "n"}, {"HGETALL", "h"}, {"PEXPIRETIME", "h"},
		{"LRANGE", "l", "0", "-1"}, {"EXISTS", "gone", "short"}, {"DBSIZE"},
		{"ZRANGE", "win", "0", "-1", "WITHSCORES"}, {"PEXPIRETIME", "win"},
	}
	time.Sleep(5 * time.Millisecond) // "short" expires
	var before []string
	for _, r := range reads {
		before = append(before, mustDo(t, c, r...))
	}
	p.Stop()
	if p.Err() != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", p.Err(), p.LogTail(20))
	}
	p2 := cellOnDir(t, dir)
	c2 := mustDial(t, p2)
	mustDo(t, c2, "SELECT", "5")
	for i, r := range reads {
		if got := mustDo(t, c2, r...); got != before[i] {
			t.Errorf("%v after restart: %q, before: %q", r, got, before[i])
		}
	}
	for db := range 16 {
		mustDo(t, c2, "SELECT", strconv.Itoa(db))
		got := remaining(mustDo(t, c2, probeArgs("limit\x00\xff")...))
		if w := want[(db+1)*(db+2)/2-1] - 1; got != w {
			t.Errorf("db %d: remaining %d after restart, want %d", db, got, w)
		}
		if r := remaining(mustDo(t, c2, throttleArgs("limit\x00\xff")...)); r != want[(db+1)*(db+2)/2-1]-1 {
			t.Errorf("db %d: the next call left %d", db, r)
		}
	}
}

// TestPersistCrash: 50 connections write (CL.THROTTLE, INCR, SET) under
// appendfsync always while the server is SIGKILLed, ten times on one
// --dir. Every time the server starts again,
// and every acknowledged write is there.
func TestPersistCrash(t *testing.T) {
	writeThenStop(t, 20, "always", (*process).kill, shortRound, 0)
}

// TestPersistCrashEverySec: SIGKILL under appendfsync everysec and no,
// while 50 connections write: the server starts, nothing that was never
// sent appears, and every acknowledged write is there. The effect log is in
// the kernel's page cache before a reply leaves, so a crash of the process
// alone loses nothing under any policy, as with Redis's AOF (only a crash
// of the machine loses what the policy had not fsynced).
func TestPersistCrashEverySec(t *testing.T) {
	for _, policy := range []string{"everysec", "no"} {
		t.Run(policy, func(t *testing.T) {
			writeThenStop(t, 5, policy, (*process).kill, shortRound, 0)
		})
	}
}

// shortRound is how long a crash round writes before the kill: a random
// moment within the first few hundred milliseconds.
func shortRound() time.Duration { return time.Duration(100+rand.IntN(200)) * time.Millisecond }

// TestPersistSigtermUnderLoad: SIGTERM while 50 connections write, under
// appendfsync everysec. The server finishes the commands in flight, sends
// their replies, syncs and exits 0; every acknowledged write is there after
// the restart.
func TestPersistSigtermUnderLoad(t *testing.T) {
	writeThenStop(t, 5, "everysec", func(p *process) {
		p.Stop()
		if code := p.Cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
	}, shortRound, 0)
}

// writeThenStop runs rounds of: 50 connections doing CL.THROTTLE, INCR and
// SET on keys of their own, stop (kill or SIGTERM) after roundLen, restart
// on the same --dir, and check that every acknowledged write was kept,
// plus at most the one in flight. With a loss bound (everysec), the INCR
// and SET writes acknowledged within that long before the stop may be
// missing, and the CL.THROTTLE calls of the round too; nothing beyond
// the one in flight may appear.
func writeThenStop(t *testing.T, rounds int, fsync string, stop func(*process), roundLen func() time.Duration, lossBound time.Duration) {
	cellserverBinary(t)
	dir := t.TempDir()
	const conns = 50
	// acked[g] is what connection g's last acknowledged writes left.
	type state struct{ remaining, incr, set int64 }
	acked := make([]state, conns)
	for g := range acked {
		acked[g] = state{remaining: burst + 1, incr: 0, set: -1}
	}
	// history[g]: when each of g's acknowledged INCR/SET pairs was
	// acknowledged, and the values, for the loss bound.
	type ack struct {
		at        time.Time
		incr, set int64
	}
	history := make([][]ack, conns)
	for round := range rounds {
		p := cellOnDir(t, dir, "--appendfsync", fsync)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for g := range history {
			history[g] = history[g][:0]
		}
		for g := range conns {
			c, err := dialRESP(p.addr)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for i := 0; ; i++ {
					r, err := c.Do(throttleArgs(fmt.Sprintf("t:%d", g))...)
					if err != nil {
						return
					}
					mu.Lock()
					acked[g].remaining = remaining(string(r))
					mu.Unlock()
					if r, err = c.Do("INCR", fmt.Sprintf("n:%d", g)); err != nil {
						return
					}
					mu.Lock()
					acked[g].incr = ints(string(r))[0]
					mu.Unlock()
					seq := acked[g].set + 1
					if _, err = c.Do("SET", fmt.Sprintf("s:%d", g), strconv.FormatInt(seq, 10)); err != nil {
						return
					}
					mu.Lock()
					acked[g].set = seq
					history[g] = append(history[g], ack{time.Now(), acked[g].incr, seq})
					mu.Unlock()
				}
			}()
		}
		time.Sleep(roundLen())
		stoppedAt := time.Now()
		stop(p)
		wg.Wait()
		// floor[g]: the writes that must be there.
		floor := make([]ack, conns)
		for g := range conns {
			floor[g] = ack{incr: acked[g].incr, set: acked[g].set}
			if lossBound == 0 {
				continue
			}
			floor[g] = ack{incr: -1, set: -2}
			for _, a := range history[g] {
				if a.at.After(stoppedAt.Add(-lossBound)) {
					break
				}
				floor[g] = a
			}
			if floor[g].incr < 0 {
				// Nothing of this round is old enough: what the
				// previous round left (the first entry's predecessor).
				if len(history[g]) > 0 {
					floor[g] = ack{incr: history[g][0].incr - 1, set: history[g][0].set - 1}
				} else {
					floor[g] = ack{incr: acked[g].incr, set: acked[g].set}
				}
			}
		}
		lost, oldest := int64(0), time.Duration(0)

		p2 := cellOnDir(t, dir, "--appendfsync", fsync)
		c := mustDial(t, p2)
		for g := range conns {
			// At most one more write than acknowledged: the one in flight
			// when the server died may or may not have been kept.
			got := remaining(mustDo(t, c, probeArgs(fmt.Sprintf("t:%d", g))...)) + 1
			if (got > acked[g].remaining && lossBound == 0) || got < acked[g].remaining-1 {
				t.Fatalf("round %d conn %d: remaining %d, acknowledged %d", round, g, got, acked[g].remaining)
			}
			acked[g].remaining = got
			// The same for the counter and the SET sequence.
			v := mustDo(t, c, "GET", fmt.Sprintf("n:%d", g))
			cnt := int64(0)
			if !strings.HasPrefix(v, "$-1") {
				cnt, _ = strconv.ParseInt(strings.Split(v, "\r\n")[1], 10, 64)
			}
			if cnt < floor[g].incr || cnt > acked[g].incr+1 {
				t.Fatalf("round %d conn %d: counter %d, acknowledged %d, %d of them more than %v before the stop",
					round, g, cnt, acked[g].incr, floor[g].incr, lossBound)
			}
			lost += max(acked[g].incr-cnt, 0)
			for _, a := range history[g] {
				if a.incr > cnt {
					oldest = max(oldest, stoppedAt.Sub(a.at))
					break
				}
			}
			acked[g].incr = cnt
			v = mustDo(t, c, "GET", fmt.Sprintf("s:%d", g))
			set := int64(-1)
			if !strings.HasPrefix(v, "$-1") {
				set, _ = strconv.ParseInt(strings.Split(v, "\r\n")[1], 10, 64)
			}
			if set < floor[g].set || set > acked[g].set+1 {
				t.Fatalf("round %d conn %d: SET value %d, acknowledged %d, %d of them more than %v before the stop",
					round, g, set, acked[g].set, floor[g].set, lossBound)
			}
			acked[g].set = set
		}
		if lossBound != 0 {
			t.Logf("round %d: %d acknowledged INCRs lost over %d connections, the oldest acknowledged %v before the kill",
				round, lost, conns, oldest.Round(time.Millisecond))
		}
		p2.Stop()
	}
	spent := int64(0)
	for _, a := range acked {
		spent += burst + 1 - a.remaining
	}
	t.Logf("%d rounds, %d CL.THROTTLE calls (and as many INCR and SET) kept", rounds, spent)
}

// newestSegment is the newest file of the effect log of the store in
// dataDir, and the end of its written bytes (the rest is preallocated
// zeros).
func newestSegment(t *testing.T, dataDir string) (path string, end int64) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dataDir, "cellserver.db", "effectlog", "*.log"))
	if len(logs) == 0 {
		t.Fatal("no effect log file")
	}
	sort.Strings(logs)
	path = logs[len(logs)-1]
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end = int64(len(b))
	for end > 0 && b[end-1] == 0 {
		end--
	}
	return path, end
}

// TestPersistTornWAL: the effect log's last record is damaged after a
// crash (a torn tail); the server starts, says so, and keeps every write
// before it. (Damage in the middle of the log: TestPersistDamagedLog.)
func TestPersistTornWAL(t *testing.T) {
	cellserverBinary(t)
	for _, cut := range []string{"tail"} {
		t.Run(cut, func(t *testing.T) {
			dir := t.TempDir()
			p := cellOnDir(t, dir, "--appendfsync", "always")
			c := mustDial(t, p)
			const n = 200
			for i := range n {
				mustDo(t, c, throttleArgs(fmt.Sprintf("k%03d", i))...)
			}
			p.kill()
			path, end := newestSegment(t, dir)
			at := end - 3
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{0xde, 0xad, 0xbe}, at); err != nil {
				t.Fatal(err)
			}
			f.Close()
			p2 := cellOnDir(t, dir, "--appendfsync", "always")
			c2 := mustDial(t, p2)
			kept := 0
			for i := range n {
				r := remaining(mustDo(t, c2, probeArgs(fmt.Sprintf("k%03d", i))...))
				switch {
				case r == burst-1 && kept == i:
					kept++
				case r == burst-1:
					t.Fatalf("k%03d kept after a lost key", i)
				case r != burst:
					t.Fatalf("k%03d: remaining %d", i, r)
				}
			}
			if cut == "tail" && kept != n-1 {
				t.Fatalf("kept %d of %d writes after damaging the last record", kept, n)
			}
			out, _ := os.ReadFile(p2.LogPath)
			if !bytes.Contains(out, []byte("cut damaged log tail")) {
				t.Fatalf("no log line about the cut:\n%s", out)
			}
			t.Logf("damaged at %d of %d bytes: kept %d of %d writes", at, end, kept, n)
		})
	}
}

// TestPersistSecondServer: a second server on the same --dir refuses to
// start, saying why.
func TestPersistSecondServer(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	cellOnDir(t, dir)
	p, err := startCellOnDir(dir)
	if err == nil {
		p.Stop()
		t.Fatal("a second server started on the same --dir")
	}
	if !strings.Contains(err.Error(), "in use by another cellserver") {
		t.Fatalf("the refusal does not say why: %v", err)
	}
}

// TestPersistShutdownCommand: SHUTDOWN saves and SHUTDOWN NOSAVE still
// syncs the log: either way the writes are there after a restart.
func TestPersistShutdownCommand(t *testing.T) {
	cellserverBinary(t)
	dir := t.TempDir()
	for i, mode := range [][]string{{"SHUTDOWN"}, {"SHUTDOWN", "NOSAVE"}, {"SHUTDOWN", "SAVE"}} {
		p := cellOnDir(t, dir)
		c := mustDial(t, p)
		if i > 0 {
			if got := mustDo(t, c, "GET", "n"); got != fmt.Sprintf("$1\r\n%d\r\n", i) {
				t.Fatalf("after %v: GET n = %q", mode, got)
			}
		}
		mustDo(t, c, "INCR", "n")
		c.Send(mode...)
		select {
		case <-p.Exited():
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the server did not exit", mode)
		}
	}
	p := cellOnDir(t, dir)
	if got := mustDo(t, mustDial(t, p), "GET", "n"); got != "$1\r\n3\r\n" {
		t.Fatalf("GET n = %q", got)
	}
}
