package persist

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// state loads the store as the server does: each time a key comes it
// replaces the time before, and KindGone deletes it. It returns
// "db/key=kind:exp:contents" lines, sorted, and how many came Over.
func state(t *testing.T, s *Store) (string, int) {
	t.Helper()
	m := map[string]string{}
	over := 0
	bad, err := s.Load(func(db int, key []byte, v Value) error {
		if v.Over {
			over++
		}
		k := fmt.Sprintf("%d/%q", db, key)
		if v.Kind == KindGone {
			delete(m, k)
			return nil
		}
		var items []string
		for _, it := range v.Items {
			items = append(items, fmt.Sprintf("%q", it))
		}
		m[k] = fmt.Sprintf("%c:%d:%q%d%s", v.Kind, v.Exp, v.Str, v.Int, strings.Join(items, ","))
		return nil
	})
	if err != nil || bad != 0 {
		t.Fatalf("Load: %d corrupt, %v", bad, err)
	}
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return joined(out), over
}

// rewrite writes the keys fill puts into a new base and ends the
// checkpoint with it, or leaves it cut short.
func rewrite(t *testing.T, s *Store, end bool, fill func(w *BaseWriter)) {
	t.Helper()
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.BeginRewrite()
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	fill(w)
	w.Seal(b)
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if !end {
		return
	}
	if err := s.EndCheckpoint(from, w); err != nil {
		t.Fatal(err)
	}
}

// records writes key records as a checkpoint that does not rewrite.
func records(t *testing.T, s *Store, fill func(b *Batch)) {
	t.Helper()
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	fill(b)
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, nil); err != nil {
		t.Fatal(err)
	}
}

// TestStoreRewrite: a rewrite's base replaces every key record and the
// base before it; records written after it lie over it (a KindGone one
// deletes); a later entry of the base replaces an earlier one; a rewrite
// cut short leaves the store as it was, and the next one is not mixed
// with its chunks; all of it survives a reopen.
func TestStoreRewrite(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	if s.HasBase() {
		t.Fatal("a new store has a base")
	}
	records(t, s, func(b *Batch) {
		b.PutString(0, []byte("old"), 0, []byte("record"))
		b.Put(2, []byte("z"), Value{Kind: KindZSetWide})
		b.PutMember(2, []byte("z"), []byte("m"), 1)
	})
	big := strings.Repeat("x", 3*baseChunkBytes/2) // a chunk of its own
	rewrite(t, s, true, func(w *BaseWriter) {
		w.PutString(0, []byte("a"), 7, []byte("first"))
		w.PutInt(1, []byte("n"), 0, -42)
		w.PutString(0, []byte("big"), 0, []byte(big))
		w.PutEncoded(3, []byte("h"), AppendValue(w.Scratch(), Value{Kind: KindHash, Items: [][]byte{[]byte("f"), []byte("v")}}))
		w.PutString(0, []byte("a"), 9, []byte("second"))
		if w.gen != 1 {
			t.Fatalf("generation %d", w.gen)
		}
	})
	if !s.HasBase() {
		t.Fatal("no base after a rewrite")
	}
	base := joined([]string{
		`0/"a"=s:9:"second"0`,
		`0/"big"=s:0:"` + big + `"0`,
		`1/"n"=i:0:""-42`,
		`3/"h"=h:0:""0"f","v"`,
	})
	if got, over := state(t, s); got != base || over != 0 {
		t.Fatalf("after the rewrite (%d over):\n%s\nwant\n%s", over, got, base)
	}
	records(t, s, func(b *Batch) {
		b.PutString(0, []byte("a"), 0, []byte("over"))
		b.Gone(1, []byte("n"))
		b.Gone(5, []byte("never"))
		b.PutInt(4, []byte("new"), 0, 1)
	})
	over := joined([]string{
		`0/"a"=s:0:"over"0`,
		`0/"big"=s:0:"` + big + `"0`,
		`3/"h"=h:0:""0"f","v"`,
		`4/"new"=i:0:""1`,
	})
	check := func(when string) {
		t.Helper()
		if got, n := state(t, s); got != over || n != 4 {
			t.Fatalf("%s (%d over):\n%s\nwant\n%s", when, n, got, over)
		}
	}
	check("records over the base")
	rewrite(t, s, false, func(w *BaseWriter) {
		w.PutString(0, []byte("cut"), 0, []byte("short"))
		w.Seal(s.NewBatch()) // the next rewrite of this generation has fewer chunks
		w.PutString(0, []byte("cut2"), 0, []byte("short"))
	})
	// Pebble flushes a big rewrite's chunks on its own before it ends.
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	check("a rewrite cut short")
	s.Close()
	s, _ = openTest(t, dir, Options{})
	check("reopened")
	rewrite(t, s, true, func(w *BaseWriter) {
		if w.gen != 2 {
			t.Fatalf("generation %d after a cut rewrite of 2", w.gen)
		}
		w.PutInt(0, []byte("only"), 0, 5)
	})
	want := `0/"only"=i:0:""5`
	if got, n := state(t, s); got != want || n != 0 {
		t.Fatalf("after the second rewrite (%d over):\n%s\nwant\n%s", n, got, want)
	}
	// The first base and the records are gone, and so are their files.
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsKey}, UpperBound: baseKey(2, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		t.Errorf("left after the second rewrite: %q", it.Key())
	}
	it.Close()
	tables, err := s.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range tables {
		for _, tb := range level {
			if bytes.Compare(tb.Smallest.UserKey, baseKey(2, 0)) < 0 && bytes.Compare(tb.Largest.UserKey, []byte{nsKey}) >= 0 {
				t.Errorf("a file of the old base or records is still there: %s [%q, %q]", tb.FileNum, tb.Smallest.UserKey, tb.Largest.UserKey)
			}
		}
	}
	s.Close()
	s, _ = openTest(t, dir, Options{})
	if got, _ := state(t, s); got != want {
		t.Fatalf("reopened after the second rewrite:\n%s\nwant\n%s", got, want)
	}
}

