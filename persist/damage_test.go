package persist

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/persist/effectlog"
)

// fillStore writes keys k0..k<n-1> to a new store in dir as the server
// would over its life: a rewrite (a base) of the first half, a checkpoint
// of key records for the next quarter, and the last quarter in the log
// only; then closes it. It returns the state Load and Replay must give.
func fillStore(t *testing.T, dir string, n int) map[string]string {
	t.Helper()
	s, err := Open(dir, Options{LogSegmentSize: 64 << 10, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	val := func(i int) string { return fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50)) }
	rewrite(t, s, true, func(w *BaseWriter) {
		for i := 0; i < n/2; i++ {
			w.PutString(0, []byte(fmt.Sprint("k", i)), 0, []byte(val(i)))
			want[fmt.Sprint("k", i)] = val(i)
		}
	})
	records(t, s, func(b *Batch) {
		for i := n / 2; i < 3*n/4; i++ {
			b.PutString(0, []byte(fmt.Sprint("k", i)), 0, []byte(val(i)))
			want[fmt.Sprint("k", i)] = val(i)
		}
	})
	for i := 3 * n / 4; i < n; i++ {
		commit(t, s, func(b *Batch) { b.PutString(0, []byte(fmt.Sprint("k", i)), 0, []byte(val(i))) })
		want[fmt.Sprint("k", i)] = val(i)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// loadAll opens the store in dir as the server does (Open, Load, Replay)
// and returns the keys it ends with, the records Load and Replay skipped,
// and the first error.
func loadAll(dir string, o Options) (map[string]string, int, *Store, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := Open(dir, o)
	if err != nil {
		return nil, 0, nil, err
	}
	got := map[string]string{}
	bad, err := s.Load(func(db int, key []byte, v Value) error {
		got[string(key)] = string(v.Str)
		return nil
	})
	if err == nil {
		var n int
		_, n, err = s.Replay(func(e *Effect) error {
			if e.Kind == EffectPut {
				got[string(e.Key)] = string(e.Value.Str)
			}
			return nil
		})
		bad += n
	}
	if err != nil {
		s.Close()
		return nil, bad, nil, err
	}
	return got, bad, s, nil
}

// TestStorePebbleDamage changes a byte or flips a bit at a random offset
// of a random file of the store (Pebble's tables, MANIFEST, OPTIONS, the
// rest but its lock, the checkpoint mark, the effect log's segments) and
// checks that every trial ends one of two ways: the store refuses to open
// or load, with an error naming the file (or Pebble's number for it), or
// it loads every key as it was (but the last one logged, when the damage
// was in the log's last record: a torn tail).
func TestStorePebbleDamage(t *testing.T) {
	trials := 120
	if testing.Short() {
		trials = 20
	}
	seed := int64(rand.Uint32())
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)
	tmpl := t.TempDir()
	want := fillStore(t, tmpl, 2000)
	kinds := map[string][2]int{} // file kind: trials refused, trials whole
	for trial := 0; trial < trials; trial++ {
		dir := t.TempDir()
		copyDir(t, filepath.Join(tmpl, DirName), filepath.Join(dir, DirName))
		var files []string
		ents, err := os.ReadDir(filepath.Join(dir, DirName))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if info, err := e.Info(); err == nil && e.Type().IsRegular() && info.Size() > 0 && e.Name() != "LOCK" {
				files = append(files, e.Name())
			}
		}
		segs, _ := filepath.Glob(filepath.Join(dir, DirName, LogDirName, "*.log"))
		for _, p := range segs {
			files = append(files, filepath.Join(LogDirName, filepath.Base(p)))
		}
		name := files[rng.Intn(len(files))]
		path := filepath.Join(dir, DirName, name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		off := rng.Intn(len(b))
		if n := nonzeroLen(b); strings.HasPrefix(name, LogDirName) && n > 0 {
			off = rng.Intn(min(n+64, len(b))) // a segment: what it holds, or just past
		}
		v := b[off] ^ byte(1<<rng.Intn(8))
		if rng.Intn(2) == 0 {
			v = byte(rng.Intn(256))
			if v == b[off] {
				v++
			}
		}
		b[off] = v
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		kind := pebbleFileKind(name)
		what := fmt.Sprintf("trial %d (seed %d): byte %d of %s set to %#x", trial, seed, off, name, v)
		got, bad, s, err := loadAll(dir, Options{})
		if err != nil {
			msg := err.Error()
			num := strings.TrimLeft(strings.TrimSuffix(strings.TrimSuffix(name, ".sst"), ".log"), "MANIFEST-OPTIONS-")
			if kind == "effectlog" {
				num = path
			}
			if !strings.Contains(msg, name) && !strings.Contains(msg, num) {
				t.Fatalf("%s: refused, but the error does not name the file: %v", what, err)
			}
			if !strings.Contains(msg, "backup") && !strings.Contains(msg, "remove the file") && !strings.Contains(msg, "effectlog") {
				t.Fatalf("%s: refused, but the error does not say what to do: %v", what, err)
			}
			k := kinds[kind]
			k[0]++
			kinds[kind] = k
			continue
		}
		s.Close()
		if kind == "effectlog" && len(got) == len(want)-1 {
			// A torn tail: the last record (the last key) may go, with
			// nothing after it.
			if _, ok := got["k1999"]; !ok {
				got["k1999"] = want["k1999"]
			}
		}
		if bad != 0 || len(got) != len(want) {
			t.Fatalf("%s: opened with %d of %d keys, %d records skipped", what, len(got), len(want), bad)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s: opened, but key %s is %q, want %q", what, k, got[k], v)
			}
		}
		k := kinds[kind]
		k[1]++
		kinds[kind] = k
	}
	t.Logf("%d trials, by file kind [refused, loaded whole]: %v", trials, kinds)
}

