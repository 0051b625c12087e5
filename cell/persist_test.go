package cell

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/persist"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// openServer runs a server with persistence in dir on a free loopback
// port. stop shuts it down (idempotent; also run when the test ends).
func openServer(t testing.TB, dir string, mod func(*Config)) (srv *Server, stop func()) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Shards = 8
	cfg.Dir = dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if mod != nil {
		mod(&cfg)
	}
	srv, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.listeners = append(srv.listeners, ln)
	srv.mu.Unlock()
	go srv.Serve()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
	t.Cleanup(stop)
	return srv, stop
}

// write runs fn as a write command on key in db, through call(): the
// shard locking and effect commit every command gets.
func write(srv *Server, db int, key string, fn func(x *Ctx, key []byte)) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newClient(srv, a)
	c.db = db
	cmd := &Command{Name: "test.write", Arity: 2, Flags: FlagWrite, FirstKey: 1, LastKey: 1, Step: 1,
		Handler: func(x *Ctx) { fn(x, x.Args[1]) }}
	c.call(cmd, [][]byte{[]byte("test.write"), []byte(key)}, time.Now())
}

func setKey(srv *Server, db int, key, val string, exp int64) {
	write(srv, db, key, func(x *Ctx, k []byte) { x.SetString(k, []byte(val), exp) })
}

// dumpKeyspace lists every live key as db/key=value/exp, sorted.
func dumpKeyspace(srv *Server) []string {
	var out []string
	now := time.Now().UnixMilli()
	for d := range srv.ks.DBs() {
		srv.ks.Each(d, func(k string, e *keyspace.Entry) {
			if !e.Expired(now) {
				out = append(out, fmt.Sprintf("%d/%q=%s/%d", d, k, valueString(e), e.Exp))
			}
		})
	}
	sort.Strings(out)
	return out
}

// valueString shows a value with its type and, for aggregates, its order.
func valueString(e *keyspace.Entry) string {
	switch v := e.Obj().(type) {
	case nil:
		return fmt.Sprintf("%q", e.Str())
	case *keyspace.Hash:
		pairs := make([]string, v.Len())
		for i := range v.Len() {
			f, val := v.At(i)
			pairs[i] = fmt.Sprintf("%q:%q,", f, val)
		}
		// A listpack's order is part of its value (HGETALL shows it); a
		// hashtable's is not, in Redis or here: deletion moves the last
		// field into the hole, so replaying the log over a checkpoint
		// that already holds later fields may order them otherwise.
		if v.Encoding() == "hashtable" {
			sort.Strings(pairs)
		}
		return "hash(" + strings.Join(pairs, "") + v.Encoding() + ")"
	case *keyspace.ZSet:
		var b strings.Builder
		v.Range(0, -1, false, func(m []byte, score float64) bool {
			fmt.Fprintf(&b, "%q:%v,", m, score)
			return true
		})
		return "zset(" + b.String() + ")"
	case *keyspace.List:
		var b strings.Builder
		for i := range v.Len() {
			fmt.Fprintf(&b, "%q,", v.At(i))
		}
		return "list(" + b.String() + ")"
	case *keyspace.Set:
		members := make([]string, v.Len())
		for i := range v.Len() {
			members[i] = fmt.Sprintf("%q,", v.At(i))
		}
		// A set has no order to keep, and a load picks its encoding
		// afresh, as Redis's does: intset while every member is an
		// integer and they are few, whatever it was before.
		sort.Strings(members)
		return "set(" + strings.Join(members, "") + ")"
	case *keyspace.Window:
		return fmt.Sprintf("window(%v)", v.Runs(nil))
	}
	return fmt.Sprintf("%T", e.Obj())
}

func sameKeys(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return
	}
	// Each line is db/"key"=value/expiry: show only the keys that differ.
	byKey := func(lines []string) map[string]string {
		m := make(map[string]string, len(lines))
		for _, l := range lines {
			k, _, _ := strings.Cut(l, "=")
			m[k] = l
		}
		return m
	}
	g, w := byKey(got), byKey(want)
	var diff []string
	for _, l := range append(append([]string(nil), want...), got...) {
		k, _, _ := strings.Cut(l, "=")
		if g[k] != w[k] && !slices.Contains(diff, k) {
			diff = append(diff, k)
			diff = append(diff, "  got:  "+cmp.Or(g[k], "(none)"), "  want: "+cmp.Or(w[k], "(none)"))
		}
	}
	t.Fatalf("keyspace after restart differs in %d of %d keys:\n%s", len(diff)/3, len(want), strings.Join(diff, "\n"))
}

