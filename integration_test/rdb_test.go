package integration_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis's data formats across the two servers: a DUMP of either RESTOREs
// in the other, and MIGRATE moves keys from either to the other, with
// COPY, REPLACE, KEYS, AUTH and a target database.

// rdbKeyspace is the same keys written on a server: every type cellserver
// holds, small and large, int, short and compressible strings, a TTL.
var rdbKeyspace = func() [][]string {
	cmds := [][]string{
		{"SET", "s", "hello"},
		{"PEXPIRE", "s", "100000"},
		{"SET", "n", "12345"},
		{"SET", "neg", "-70000"},
		{"SET", "big", "9223372036854775807"},
		{"SET", "long", strings.Repeat("compressible text ", 200)},
		{"SET", "bin\x00key", "\x00\xff\r\n"},
		{"RPUSH", "l", "a", "b", "1", "-2", strings.Repeat("x", 300)},
		{"HSET", "h", "f", "v", "g", "7", "", "empty"},
		{"ZADD", "z", "1", "a", "2.5", "b", "-inf", "c", "inf", "d"},
		{"SADD", "si", "3", "-1", "9223372036854775807", "0"},
		{"SADD", "ss", "a", "", "1", strings.Repeat("y", 100)},
	}
	big := []string{"ZADD", "zbig"}
	sbig := []string{"SADD", "sbig"}
	hbig := []string{"HSET", "hbig"}
	lbig := []string{"RPUSH", "lbig"}
	for i := 0; i < 300; i++ {
		big = append(big, strconv.FormatFloat(float64(i)*0.5-30, 'g', -1, 64), "m"+strconv.Itoa(i))
		hbig = append(hbig, "f"+strconv.Itoa(i), strconv.Itoa(i*i))
		lbig = append(lbig, strconv.Itoa(i), "e"+strconv.Itoa(i))
		sbig = append(sbig, "m"+strconv.Itoa(i))
	}
	// A rate limiter's window: members that are their own scores.
	win := []string{"ZADD", "zw"}
	for i := 0; i < 10; i++ {
		ts := strconv.Itoa(1795795085526 + 7*i)
		win = append(win, ts, ts)
	}
	return append(cmds, big, hbig, lbig, sbig, win)
}()

// rdbReads are the reads that show a key's value the same way on both
// servers; prefix names the copy.
func rdbReads(prefix string) [][]string {
	return [][]string{
		{"GET", prefix + "s"}, {"GET", prefix + "n"}, {"GET", prefix + "neg"}, {"GET", prefix + "big"},
		{"GET", prefix + "long"}, {"GET", prefix + "bin\x00key"},
		{"LRANGE", prefix + "l", "0", "-1"}, {"LRANGE", prefix + "lbig", "0", "-1"},
		{"HGET", prefix + "h", "f"}, {"HGET", prefix + "h", "g"}, {"HGET", prefix + "h", ""}, {"HLEN", prefix + "h"},
		{"HLEN", prefix + "hbig"}, {"HGET", prefix + "hbig", "f299"},
		{"ZRANGE", prefix + "z", "0", "-1", "WITHSCORES"}, {"ZRANGE", prefix + "zbig", "0", "-1", "WITHSCORES"},
		{"TYPE", prefix + "l"}, {"TYPE", prefix + "h"}, {"TYPE", prefix + "z"},
		{"SMEMBERS", prefix + "si"}, {"OBJECT", "ENCODING", prefix + "si"}, {"TYPE", prefix + "ss"},
		{"SCARD", prefix + "ss"}, {"SMISMEMBER", prefix + "ss", "a", "", "1", strings.Repeat("y", 100), "b"},
		{"SCARD", prefix + "sbig"}, {"SMISMEMBER", prefix + "sbig", "m0", "m299", "m300"},
		{"ZRANGE", prefix + "zw", "0", "-1", "WITHSCORES"}, {"OBJECT", "ENCODING", prefix + "zw"},
		{"ZSCORE", prefix + "zw", "1795795085533"}, {"ZRANGEBYSCORE", prefix + "zw", "1795795085530", "+inf"},
	}
}

