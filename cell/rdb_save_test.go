package cell

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
)

// readRDB reads a file written by SAVE into "db/key=value" lines.
func readRDB(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := rdb.NewReader(f, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != rdb.KindKey {
			continue
		}
		var parts []string
		switch rec.Value.Type {
		case rdb.TypeString:
			parts = []string{string(rec.Value.Str)}
		default:
			for i, e := range rec.Value.Elems {
				p := string(e)
				if rec.Value.Type == rdb.TypeZSet {
					p += "@" + strconvF(rec.Value.Scores[i])
				}
				parts = append(parts, p)
			}
		}
		v := rec.Value.Type.String() + ":" + strings.Join(parts, ",")
		if rec.Expire != 0 {
			v += " ttl"
		}
		out[string(rune('0'+rec.DB))+"/"+string(rec.Key)] = v
	}
}

// TestSaveWritesRDB: SAVE, BGSAVE and SHUTDOWN SAVE write the keyspace to
// <dir>/<dbfilename> as an RDB file (expired keys left out), and a server
// started on that file alone loads the same keyspace.
func TestSaveWritesRDB(t *testing.T) {
	for _, appendonly := range []bool{true, false} {
		dir := t.TempDir()
		srv, _ := openServer(t, dir, func(c *Config) { c.AppendOnly = appendonly })
		c := dial(t, srv)
		c.do("SET", "s", "v")
		c.do("SET", "n", "42")
		c.do("RPUSH", "l", "a", "b")
		c.do("HSET", "h", "f", "v")
		c.do("ZADD", "z", "1.5", "m", "-inf", "lo")
		c.do("PEXPIRE", "s", "100000")
		c.do("SET", "gone", "x", "PX", "1")
		c.do("SELECT", "3")
		c.do("SET", "three", "3")
		time.Sleep(5 * time.Millisecond)
		want := map[string]string{
			"0/s": "string:v ttl", "0/n": "string:42", "0/l": "list:a,b", "0/h": "hash:f,v",
			"0/z": "zset:lo@-Inf,m@1.5", "3/three": "string:3",
		}
		if r := c.do("SAVE"); r != "+OK\r\n" {
			t.Fatalf("SAVE: %q", r)
		}
		got := readRDB(t, filepath.Join(dir, "dump.rdb"))
		if len(got) != len(want) {
			t.Errorf("appendonly %v: file holds %v, want %v", appendonly, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("appendonly %v: %s = %q, want %q", appendonly, k, got[k], v)
			}
		}
		if ents, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb")); len(ents) != 0 {
			t.Errorf("temporary files left: %v", ents)
		}
		// BGSAVE rewrites it.
		c.do("SET", "after", "1")
		if r := c.do("BGSAVE"); r != "+Background saving started\r\n" {
			t.Fatalf("BGSAVE: %q", r)
		}
		deadline := time.Now().Add(10 * time.Second)
		for readRDB(t, filepath.Join(dir, "dump.rdb"))["3/after"] == "" {
			if time.Now().After(deadline) {
				t.Fatal("BGSAVE did not write the key set before it")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// The file alone, in a new directory, loads as the keyspace.
		dir2 := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(dir, "dump.rdb"))
		os.WriteFile(filepath.Join(dir2, "dump.rdb"), b, 0o644)
		srv2, _ := openServer(t, dir2, func(c *Config) { c.AppendOnly = appendonly })
		c2 := dial(t, srv2)
		if r := c2.do("ZRANGE", "z", "0", "-1", "WITHSCORES"); r != "*4\r\n$2\r\nlo\r\n$4\r\n-inf\r\n$1\r\nm\r\n$3\r\n1.5\r\n" {
			t.Errorf("appendonly %v: loaded zset: %q", appendonly, r)
		}
		c2.do("SELECT", "3")
		if r := c2.do("GET", "after"); r != "$1\r\n1\r\n" {
			t.Errorf("appendonly %v: loaded GET after: %q", appendonly, r)
		}
	}
}