// TestPersistRestart: strings, hashes and lists (with their order and
// encoding), absolute TTLs, binary keys, every database, deletions and
// CL.THROTTLE state survive a restart exactly.
func TestPersistRestart(t *testing.T) {
	for _, fsync := range []string{FsyncAlways, FsyncEverySec, FsyncNo} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			mod := func(c *Config) { c.AppendFsync = fsync }
			srv, stop := openServer(t, dir, mod)
			exp := time.Now().Add(time.Hour).UnixMilli()
			for db := range 16 {
				setKey(srv, db, fmt.Sprintf("k%d", db), fmt.Sprintf("v%d", db), 0)
			}
			setKey(srv, 0, "ttl", "x", exp)
			setKey(srv, 3, "\x00\xff\r\nbin", "\x00\x01", 0)
			setKey(srv, 0, "overwritten", "old", exp)
			setKey(srv, 0, "overwritten", "new", 0)
			setKey(srv, 0, "deleted", "x", 0)
			write(srv, 0, "deleted", func(x *Ctx, k []byte) { x.Remove(k) })
			c := dial(t, srv)
			if r := c.do("CL.THROTTLE", "limit", "5", "10", "60"); r != "*5\r\n:0\r\n:6\r\n:5\r\n:-1\r\n:6\r\n" {
				t.Fatalf("CL.THROTTLE: %q", r)
			}
			for _, cmd := range [][]string{
				{"HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3"}, {"HDEL", "h", "f1"}, {"HSET", "h", "f1", "again"},
				{"EXPIRE", "h", "3600"}, {"RPUSH", "l", "a", "b", "c"}, {"LPUSH", "l", "z"}, {"LPOP", "l"},
				{"LSET", "l", "1", "B"}, {"SELECT", "9"}, {"RPUSH", "\x00l", "\x00", ""}, {"SET", "s", "v", "PX", "3600000"},
				{"INCR", "n"}, {"INCRBY", "n", "41"}, {"APPEND", "s", "w"}, {"RENAME", "s", "s2"},
				{"HSET", "big", "f", strings.Repeat("x", 100)}, {"RPUSH", "gone", "x"}, {"DEL", "gone"},
				{"RPUSH", "popped", "x"}, {"RPOP", "popped"},
				{"ZADD", "z", "1", "a", "2", "b", "3", "c", "-inf", "\x00"}, {"ZREM", "z", "b"}, {"ZINCRBY", "z", "5", "a"},
				{"ZADD", "window", "100", "100-1", "200", "200-1", "300", "300-1"}, {"ZREMRANGEBYSCORE", "window", "-inf", "150"},
				{"PEXPIRE", "window", "3600000"}, {"ZADD", "gonez", "1", "x"}, {"ZPOPMIN", "gonez"},
			} {
				if r := c.do(cmd...); strings.HasPrefix(r, "-") {
					t.Fatalf("%v: %s", cmd, r)
				}
			}
			for i := range 300 {
				c.do("ZADD", "bigz", strconv.Itoa(i%7), fmt.Sprintf("member-%d", i))
			}
			// A large set keeps a -0 score's sign, and so must a
			// restart, whatever order the set's members load in.
			c.do("ZADD", "bigz", "-0", "0")
			want := dumpKeyspace(srv)
			if len(want) != 29 {
				t.Fatalf("keyspace before restart:\n%s", strings.Join(want, "\n"))
			}
			stop()

			srv2, _ := openServer(t, dir, mod)
			sameKeys(t, dumpKeyspace(srv2), want)
			// The limiter continues where it stopped: 4 left, not 5.
			if r := dial(t, srv2).do("CL.THROTTLE", "limit", "5", "10", "60"); !strings.HasPrefix(r, "*5\r\n:0\r\n:6\r\n:4\r\n") {
				t.Fatalf("CL.THROTTLE after restart: %q", r)
			}
		})
	}
}

