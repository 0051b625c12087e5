package cell

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/persist"
	"github.com/cellserver/cellserver/persist/effectlog"
)

// TestPersistDamagedLog: a byte changed in the middle of the effect log
// stops the start, naming the file, the offset and the setting; with
// effectlog-load-damaged skip the server starts with every key but the
// damaged record's and reports that loss in INFO; the checkpoint of that
// start drops the damaged segment, so the next start needs no setting.
func TestPersistDamagedLog(t *testing.T) {
	dir := t.TempDir()
	srv, stop := openServer(t, dir, nil)
	for i := range 300 {
		setKey(srv, 0, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%40)), 0)
	}
	want := dumpKeyspace(srv)
	srv.requestExit(ShutdownMode{NoSave: true}) // a stop that leaves the log to replay
	stop()

	segs, _ := filepath.Glob(filepath.Join(dir, persist.DirName, persist.LogDirName, "*.log"))
	if len(segs) != 1 {
		t.Fatalf("segments %v, want one", segs)
	}
	b, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, []byte("value-150-"))
	if at < 0 {
		t.Fatal("k150's record not found in the log")
	}
	b[at+2] ^= 0x01
	if err := os.WriteFile(segs[0], b, 0o644); err != nil {
		t.Fatal(err)
	}

	cfg := DefaultConfig()
	cfg.Port, cfg.Shards, cfg.Dir, cfg.Logger = 0, 8, dir, srv.log
	_, err = Open(cfg)
	var de *effectlog.DamageError
	if !errors.As(err, &de) {
		t.Fatalf("Open = %v, want a refusal for the damaged log", err)
	}
	for _, s := range []string{segs[0], fmt.Sprintf("offset %d", de.Damage[0].Offset), "effectlog-load-damaged skip"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("refusal %q does not say %q", err, s)
		}
	}

	skip := func(c *Config) { SetParam(c, "effectlog-load-damaged", LoadDamagedSkip) }
	srv, stop = openServer(t, dir, skip)
	var kept []string
	for _, k := range want {
		if !strings.HasPrefix(k, `0/"k150"=`) {
			kept = append(kept, k)
		}
	}
	sameKeys(t, dumpKeyspace(srv), kept)
	c := dial(t, srv)
	info := c.do("INFO", "persistence")
	for _, f := range []string{"aof_last_load_corrupt_skipped:1\r\n", "aof_last_load_damaged_stretches:1\r\n",
		"aof_last_load_damaged_records:1\r\n", "aof_last_load_damaged_keys:1\r\n"} {
		if !strings.Contains(info, f) {
			t.Fatalf("INFO persistence lacks %q:\n%s", f, info)
		}
	}
	if v, _ := metricValue(scrape(t, srv), "cellserver_persistence_last_load_corrupt_skipped"); v != 1 {
		t.Errorf("/metrics after the skip: cellserver_persistence_last_load_corrupt_skipped %v", v)
	}
	if r := c.do("CONFIG", "GET", "effectlog-load-damaged"); r != "*2\r\n$22\r\neffectlog-load-damaged\r\n$4\r\nskip\r\n" {
		t.Fatalf("CONFIG GET effectlog-load-damaged: %q", r)
	}
	stop() // saves: the checkpoint drops the damaged segment

	srv, _ = openServer(t, dir, nil)
	sameKeys(t, dumpKeyspace(srv), kept)
	info = dial(t, srv).do("INFO", "persistence")
	if !strings.Contains(info, "aof_last_load_damaged_stretches:0\r\n") || !strings.Contains(info, "aof_last_load_corrupt_skipped:0\r\n") {
		t.Fatalf("INFO persistence after a clean start:\n%s", info)
	}
}