func strconvF(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// TestShutdownSaveWritesRDB: SHUTDOWN SAVE's final save writes the RDB
// file, with or without a store; SHUTDOWN NOSAVE does not.
func TestShutdownSaveWritesRDB(t *testing.T) {
	for _, appendonly := range []bool{true, false} {
		for _, m := range []ShutdownMode{{Save: true}, {NoSave: true}} {
			dir := t.TempDir()
			srv, _ := openServer(t, dir, func(c *Config) { c.AppendOnly = appendonly })
			dial(t, srv).do("SET", "k", "v")
			if err := srv.beforeExit(m); err != nil {
				t.Fatalf("appendonly %v, %+v: %v", appendonly, m, err)
			}
			_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
			if written := err == nil; written != m.Save {
				t.Errorf("appendonly %v, %+v: dump.rdb written: %v", appendonly, m, written)
			}
			if m.Save && readRDB(t, filepath.Join(dir, "dump.rdb"))["0/k"] != "string:v" {
				t.Errorf("appendonly %v: the file lacks k", appendonly)
			}
		}
	}
}

// TestSaveWaitsForCheckpoint: SAVE during a checkpoint of our own (after
// a replay, or for the log's size: Redis's AOF rewrite) waits for it and
// saves; during a BGSAVE it is refused, as Redis refuses it.
func TestSaveWaitsForCheckpoint(t *testing.T) {
	srv, _ := openServer(t, t.TempDir(), nil)
	c := dial(t, srv)
	srv.rewriting.Store(true)
	srv.bgsave.Store(true)
	done := make(chan string, 1)
	go func() { done <- c.do("SAVE") }()
	select {
	case r := <-done:
		t.Fatalf("SAVE during a checkpoint answered %q before it ended", r)
	case <-time.After(50 * time.Millisecond):
	}
	srv.bgsave.Store(false)
	srv.rewriting.Store(false)
	if r := <-done; r != "+OK\r\n" {
		t.Fatalf("SAVE after the checkpoint: %q", r)
	}
	srv.bgsave.Store(true)
	if r := c.do("SAVE"); r != "-"+ErrSaveInProg+"\r\n" {
		t.Errorf("SAVE during a BGSAVE: %q", r)
	}
	srv.bgsave.Store(false)
}

// TestBgsavePointInTime: while clients move amounts between accounts
// (MULTI DECRBY one, INCRBY another) whose keys live in different shards,
// every file BGSAVE and SAVE write holds every account and the total the
// transfers keep: one moment for the whole keyspace, as Redis's fork.
func TestBgsavePointInTime(t *testing.T) {
	for _, store := range []bool{false, true} {
		dir := t.TempDir()
		srv, _ := openServer(t, dir, func(c *Config) {
			c.AppendOnly = store
			c.Params = map[string]string{"save": "", "auto-aof-rewrite-min-size": "10gb"}
		})
		const accounts, each = 16, 1000
		shards := map[*keyspace.Shard]bool{}
		c := dial(t, srv)
		for i := range accounts {
			k := "acc:" + strconv.Itoa(i)
			c.do("SET", k, strconv.Itoa(each))
			shards[srv.ks.ShardOf(0, []byte(k))] = true
		}
		if len(shards) < 4 {
			t.Fatalf("the accounts live in %d shards", len(shards))
		}
		// Filler, so that a save takes long enough for transfers to
		// happen during it.
		for i := range 40_000 {
			c.nc.Write(encode("SET", "filler:"+strconv.Itoa(i), "x"))
		}
		for range 40_000 {
			c.read()
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 3 {
			w := dial(t, srv)
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 1))
				for {
					select {
					case <-stop:
						return
					default:
					}
					a, b := r.IntN(accounts), r.IntN(accounts)
					amt := strconv.Itoa(1 + r.IntN(50))
					w.do("MULTI")
					w.do("DECRBY", "acc:"+strconv.Itoa(a), amt)
					w.do("SET", "filler:"+strconv.Itoa(r.IntN(40_000)), amt)
					w.do("INCRBY", "acc:"+strconv.Itoa(b), amt)
					if r := w.do("EXEC"); !strings.HasPrefix(r, "*3\r\n") {
						t.Errorf("EXEC: %q", r)
						return
					}
				}
			}()
		}
		path := filepath.Join(dir, "dump.rdb")
		for round := range 12 {
			if round%3 == 2 {
				if r := c.do("SAVE"); r != "+OK\r\n" {
					t.Fatalf("SAVE: %q", r)
				}
			} else {
				if r := c.do("BGSAVE"); r != "+Background saving started\r\n" {
					t.Fatalf("BGSAVE: %q", r)
				}
				waitFor(t, "the BGSAVE", func() bool { return infoField(t, c, "persistence", "rdb_bgsave_in_progress") == "0" })
			}
			vals := readRDB(t, path)
			sum, n := int64(0), 0
			for i := range accounts {
				if v, ok := strings.CutPrefix(vals["0/acc:"+strconv.Itoa(i)], "string:"); ok {
					amount, _ := strconv.ParseInt(v, 10, 64)
					sum += amount
					n++
				}
			}
			if n != accounts || sum != accounts*each {
				t.Errorf("store %v, round %d: the file holds %d accounts summing to %d, want %d summing to %d",
					store, round, n, sum, accounts, accounts*each)
			}
		}
		close(stop)
		wg.Wait()
	}
}