// TestPersistTransactions: an EXEC is one batch, and a FLUSHDB inside it
// deletes what came before it, not what came after.
func TestPersistTransactions(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	setKey(srv, 0, "before", "x", 0)
	setKey(srv, 1, "other-db", "x", 0)
	c := dial(t, srv)
	for _, cmd := range [][]string{
		{"MULTI"}, {"CL.THROTTLE", "a", "5", "10", "60"}, {"FLUSHDB"}, {"CL.THROTTLE", "b", "5", "10", "60"},
		{"SELECT", "2"}, {"CL.THROTTLE", "c", "5", "10", "60"}, {"EXEC"},
	} {
		c.do(cmd...)
	}
	want := dumpKeyspace(srv)
	if len(want) != 3 {
		t.Fatalf("before restart: %v", want)
	}
	stop()
	srv2, stop2 := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv2), want)
	dial(t, srv2).do("FLUSHALL")
	stop2()
	srv3, _ := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv3), nil)
}

// TestPersistIntsInOrder: an int stored by SET, INCR or CL.THROTTLE is
// encoded into the execution's record when it is written (logInt), other
// changes when the execution ends, and a flush where it runs. Replayed
// from the log alone, each transaction below must leave what it left in
// memory: the int first and the noted key's final state after it, or the
// flush between the two.
func TestPersistIntsInOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmds [][]string
	}{
		{"int then delete", [][]string{{"SET", "k", "1"}, {"DEL", "k"}}},
		{"int then append", [][]string{{"SET", "k", "1"}, {"APPEND", "k", "x"}}},
		{"int then expire", [][]string{{"SET", "k", "1"}, {"PEXPIRE", "k", "3600000"}}},
		{"int over a list", [][]string{{"RPUSH", "k", "a"}, {"SET", "k", "7"}}},
		{"list over an int", [][]string{{"SET", "k", "7"}, {"DEL", "k"}, {"RPUSH", "k", "a"}}},
		{"int then incr", [][]string{{"SET", "k", "1"}, {"INCR", "k"}, {"SET", "j", "x"}, {"SET", "j", "3"}}},
		{"flush then int", [][]string{{"SET", "old", "1"}, {"FLUSHDB"}, {"SET", "k", "5"}, {"CL.THROTTLE", "t", "5", "10", "60"}}},
		{"int then flush", [][]string{{"SET", "k", "5"}, {"FLUSHDB"}, {"SET", "s", "str"}}},
		{"flushall between ints", [][]string{{"CL.THROTTLE", "a", "5", "10", "60"}, {"SELECT", "3"}, {"INCR", "b"}, {"FLUSHALL"}, {"INCR", "c"}, {"SELECT", "0"}, {"SET", "d", "4"}}},
		{"sorted set then int", [][]string{{"ZADD", "k", "1", "m"}, {"SET", "k", "9"}, {"ZADD", "z", "1", "m"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, nil)
			c := dial(t, srv)
			c.do("SET", "kept", "before")
			c.do("MULTI")
			for _, cmd := range tc.cmds {
				c.do(cmd...)
			}
			if got := c.do("EXEC"); strings.Contains(got, "-ERR") || strings.Contains(got, "-WRONGTYPE") {
				t.Fatalf("EXEC: %q", got)
			}
			want := dumpKeyspace(srv)
			crashStop(srv, stop)
			srv, _ = openServer(t, dir, nil)
			sameKeys(t, dumpKeyspace(srv), want)
		})
	}
}

