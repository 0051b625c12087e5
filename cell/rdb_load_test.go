package cell

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/rdb"
)

// rdbFile writes keys (name, value pairs of strings) of db 0 as an RDB file.
func rdbFile(t *testing.T, keys ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := rdb.NewWriter(&buf)
	for i := 0; i+1 < len(keys); i += 2 {
		if err := w.Key([]byte(keys[i]), &rdb.Value{Type: rdb.TypeString, Str: []byte(keys[i+1])}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLoadRDBAtStart: a file in an empty directory is loaded; one listing
// a key twice, or damaged, fails the start naming the file; a store that
// holds data is not overwritten by the file.
func TestLoadRDBAtStart(t *testing.T) {
	// A load puts keys into the index a few behind reading them
	// (rdbLoadAhead): a key listed again far after its first listing, or
	// among the last keys, is caught as well as one listed twice in a row.
	var many []string
	for i := range 3 * rdbLoadAhead {
		many = append(many, "k"+strconv.Itoa(i), strconv.Itoa(i))
	}
	farDup := append(slices.Clone(many), "k1", "again")
	lastDup := append(slices.Clone(many), "k"+strconv.Itoa(3*rdbLoadAhead-1), "again")
	cases := []struct {
		name    string
		file    []byte
		wantErr string
		keys    int
	}{
		{"good", rdbFile(t, "a", "1", "b", "x"), "", 2},
		{"duplicate key", rdbFile(t, "a", "1", "a", "2"), "listed twice", 0},
		{"many keys", rdbFile(t, many...), "", 3 * rdbLoadAhead},
		{"duplicate far apart", rdbFile(t, farDup...), `key "k1" of db 0 listed twice`, 0},
		{"duplicate among the last", rdbFile(t, lastDup...), "listed twice", 0},
		{"truncated", rdbFile(t, "a", "1", "b", "x")[:20], "unexpected end of input at offset", 0},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "dump.rdb")
		os.WriteFile(path, c.file, 0o644)
		cfg := DefaultConfig()
		cfg.Port = 0
		cfg.Dir = dir
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		srv, err := Open(cfg)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: Open: %v, want an error naming %s with %q", c.name, err, path, c.wantErr)
			}
			if err == nil {
				srv.Shutdown(context.Background())
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := srv.ks.DBSize(0); n != c.keys {
			t.Errorf("%s: %d keys loaded, want %d", c.name, n, c.keys)
		}
		srv.Shutdown(context.Background())
		// The store holds them now: a different file is not loaded over it.
		os.WriteFile(path, rdbFile(t, "other", "1"), 0o644)
		srv, err = Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n := srv.ks.DBSize(0); n != c.keys {
			t.Errorf("%s: after restart with another file, %d keys, want the store's %d", c.name, n, c.keys)
		}
		srv.Shutdown(context.Background())
	}
}

// bigRDBFile is an RDB file big enough that Pebble flushes a memtable
// while a durable load writes it: strings, ints and, in db 3, sorted sets,
// hashes and lists, some with a TTL.
func bigRDBFile(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := rdb.NewWriter(&buf)
	pad := strings.Repeat("v", 400)
	exp := time.Now().Add(time.Hour).UnixMilli()
	w.SelectDB(0, 0, 0)
	for i := range 60_000 {
		v := rdb.Value{Type: rdb.TypeString, Str: []byte(pad + strconv.Itoa(i))}
		if i%3 == 0 {
			v.Str = strconv.AppendInt(nil, int64(i)*1_000_003, 10)
		}
		if err := w.Key([]byte("k"+strconv.Itoa(i)), &v, exp*int64(i%2)); err != nil {
			t.Fatal(err)
		}
	}
	w.SelectDB(3, 0, 0)
	for i := range 300 {
		k := strconv.Itoa(i)
		z := rdb.Value{Type: rdb.TypeZSet}
		h := rdb.Value{Type: rdb.TypeHash}
		l := rdb.Value{Type: rdb.TypeList}
		for j := range i%40 + 1 {
			m := []byte("m" + strconv.Itoa(j))
			z.Elems, z.Scores = append(z.Elems, m), append(z.Scores, float64(j)/3)
			h.Elems = append(h.Elems, m, []byte(pad[:j]))
			l.Elems = append(l.Elems, m)
		}
		for _, kv := range []struct {
			key string
			v   *rdb.Value
		}{{"z" + k, &z}, {"h" + k, &h}, {"l" + k, &l}} {
			if err := w.Key([]byte(kv.key), kv.v, exp*int64(i%2)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLoadRDBDurable: the keys an RDB load writes into the store as it
// goes are what a restart finds, with no save after the load (a crash
// right after it).
func TestLoadRDBDurable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dump.rdb"), bigRDBFile(t), 0o644)
	srv, stop := openServer(t, dir, manualCheckpoints)
	want := dumpKeyspace(srv)
	if len(want) != 60_900 {
		t.Fatalf("loaded %d keys, want 60900", len(want))
	}
	crashStop(srv, stop)
	os.Remove(filepath.Join(dir, "dump.rdb"))
	srv, stop = openServer(t, dir, manualCheckpoints)
	defer stop()
	if srv.loadedKeys != 60_900 {
		t.Errorf("restart loaded %d keys from the store, want 60900", srv.loadedKeys)
	}
	sameKeys(t, dumpKeyspace(srv), want)
}

// tableBytes is the size of the store's tables in dir.
func tableBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ssts, _ := filepath.Glob(filepath.Join(dir, "cellserver.db", "*.sst"))
	var n int64
	for _, p := range ssts {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// TestLoadRDBCrashBeforeCheckpoint: a load that stops after Pebble
// ingested its whole base, before the checkpoint that puts it in force,
// leaves a store the next start finds empty: it loads the file again, and
// the base ingested first is dropped rather than kept beside the new one.
func TestLoadRDBCrashBeforeCheckpoint(t *testing.T) {
	defer func(n int64) { rdbBaseTable = n }(rdbBaseTable)
	rdbBaseTable = 64 << 10
	file := bigRDBFile(t)
	clean := t.TempDir()
	os.WriteFile(filepath.Join(clean, "dump.rdb"), file, 0o644)
	srv, stop := openServer(t, clean, manualCheckpoints)
	want := dumpKeyspace(srv)
	crashStop(srv, stop)
	cleanBytes := tableBytes(t, clean)

	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	os.WriteFile(path, file, 0o644)
	cfg := DefaultConfig()
	cfg.Port, cfg.Shards, cfg.Dir = 0, 8, dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	manualCheckpoints(&cfg)
	rdbCrashBeforeCheckpoint = true
	_, err := Open(cfg)
	rdbCrashBeforeCheckpoint = false
	if err == nil {
		t.Fatal("Open with the crash hook set succeeded")
	}
	if n := tableBytes(t, dir); n < cleanBytes*3/4 {
		t.Fatalf("the stopped load left %d bytes of tables, a whole load %d: the test does not cover an ingested base", n, cleanBytes)
	}
	srv, stop = openServer(t, dir, manualCheckpoints)
	if srv.loadedKeys != 0 {
		t.Errorf("the store gave %d keys after a load cut before its checkpoint, want none (the file again)", srv.loadedKeys)
	}
	sameKeys(t, dumpKeyspace(srv), want)
	crashStop(srv, stop)
	// The store holds one base, the second load's, with every key.
	os.Remove(path)
	srv, stop = openServer(t, dir, manualCheckpoints)
	defer stop()
	if srv.loadedKeys != int64(len(want)) {
		t.Errorf("restart loaded %d keys from the store, want %d", srv.loadedKeys, len(want))
	}
	sameKeys(t, dumpKeyspace(srv), want)
	if n := tableBytes(t, dir); n > cleanBytes*3/2 {
		t.Errorf("the store holds %d bytes of tables, a single load %d: the first load's base was kept", n, cleanBytes)
	}
}

// TestLoadRDBFailedHalfway: a load that fails part way, after Pebble
// flushed some of what it wrote, leaves a store the next start finds
// empty: it loads the file again rather than serving a part of one.
func TestLoadRDBFailedHalfway(t *testing.T) {
	defer func(n int64) { rdbBaseTable = n }(rdbBaseTable)
	rdbBaseTable = 64 << 10 // several tables ingested before the cut
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	full := bigRDBFile(t)
	os.WriteFile(path, full[:len(full)-100], 0o644) // cut in the last keys
	cfg := DefaultConfig()
	cfg.Port, cfg.Shards, cfg.Dir = 0, 8, dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	manualCheckpoints(&cfg)
	if _, err := Open(cfg); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open over a truncated file: %v, want an error naming it", err)
	}
	if n := tableBytes(t, dir); n < int64(len(full))/2 {
		t.Fatalf("the failed load left %d bytes of tables for a file of %d: the test does not cover an ingested part", n, len(full))
	}
	// The next start loads the good file whole.
	os.WriteFile(path, rdbFile(t, "a", "1", "b", "two"), 0o644)
	srv, stop := openServer(t, dir, manualCheckpoints)
	sameKeys(t, dumpKeyspace(srv), []string{`0/"a"="1"/0`, `0/"b"="two"/0`})
	crashStop(srv, stop)
	// The store holds them: the file is not read again.
	os.WriteFile(path, full, 0o644)
	srv, stop = openServer(t, dir, manualCheckpoints)
	defer stop()
	sameKeys(t, dumpKeyspace(srv), []string{`0/"a"="1"/0`, `0/"b"="two"/0`})
}
