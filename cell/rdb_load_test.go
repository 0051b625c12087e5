package cell

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	cases := []struct {
		name    string
		file    []byte
		wantErr string
		keys    int
	}{
		{"good", rdbFile(t, "a", "1", "b", "x"), "", 2},
		{"duplicate key", rdbFile(t, "a", "1", "a", "2"), "listed twice", 0},
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
