package cell

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/persist"
)

// TestReplayEffects: records written straight to the log, as a snapshot
// taken after them would meet them at replay: a set's changes onto a key
// that holds no set, and a record that leaves a set empty.
func TestReplayEffects(t *testing.T) {
	dir := t.TempDir()
	st, err := persist.Open(dir, persist.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, fill := range []func(b *persist.Batch){
		func(b *persist.Batch) {
			b.PutString(0, []byte("s"), 0, []byte("a string"))
			b.PutString(0, []byte("gone"), 0, []byte("x"))
		},
		// Changes of a set onto a string: the string makes room.
		func(b *persist.Batch) {
			b.Put(0, []byte("s"), persist.Value{Kind: persist.KindZSetWide, Exp: 4102444800000})
			b.PutMember(0, []byte("s"), []byte("m"), 2)
		},
		// Only removals onto a missing key: an empty set, dropped at the
		// record's end.
		func(b *persist.Batch) {
			b.Put(0, []byte("empty"), persist.Value{Kind: persist.KindZSetWide})
			b.DeleteMember(0, []byte("empty"), []byte("m"))
		},
		// Empty in the middle of a record, not at its end: kept.
		func(b *persist.Batch) {
			b.Put(0, []byte("s"), persist.Value{Kind: persist.KindZSetWide, Exp: 4102444800000})
			b.DeleteMember(0, []byte("s"), []byte("m"))
			b.PutMember(0, []byte("s"), []byte("n"), 3)
			b.Delete(0, []byte("gone"))
		},
	} {
		b := st.NewBatch()
		fill(b)
		if _, err := st.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	srv, _ := openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv), []string{`0/"s"=zset("n":3,)/4102444800000`})
}

// TestReplayIntInPlace: an integer logged over a string or an integer is
// replayed into the key's entry in place, with the expiry it was logged
// with (or none), and is an integer again (OBJECT ENCODING "int").
func TestReplayIntInPlace(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	c := dial(t, srv)
	for _, cmd := range [][]string{
		{"SET", "raw", "abc"}, {"APPEND", "raw", "d"}, {"SET", "raw", "5"},
		{"SET", "ttl", "7", "PX", "3600000"}, {"INCR", "ttl"}, {"SET", "ttl", "9"},
		{"SET", "n", "1"}, {"INCRBY", "n", "41"}, {"PEXPIRE", "n", "7200000"}, {"INCR", "n"},
	} {
		c.do(cmd...)
	}
	want := dumpKeyspace(srv)
	crashStop(srv, stop)
	srv, _ = openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv), want)
	c = dial(t, srv)
	for key, enc := range map[string]string{"raw": "int", "ttl": "int", "n": "int"} {
		if got := c.do("OBJECT", "ENCODING", key); got != "$"+fmt.Sprint(len(enc))+"\r\n"+enc+"\r\n" {
			t.Errorf("OBJECT ENCODING %s after replay: %q, want %q", key, got, enc)
		}
	}
	if got := c.do("PTTL", "ttl"); got != ":-1\r\n" {
		t.Errorf("PTTL ttl after replay: %q, want -1 (SET dropped the expiry)", got)
	}
}

// TestReplayCollectsGarbage: replaying a log that overwrote a few keys
// many times (40 MB of values over 200 keys) leaves the heap near the
// size of what survives, not of everything the log ever wrote: the
// collector runs during the replay. With it paused there (as it is for the
// snapshot's load, which makes little garbage), a restart after a crash
// needed memory in proportion to the log, which the log's size rules
// (auto-aof-rewrite-percentage of the snapshot) let grow as large as the
// data: a server that fit its memory before the crash could not start.
func TestReplayCollectsGarbage(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, manualCheckpoints)
	value := strings.Repeat("v", 1024)
	for round := range 200 {
		for k := range 200 {
			setKey(srv, 0, fmt.Sprintf("k%d", k), value[:1000+round%24], 0)
		}
	}
	crashStop(srv, stop)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	srv, _ = openServer(t, dir, manualCheckpoints)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if srv.replayed == 0 {
		t.Fatal("nothing replayed")
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if written := int64(after.TotalAlloc - before.TotalAlloc); written < 30<<20 {
		t.Fatalf("the replay allocated %d bytes in all, want over 30 MB for this test to mean anything", written)
	}
	if grown > 16<<20 {
		t.Fatalf("the heap grew by %d bytes over the replay of 200 keys of 1 KB: the garbage was not collected", grown)
	}
}