func pebbleFileKind(name string) string {
	switch {
	case strings.HasPrefix(name, LogDirName):
		return "effectlog"
	case strings.HasSuffix(name, ".sst"):
		return "sst"
	case strings.HasPrefix(name, "MANIFEST"):
		return "MANIFEST"
	case strings.HasPrefix(name, "OPTIONS"):
		return "OPTIONS"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	}
	return name
}

// nonzeroLen is the length of b up to its last nonzero byte.
func nonzeroLen(b []byte) int {
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return n
}

// copyDir copies the files of src (and its subdirectories) to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStoreLogDamage: a record damaged in the middle of the effect log
// stops Open unless SkipDamagedLog, which loads every other key and
// reports the loss with the key the damaged record named.
func TestStoreLogDamage(t *testing.T) {
	dir := t.TempDir()
	want := fillStore(t, dir, 400)
	segs, _ := filepath.Glob(filepath.Join(dir, DirName, LogDirName, "*.log"))
	seg := segs[len(segs)-1]
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	// The key k350's record, in the middle of the log: flip a byte of its value.
	at := strings.Index(string(b), "value-350-")
	if at < 0 {
		t.Fatal("k350's record not in the last segment")
	}
	b[at+3] ^= 0x20
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = loadAll(dir, Options{})
	var de *effectlog.DamageError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), seg) {
		t.Fatalf("Open = %v, want a damage error naming %s", err, seg)
	}
	got, bad, s, err := loadAll(dir, Options{SkipDamagedLog: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.LogDamage()
	if bad != 0 || d.Stretches != 1 || d.Records != 1 || d.Unknown != 0 || d.KeyCount != 1 || d.Keys[0] != `0/"k350"` {
		t.Fatalf("skipped %d, damage %+v; want one record of k350", bad, d)
	}
	delete(want, "k350")
	if len(got) != len(want) {
		t.Fatalf("loaded %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %s is %q, want %q", k, got[k], v)
		}
	}
}
