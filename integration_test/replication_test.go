package integration_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Replication against real programs: a master and a replica, each
// cellserver or redis-server 7.0.15, the rate-limiting workloads on the
// master, then WAIT and every key compared on both (type, value,
// PEXPIRETIME); a dropped link must resume by partial resync.

// replNode is one server of a replication pair.
type replNode struct {
	p    *process
	rdb  *redis.Client
	port string
	// How it was started, for restart.
	bin, dir string
	args     []string
}

// restart starts n again, as it was started, on the same port and
// directory, after it stopped or was killed.
func (n *replNode) restart(t *testing.T) {
	t.Helper()
	p, err := launch(n.p.name, n.bin, n.args, n.dir, mustAtoi(n.port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	n.p = p
}

func startReplNode(t *testing.T, program string, args ...string) *replNode {
	t.Helper()
	n, _ := startReplNodeConf(t, program, nil, args...)
	return n
}

// startReplNodeConf is startReplNode with a configuration file holding
// conf in the server's directory (CONFIG REWRITE needs one), and returns
// its path; nil conf: no file.
func startReplNodeConf(t *testing.T, program string, conf []string, args ...string) (*replNode, string) {
	t.Helper()
	bin := requirePeer(t, "redis-server")
	mk := redisArgs
	name := "redis-server"
	if program == "cellserver" {
		bin, mk, name = cellserverBinary(t), cellserverArgs, "cellserver"
	}
	var confPath, workDir string
	var all []string
	p, err := startProcess(name, bin, func(port int, dir string) []string {
		workDir = dir
		all = append(mk(port, dir, serverOptions{}), args...)
		if conf == nil {
			return all
		}
		confPath = filepath.Join(dir, "node.conf")
		if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		all = append([]string{confPath}, all...)
		return all
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	_, port, _ := net.SplitHostPort(p.addr)
	c := newGoRedis(t, p.addr, 2, nil)
	return &replNode{p: p, rdb: c, port: port, bin: bin, dir: workDir, args: all}, confPath
}

// waitLinkUp waits until replica reports master_link_status:up.
func waitLinkUp(t *testing.T, replica *replNode) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		info, _ := replica.rdb.Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	info, _ := replica.rdb.Info(ctx, "replication").Result()
	t.Fatalf("replica link never came up:\n%s\n%s", info, replica.p.LogTail(20))
}

// replWorkloads runs W1, W2, W3, W4 (when throttle), W6 and W7 on the
// master, over a few users and rounds, as a limiter's clients run them.
func replWorkloads(t *testing.T, m *redis.Client, round int, throttle bool) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UnixMilli()
	for u := 0; u < 4; u++ {
		user := fmt.Sprintf("u%d", u)
		// W1: the sliding window log in MULTI.
		_, err := m.TxPipelined(ctx, func(p redis.Pipeliner) error {
			k := "w1:" + user
			p.ZAdd(ctx, k, redis.Z{Score: float64(now + int64(round)), Member: fmt.Sprintf("%d-%d", now, round)})
			p.ZRemRangeByScore(ctx, k, "-inf", strconv.FormatInt(now-60000, 10))
			p.ZCard(ctx, k)
			p.Expire(ctx, k, time.Minute)
			return nil
		})
		if err != nil {
			t.Fatalf("W1: %v", err)
		}
		// W1 with bare timestamps as members, as most limiters write them.
		m.ZAdd(ctx, "w1ts:"+user, redis.Z{Score: float64(now + int64(round)), Member: now + int64(round)})
		m.Expire(ctx, "w1ts:"+user, time.Minute)
		// W3: the fixed window counter.
		if _, err := m.TxPipelined(ctx, func(p redis.Pipeliner) error {
			k := "w3:" + user
			p.Incr(ctx, k)
			p.ExpireNX(ctx, k, time.Minute)
			return nil
		}); err != nil {
			t.Fatalf("W3: %v", err)
		}
		// W2: a counter in a script (more than one effect).
		if err := m.Eval(ctx, `local n = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], 60000)
redis.call('SET', KEYS[2], n)
return n`, []string{"w2:" + user, "w2last:" + user}, 2).Err(); err != nil {
			t.Fatalf("W2: %v", err)
		}
		// Scripts cellserver runs as Go (native limiter scripts): the
		// window and ring as shipped, redis_rate's GCRA by its library.
		if err := m.Eval(ctx, testScript(t, "w2_window.lua"), []string{"w2n:" + user}, now+int64(round), now-60000, 60).Err(); err != nil {
			t.Fatalf("W2 window: %v", err)
		}
		ring := "w6n:" + user
		if n, _ := m.Exists(ctx, ring).Result(); n == 0 {
			m.RPush(ctx, ring, 0, 0, 0, 0, 0, 0)
		}
		if err := m.Eval(ctx, testScript(t, "w6_ring.lua"), []string{ring, ring + ":slot"}, (round+5)%6, round%6, 6).Err(); err != nil {
			t.Fatalf("W6 ring: %v", err)
		}
		if _, err := redis_rate.NewLimiter(m).Allow(ctx, "rr:"+user, redis_rate.PerMinute(10)); err != nil {
			t.Fatalf("redis_rate: %v", err)
		}
		if throttle {
			if err := m.Do(ctx, "CL.THROTTLE", "w4:"+user, 5, 10, 60, 1).Err(); err != nil {
				t.Fatalf("W4: %v", err)
			}
		}
		// W6: a ring of slots in a list.
		k6 := "w6:" + user
		if n, _ := m.Exists(ctx, k6).Result(); n == 0 {
			m.RPush(ctx, k6, 0, 0, 0, 0, 0, 0)
		}
		m.LSet(ctx, k6, int64(round%6), round)
		m.Expire(ctx, k6, 2*time.Minute)
		// W7: a leaky bucket in a hash.
		k7 := "w7:" + user
		if _, err := m.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, k7, "level", round, "ts", now)
			p.HIncrBy(ctx, k7, "n", 1)
			p.PExpire(ctx, k7, 90*time.Second)
			return nil
		}); err != nil {
			t.Fatalf("W7: %v", err)
		}
	}
	// A set of the users seen.
	m.SAdd(ctx, "seen", fmt.Sprint(round))
	m.SortStore(ctx, "seen", "seensorted", &redis.Sort{Order: "DESC"})
	// Bitmaps: a bit per round, a counter field, and their union.
	m.SetBit(ctx, "bits", int64(round*37), 1)
	m.BitField(ctx, "fields", "OVERFLOW", "SAT", "INCRBY", "i8", "#2", 100, "SET", "u5", 3, round)
	m.BitOpOr(ctx, "bitsor", "bits", "fields")
	replChangesInPlace(t, m, round)
	// A key that goes, and one that expires.
	m.Set(ctx, "gone", "x", 0)
	m.Del(ctx, "gone")
	m.Set(ctx, "brief", "x", time.Millisecond)
}

