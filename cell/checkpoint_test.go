package cell

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/persist"
)

// shortTTL (ms) is the expiry randomWrite sets that is to pass within a
// test's round: a round waits it out before comparing keyspaces, so that
// no key expires between the two sides of a comparison.
const shortTTL = 30

// randomWrite returns a random write command over a few keys of every
// type, sorted sets (small and past the listpack limit) most of all.
func randomWrite(r *rand.Rand) []string {
	key := func(prefix string) string { return prefix + strconv.Itoa(r.IntN(4)) }
	member := func() string {
		switch r.IntN(60) {
		case 0:
			return "" // its key in the snapshot is not its set's
		case 1:
			return "\x00" + strconv.Itoa(r.IntN(3))
		case 2:
			return strconv.Itoa(r.IntN(300)) // an integer that is not its score
		}
		return "m" + strconv.Itoa(r.IntN(300))
	}
	score := func() string { return strconv.Itoa(r.IntN(1000)) }
	switch r.IntN(41) {
	case 3:
		// A window of timestamps (members are their scores), stored as
		// integers; "-0 0" is the one pair that must not be.
		n := strconv.Itoa(1_700_000_000_000 + r.IntN(1000))
		switch r.IntN(20) {
		case 0:
			return []string{"ZADD", key("z"), "-0", "0"}
		case 1:
			return []string{"ZADD", key("z"), "-" + n, "-" + n, "7", "007"}
		}
		return []string{"ZADD", key("z"), n, n, n + "1", n + "1"}
	case 0, 1, 2:
		args := []string{"ZADD", key("z")}
		for range 1 + r.IntN(3) {
			args = append(args, score(), member())
		}
		return args
	case 4:
		// Grows a set past 128 members: stored member by member.
		args := []string{"ZADD", key("z")}
		for range 150 {
			args = append(args, score(), member())
		}
		return args
	case 5:
		return []string{"ZADD", key("z"), "GT", "CH", score(), member()}
	case 6:
		return []string{"ZINCRBY", key("z"), "7", member()}
	case 7:
		return []string{"ZREM", key("z"), member(), member()}
	case 8:
		// Bounds of every form, on members' scores or between them.
		bound := func() string {
			switch r.IntN(6) {
			case 0:
				return "(" + score()
			case 1:
				return score() + ".5"
			case 2:
				return "-inf"
			case 3:
				return "+inf"
			}
			return score()
		}
		if r.IntN(2) == 0 {
			return []string{"ZREMRANGEBYSCORE", key("z"), "-inf", score()}
		}
		return []string{"ZREMRANGEBYSCORE", key("z"), bound(), bound()}
	case 9:
		return []string{"ZREMRANGEBYRANK", key("z"), "0", strconv.Itoa(r.IntN(5))}
	case 10:
		return []string{"ZREMRANGEBYLEX", key("z"), "[m1", "(m2"}
	case 11:
		return []string{"ZPOPMIN", key("z"), strconv.Itoa(1 + r.IntN(3))}
	case 12:
		return []string{"ZMPOP", "2", key("z"), key("z"), "MAX", "COUNT", "2"}
	case 13:
		if r.IntN(3) == 0 {
			// Lapses within the round, or lives on through the changes
			// made to it before then; a checkpoint may save it between.
			return []string{"PEXPIRE", key([]string{"z", "s", "n", "h", "l", "b"}[r.IntN(6)]), strconv.Itoa(shortTTL)}
		}
		return []string{"PEXPIRE", key([]string{"z", "h", "l", "b", "t"}[r.IntN(5)]), strconv.Itoa(3_600_000 + r.IntN(1000))}
	case 14:
		return []string{"PERSIST", key("z")}
	case 15:
		return []string{"DEL", key("z"), key("s")}
	case 16:
		return []string{"SET", key("z"), "over a set"}
	case 17:
		return []string{"RENAME", key("z"), key("z")}
	case 18:
		return []string{"INCRBY", key("n"), score()}
	case 19:
		return []string{"HSET", key("h"), member(), score()}
	case 20:
		return []string{"RPUSH", key("l"), member()}
	case 21:
		return []string{"LPOP", key("l")}
	case 22:
		return []string{"ZRANGESTORE", key("z"), key("z"), "0", "5"}
	// Strings, hashes and lists changed in place, which the log holds as
	// what changed (keyspace/delta_persist.go).
	case 24:
		return []string{"SET", key("b"), strings.Repeat("b", 100+r.IntN(100))}
	case 25:
		return []string{"APPEND", key([]string{"b", "s"}[r.IntN(2)]), member()}
	case 26:
		return []string{"SETRANGE", key("b"), strconv.Itoa(r.IntN(250)), member()}
	case 27:
		return []string{"HDEL", key("h"), member(), member()}
	case 28:
		return []string{"HINCRBY", key("h"), member(), score()}
	case 29:
		// A big hash, in the large encoding.
		args := []string{"HSET", key("h")}
		for range 80 {
			args = append(args, member(), strings.Repeat("v", r.IntN(70)))
		}
		return args
	case 30:
		args := []string{[]string{"LPUSH", "RPUSH"}[r.IntN(2)], key("l")}
		for range 1 + r.IntN(40) {
			args = append(args, member())
		}
		return args
	case 31:
		return []string{[]string{"LPOP", "RPOP"}[r.IntN(2)], key("l"), strconv.Itoa(r.IntN(4))}
	case 32:
		return []string{"LSET", key("l"), strconv.Itoa(r.IntN(20) - 10), member()}
	case 33:
		return []string{"LTRIM", key("l"), strconv.Itoa(r.IntN(3)), strconv.Itoa(-1 - r.IntN(3))}
	case 34:
		return []string{"LINSERT", key("l"), []string{"BEFORE", "AFTER"}[r.IntN(2)], member(), member()}
	case 35:
		return []string{"LREM", key("l"), strconv.Itoa(r.IntN(3) - 1), member()}
	case 36:
		return []string{"HSETNX", key("h"), member(), score()}
	case 37:
		return []string{"HINCRBYFLOAT", key("h"), member(), "1.5"}
	// Sets, small integer ones (intset) and ones past the listpack limit.
	case 38:
		args := []string{"SADD", key("t")}
		for range 1 + r.IntN([]int{3, 140}[r.IntN(2)]) {
			if r.IntN(2) == 0 {
				args = append(args, strconv.Itoa(r.IntN(600)))
			} else {
				args = append(args, member())
			}
		}
		return args
	case 39:
		return []string{"SREM", key("t"), member(), strconv.Itoa(r.IntN(600))}
	case 40:
		return []string{"SPOP", key("t"), strconv.Itoa(1 + r.IntN(3))}
	default:
		return []string{"SET", key("s"), score(), "PX", "3600000"}
	}
}

