package persist

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tablesRewrite writes n keys into a base through BaseTables, one
// table ingested every ingestEvery chunks, and ends the checkpoint with
// it when end is set. It returns the keys' state as state lists it.
func tablesRewrite(t *testing.T, s *Store, n, ingestEvery int, end bool) string {
	t.Helper()
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	bt, err := s.BeginBaseTables()
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Abort()
	w := bt.Writer()
	var want []string
	long := strings.Repeat("v", 1000)
	sealed := 0
	for i := range n {
		key := fmt.Sprintf("key:%06d", i)
		if i%2 == 0 {
			w.PutInt(i%3, []byte(key), int64(i), int64(-i))
			want = append(want, fmt.Sprintf(`%d/%q=i:%d:""%d`, i%3, key, i, -i))
		} else {
			w.PutString(i%3, []byte(key), 0, []byte(long))
			want = append(want, fmt.Sprintf(`%d/%q=s:0:%q0`, i%3, key, long))
		}
		if !w.Full() {
			continue
		}
		if err := bt.Seal(); err != nil {
			t.Fatal(err)
		}
		if sealed++; sealed%ingestEvery == 0 {
			if err := bt.Ingest(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := bt.Ingest(); err != nil {
		t.Fatal(err)
	}
	if end {
		if err := s.EndCheckpoint(from, w); err != nil {
			t.Fatal(err)
		}
	}
	return sortedJoined(want)
}

// sortedJoined is state's form of lines.
func sortedJoined(lines []string) string {
	lines = append([]string(nil), lines...)
	sort.Strings(lines)
	return joined(lines)
}

// TestBaseTables: a base written as ingested tables, several of them, is
// the store's base once its checkpoint ends, after a reopen too; its
// files being written are gone once ingested.
func TestBaseTables(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	records(t, s, func(b *Batch) { b.PutString(0, []byte("old"), 0, []byte("record")) })
	want := tablesRewrite(t, s, 3000, 3, true)
	if !s.HasBase() {
		t.Fatal("no base after the tables' checkpoint")
	}
	if got, _ := state(t, s); got != want {
		t.Fatalf("after the tables' checkpoint:\n%.300s\nwant\n%.300s", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, DirName, ingestDirName, "*")); len(left) != 0 {
		t.Errorf("files left after ingesting: %v", left)
	}
	s.Close()
	s, _ = openTest(t, dir, Options{})
	if got, _ := state(t, s); got != want {
		t.Fatalf("after a reopen:\n%.300s\nwant\n%.300s", got, want)
	}
}

// TestBaseTablesCrash: tables ingested without the checkpoint that puts
// their generation in force (a crash between) leave the store as it
// was, the next rewrite's base is not mixed with them, and a table a
// crash left half written is deleted by the next Open.
func TestBaseTablesCrash(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	records(t, s, func(b *Batch) { b.PutString(0, []byte("old"), 0, []byte("record")) })
	before, _ := state(t, s)
	tablesRewrite(t, s, 2000, 2, false)
	s.Close()
	stale := filepath.Join(dir, DirName, ingestDirName, "base-9-0.sst")
	if err := os.WriteFile(stale, []byte("half a table"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ = openTest(t, dir, Options{})
	if got, _ := state(t, s); got != before || s.HasBase() {
		t.Fatalf("after tables ingested out of force:\n%s (base %v)\nwant\n%s", got, s.HasBase(), before)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("Open left the half-written table: %v", err)
	}
	want := tablesRewrite(t, s, 500, 1, true)
	if got, _ := state(t, s); got != want {
		t.Fatalf("the next rewrite:\n%.300s\nwant\n%.300s", got, want)
	}
}