// replChangesInPlace changes values of each type in place, as a master
// streams member by member: members and fields added, rescored and
// removed, keys emptied by a removal, replaced by another type, renamed,
// their expiry set and removed, big strings appended to and overwritten.
func replChangesInPlace(t *testing.T, m *redis.Client, round int) {
	t.Helper()
	ctx := context.Background()
	r := strconv.Itoa(round)
	old := strconv.Itoa(round - 2)
	for _, c := range []redis.Cmder{
		m.ZAdd(ctx, "zm", redis.Z{Score: float64(round), Member: "m" + r}, redis.Z{Score: 0.5, Member: "fixed"}),
		m.ZIncrBy(ctx, "zm", 1.25, "fixed"),
		m.ZRem(ctx, "zm", "m"+old),
		m.ZAdd(ctx, "zpop", redis.Z{Score: float64(round), Member: "a" + r}, redis.Z{Score: float64(-round), Member: "b" + r}),
		m.ZPopMin(ctx, "zpop"),
		m.PExpire(ctx, "zm", time.Minute),
		m.HSet(ctx, "hm", "f"+r, r, "same", "x"),
		m.HDel(ctx, "hm", "f"+old),
		m.HIncrByFloat(ctx, "hm", "float", 0.5),
		m.SAdd(ctx, "sm", "s"+r, round),
		m.SRem(ctx, "sm", "s"+old),
		m.SAdd(ctx, "smint", round, round+1000),
		m.SRem(ctx, "smint", round-2),
		m.SMove(ctx, "sm", "sm2", r),
		m.SPop(ctx, "smint"),
		m.PExpire(ctx, "sm", time.Minute),
		m.Persist(ctx, "zm"),
		m.Expire(ctx, "hm", time.Hour),
		// Emptied by a removal: the key goes, with its TTL; added back
		// in the same transaction on odd rounds.
		m.ZAdd(ctx, "zempty", redis.Z{Score: 1, Member: "only"}),
		m.Expire(ctx, "zempty", time.Minute),
		m.ZRem(ctx, "zempty", "only"),
		m.HSet(ctx, "hempty", "f", "v"),
		m.HDel(ctx, "hempty", "f"),
		m.SAdd(ctx, "sempty", "x"),
		m.SRem(ctx, "sempty", "x"),
		// Big strings: APPEND and SETRANGE write a few bytes of many.
		m.SetRange(ctx, "bigs", int64(round*3), "abc"),
		m.Append(ctx, "bigs", strings.Repeat("y", 300)),
		m.SetRange(ctx, "bigs", 10, "ZZ"+r),
		m.SetBit(ctx, "bigs", int64(round*8+1), 1),
		// Lists pushed and popped at both ends, trimmed.
		m.LPush(ctx, "lm", "l"+r, "m"+r),
		m.RPush(ctx, "lm", "r"+r),
		m.RPop(ctx, "lm"),
		m.LTrim(ctx, "lm", 0, 6),
		// A longer list changed in the middle, at the ends and across.
		m.RPush(ctx, "lbig", "a"+r, "b"+r, "c"+r, "d"+r, "e"+r),
		m.LInsert(ctx, "lbig", "BEFORE", "b"+r, "ins"+r),
		m.LInsert(ctx, "lbig", "AFTER", "d"+r, "ins2"+r),
		m.LRem(ctx, "lbig", 1, "c"+old),
		m.LSet(ctx, "lbig", 3, "set"+r),
		m.LMove(ctx, "lbig", "lbig2", "LEFT", "RIGHT"),
		m.LMove(ctx, "lbig", "lbig", "RIGHT", "LEFT"),
		m.LMPop(ctx, "RIGHT", 2, "lbig"),
		m.LPop(ctx, "lbig"),
		m.PExpire(ctx, "lbig", time.Minute),
	} {
		if err := c.Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", c.Args(), err)
		}
	}
	if _, err := m.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, "zempty", redis.Z{Score: 1, Member: "a"})
		p.PExpire(ctx, "zempty", time.Minute)
		p.ZAdd(ctx, "zempty", redis.Z{Score: 2, Member: "b"})
		p.ZRem(ctx, "zempty", "a")
		if round%2 == 1 {
			p.ZRem(ctx, "zempty", "b")
			p.ZAdd(ctx, "zempty", redis.Z{Score: 3, Member: "c"})
		}
		return nil
	}); err != nil {
		t.Fatalf("zempty: %v", err)
	}
	// Another type over a set changed in place, and back.
	if round%2 == 0 {
		m.ZAdd(ctx, "ztype", redis.Z{Score: 1, Member: "x" + r})
		m.ZAdd(ctx, "ztype", redis.Z{Score: 2, Member: "y" + r})
	} else {
		m.Set(ctx, "ztype", "now a string "+r, 0)
	}
	// RENAME of a value changed in place, over a key that held one.
	m.HSet(ctx, "rnsrc", "f"+r, r)
	m.HSet(ctx, "rndst", "old", r)
	m.Rename(ctx, "rnsrc", "rndst")
	m.HSet(ctx, "rndst", "after", r)
	m.ZAdd(ctx, "rnz", redis.Z{Score: float64(round), Member: r})
	m.PExpire(ctx, "rnz", time.Minute)
	m.Rename(ctx, "rnz", "rnz"+strconv.Itoa(round%2))
}