// crashRestart stops srv as a crash would (crashStop), starts a server on
// dir again, and fails unless it holds exactly what srv held.
func crashRestart(t *testing.T, srv *Server, stop func(), dir string, mod func(*Config)) *Server {
	t.Helper()
	want := dumpKeyspace(srv)
	crashStop(srv, stop)
	srv, _ = openServer(t, dir, mod)
	sameKeys(t, dumpKeyspace(srv), want)
	return srv
}

// crashStop stops srv as a crash would for what is on disk: no final
// checkpoint, the log as the last execution left it.
func crashStop(srv *Server, stop func()) {
	srv.ops.exitMode.Store(&ShutdownMode{NoSave: true})
	stop()
}

// TestPersistCheckpointModel runs random writes of every kind with
// checkpoints (SAVE, BGSAVE, and the automatic ones with a tiny log
// threshold) between them, and restarts with and without a final save:
// after each restart the keyspace is exactly what it was. Sorted sets are
// logged as their changed members; checkpoints write what changed since
// the last one (checkpoint.go); this is where the two meet.
func TestPersistCheckpointModel(t *testing.T) {
	eachRewritePolicy(t, testPersistCheckpointModel)
}

// eachRewritePolicy runs test with checkpoints that rewrite whenever they
// may, and with ones that write records whenever they may (rewriting only
// when the records over the base pile up, a database was flushed or after
// a failure), and checks that each made some checkpoints of the kind.
func eachRewritePolicy(t *testing.T, test func(t *testing.T)) {
	defer func(n int) { rewriteShare = n }(rewriteShare)
	for _, p := range []struct {
		name  string
		share int
	}{{"rewrites", 1 << 30}, {"records", 0}} {
		t.Run(p.name, func(t *testing.T) {
			rewriteShare = p.share
			var rewrites, records atomic.Int64
			checkpointDone = func(rewrite bool) {
				if rewrite {
					rewrites.Add(1)
				} else {
					records.Add(1)
				}
			}
			defer func() { checkpointDone = nil }()
			test(t)
			if records.Load() == 0 && p.share == 0 {
				t.Errorf("no checkpoint wrote records")
			}
			if rewrites.Load() == 0 {
				t.Errorf("no checkpoint rewrote")
			}
			t.Logf("%d rewrites, %d checkpoints of records", rewrites.Load(), records.Load())
		})
	}
}