// TestPersistExpiry: a key that expired while the server was down is not
// loaded, and the active expiry's deletions reach the store.
func TestPersistExpiry(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, func(c *Config) { c.Hz = 100 })
	now := time.Now().UnixMilli()
	// "soon" outlives the reaping below unless the machine is very slow;
	// the checks below hold either way.
	soon := now + 2000
	setKey(srv, 0, "soon", "x", soon)
	setKey(srv, 0, "later", "x", now+3_600_000)
	for i := range 50 {
		setKey(srv, 1, fmt.Sprintf("reaped%d", i), "x", now+20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := dumpKeyspace(srv)
		n := srv.ks.CountKeys(1)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("active expiry left %d keys: %v", n, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	// Stopped before "soon" expired: nothing can have deleted it.
	stoppedBefore := time.Now().UnixMilli() < soon
	// The store itself no longer holds the reaped keys.
	st, err := persist.Open(dir, persist.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	st.Load(func(db int, key []byte, v persist.Value) error {
		stored = append(stored, fmt.Sprintf("%d/%s", db, key))
		return nil
	})
	st.Close()
	sort.Strings(stored)
	want := []string{"0/later", "0/soon"}
	if !stoppedBefore && !slices.Contains(stored, "0/soon") {
		want = want[:1]
	}
	sameKeys(t, stored, want)
	// "soon" expires while the server is down.
	time.Sleep(time.Until(time.UnixMilli(soon + 50)))
	srv2, _ := openServer(t, dir, nil)
	got := dumpKeyspace(srv2)
	if len(got) != 1 || !strings.HasPrefix(got[0], `0/"later"`) {
		t.Fatalf("after restart: %v", got)
	}
}

// TestPersistExpiredNotLogged: a key that expires, lazily or by the active
// cycle, costs the effect log nothing, and still does not come back after
// a restart, whether the snapshot holds it with its expiry (saved) or
// holds an older state that never expires (changed since the save: the
// checkpoint then writes it as gone), under both kinds of checkpoint.
func TestPersistExpiredNotLogged(t *testing.T) {
	eachRewritePolicy(t, testPersistExpiredNotLogged)
}

func testPersistExpiredNotLogged(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, func(c *Config) { c.Hz = 100 })
	srv.activeExpiryOff.Store(true) // until the lazy deletions are done
	c := dial(t, srv)
	for _, k := range []string{"lazy", "active"} {
		c.do("SET", k, "forever")
	}
	c.do("SET", "saved", "x", "PX", "300")
	c.do("SET", "kept", "1") // or the expiries empty the keyspace, and the second SAVE rewrites
	c.do("SAVE")
	// Changed since the save: the snapshot's "lazy" and "active" never expire.
	c.do("PEXPIRE", "lazy", "300")
	c.do("PEXPIRE", "active", "300")
	time.Sleep(400 * time.Millisecond)
	logSize := func() string {
		for _, l := range strings.Split(c.do("INFO", "persistence"), "\r\n") {
			if strings.HasPrefix(l, "aof_current_size:") {
				return l
			}
		}
		t.Fatal("no aof_current_size")
		return ""
	}
	before := logSize()
	for _, k := range []string{"lazy", "saved"} {
		if got := c.do("GET", k); got != "$-1\r\n" {
			t.Fatalf("GET %s: %q", k, got)
		}
	}
	if after := logSize(); after != before {
		t.Fatalf("keys expired on access grew the log: %s, then %s", before, after)
	}
	srv.activeExpiryOff.Store(false)
	reaped := func() bool {
		return srv.ks.Peek(0, []byte("active")) == nil
	}
	for deadline := time.Now().Add(5 * time.Second); !reaped(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the active cycle left the expired key")
		}
	}
	if after := logSize(); after != before {
		t.Fatalf("keys the active cycle expired grew the log: %s, then %s", before, after)
	}
	c.do("SAVE")
	c.do("SET", "after", "1") // in the log only
	want := dumpKeyspace(srv)
	crashStop(srv, stop)
	srv, _ = openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv), want)
	if len(want) != 2 {
		t.Fatalf("keyspace before the restart: %v", want)
	}
}

// TestPersistOffTouchesNoDisk: appendonly no creates no file but the RDB
// file SAVE and BGSAVE write, as Redis without its AOF; a server made by
// New has no files and refuses both.
func TestPersistOffTouchesNoDisk(t *testing.T) {
	dir := t.TempDir()
	srv, _ := openServer(t, dir, func(c *Config) { c.AppendOnly = false })
	setKey(srv, 0, "k", "v", 0)
	c := dial(t, srv)
	if srv.store != nil {
		t.Fatal("a store with appendonly no")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files in --dir before SAVE: %v", ents)
	}
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE: %q", r)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != "dump.rdb" {
		t.Fatalf("files in --dir after SAVE: %v", ents)
	}
	mem := dial(t, startServer(t, nil))
	if r := mem.do("SAVE"); r != "-"+ErrNoPersistence+"\r\n" {
		t.Fatalf("SAVE on a server made in memory: %q", r)
	}
	if r := mem.do("BGSAVE"); r != "-"+ErrNoPersistence+"\r\n" {
		t.Fatalf("BGSAVE on a server made in memory: %q", r)
	}
}