// keyState is one key as compared: type, value as read type-wise, expiry.
func keyState(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	ctx := context.Background()
	typ := c.Type(ctx, key).Val()
	var v any
	switch typ {
	case "string":
		v = c.Get(ctx, key).Val()
	case "hash":
		h := c.HGetAll(ctx, key).Val()
		ks := make([]string, 0, len(h))
		for f, x := range h {
			ks = append(ks, f+"="+x)
		}
		slices.Sort(ks)
		v = ks
	case "list":
		v = c.LRange(ctx, key, 0, -1).Val()
	case "set":
		m := c.SMembers(ctx, key).Val()
		slices.Sort(m)
		v = m
	case "zset":
		v = c.ZRangeWithScores(ctx, key, 0, -1).Val()
	}
	exp := c.Do(ctx, "PEXPIRETIME", key).Val()
	return fmt.Sprintf("%s %v exp=%v", typ, v, exp)
}

// compareKeyspaces fails t unless master and replica hold the same keys
// with the same values and expiry times.
func compareKeyspaces(t *testing.T, master, replica *replNode) int {
	t.Helper()
	ctx := context.Background()
	// replWorkloads' "brief" lives 1 ms: compare once it has expired, or
	// the master, read first, may still show it when the replica, read a
	// moment later, already hides it.
	time.Sleep(5 * time.Millisecond)
	mk := master.rdb.Keys(ctx, "*").Val()
	rk := replica.rdb.Keys(ctx, "*").Val()
	slices.Sort(mk)
	slices.Sort(rk)
	if !slices.Equal(mk, rk) {
		t.Fatalf("keys differ:\nmaster  %v\nreplica %v", mk, rk)
	}
	for _, k := range mk {
		if a, b := keyState(t, master.rdb, k), keyState(t, replica.rdb, k); a != b {
			t.Errorf("key %q differs:\nmaster  %s\nreplica %s", k, a, b)
		}
	}
	return len(mk)
}