func testPersistCheckpointModel(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto=%v", auto), func(t *testing.T) {
			dir := t.TempDir()
			mod := func(c *Config) {
				c.Shards = 2
				if auto {
					c.Params = map[string]string{"auto-aof-rewrite-min-size": "4096"}
				}
			}
			r := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
			srv, stop := openServer(t, dir, mod)
			c := dial(t, srv)
			for round := range 12 {
				for range 150 {
					switch r.IntN(40) {
					case 0:
						c.do("SAVE")
					case 1:
						c.do("BGSAVE")
					case 2:
						c.do("SELECT", strconv.Itoa(r.IntN(2)))
					case 3:
						if r.IntN(4) == 0 {
							c.do("FLUSHDB")
						}
					case 4:
						c.do("MULTI")
						for range 1 + r.IntN(4) {
							c.do(randomWrite(r)...)
						}
						c.do("EXEC")
					default:
						c.do(randomWrite(r)...)
					}
				}
				// Let a BGSAVE end: SAVE refuses to run beside it.
				for c.do("SAVE") != "+OK\r\n" && r.IntN(2) == 0 {
					time.Sleep(time.Millisecond)
				}
				// The log's tail: a few writes, in a transaction or not.
				multi := r.IntN(2) == 0
				if multi {
					c.do("MULTI")
				}
				for range 1 + r.IntN(4) {
					c.do(randomWrite(r)...)
				}
				if multi {
					c.do("EXEC")
				}
				time.Sleep(2 * shortTTL * time.Millisecond)
				want := dumpKeyspace(srv)
				if round%2 == 0 {
					crashStop(srv, stop)
				} else {
					stop()
				}
				srv, stop = openServer(t, dir, mod)
				t.Logf("round %d (crash %v)", round, round%2 == 0)
				sameKeys(t, dumpKeyspace(srv), want)
				c = dial(t, srv)
			}
		})
	}
}

// TestPersistCheckpointConcurrent: checkpoints run back to back while
// clients write; after a crash stop, the snapshot plus the log hold
// exactly the final state.
func TestPersistCheckpointConcurrent(t *testing.T) {
	eachRewritePolicy(t, testPersistCheckpointConcurrent)
}

func testPersistCheckpointConcurrent(t *testing.T) {
	dir := t.TempDir()
	mod := func(c *Config) {
		c.Shards = 4
		c.Params = map[string]string{"auto-aof-rewrite-min-size": "1"}
	}
	srv, stop := openServer(t, dir, mod)
	var wg sync.WaitGroup
	deadline := time.Now().Add(20 * time.Second)
	for g := range 4 {
		c := dial(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; i < 1000 || srv.checkpoints.Load() < 3 && time.Now().Before(deadline); i++ {
				c.do(randomWrite(r)...)
			}
		}()
	}
	wg.Wait()
	if srv.checkpoints.Load() < 3 {
		t.Errorf("only %d checkpoints ran during the writes", srv.checkpoints.Load())
	}
	time.Sleep(2 * shortTTL * time.Millisecond)
	crashRestart(t, srv, stop, dir, mod)
}

// TestPersistCheckpointDropsLog: a checkpoint leaves a log of about
// nothing, and a restart after it replays nothing.
func TestPersistCheckpointDropsLog(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	for i := range 2000 {
		c.do("ZADD", "w", strconv.Itoa(i), strconv.Itoa(i))
		c.do("ZREMRANGEBYSCORE", "w", "-inf", strconv.Itoa(i-100))
	}
	before := srv.store.LogSize()
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	after := srv.store.LogSize()
	if before < 50_000 || after > 100 {
		t.Fatalf("log since the checkpoint: %d bytes before SAVE, %d after", before, after)
	}
	srv = crashRestart(t, srv, stop, dir, nil)
	if srv.replayed != 0 {
		t.Fatalf("replayed %d records after a checkpoint", srv.replayed)
	}
}