// TestStoreBaseCorrupt: a chunk damaged in the middle keeps the keys
// before the damage, logs, and counts one skip; the other chunks load.
func TestStoreBaseCorrupt(t *testing.T) {
	s, lb := openTest(t, t.TempDir(), Options{})
	from, _ := s.BeginCheckpoint()
	w, err := s.BeginRewrite()
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	w.PutInt(0, []byte("kept"), 0, 1)
	w.chunk = append(w.chunk, 0, 200, 'x') // a key longer than the rest
	w.Seal(b)
	w.PutInt(0, []byte("next"), 0, 2)
	w.Seal(b)
	if err := s.WriteSnapshot(b); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, w); err != nil {
		t.Fatal(err)
	}
	var got []string
	bad, err := s.Load(func(db int, key []byte, v Value) error {
		got = append(got, fmt.Sprintf("%d/%s=%d", db, key, v.Int))
		return nil
	})
	if err != nil || bad != 1 || joined(got) != "0/kept=1\n0/next=2" {
		t.Fatalf("Load: %v, %d skipped, %v", got, bad, err)
	}
	if !strings.Contains(lb.String(), "corrupt snapshot chunk") {
		t.Fatalf("log: %s", lb.String())
	}
}

// TestStoreUpgradeFormat3: a format 3 store (key records, no base) opens
// as format 4 with its keys and no base.
func TestStoreUpgradeFormat3(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	records(t, s, func(b *Batch) { b.PutInt(0, []byte("k"), 0, 3) })
	if err := s.setDurable(versionKey, []byte("3")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, _ = openTest(t, dir, Options{})
	if got, over := state(t, s); got != `0/"k"=i:0:""3` || over != 0 || s.HasBase() {
		t.Fatalf("after the upgrade: %s (%d over, base %v)", got, over, s.HasBase())
	}
	checkFormatVersion(t, s)
}

// TestStoreRewriteCrashBeforeExcise: a crash between a rewrite's flush and
// the excise of the old files leaves them on disk, but the records written
// before the rewrite no longer lie over its base, and the next rewrite
// drops the files.
func TestStoreRewriteCrashBeforeExcise(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	rewrite(t, s, true, func(w *BaseWriter) { w.PutInt(0, []byte("k"), 0, 1) })
	records(t, s, func(b *Batch) {
		b.PutInt(0, []byte("k"), 0, 2)
		b.PutInt(0, []byte("old"), 0, 3)
	})
	crashBeforeExcise = true
	t.Cleanup(func() { crashBeforeExcise = false }) // also when rewrite fails the test
	rewrite(t, s, true, func(w *BaseWriter) { w.PutInt(0, []byte("k"), 0, 4) })
	crashBeforeExcise = false
	s.Close()
	s, _ = openTest(t, dir, Options{})
	want := `0/"k"=i:0:""4`
	if got, _ := state(t, s); got != want {
		t.Fatalf("after the crash:\n%s\nwant\n%s", got, want)
	}
	rewrite(t, s, true, func(w *BaseWriter) { w.PutInt(0, []byte("k"), 0, 5) })
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsKey}, UpperBound: baseKey(3, 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		t.Errorf("left after the next rewrite: %q", it.Key())
	}
}