func replInfoField(t *testing.T, c *redis.Client, section, name string) string {
	t.Helper()
	info := c.Info(context.Background(), section).Val()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// runReplication is the whole check for one master/replica pair.
func runReplication(t *testing.T, masterProg, replicaProg string) {
	ctx := context.Background()
	master := startReplNode(t, masterProg)
	throttle := masterProg == "cellserver"
	// Data before the replica comes: it arrives by the full resync.
	replWorkloads(t, master.rdb, 0, throttle)
	replica := startReplNode(t, replicaProg)
	if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
		t.Fatalf("REPLICAOF: %v", err)
	}
	waitLinkUp(t, replica)
	for round := 1; round < 6; round++ {
		replWorkloads(t, master.rdb, round, throttle)
	}
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 5000 = %d, %v; want 1", n, err)
	}
	if err := replica.rdb.Set(ctx, "w", "x", 0).Err(); err == nil || err.Error() != "READONLY You can't write against a read only replica." {
		t.Errorf("SET on the replica: %v", err)
	}
	if role := replica.rdb.Do(ctx, "ROLE").Val(); fmt.Sprint(role) == "" || fmt.Sprint(role.([]any)[0]) != "slave" {
		t.Errorf("ROLE on the replica: %v", role)
	}
	if n := compareKeyspaces(t, master, replica); n < 20 {
		t.Fatalf("only %d keys compared", n)
	}
	if got := replInfoField(t, master.rdb, "replication", "connected_slaves"); got != "1" {
		t.Errorf("connected_slaves:%s, want 1", got)
	}
	if list := master.rdb.Do(ctx, "CLIENT", "LIST", "TYPE", "replica").String(); !strings.Contains(list, " flags=S ") {
		t.Errorf("CLIENT LIST TYPE replica on the master: %s, want flags=S", list)
	}
	// WAIT for two replicas when there is one: the timeout, then 1.
	if n, _ := master.rdb.Wait(ctx, 2, 200*time.Millisecond).Result(); n != 1 {
		t.Errorf("WAIT 2 200 = %d, want 1", n)
	}

	// A dropped link resumes where it stopped.
	partial, _ := strconv.Atoi(replInfoField(t, master.rdb, "stats", "sync_partial_ok"))
	if err := replica.rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatalf("CLIENT KILL TYPE master: %v", err)
	}
	for round := 6; round < 9; round++ {
		replWorkloads(t, master.rdb, round, throttle)
	}
	waitLinkUp(t, replica)
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT after the drop = %d, %v; want 1", n, err)
	}
	if after, _ := strconv.Atoi(replInfoField(t, master.rdb, "stats", "sync_partial_ok")); after != partial+1 {
		t.Errorf("sync_partial_ok %d -> %d, want one more", partial, after)
	}
	compareKeyspaces(t, master, replica)
}