// TestPersistZSetDeltaSize: a sliding window's write logs the members it
// changed, not the window.
func TestPersistZSetDeltaSize(t *testing.T) {
	srv, _ := openServer(t, t.TempDir(), nil)
	c := dial(t, srv)
	for i := range 100 {
		c.do("ZADD", "w", strconv.Itoa(i), fmt.Sprintf("member-%03d", i))
	}
	before := srv.store.LogSize()
	for i := 100; i < 200; i++ {
		c.do("MULTI")
		c.do("ZREMRANGEBYSCORE", "w", "-inf", strconv.Itoa(i-100))
		c.do("ZADD", "w", strconv.Itoa(i), fmt.Sprintf("member-%03d", i))
		c.do("PEXPIRE", "w", "60000")
		c.do("EXEC")
	}
	// A whole 100-member window is over 1,500 bytes a record.
	if per := (srv.store.LogSize() - before) / 100; per > 150 {
		t.Fatalf("%d bytes of log per window update", per)
	}
}

// TestPersistSelfKeyedWindows: windows whose members are their scores are
// stored as integers, in the log and in the snapshot, and come back
// exactly: negative members, a member past 2^53 whose score is its nearest
// double, a set that is not self-keyed beside them, members removed by
// score.
func TestPersistSelfKeyedWindows(t *testing.T) {
	for _, save := range []bool{false, true} {
		t.Run(fmt.Sprintf("save=%v", save), func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, nil)
			c := dial(t, srv)
			for _, cmd := range [][]string{
				{"ZADD", "w", "1700000000000", "1700000000000", "1700000000005", "1700000000005", "-3", "-3"},
				{"ZADD", "neg0", "-0", "0", "1", "1"},
				{"ZADD", "big", "9007199254740993", "9007199254740993"},
				{"ZADD", "mixed", "1", "1", "2", "two"},
				{"PEXPIRE", "w", "3600000"},
				// Range deletes and pops, logged as the members' integers
				// where those are their scores' (zsetRec.note).
				{"ZADD", "w", "1700000000009", "1700000000009"},
				{"ZREMRANGEBYSCORE", "w", "-inf", "1700000000000"},
				{"ZPOPMIN", "w"},
				{"ZADD", "big", "9007199254740991", "9007199254740991", "9007199254740995", "9007199254740995"},
				{"ZREMRANGEBYSCORE", "big", "9007199254740992", "9007199254740992"},
				{"ZREMRANGEBYSCORE", "mixed", "2", "2"},
			} {
				if r := c.do(cmd...); strings.HasPrefix(r, "-") {
					t.Fatalf("%v: %s", cmd, r)
				}
			}
			if save {
				if r := c.do("SAVE"); r != "+OK\r\n" {
					t.Fatal(r)
				}
			}
			crashRestart(t, srv, stop, dir, nil)
		})
	}
}

// TestPersistFullCheckpoint: after a checkpoint that failed part way (its
// tombstones and unsaved flags consumed, its writes lost), the next one
// rewrites: its base holds every key memory holds and nothing else, so a
// restart from it alone is exact.
func TestPersistFullCheckpoint(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	for _, cmd := range [][]string{
		{"SET", "a", "1"}, {"SET", "b", "2"}, {"HSET", "h", "f", "v"},
		{"ZADD", "big", "1", "m1"}, {"SAVE"},
	} {
		c.do(cmd...)
	}
	for i := range 200 {
		c.do("ZADD", "big", strconv.Itoa(i), "member-"+strconv.Itoa(i))
	}
	c.do("SAVE") // big is now stored member by member
	for _, cmd := range [][]string{{"DEL", "b"}, {"SET", "big", "a string now"}, {"SET", "a", "changed"}} {
		c.do(cmd...)
	}
	// What a failed checkpoint leaves: nothing marked, and the next one
	// told to be full.
	srv.ks.ForgetUnsaved()
	srv.ckptMu.Lock()
	srv.ckptFull = true
	srv.ckptMu.Unlock()
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	// The log since that checkpoint is empty: the restart reads the
	// snapshot alone.
	if n := srv.store.LogSize(); n != 0 {
		t.Fatalf("%d bytes of log after the checkpoint", n)
	}
	srv = crashRestart(t, srv, stop, dir, nil)
	if srv.replayed != 0 {
		t.Fatalf("replayed %d records", srv.replayed)
	}
	// No member records of the set big was are left behind its string.
	skipped, err := srv.store.Load(func(int, []byte, persist.Value) error { return nil })
	if err != nil || skipped != 0 {
		t.Fatalf("the snapshot has %d records without their key (%v)", skipped, err)
	}
}