func TestPersistSaveCommands(t *testing.T) {
	dir := t.TempDir()
	srv, _ := openServer(t, dir, nil)
	c := dial(t, srv)
	start := time.Now().Unix()
	if r := c.do("LASTSAVE"); r != fmt.Sprintf(":%d\r\n", srv.start.Unix()) {
		t.Fatalf("LASTSAVE: %q", r)
	}
	setKey(srv, 0, "k", "v", 0)
	if srv.totalDirty()-srv.dirtyAtSave.Load() != 1 {
		t.Fatal("changes since save not counted")
	}
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE: %q", r)
	}
	if srv.lastSave.Load() < start || srv.totalDirty() != srv.dirtyAtSave.Load() {
		t.Fatal("SAVE did not reset the save point")
	}
	info := c.do("INFO", "persistence")
	for _, f := range []string{"aof_enabled:1\r\n", "rdb_changes_since_last_save:0\r\n", "rdb_saves:1\r\n",
		"aof_last_write_status:ok\r\n", "loading:0\r\n", "aof_current_size:", "rdb_last_save_time:" + itoa(srv.lastSave.Load()) + "\r\n"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO persistence lacks %q:\n%s", f, info)
		}
	}
	if r := c.do("CONFIG", "GET", "appendonly"); r != "*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n" {
		t.Errorf("CONFIG GET appendonly: %q", r)
	}
	c.do("CONFIG", "SET", "appendfsync", "always")
	if !srv.fsyncAlways.Load() || srv.fsyncPolicy() != FsyncAlways {
		t.Error("CONFIG SET appendfsync always did not apply")
	}
	c.do("CONFIG", "SET", "appendfsync", "everysec")
	if r := c.do("BGSAVE"); r != "+Background saving started\r\n" {
		t.Fatalf("BGSAVE: %q", r)
	}
	if r := c.do("BGSAVE", "NOW"); r != "-"+ErrSyntax+"\r\n" {
		t.Fatalf("BGSAVE NOW: %q", r)
	}
	if r := c.do("MULTI"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := c.do("SAVE"); r != "-"+ErrNoMulti+"\r\n" {
		t.Fatalf("SAVE in MULTI: %q", r)
	}
}

// TestPersistSecondServerRefused: one --dir, one server.
func TestPersistSecondServerRefused(t *testing.T) {
	dir := t.TempDir()
	openServer(t, dir, nil)
	cfg := DefaultConfig()
	cfg.Dir = dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), "in use by another cellserver") {
		t.Fatalf("second Open: %v", err)
	}
}

// diskFS fails writes and syncs with ENOSPC while full is set, and counts
// the syncs of log files.
type diskFS struct {
	vfs.FS
	full  *atomic.Bool
	syncs *atomic.Int64
}

type diskFile struct {
	vfs.File
	fs  diskFS
	log bool
}

func (fs diskFS) wrap(name string, f vfs.File) vfs.File {
	return diskFile{f, fs, strings.HasSuffix(name, ".log")}
}

func (fs diskFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return fs.wrap(name, f), nil
}

func (fs diskFS) ReuseForWrite(o, n string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(o, n, cat)
	if err != nil {
		return nil, err
	}
	return fs.wrap(n, f), nil
}

