package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBgsaveErrorStopsWrites: with save points set, a background save
// that fails makes both servers refuse writes, and PING, with Redis's
// MISCONF reply (stop-writes-on-bgsave-error), byte for byte, inside
// MULTI and from a script too, while reads go on; turning the option off
// lets writes through, and a save that succeeds lifts the refusal. The
// save fails because dump.rdb is a directory: the rename of the finished
// temporary file over it fails, even for root.
func TestBgsaveErrorStopsWrites(t *testing.T) {
	s := startServers(t, serverOptions{args: []string{"--save", "3600 1"}})
	c := newPairOn(t, s)
	blockers := []string{filepath.Join(s.redis.Cmd.Dir, "dump.rdb"), filepath.Join(s.cell.Cmd.Dir, "dump.rdb")}
	for _, d := range blockers {
		if err := os.MkdirAll(filepath.Join(d, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c.Do("SET", "k", "before")
	c.Do("BGSAVE")
	for _, p := range []*process{s.redis, s.cell} {
		waitInfoField(t, p.addr, "persistence", "rdb_bgsave_in_progress", "0")
		waitInfoField(t, p.addr, "persistence", "rdb_last_bgsave_status", "err")
	}
	refused := func() {
		t.Helper()
		redis, cell := c.Replies("SET", "k", "after")
		if !strings.HasPrefix(string(redis), "-MISCONF Redis is configured to save RDB snapshots") || string(cell) != string(redis) {
			t.Fatalf("SET after a failed BGSAVE: redis-server %q, cellserver %q", redis, cell)
		}
		c.Error("PING")
		c.Error("INCR", "n")
		c.Do("GET", "k")
		c.Do("EXISTS", "n")
		c.Error("EVAL", "return redis.call('SET', 'k', 'script')", "0")
		c.Do("EVAL", "return redis.call('GET', 'k')", "0")
		c.Do("MULTI")
		c.Error("SET", "k", "queued")
		c.Do("GET", "k")
		c.Error("EXEC")
		c.Do("GET", "k")
	}
	refused()
	c.Do("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
	c.Do("SET", "k", "allowed")
	c.Do("PING")
	c.Do("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	refused()
	for _, d := range blockers {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	c.Do("BGSAVE")
	for _, p := range []*process{s.redis, s.cell} {
		waitInfoField(t, p.addr, "persistence", "rdb_bgsave_in_progress", "0")
		waitInfoField(t, p.addr, "persistence", "rdb_last_bgsave_status", "ok")
	}
	c.Do("SET", "k", "saved")
	c.Do("PING")
	c.Do("GET", "k")
}