// TestCheckpointVisitInParts: a checkpoint visits a shard a few slots at
// a time, and between the parts another client deletes, recreates,
// changes and adds keys of that shard: deletions shift entries from ahead
// of the visit to behind it, additions grow the index. A crash right
// after each checkpoint restarts with exactly what memory held, which
// fails if the visit missed a key changed before it began (the log
// before the checkpoint is gone).
func TestCheckpointVisitInParts(t *testing.T) {
	eachRewritePolicy(t, testCheckpointVisitInParts)
}

func testCheckpointVisitInParts(t *testing.T) {
	defer keyspace.SetVisitChunk(keyspace.SetVisitChunk(3))
	defer keyspace.SetVisitPause(nil)
	dir := t.TempDir()
	mod := func(c *Config) {
		c.Shards = 1
		c.Params = map[string]string{"auto-aof-rewrite-min-size": "1gb", "save": ""}
	}
	// r is shared by this goroutine and the visit's pause, which runs in
	// the server's (the socket orders them; the race detector cannot see
	// that).
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(5, 6))
	write := func(c *testConn) {
		mu.Lock()
		defer mu.Unlock()
		k := strconv.Itoa(r.IntN(120))
		switch r.IntN(14) {
		case 0, 1:
			c.do("DEL", "k"+k, "z"+k)
		// Changes in place, which the log holds as what changed: the
		// visit may have saved a later state of the key than the one
		// they were made to (keyspace/delta_persist.go).
		case 8:
			c.do("APPEND", "b"+k, strings.Repeat("a", 1+r.IntN(100)))
		case 9:
			c.do("SETRANGE", "b"+k, strconv.Itoa(r.IntN(300)), "set")
		case 10:
			c.do([]string{"LPUSH", "RPUSH"}[r.IntN(2)], "l"+k, strconv.Itoa(r.IntN(1000)), "x")
		case 11:
			c.do([]string{"LPOP", "RPOP"}[r.IntN(2)], "l"+k, strconv.Itoa(r.IntN(3)))
		case 12:
			c.do("HSET", "h"+k, "f"+strconv.Itoa(r.IntN(40)), strconv.Itoa(r.IntN(1000)))
		case 13:
			if r.IntN(2) == 0 {
				c.do("HDEL", "h"+k, "f"+strconv.Itoa(r.IntN(40)))
			} else {
				c.do("LSET", "l"+k, strconv.Itoa(r.IntN(4)), "lset")
			}
		case 2:
			c.do("INCR", "k"+k)
		case 3:
			// Past 128 members a set is stored member by member; its
			// deletion is then a range of the snapshot.
			args := []string{"ZADD", "z" + k}
			for i := range 1 + r.IntN(2)*140 {
				args = append(args, strconv.Itoa(i), "m"+strconv.Itoa(r.IntN(200)))
			}
			c.do(args...)
		case 4:
			c.do("ZREM", "z"+k, "m"+strconv.Itoa(r.IntN(200)))
		default:
			c.do("SET", "k"+k, strconv.Itoa(r.IntN(1000)))
		}
	}
	srv, stop := openServer(t, dir, mod)
	for round := range 15 {
		// A restart that replayed the log runs a checkpoint of its own
		// soon after: let it end first, or it saves most of this round's
		// writes and leaves the visit under test too little to pause on.
		for deadline := time.Now().Add(time.Minute); srv.replayed > 0 && srv.checkpoints.Load() == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no checkpoint within a minute of a start that replayed the log", round)
			}
		}
		c, other := dial(t, srv), dial(t, srv)
		for range 300 {
			write(c)
		}
		var pauses atomic.Int64
		keyspace.SetVisitPause(func(sh *keyspace.Shard) {
			pauses.Add(1)
			// Deleting the key just behind the visit shifts the run
			// ahead of it back across.
			behind := sh.KeyBehindVisit()
			mu.Lock()
			del := behind != "" && r.IntN(6) == 0
			mu.Unlock()
			if del {
				other.do("DEL", behind)
			}
			write(other)
		})
		// The checkpoint a restart runs after its replay may be running:
		// SAVE refuses to run beside it.
		for got := c.do("SAVE"); got != "+OK\r\n"; got = c.do("SAVE") {
			if !strings.Contains(got, "in progress") {
				t.Fatalf("SAVE: %q", got)
			}
			time.Sleep(time.Millisecond)
		}
		keyspace.SetVisitPause(nil)
		// That checkpoint may also have started during the SAVE and be
		// writing through the pause still: its writes are part of the
		// state to compare only once it has ended.
		for srv.bgsave.Load() {
			time.Sleep(time.Millisecond)
		}
		if n := pauses.Load(); n < 5 {
			t.Fatalf("round %d: the visit paused %d times", round, n)
		}
		want := dumpKeyspace(srv)
		crashStop(srv, stop)
		srv, stop = openServer(t, dir, mod)
		sameKeys(t, dumpKeyspace(srv), want)
	}
}