func (f diskFile) Write(p []byte) (int, error) {
	if f.fs.full.Load() {
		return 0, &os.PathError{Op: "write", Path: "log", Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (f diskFile) sync(do func() error) error {
	if f.fs.full.Load() {
		return &os.PathError{Op: "fsync", Path: "log", Err: syscall.ENOSPC}
	}
	if f.log {
		f.fs.syncs.Add(1)
	}
	return do()
}

func (f diskFile) Sync() error     { return f.sync(f.File.Sync) }
func (f diskFile) SyncData() error { return f.sync(f.File.SyncData) }

// fault is the effect log's side of the same disk (Config.logFault).
func (fs diskFS) fault(op string) error {
	if fs.full.Load() {
		return &os.PathError{Op: op, Path: "effect log", Err: syscall.ENOSPC}
	}
	if op == "sync" {
		fs.syncs.Add(1)
	}
	return nil
}

func newDiskFS() diskFS {
	return diskFS{FS: vfs.Default, full: &atomic.Bool{}, syncs: &atomic.Int64{}}
}

// TestPersistMisconf: while the disk fails, writes and PING get Redis's
// MISCONF error, reads keep working, and a write already running waits
// unacknowledged (appendfsync always); once the disk works, it completes
// and writes are accepted again.
func TestPersistMisconf(t *testing.T) {
	dir := t.TempDir()
	disk := newDiskFS()
	srv, _ := openServer(t, dir, func(c *Config) { c.AppendFsync = FsyncAlways; c.persistFS = disk; c.logFault = disk.fault })
	// Runs before the server's shutdown: a disk that never recovers would
	// hold the shutdown's final sync forever.
	t.Cleanup(func() { disk.full.Store(false) })
	c := dial(t, srv)
	if r := c.do("CL.THROTTLE", "a", "5", "10", "60"); !strings.HasPrefix(r, "*5") {
		t.Fatal(r)
	}
	disk.full.Store(true)
	if _, err := c.nc.Write(encode("CL.THROTTLE", "a", "5", "10", "60")); err != nil {
		t.Fatal(err)
	}
	// The reply must not come while its effect is not on disk.
	c.nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if b, err := c.br.Peek(1); err == nil {
		t.Fatalf("a reply (%q) was sent before its write was durable", b)
	}
	misconf := "-MISCONF Errors writing to the AOF file: No space left on device\r\n"
	// Another database: shards the held write did not touch.
	other := dial(t, srv)
	other.do("SELECT", "1")
	for _, cmd := range [][]string{{"CL.THROTTLE", "b", "5", "10", "60"}, {"PING"}, {"FLUSHALL"}} {
		if r := other.do(cmd...); r != misconf {
			t.Fatalf("%v while the disk is full: %q", cmd, r)
		}
	}
	if r := other.do("CL.PROBE", "a", "5", "10", "60"); !strings.HasPrefix(r, "*5") {
		t.Fatalf("a read while the disk is full: %q", r)
	}
	// A script that may write, by its flags, is refused before it runs.
	// (One that may not runs, but its reply, which holds every shard the
	// first time, waits for the held write's.)
	for _, body := range []string{"#!lua\nreturn 1", "#!lua flags=allow-oom\nreturn 1"} {
		if r := other.do("EVAL", body, "0"); r != misconf {
			t.Fatalf("EVAL %q while the disk is full: %q", body, r)
		}
	}
	fams := scrape(t, srv)
	if v, _ := metricValue(fams, "cellserver_persistence_misconf"); v != 1 {
		t.Errorf("/metrics while writes get MISCONF: cellserver_persistence_misconf %v", v)
	}
	if v, _ := metricValue(fams, "cellserver_persistence_unsynced_bytes"); v <= 0 {
		t.Errorf("/metrics with a write not synced: cellserver_persistence_unsynced_bytes %v", v)
	}
	other.do("MULTI")
	if r := other.do("CL.THROTTLE", "b", "5", "10", "60"); r != misconf {
		t.Fatalf("queueing a write: %q", r)
	}
	if r := other.do("EVAL", "#!lua\nreturn 1", "0"); r != misconf {
		t.Fatalf("queueing a script that may write: %q", r)
	}
	if r := other.do("EXEC"); !strings.HasPrefix(r, "-EXECABORT") {
		t.Fatalf("EXEC: %q", r)
	}
	disk.full.Store(false)
	if r := c.read(); !strings.HasPrefix(r, "*5\r\n:0\r\n:6\r\n:4\r\n") {
		t.Fatalf("the held reply: %q", r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := other.do("PING")
		if r == "+PONG\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PING after the disk recovered: %q", r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := other.do("CL.THROTTLE", "b", "5", "10", "60"); !strings.HasPrefix(r, "*5") {
		t.Fatalf("a write after recovery: %q", r)
	}
}

// TestPersistStartOnFullDisk: a server started on a disk with no room
// serves what it saved and logged, refuses writes with MISCONF, and
// accepts them once the disk has room again, without losing any.
func TestPersistStartOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	c.do("SET", "saved", "1")
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE: %q", r)
	}
	c.do("SET", "logged", "2")
	stop()

	disk := newDiskFS()
	disk.full.Store(true)
	t.Cleanup(func() { disk.full.Store(false) })
	opened := make(chan *Server, 1)
	go func() {
		srv, _ := openServer(t, dir, func(c *Config) { c.persistFS = disk; c.logFault = disk.fault })
		opened <- srv
	}()
	select {
	case srv = <-opened:
	case <-time.After(10 * time.Second):
		disk.full.Store(false)
		t.Fatal("the server did not start on the full disk")
	}
	c = dial(t, srv)
	if r := c.do("MGET", "saved", "logged"); r != "*2\r\n$1\r\n1\r\n$1\r\n2\r\n" {
		t.Fatalf("reads on the full disk: %q", r)
	}
	misconf := "-MISCONF Errors writing to the AOF file: No space left on device\r\n"
	if r := c.do("SET", "during", "3"); r != misconf {
		t.Fatalf("a write on the full disk: %q", r)
	}
	if r := c.do("SAVE"); !strings.HasPrefix(r, "-") {
		t.Fatalf("SAVE on the full disk: %q", r)
	}
	if r := c.do("INFO", "persistence"); !strings.Contains(r, "aof_last_write_status:err") {
		t.Fatalf("INFO on the full disk:\n%s", r)
	}

	disk.full.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := c.do("SET", "after", "4")
		if r == "+OK\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a write once the disk has room: %q", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := c.do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE once the disk has room: %q", r)
	}
	c.do("SET", "last", "5")
	srv.Shutdown(context.Background())

	srv, _ = openServer(t, dir, nil)
	c = dial(t, srv)
	want := "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n$1\r\n4\r\n$1\r\n5\r\n"
	if r := c.do("MGET", "saved", "logged", "during", "after", "last"); r != want {
		t.Fatalf("after a restart: %q, want %q", r, want)
	}
}

// TestPersistGroupCommit: under appendfsync always, a pipeline is synced
// once, and concurrent clients share fsyncs.
func TestPersistGroupCommit(t *testing.T) {
	dir := t.TempDir()
	disk := newDiskFS()
	srv, _ := openServer(t, dir, func(c *Config) { c.AppendFsync = FsyncAlways; c.persistFS = disk; c.logFault = disk.fault })
	c := dial(t, srv)
	var pipe []byte
	for i := range 100 {
		pipe = append(pipe, encode("CL.THROTTLE", fmt.Sprintf("p%d", i), "5", "10", "60")...)
	}
	before := disk.syncs.Load()
	c.nc.Write(pipe)
	for range 100 {
		c.read()
	}
	if n := disk.syncs.Load() - before; n > 3 {
		t.Errorf("a pipeline of 100 writes took %d fsyncs", n)
	}

	const clients, per = 20, 50
	before = disk.syncs.Load()
	var wg sync.WaitGroup
	for g := range clients {
		cc := dial(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				cc.nc.Write(encode("CL.THROTTLE", fmt.Sprintf("c%d-%d", g, i), "5", "10", "60"))
				cc.read()
			}
		}()
	}
	wg.Wait()
	n := disk.syncs.Load() - before
	t.Logf("%d acknowledged writes from %d clients took %d fsyncs", clients*per, clients, n)
	if n >= clients*per {
		t.Errorf("no fsync was shared: %d for %d writes", n, clients*per)
	}
}

// TestPersistEviction: keys evicted under maxmemory are gone after a
// restart too.
func TestPersistEviction(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	for i := range 300 {
		setKey(srv, i%3, fmt.Sprintf("k%d", i), "v", 0)
	}
	c := dial(t, srv)
	c.do("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
	c.do("CONFIG", "SET", "maxmemory", "1")
	for i := range 20 {
		c.do("SET", fmt.Sprintf("new%d", i), "v")
	}
	c.do("CONFIG", "SET", "maxmemory", "0")
	want := dumpKeyspace(srv)
	if len(want) >= 300 {
		t.Fatalf("nothing was evicted: %d keys", len(want))
	}
	stop()
	srv2, _ := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv2), want)
}

