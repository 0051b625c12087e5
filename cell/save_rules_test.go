package cell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rdbKeys counts the keys of the RDB file at path; -1: no file.
func rdbKeys(t *testing.T, path string) int {
	t.Helper()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return -1
	}
	return len(readRDB(t, path))
}

// infoField is one field of INFO's reply.
func infoField(t *testing.T, c *testConn, section, name string) string {
	t.Helper()
	for _, l := range strings.Split(c.do("INFO", section), "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s", section, name)
	return ""
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSavePoints: with "save 1 2", the RDB file is written once more than
// a second has passed since the last save with at least two changes, and
// not before, with and without a store; INFO and LASTSAVE report it; with
// save "" (CONFIG SET) nothing is written however much changes.
func TestSavePoints(t *testing.T) {
	for _, store := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "dump.rdb")
		srv, _ := openServer(t, dir, func(c *Config) {
			c.AppendOnly = store
			c.Params = map[string]string{"save": "1 2", "auto-aof-rewrite-min-size": "10gb"}
		})
		c := dial(t, srv)
		c.do("SET", "a", "1")
		time.Sleep(2200 * time.Millisecond)
		if n := rdbKeys(t, path); n != -1 {
			t.Fatalf("store %v: one change of the two the point wants wrote the file (%d keys)", store, n)
		}
		if v := infoField(t, c, "persistence", "rdb_changes_since_last_save"); v != "1" {
			t.Errorf("store %v: rdb_changes_since_last_save %s, want 1", store, v)
		}
		c.do("SET", "b", "2")
		waitFor(t, "the save point's save", func() bool { return rdbKeys(t, path) == 2 })
		waitFor(t, "the save's end", func() bool { return infoField(t, c, "persistence", "rdb_bgsave_in_progress") == "0" })
		for name, want := range map[string]string{"rdb_changes_since_last_save": "0", "rdb_last_bgsave_status": "ok", "rdb_saves": "1"} {
			if v := infoField(t, c, "persistence", name); v != want {
				t.Errorf("store %v: %s %s, want %s", store, name, v, want)
			}
		}
		if last := c.do("LASTSAVE"); last != ":"+itoa(srv.lastSave.Load())+"\r\n" || srv.lastSave.Load() < time.Now().Unix()-5 {
			t.Errorf("store %v: LASTSAVE %q", store, last)
		}
		// No point: nothing more is written.
		if r := c.do("CONFIG", "SET", "save", ""); r != "+OK\r\n" {
			t.Fatalf("CONFIG SET save: %q", r)
		}
		if r := c.do("CONFIG", "GET", "save"); r != "*2\r\n$4\r\nsave\r\n$0\r\n\r\n" {
			t.Errorf("CONFIG GET save: %q", r)
		}
		for _, k := range []string{"c", "d", "e"} {
			c.do("SET", k, "x")
		}
		time.Sleep(2200 * time.Millisecond)
		if n := rdbKeys(t, path); n != 2 {
			t.Errorf("store %v: with save \"\", the file changed (%d keys)", store, n)
		}
	}
}

// TestStopSaves: a stop writes the RDB file when save points are set,
// unless SHUTDOWN NOSAVE, and not when none is, but for SHUTDOWN SAVE.
func TestStopSaves(t *testing.T) {
	cases := []struct {
		name  string
		save  string
		stop  []string // SHUTDOWN's arguments; nil: a stop by signal (Shutdown alone)
		store bool
		want  int // keys in the file; -1: none
	}{
		{"points, signal", "3600 1", nil, false, 1},
		{"points, signal, store", "3600 1", nil, true, 1},
		{"points, SHUTDOWN", "3600 1", []string{"SHUTDOWN"}, false, 1},
		{"points, SHUTDOWN NOSAVE", "3600 1", []string{"SHUTDOWN", "NOSAVE"}, false, -1},
		{"none, signal", "", nil, false, -1},
		{"none, signal, store", "", nil, true, -1},
		{"none, SHUTDOWN SAVE", "", []string{"SHUTDOWN", "SAVE"}, false, 1},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		srv, stop := openServer(t, dir, func(c *Config) {
			c.AppendOnly = tc.store
			c.Params = map[string]string{"save": tc.save}
		})
		c := dial(t, srv)
		c.do("SET", "k", "v")
		if tc.stop != nil {
			c.nc.Write(encode(tc.stop...))
			<-srv.ExitRequested()
		}
		stop()
		if n := rdbKeys(t, filepath.Join(dir, "dump.rdb")); n != tc.want {
			t.Errorf("%s: the file holds %d keys after the stop, want %d (-1: no file)", tc.name, n, tc.want)
		}
	}
}

// TestBgsaveErrorMisconf: a background save that fails (the file's name
// is taken by a directory) sets rdb_last_bgsave_status:err and, with save
// points set and stop-writes-on-bgsave-error yes, writes and PING get
// Redis's MISCONF until a save succeeds; with the option no, writes go on.
func TestBgsaveErrorMisconf(t *testing.T) {
	for _, store := range []bool{false, true} {
		dir := t.TempDir()
		srv, _ := openServer(t, dir, func(c *Config) {
			c.AppendOnly = store
			c.Params = map[string]string{"save": "3600 1"}
		})
		c := dial(t, srv)
		blocker := filepath.Join(dir, "dump.rdb", "x")
		if err := os.MkdirAll(blocker, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := c.do("BGSAVE"); r != "+Background saving started\r\n" {
			t.Fatalf("BGSAVE: %q", r)
		}
		waitFor(t, "the failed save", func() bool { return infoField(t, c, "persistence", "rdb_last_bgsave_status") == "err" })
		misconf := "-" + ErrBgsaveMisconf + "\r\n"
		for _, cmd := range [][]string{{"SET", "k", "v"}, {"PING"}} {
			if r := c.do(cmd...); r != misconf {
				t.Errorf("store %v: %s after a failed save: %q", store, cmd[0], r)
			}
		}
		if r := c.do("GET", "k"); r != "$-1\r\n" {
			t.Errorf("store %v: GET after a failed save: %q", store, r)
		}
		c.do("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
		if r := c.do("SET", "k", "v"); r != "+OK\r\n" {
			t.Errorf("store %v: SET with stop-writes-on-bgsave-error no: %q", store, r)
		}
		c.do("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
		if r := c.do("SET", "k", "v"); r != misconf {
			t.Errorf("store %v: SET with the option back on: %q", store, r)
		}
		os.RemoveAll(filepath.Join(dir, "dump.rdb"))
		if r := c.do("SAVE"); r != "+OK\r\n" {
			t.Fatalf("SAVE: %q", r)
		}
		if r := c.do("SET", "k", "v"); r != "+OK\r\n" {
			t.Errorf("store %v: SET after a good save: %q", store, r)
		}
		if v := infoField(t, c, "persistence", "rdb_last_bgsave_status"); v != "ok" {
			t.Errorf("store %v: rdb_last_bgsave_status %s after a good save", store, v)
		}
		srv.Shutdown(context.Background())
	}
}