// TestReplRedisFromCellserver: redis-server 7.0.15 replicates cellserver.
// TestReplMasterLinkInClientList: a replica lists its link to its master
// in CLIENT LIST, flagged M, from the master's address, as redis-server
// 7.0 does; CLIENT LIST TYPE master lists it alone.
func TestReplMasterLinkInClientList(t *testing.T) {
	ctx := context.Background()
	p := startReplPairs(t)
	p.attach(t)
	for _, m := range []*replNode{p.redisM, p.cellM} {
		m.rdb.Set(ctx, "k", "v", 0)
		m.rdb.Wait(ctx, 1, 5000) // its REPLCONF GETACK is the link's last command
	}
	fields := regexp.MustCompile(`\b(addr|flags|db|sub|psub|ssub|multi|cmd|user|resp)=\S*`)
	for _, n := range [][2]*replNode{{p.redisM, p.redisR}, {p.cellM, p.cellR}} {
		master, replica := n[0], n[1]
		var lines []string
		for _, args := range [][]any{{"CLIENT", "LIST"}, {"CLIENT", "LIST", "TYPE", "master"}} {
			list, err := replica.rdb.Do(ctx, args...).Text()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
				if strings.Contains(l, " flags=M ") {
					got = append(got, strings.Join(fields.FindAllString(l, -1), " "))
				}
			}
			if len(got) != 1 || (len(args) > 2 && strings.Count(strings.TrimSpace(list), "\n") != 0) {
				t.Errorf("%s: %v lists the master link %d times in %q", replica.p.name, args, len(got), list)
				continue
			}
			lines = append(lines, got[0])
		}
		want := "addr=127.0.0.1:" + master.port + " flags=M db=0 sub=0 psub=0 ssub=0 multi=-1 cmd=replconf user=(superuser) resp=2"
		for _, l := range lines {
			if l != want {
				t.Errorf("%s: the master link in CLIENT LIST: %q, want %q", replica.p.name, l, want)
			}
		}
	}
}

func TestReplRedisFromCellserver(t *testing.T) {
	runReplication(t, "cellserver", "redis-server")
}

// TestReplCellserverFromRedis: cellserver replicates redis-server 7.0.15.
func TestReplCellserverFromRedis(t *testing.T) {
	runReplication(t, "redis-server", "cellserver")
}

// TestReplCellserverFromCellserver: cellserver replicates cellserver,
// CL.THROTTLE included.
func TestReplCellserverFromCellserver(t *testing.T) {
	runReplication(t, "cellserver", "cellserver")
}

// TestReplCellserverReplicaDurable: a cellserver replica with a store
// keeps what it replicated, the snapshot and the stream, keys and function
// libraries, across a restart.
func TestReplCellserverReplicaDurable(t *testing.T) {
	ctx := context.Background()
	master := startReplNode(t, "cellserver")
	master.rdb.Set(ctx, "before", "1", 0)
	// Libraries too: one by the full resync, one by the stream.
	if err := master.rdb.Do(ctx, "FUNCTION", "LOAD", replLib("a", 1)).Err(); err != nil {
		t.Fatal(err)
	}
	var dir string
	var port int
	bin := cellserverBinary(t)
	args := func(p int, d string) []string {
		port, dir = p, d
		return append(cellserverArgs(p, d, serverOptions{}), "--appendonly", "yes")
	}
	p, err := startProcess("cellserver", bin, args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	replica := &replNode{p: p, rdb: newGoRedis(t, p.addr, 2, nil)}
	if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
		t.Fatal(err)
	}
	waitLinkUp(t, replica)
	replWorkloads(t, master.rdb, 1, true)
	if err := master.rdb.Do(ctx, "FUNCTION", "LOAD", replLib("b", 1)).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := master.rdb.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT = %d, %v", n, err)
	}
	libs := libraryView(t, master)
	want := map[string]string{}
	for _, k := range master.rdb.Keys(ctx, "*").Val() {
		want[k] = keyState(t, master.rdb, k)
	}
	p.Stop()
	p2, err := launch("cellserver", bin, args(port, dir), dir, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p2.Stop)
	again := newGoRedis(t, p2.addr, 2, nil)
	if got := libraryView(t, &replNode{rdb: again}); got != libs {
		t.Errorf("libraries after restart:\n%s\nwant\n%s", got, libs)
	}
	got := again.Keys(ctx, "*").Val()
	if len(got) != len(want) {
		t.Fatalf("after restart %d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g := keyState(t, again, k); g != w {
			t.Errorf("key %q after restart: %s, want %s", k, g, w)
		}
	}
}