// TestPersistForeignDatabases: keys of databases beyond --databases are
// not served but stay on disk through rewrites (which write only what
// memory holds), for a server started again with more databases; a key
// gone since the base stays gone.
func TestPersistForeignDatabases(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	for _, cmd := range [][]string{
		{"SELECT", "5"}, {"SET", "kept", "1"}, {"HSET", "h", "f", "v"}, {"SET", "gone", "x"},
		{"ZADD", "window", "1700000000001", "1700000000001", "1700000000002", "1700000000002"},
		{"ZADD", "z", "1.5", "m"},
		{"SAVE"}, // a rewrite: the store had no base
		{"DEL", "gone"}, {"INCR", "kept"},
		{"SAVE"}, // records over the base: "kept" and a KindGone for "gone"
	} {
		c.do(cmd...)
	}
	stop()
	few := func(c *Config) { c.Databases = 4 }
	for range 2 {
		srv, stop = openServer(t, dir, few)
		c = dial(t, srv)
		if got := c.do("SELECT", "5"); !strings.HasPrefix(got, "-ERR") {
			t.Fatalf("SELECT 5 with 4 databases: %q", got)
		}
		srv.ckptMu.Lock()
		srv.ckptFull = true // the next checkpoint rewrites
		srv.ckptMu.Unlock()
		c.do("SET", "a", "b")
		if got := c.do("SAVE"); got != "+OK\r\n" {
			t.Fatalf("SAVE: %q", got)
		}
		if got := srv.rewrites.Load(); got != 1 {
			t.Fatalf("%d rewrites", got)
		}
		stop()
	}
	srv, stop = openServer(t, dir, nil)
	defer stop()
	c = dial(t, srv)
	c.do("SELECT", "5")
	for cmd, want := range map[string]string{
		"GET kept":                      "$1\r\n2\r\n",
		"HGET h f":                      "$1\r\nv\r\n",
		"EXISTS gone":                   ":0\r\n",
		"ZRANGE window 0 -1 WITHSCORES": "*4\r\n$13\r\n1700000000001\r\n$13\r\n1700000000001\r\n$13\r\n1700000000002\r\n$13\r\n1700000000002\r\n",
		"ZRANGE z 0 -1 WITHSCORES":      "*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n",
	} {
		if got := c.do(strings.Fields(cmd)...); got != want {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
}

// TestPersistForeignDatabasesLog: the log's changes to a database beyond
// --databases, replayed by a server started with fewer after a crash, are
// kept with the rest of that database's keys, for a server started with
// more again.
func TestPersistForeignDatabasesLog(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	ts := func(i int) string { return strconv.Itoa(1_700_000_000_000 + i) }
	for _, cmd := range [][]string{
		{"SELECT", "5"}, {"SET", "a", "1"}, {"ZADD", "w", ts(1), ts(1), ts(2), ts(2)},
		{"HSET", "h", "f", "v"}, {"SET", "gone", "x"}, {"ZADD", "z", "1", "m"},
		{"ZADD", "e", "1", "x"}, {"ZADD", "r", "1", "x"},
		{"SAVE"},
		// In the log only, from here.
		{"INCR", "a"}, {"DEL", "gone"}, {"SET", "new", "n"}, {"ZREM", "z", "m"},
		{"MULTI"}, {"ZADD", "w", ts(3), ts(3)}, {"ZREMRANGEBYSCORE", "w", "-inf", ts(1)},
		{"PEXPIRE", "w", "3600000"}, {"EXEC"},
		// Emptied and refilled in one record; changed, then replaced
		// by a string; deleted and made again.
		{"MULTI"}, {"ZREM", "e", "x"}, {"ZADD", "e", "2", "y"}, {"EXEC"},
		{"ZADD", "r", "2", "y"}, {"SET", "r", "s"},
		{"ZADD", "w", ts(4), ts(4)}, {"ZADD", "w2", "1", "p"}, {"DEL", "w2"}, {"ZADD", "w2", "5", "q"},
		{"SELECT", "7"}, {"SET", "flushed", "x"}, {"FLUSHDB"}, {"SET", "after", "y"},
	} {
		c.do(cmd...)
	}
	want := dumpKeyspace(srv)
	if len(want) != 8 {
		t.Fatalf("keyspace before the crash: %v", want)
	}
	crashStop(srv, stop)
	srv, stop = openServer(t, dir, func(c *Config) { c.Databases = 4 })
	if got := dumpKeyspace(srv); len(got) != 0 {
		t.Fatalf("keys served from databases 0-3: %v", got)
	}
	c = dial(t, srv)
	c.do("SAVE") // the log goes; its changes must be in the snapshot now
	crashStop(srv, stop)
	srv, _ = openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv), want)
}