func rdbKeys() []string {
	return []string{"s", "n", "neg", "big", "long", "bin\x00key", "l", "h", "z", "zbig", "hbig", "lbig", "si", "ss", "sbig", "zw"}
}

func TestDumpRestoreAcrossServers(t *testing.T) {
	c := newPair(t)
	for _, cmd := range rdbKeyspace {
		c.Do(cmd...)
	}
	for _, k := range rdbKeys() {
		fromRedis, fromCell := c.Replies("DUMP", k)
		pr, pc := bulkString(t, string(fromRedis)), bulkString(t, string(fromCell))
		// Each server restores the other's payload, with the key's TTL.
		c.Do("RESTORE", "r:"+k, "0", pr)
		c.Do("RESTORE", "c:"+k, "0", pc)
		c.Do("RESTORE", "r:"+k, "0", pc, "REPLACE")
		c.Do("RESTORE", "c:"+k, "0", pr, "REPLACE")
		// A payload of the other server damaged: the same refusal.
		c.Error("RESTORE", "bad", "0", pr[:len(pr)-1]+string(pr[len(pr)-1]^1))
		c.Error("RESTORE", "bad", "0", pc[:len(pc)-1]+string(pc[len(pc)-1]^1))
	}
	for _, read := range append(rdbReads("r:"), rdbReads("c:")...) {
		c.Do(read...)
	}
	// Strings are written as Redis writes them (int encodings, raw), so
	// their payloads are byte for byte Redis's.
	for _, k := range []string{"n", "neg", "big", "bin\x00key"} {
		c.Do("DUMP", k)
	}
}

// TestMigrateBothWays runs one MIGRATE scenario from redis-server to
// cellserver and from cellserver to redis-server: every reply, and what
// both servers hold after each step, must be the same in both directions.
func TestMigrateBothWays(t *testing.T) {
	s := startServers(t, serverOptions{requirepass: "pw"})
	redisToCell := migrateScenario(t, s.redis.addr, s.cell.addr, "pw")
	cellToRedis := migrateScenario(t, s.cell.addr, s.redis.addr, "pw")
	if len(redisToCell) != len(cellToRedis) {
		t.Fatalf("transcripts of different lengths: %d and %d", len(redisToCell), len(cellToRedis))
	}
	for i := range redisToCell {
		if redisToCell[i] != cellToRedis[i] {
			t.Errorf("step %d:\n  redis-server to cellserver: %s\n  cellserver to redis-server: %s", i, redisToCell[i], cellToRedis[i])
		}
	}
}

