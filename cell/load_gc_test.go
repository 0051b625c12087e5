package cell

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/cellserver/cellserver/rdb"
)

// gcPercentNow reads GOGC without changing it.
func gcPercentNow() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestGCPausedAfterLoad: after an RDB load at start the collector stays
// off, under a lowered memory limit, and used memory counts the loaded
// keys though no collection has measured them; the first collection puts
// GOGC and the memory limit back, and so does a change of maxmemory.
func TestGCPausedAfterLoad(t *testing.T) {
	const keys = 300_000
	var buf bytes.Buffer
	w := rdb.NewWriter(&buf)
	v := rdb.Value{Type: rdb.TypeString}
	for i := range keys {
		v.Str = strconv.AppendInt(v.Str[:0], 1_700_000_000_000_000+int64(i), 10)
		if err := w.Key([]byte("user:"+strconv.Itoa(i)+":reply"), &v, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	gogc, limit := gcPercentNow(), debug.SetMemoryLimit(-1)
	if gogc < 0 {
		t.Skip("GOGC=off: nothing to pause")
	}
	for _, endBy := range []string{"a collection", "a change of maxmemory"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		srv, stop := openServer(t, dir, func(c *Config) { c.AppendOnly = false })
		if n := srv.ks.DBSize(0); n != keys {
			t.Fatalf("%d keys loaded", n)
		}
		if p := gcPercentNow(); p != -1 {
			t.Errorf("%s: GOGC %d after the load, want the collector off", endBy, p)
		}
		if l := debug.SetMemoryLimit(-1); l >= limit {
			t.Errorf("%s: memory limit %d after the load, want below %d", endBy, l, limit)
		}
		// The live heap the runtime measured last predates the load.
		if used, want := srv.UsedMemory(), int64(live[0].Value.Uint64())+keys*32; used < want {
			t.Errorf("%s: used memory %d after loading %d keys, want at least %d", endBy, used, keys, want)
		}
		if endBy == "a collection" {
			runtime.GC()
		} else {
			srv.ops.mem.setLimit(0) // CONFIG SET maxmemory 0
		}
		deadline := time.Now().Add(10 * time.Second)
		for gcPercentNow() != gogc && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if p := gcPercentNow(); p != gogc {
			t.Errorf("after %s: GOGC %d, want %d back", endBy, p, gogc)
		}
		if l := debug.SetMemoryLimit(-1); l != limit {
			t.Errorf("after %s: memory limit %d, want %d back", endBy, l, limit)
		}
		crashStop(srv, stop)
	}
}

// TestGCLoadDuringPause: a load that begins during the pause after the
// load at start (a replica's full sync) keeps the collector off even when
// the pause's first collection comes during it, and the collector comes
// back when it ends.
func TestGCLoadDuringPause(t *testing.T) {
	gogc, limit := gcPercentNow(), debug.SetMemoryLimit(-1)
	if gogc < 0 {
		t.Skip("GOGC=off: nothing to pause")
	}
	beginLoadGC()
	endLoadGC(true)
	if p := gcPercentNow(); p != -1 {
		t.Fatalf("GOGC %d after the load at start, want the collector off", p)
	}
	beginLoadGC()
	runtime.GC() // the pause's first collection
	// The pause's limit gives way to the load's guard.
	guarded := limit
	if g := loadMemoryGuard(); g > 0 {
		guarded = min(limit, g)
	}
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != guarded && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if l := debug.SetMemoryLimit(-1); l != guarded {
		t.Fatalf("memory limit %d after the pause's collection, during a load, want %d", l, guarded)
	}
	if p := gcPercentNow(); p != -1 {
		t.Errorf("GOGC %d during the second load, want the collector off", p)
	}
	endLoadGC(false)
	if p := gcPercentNow(); p != gogc {
		t.Errorf("GOGC %d after the second load, want %d back", p, gogc)
	}
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Errorf("memory limit %d after the second load, want %d back", l, limit)
	}
}

// TestLoadMemoryGuard: while a load runs with the collector off, the Go
// memory limit is at most nine tenths of the machine's memory, and what it
// was comes back after; a change of maxmemory during the load stays in
// force after it.
func TestLoadMemoryGuard(t *testing.T) {
	g, limit := loadMemoryGuard(), debug.SetMemoryLimit(-1)
	if g <= 0 {
		t.Skip("the machine's memory is unknown here")
	}
	if g >= limit {
		t.Skip("a memory limit below the guard is set")
	}
	beginLoadGC()
	if l := debug.SetMemoryLimit(-1); l != g {
		t.Errorf("memory limit %d during a load, want the guard %d", l, g)
	}
	endLoadGC(false)
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Errorf("memory limit %d after the load, want %d back", l, limit)
	}
	var m memoryState
	m.init()
	beginLoadGC()
	m.setLimit(100 << 20) // CONFIG SET maxmemory 100mb during the load
	endLoadGC(false)
	if l, want := debug.SetMemoryLimit(-1), int64(125<<20); l != want {
		t.Errorf("memory limit %d after a load during which maxmemory changed, want maxmemory's %d", l, want)
	}
	m.setLimit(0)
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Errorf("memory limit %d after maxmemory 0, want %d", l, limit)
	}
}

// TestGCPausedAfterStoreLoad: a restart from the store with no log to
// replay (a clean stop checkpointed it all) keeps the collector off after
// the load, as an RDB load at start does; one with a log to replay turns
// it back on for the replay, whose garbage must be collected
// (TestReplayCollectsGarbage).
func TestGCPausedAfterStoreLoad(t *testing.T) {
	gogc, limit := gcPercentNow(), debug.SetMemoryLimit(-1)
	if gogc < 0 {
		t.Skip("GOGC=off: nothing to pause")
	}
	for _, withLog := range []bool{false, true} {
		dir := t.TempDir()
		srv, stop := openServer(t, dir, manualCheckpoints)
		for i := range 20_000 {
			setKey(srv, 0, "user:"+strconv.Itoa(i), "1700000000000000", 0)
		}
		if withLog {
			crashStop(srv, stop)
		} else {
			stop() // a clean stop checkpoints the log
		}
		srv, stop = openServer(t, dir, manualCheckpoints)
		if n := srv.ks.DBSize(0); n != 20_000 {
			t.Fatalf("log %v: %d keys loaded", withLog, n)
		}
		if withLog != (srv.replayed != 0) {
			t.Fatalf("log %v: %d records replayed", withLog, srv.replayed)
		}
		want := -1
		if withLog {
			want = gogc
		}
		if p := gcPercentNow(); p != want {
			t.Errorf("log %v: GOGC %d after the load, want %d", withLog, p, want)
		}
		runtime.GC() // ends a pause
		deadline := time.Now().Add(10 * time.Second)
		for gcPercentNow() != gogc && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if p, l := gcPercentNow(), debug.SetMemoryLimit(-1); p != gogc || l != limit {
			t.Errorf("log %v: GOGC %d and memory limit %d after a collection, want %d and %d back", withLog, p, l, gogc, limit)
		}
		crashStop(srv, stop)
	}
}