// TestRewriteDue: over a base, a checkpoint rewrites once an eighth of the
// keys changed (deletions count), or once the records written over the
// base since it number half the keys; a flushed database rewrites whatever
// the share.
func TestRewriteDue(t *testing.T) {
	srv, stop := openServer(t, t.TempDir(), func(c *Config) {
		c.Params = map[string]string{"save": "", "auto-aof-rewrite-min-size": "1gb"}
	})
	defer stop()
	c := dial(t, srv)
	for i := range 80 {
		c.do("SET", "k"+strconv.Itoa(i), "v")
	}
	c.do("SAVE") // no base yet: a rewrite
	if got := srv.rewrites.Load(); got != 1 {
		t.Fatalf("%d rewrites after the first save", got)
	}
	if got := c.do("INFO", "persistence"); !strings.Contains(got, "aof_rewrites:1\r\n") {
		t.Fatalf("INFO persistence:\n%s", got)
	}
	due := func() bool {
		srv.ckptMu.Lock()
		defer srv.ckptMu.Unlock()
		return srv.rewriteDue()
	}
	for i := range 5 {
		c.do("SET", "k"+strconv.Itoa(i), "w")
	}
	c.do("DEL", "k5", "k6", "k7", "k8") // 9 of 76 keys changed: below an eighth
	if due() {
		t.Fatal("due with 9 of 76 keys changed")
	}
	c.do("DEL", "k9") // 10 of 75
	if !due() {
		t.Fatal("not due with 10 of 75 keys changed")
	}
	c.do("SAVE") // a rewrite
	c.do("SET", "k10", "x")
	if due() {
		t.Fatal("due after a rewrite")
	}
	srv.ckptMu.Lock()
	srv.overKeys = 37
	srv.ckptMu.Unlock()
	if due() {
		t.Fatal("due with 37 records over a base of 75 keys")
	}
	srv.ckptMu.Lock()
	srv.overKeys = 38
	srv.ckptMu.Unlock()
	if !due() {
		t.Fatal("not due with 38 records over a base of 75 keys")
	}
	c.do("SAVE")
	before := srv.rewrites.Load()
	c.do("SET", "k11", "y")
	c.do("SAVE") // one key changed: records
	c.do("SELECT", "3")
	c.do("FLUSHDB")
	c.do("SAVE") // a flushed database: a rewrite
	if got := srv.rewrites.Load() - before; got != 1 {
		t.Fatalf("%d rewrites for a save of one key and one after FLUSHDB, want 1", got)
	}
}