// TestPersistPipelines: clients pipelining writes of every type to shared
// keys, with FLUSHDB and EXEC among them: after a restart the keyspace is
// exactly what it was, so the store's order of effects on each key was the
// order they had in memory.
func TestPersistPipelines(t *testing.T) {
	for _, fsync := range []string{FsyncEverySec, FsyncAlways} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			srv, stop := openServer(t, dir, func(c *Config) { c.AppendFsync = fsync })
			var wg sync.WaitGroup
			for g := range 8 {
				c := dial(t, srv)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for round := range 20 {
						var pipe []byte
						n := 0
						add := func(args ...string) { pipe = append(pipe, encode(args...)...); n++ }
						for i := range 50 {
							k := fmt.Sprintf("k%d", (g*7+i*3+round)%25)
							switch i % 10 {
							case 0:
								add("SET", k, fmt.Sprintf("%d-%d", g, round))
							case 1:
								add("DEL", k)
							case 2:
								add("HSET", "h"+k, "f", strconv.Itoa(i))
							case 3:
								add("ZADD", "z", strconv.Itoa(i), k)
							case 4:
								if g == 0 && round%7 == 3 {
									add("FLUSHDB")
								} else {
									add("RPUSH", "l", k)
								}
							case 5:
								add("MULTI")
								add("INCR", "counter")
								add("SET", k+"tx", "x")
								add("EXEC")
							default:
								add("INCR", k+"n")
							}
						}
						c.nc.Write(pipe)
						for range n {
							c.read()
						}
					}
				}()
			}
			wg.Wait()
			want := dumpKeyspace(srv)
			stop()
			srv2, _ := openServer(t, dir, func(c *Config) { c.AppendFsync = fsync })
			sameKeys(t, dumpKeyspace(srv2), want)
		})
	}
}