// TestReplFullSyncUnderWrites: replicas of both kinds attach to a
// cellserver master that is being written all the while, with the
// diskless (EOF-marked) snapshot. A redis-server replica looks for the
// mark only at the end of each read, so a stream sent right behind the
// mark would hide it and the sync would never end.
func TestReplFullSyncUnderWrites(t *testing.T) {
	for _, kind := range []string{"redis-server", "cellserver"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			master := startReplNode(t, "cellserver")
			stop := make(chan struct{})
			done := make(chan int)
			go func() {
				n := 0
				for {
					select {
					case <-stop:
						done <- n
						return
					default:
					}
					master.rdb.Incr(ctx, "counter")
					n++
				}
			}()
			time.Sleep(20 * time.Millisecond)
			for i := 0; i < 3; i++ {
				replica := startReplNode(t, kind)
				if err := replica.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
					t.Fatal(err)
				}
				waitLinkUp(t, replica)
			}
			close(stop)
			n := <-done
			if n == 0 {
				t.Fatal("no write ran during the syncs")
			}
			if err := master.rdb.Wait(ctx, 3, 5*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReplDisklessSyncDelay: with repl-diskless-sync-delay, replicas that
// arrive within the delay wait for it (INFO: state=wait_bgsave) and share
// one snapshot; repl-diskless-sync-max-replicas starts it as soon as that
// many wait. Both masters, the same observations.
func TestReplDisklessSyncDelay(t *testing.T) {
	const started = "Starting BGSAVE for SYNC with target: replicas sockets"
	for _, kind := range []string{"redis-server", "cellserver"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			master := startReplNode(t, kind, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "3")
			master.rdb.Set(ctx, "k", "v", 0)
			attach := func(n int) []*replNode {
				var reps []*replNode
				for i := 0; i < n; i++ {
					reps = append(reps, startReplNode(t, "redis-server"))
				}
				for _, r := range reps {
					if err := r.rdb.Do(ctx, "REPLICAOF", "127.0.0.1", master.port).Err(); err != nil {
						t.Fatal(err)
					}
				}
				return reps
			}
			reps := attach(2)
			// Both are listed, waiting, before the delay has passed.
			var info string
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				info = master.rdb.Info(ctx, "replication").Val()
				if strings.Count(info, "state=wait_bgsave") == 2 {
					break
				}
			}
			if !strings.Contains(info, "connected_slaves:2") || strings.Count(info, "state=wait_bgsave") != 2 {
				t.Fatalf("within the delay:\n%s", info)
			}
			// ROLE lists only online replicas: none yet.
			if role := fmt.Sprint(master.rdb.Do(ctx, "ROLE").Val()); !strings.HasSuffix(role, " []]") {
				t.Errorf("ROLE within the delay: %s", role)
			}
			for _, r := range reps {
				waitLinkUp(t, r)
			}
			if n := strings.Count(master.p.LogTail(200), started); n != 1 {
				t.Errorf("%d snapshots for two replicas within the delay, want 1:\n%s", n, master.p.LogTail(30))
			}
			// max-replicas 2 starts it long before a 60 s delay.
			if err := master.rdb.ConfigSet(ctx, "repl-diskless-sync-delay", "60").Err(); err != nil {
				t.Fatal(err)
			}
			if err := master.rdb.ConfigSet(ctx, "repl-diskless-sync-max-replicas", "2").Err(); err != nil {
				t.Fatal(err)
			}
			for _, r := range attach(2) {
				waitLinkUp(t, r)
			}
			if n := strings.Count(master.p.LogTail(200), started); n != 2 {
				t.Errorf("%d snapshots after the second pair, want 2", n)
			}
			compareKeyspaces(t, master, reps[1])
		})
	}
}