// migrateScenario moves keys from src to dst and returns what each step
// answered, as "server> command -> reply" lines.
func migrateScenario(t *testing.T, src, dst, password string) []string {
	srcC, dstC := dialAuth(t, src, password), dialAuth(t, dst, password)
	_, dstPort, _ := net.SplitHostPort(dst)
	var out []string
	do := func(who string, conn *respConn, args ...string) {
		t.Helper()
		r := mustDo(t, conn, args...)
		cmd := strings.ReplaceAll(formatCommand(args), strconv.Quote(dstPort), "PORT")
		out = append(out, fmt.Sprintf("%s> %s -> %q", who, cmd, r))
	}
	mig := func(args ...string) {
		t.Helper()
		do("src", srcC, append([]string{"MIGRATE", "127.0.0.1", dstPort}, args...)...)
	}
	do("src", srcC, "FLUSHALL")
	do("dst", dstC, "FLUSHALL")
	for _, cmd := range rdbKeyspace {
		mustDo(t, srcC, cmd...)
	}
	// No password: the target refuses, nothing moves.
	mig("s", "0", "5000")
	do("src", srcC, "EXISTS", "s")
	mig("s", "0", "5000", "AUTH", password)
	do("src", srcC, "EXISTS", "s")
	do("dst", dstC, "GET", "s")
	ttl := mustDo(t, dstC, "PTTL", "s")
	out = append(out, fmt.Sprintf("dst PTTL s in (90000, 100000]: %v", ttlWithin(ttl, 90000, 100000)))
	// COPY with KEYS: the keys stay here and arrive there.
	keys := []string{"n", "neg", "big", "long", "bin\x00key", "l", "h", "z", "zbig", "hbig", "lbig"}
	mig(append([]string{"", "0", "5000", "COPY", "AUTH2", "default", password, "KEYS"}, keys...)...)
	do("src", srcC, append([]string{"EXISTS"}, keys...)...)
	for _, read := range rdbReads("") {
		do("dst", dstC, read...)
	}
	// An existing key there: BUSYKEY without REPLACE, replaced with it.
	mustDo(t, dstC, "SET", "n", "other")
	mig("n", "0", "5000", "AUTH", password)
	do("dst", dstC, "GET", "n")
	do("src", srcC, "EXISTS", "n")
	mig("n", "0", "5000", "AUTH", password, "REPLACE")
	do("dst", dstC, "GET", "n")
	do("src", srcC, "EXISTS", "n")
	// Another database there.
	mig("l", "3", "5000", "AUTH", password, "REPLACE")
	do("src", srcC, "EXISTS", "l")
	do("dst", dstC, "SELECT", "3")
	do("dst", dstC, "LRANGE", "l", "0", "-1")
	do("dst", dstC, "SELECT", "0")
	// Nothing to move.
	mig("nokey", "0", "5000", "AUTH", password)
	return out
}

func dialAuth(t *testing.T, addr, password string) *respConn {
	t.Helper()
	c, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if r := mustDo(t, c, "AUTH", password); r != "+OK\r\n" {
		t.Fatalf("AUTH on %s: %q", addr, r)
	}
	return c
}