// TestPersistScripts: what a script writes, alone or inside EXEC, is
// committed with the script's shards still locked and survives a restart.
func TestPersistScripts(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	window := `redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1]) redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - 100) redis.call('PEXPIRE', KEYS[1], 60000) return redis.call('ZCARD', KEYS[1])`
	for i := range 10 {
		if r := c.do("EVAL", window, "1", "w", strconv.Itoa(i*30)); !strings.HasPrefix(r, ":") {
			t.Fatalf("EVAL: %q", r)
		}
	}
	c.do("MULTI")
	c.do("EVAL", "redis.call('SET', KEYS[1], 'a') return redis.call('INCR', KEYS[2])", "2", "s", "n")
	c.do("EVAL", "return redis.call('DEL', KEYS[1])", "1", "gone")
	if r := c.do("EXEC"); !strings.HasPrefix(r, "*2") {
		t.Fatalf("EXEC: %q", r)
	}
	want := dumpKeyspace(srv)
	if len(want) != 3 {
		t.Fatalf("before restart: %v", want)
	}
	stop()
	srv2, _ := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv2), want)
}

// TestObjectFromStoredSizes: hashes and lists loaded whole (in one
// allocation sized for them) are the ones their commands would have
// built, at every size around the encodings' and the list ring's bounds,
// and go on working as those: more pushes, pops and fields.
func TestObjectFromStoredSizes(t *testing.T) {
	srv := New(fuzzConfig())
	for _, n := range []int{1, 3, 4, 5, 8, 9, 17, 128, 129, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var items [][]byte
			wantH, wantL := keyspace.NewHash(), keyspace.NewList()
			for i := range n {
				f, v := []byte(fmt.Sprintf("f%d", i)), []byte(fmt.Sprintf("v%d", i))
				items = append(items, f, v)
				wantH.Set(f, v)
				wantL.PushBack(v)
			}
			h, _ := keyspace.ValueFromStored(persist.Value{Kind: persist.KindHash, Items: items}, srv.zsetConfig())
			if h == nil {
				t.Fatal("hash not loaded")
			}
			var vals [][]byte
			for i := 1; i < len(items); i += 2 {
				vals = append(vals, items[i])
			}
			l, _ := keyspace.ValueFromStored(persist.Value{Kind: persist.KindList, Items: vals}, srv.zsetConfig())
			if l == nil {
				t.Fatal("list not loaded")
			}
			gotH, gotL := h.(*keyspace.Hash), l.(*keyspace.List)
			for _, step := range []func(h *keyspace.Hash, l *keyspace.List){
				func(*keyspace.Hash, *keyspace.List) {},
				func(h *keyspace.Hash, l *keyspace.List) {
					h.Set([]byte("extra"), []byte("x"))
					l.PushBack([]byte("back"))
					l.PushFront([]byte("front"))
				},
				func(h *keyspace.Hash, l *keyspace.List) { l.PopFront(); l.PopFront() },
			} {
				step(gotH, gotL)
				step(wantH, wantL)
				if gotH.Encoding() != wantH.Encoding() || gotH.Len() != wantH.Len() {
					t.Fatalf("hash: %s of %d, want %s of %d", gotH.Encoding(), gotH.Len(), wantH.Encoding(), wantH.Len())
				}
				for i := range wantH.Len() {
					gf, gv := gotH.At(i)
					wf, wv := wantH.At(i)
					if gf != wf || string(gv) != string(wv) {
						t.Fatalf("hash field %d: %q=%q, want %q=%q", i, gf, gv, wf, wv)
					}
				}
				if gotL.Len() != wantL.Len() {
					t.Fatalf("list of %d, want %d", gotL.Len(), wantL.Len())
				}
				for i := range wantL.Len() {
					if string(gotL.At(i)) != string(wantL.At(i)) {
						t.Fatalf("list element %d: %q, want %q", i, gotL.At(i), wantL.At(i))
					}
				}
			}
		})
	}
}
