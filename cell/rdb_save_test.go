package cell

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