// bulkString is a bulk reply's content.
func bulkString(t *testing.T, reply string) string {
	t.Helper()
	head, rest, ok := strings.Cut(reply, "\r\n")
	if !ok || len(head) < 2 || head[0] != '$' {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	n, err := strconv.Atoi(string(head[1:]))
	if err != nil || n < 0 || n > len(rest) {
		t.Fatalf("not a bulk reply: %q", reply)
	}
	return string(rest[:n])
}

func ttlWithin(reply string, lo, hi int64) bool {
	s := strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n")
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > lo && n <= hi
}

// TestThrottleStateMigrates: a CL.THROTTLE limit, spent on cellserver,
// moved to redis-server and back with MIGRATE, is still spent: its TAT is
// a plain string and travels as one.
func TestThrottleStateMigrates(t *testing.T) {
	c := newPair(t)
	_, redisPort, _ := net.SplitHostPort(c.srv.redis.addr)
	_, cellPort, _ := net.SplitHostPort(c.srv.cell.addr)
	for i := 0; i < 5; i++ {
		if r := mustDo(t, c.cell, "CL.THROTTLE", "rl", "4", "1", "60"); !strings.HasPrefix(r, "*5\r\n:0\r\n") {
			t.Fatalf("request %d refused: %q", i, r)
		}
	}
	if r := mustDo(t, c.cell, "MIGRATE", "127.0.0.1", redisPort, "rl", "0", "5000"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE to redis-server: %q", r)
	}
	if r := mustDo(t, c.cell, "EXISTS", "rl"); r != ":0\r\n" {
		t.Fatalf("key still here after MIGRATE: %q", r)
	}
	if r := mustDo(t, c.redis, "TYPE", "rl"); r != "+string\r\n" {
		t.Fatalf("redis-server holds %q", r)
	}
	if r := mustDo(t, c.redis, "PTTL", "rl"); !ttlWithin(r, 0, 300000) {
		t.Errorf("redis-server PTTL: %q", r)
	}
	if r := mustDo(t, c.redis, "MIGRATE", "127.0.0.1", cellPort, "rl", "0", "5000"); r != "+OK\r\n" {
		t.Fatalf("MIGRATE back to cellserver: %q", r)
	}
	if r := mustDo(t, c.cell, "CL.THROTTLE", "rl", "4", "1", "60"); !strings.HasPrefix(r, "*5\r\n:1\r\n") {
		t.Errorf("the limit did not hold across the move: %q", r)
	}
	if r := mustDo(t, c.cell, "CL.THROTTLE", "fresh", "4", "1", "60"); !strings.HasPrefix(r, "*5\r\n:0\r\n") {
		t.Errorf("a fresh key refused: %q", r)
	}
}

// redisSavedFile has a fresh redis-server build rdbKeyspace (and keys
// cellserver skips or drops), SAVE, and returns its file's bytes.
func redisSavedFile(t *testing.T) []byte {
	t.Helper()
	s := startServers(t, serverOptions{})
	r := mustDial(t, s.redis)
	for _, cmd := range rdbKeyspace {
		mustDo(t, r, cmd...)
	}
	mustDo(t, r, "SELECT", "2")
	mustDo(t, r, "SET", "in-db-2", "two")
	mustDo(t, r, "XADD", "a-stream", "*", "f", "v") // a type cellserver does not hold
	mustDo(t, r, "SET", "gone", "soon", "PX", "1")
	if got := mustDo(t, r, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	b, err := os.ReadFile(filepath.Join(s.redis.Cmd.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameReads requires the same replies from a and b to rdbReads and to the
// expiry and database reads around them.
func sameReads(t *testing.T, what string, a, b *respConn) {
	t.Helper()
	reads := append(rdbReads(""), []string{"PEXPIRETIME", "s"}, []string{"PEXPIRETIME", "n"},
		[]string{"SELECT", "2"}, []string{"GET", "in-db-2"}, []string{"EXISTS", "gone"}, []string{"SELECT", "0"}, []string{"DBSIZE"})
	for _, read := range reads {
		ra, rb := mustDo(t, a, read...), mustDo(t, b, read...)
		if ra != rb {
			t.Errorf("%s: %s: %q, want %q", what, formatCommand(read), rb, ra)
		}
	}
}

// TestLoadRedisRDBAtStart: cellserver started on a directory holding
// redis-server's dump (under --dbfilename) serves its keys, keeps them
// durable without the file, and never loads the file again over its store.
func TestLoadRedisRDBAtStart(t *testing.T) {
	file := redisSavedFile(t)
	ref := startServers(t, serverOptions{})
	rc := mustDial(t, ref.redis)
	for _, cmd := range rdbKeyspace {
		mustDo(t, rc, cmd...)
	}
	mustDo(t, rc, "SELECT", "2")
	mustDo(t, rc, "SET", "in-db-2", "two")
	mustDo(t, rc, "SELECT", "0")
	// The reference's TTL differs from the file's: read it from the file's side.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "from-redis.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	p := cellOnDir(t, dir, "--dbfilename", "from-redis.rdb")
	c := mustDial(t, p)
	mustDo(t, rc, "PEXPIREAT", "s", strings.TrimSuffix(strings.TrimPrefix(mustDo(t, c, "PEXPIRETIME", "s"), ":"), "\r\n"))
	sameReads(t, "after loading redis-server's file", rc, c)
	log := p.LogTail(50)
	for _, want := range []string{"rdb: loaded", "from-redis.rdb", "db0=", "db2=1", "skipping a key of a type cellserver does not hold", "key=a-stream"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	// Durable in the store: without the file, the keys are still there.
	mustDo(t, c, "SET", "n", "changed")
	p.Stop()
	if err := os.Remove(filepath.Join(dir, "from-redis.rdb")); err != nil {
		t.Fatal(err)
	}
	p2 := cellOnDir(t, dir, "--dbfilename", "from-redis.rdb")
	c2 := mustDial(t, p2)
	mustDo(t, rc, "SET", "n", "changed")
	sameReads(t, "after a restart without the file", rc, c2)
	// The file back: the store holds data, so the file is not loaded.
	p2.Stop()
	if err := os.WriteFile(filepath.Join(dir, "from-redis.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	p3 := cellOnDir(t, dir, "--dbfilename", "from-redis.rdb")
	if got := mustDo(t, mustDial(t, p3), "GET", "n"); got != "$7\r\nchanged\r\n" {
		t.Errorf("the file was loaded over the store: GET n = %q", got)
	}
}

// TestBadRDBAtStart: a damaged file stops the start (exit 1) with a log
// line naming the file and the offset, and leaves nothing behind: a
// start without the file finds an empty keyspace.
func TestBadRDBAtStart(t *testing.T) {
	file := redisSavedFile(t)
	for name, bad := range map[string][]byte{
		"truncated":  file[:len(file)/2],
		"bad crc":    append(append([]byte(nil), file[:len(file)-1]...), file[len(file)-1]^1),
		"bad header": append([]byte("REDIS0099"), file[9:]...),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "dump.rdb")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			log := refusedStartIn(t, harness.binary, dir)
			if !strings.Contains(log, path) || !strings.Contains(log, "offset") {
				t.Errorf("log does not name the file and offset:\n%s", log)
			}
			os.Remove(path)
			p := cellOnDir(t, dir)
			if got := mustDo(t, mustDial(t, p), "DBSIZE"); got != ":0\r\n" {
				t.Errorf("after the failed start, DBSIZE = %q", got)
			}
		})
	}
}

// TestRedisLoadsCellserverRDB: the file cellserver's SAVE writes, and the
// one `redis-cli --rdb` fetches from it, both load in redis-server with
// every key, value and expiry.
func TestRedisLoadsCellserverRDB(t *testing.T) {
	cli := requirePeer(t, "redis-cli")
	s := startServers(t, serverOptions{})
	ref, cell := mustDial(t, s.redis), mustDial(t, s.cell)
	for _, c := range []*respConn{ref, cell} {
		for _, cmd := range rdbKeyspace {
			mustDo(t, c, cmd...)
		}
		mustDo(t, c, "SELECT", "2")
		mustDo(t, c, "SET", "in-db-2", "two")
		mustDo(t, c, "SELECT", "0")
	}
	mustDo(t, ref, "PEXPIREAT", "s", strings.TrimSuffix(strings.TrimPrefix(mustDo(t, cell, "PEXPIRETIME", "s"), ":"), "\r\n"))
	if got := mustDo(t, cell, "SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE: %q", got)
	}
	dir := t.TempDir()
	saved, err := os.ReadFile(filepath.Join(s.cell.Cmd.Dir, "dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "saved.rdb"), saved, 0o644); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(s.cell.addr)
	out, err := exec.Command(cli, "-h", "127.0.0.1", "-p", port, "--rdb", filepath.Join(dir, "cli.rdb")).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --rdb: %v\n%s", err, out)
	}
	for _, name := range []string{"saved.rdb", "cli.rdb"} {
		loaded, err := startProcess("redis-server", "redis-server", func(port int, pdir string) []string {
			return redisArgs(port, pdir, serverOptions{args: []string{"--dir", dir, "--dbfilename", name}})
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(loaded.Stop)
		sameReads(t, "redis-server loading cellserver's "+name, ref, mustDial(t, loaded))
	}
	// INFO and LASTSAVE report the save.
	info := mustDo(t, cell, "INFO", "persistence")
	if !strings.Contains(info, "rdb_saves:1\r\n") || !strings.Contains(info, "rdb_changes_since_last_save:0\r\n") {
		t.Errorf("INFO persistence after SAVE:\n%s", info)
	}
	if ls := mustDo(t, cell, "LASTSAVE"); !ttlWithin(ls, time.Now().Unix()-60, time.Now().Unix()+1) {
		t.Errorf("LASTSAVE: %q", ls)
	}
}