// TestStoreLoadBaseAllocations: loading a base of aggregates (hashes and
// lists of a few items, between ints) gives each its own items and
// allocates nothing per key: one Items array serves them all in turn, so
// a load with the collector paused makes no garbage in proportion to the
// keys.
func TestStoreLoadBaseAllocations(t *testing.T) {
	load := func(keys int) (allocs float64, got string) {
		s, _ := openTest(t, t.TempDir(), Options{})
		rewrite(t, s, true, func(w *BaseWriter) {
			for i := range keys {
				key := []byte(fmt.Sprintf("k%05d", i))
				switch i % 3 {
				case 0:
					w.PutEncoded(0, key, AppendValue(w.Scratch(), Value{Kind: KindHash, Items: [][]byte{key, []byte("v"), []byte("f2"), key}}))
				case 1:
					w.PutEncoded(0, key, AppendValue(w.Scratch(), Value{Kind: KindList, Items: [][]byte{key, key, key, []byte("x"), []byte("y"), []byte("z")}}))
				default:
					w.PutInt(0, key, 0, int64(i))
				}
			}
		})
		var sum strings.Builder
		fn := func(db int, key []byte, v Value) error {
			if len(v.Items) > 0 && string(v.Items[0]) != string(key) {
				t.Fatalf("%s's first item is %q", key, v.Items[0])
			}
			return nil
		}
		allocs = testing.AllocsPerRun(3, func() {
			if _, err := s.Load(fn); err != nil {
				t.Fatal(err)
			}
		})
		s.Load(func(db int, key []byte, v Value) error {
			fmt.Fprintf(&sum, "%s:%d:%q;", key, v.Int, v.Items)
			return nil
		})
		return allocs, sum.String()
	}
	small, _ := load(300)
	large, listing := load(3000)
	if !strings.Contains(listing, `k02997:0:["k02997" "v" "f2" "k02997"];`) || !strings.Contains(listing, `k02998:0:["k02998" "k02998" "k02998" "x" "y" "z"];`) || !strings.Contains(listing, `k02999:2999:[];`) {
		t.Fatalf("the loaded values are not the written ones: ...%s", listing[len(listing)-300:])
	}
	if perKey := (large - small) / 2700; perKey > 0.05 {
		t.Fatalf("Load allocated %.0f times for 300 keys and %.0f for 3000: %.2f a key", small, large, perKey)
	}
}
