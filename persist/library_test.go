package persist

import (
	"fmt"
	"strings"
	"testing"
)

// libraries lists the snapshot's libraries as "name=code", by name.
func libraries(t *testing.T, s *Store) string {
	t.Helper()
	var out []string
	if err := s.Libraries(func(name, code []byte) error {
		out = append(out, fmt.Sprintf("%s=%s", name, code))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, ",")
}

// TestStoreLibraries: the libraries' effects come back from Replay after
// a reopen, in order and beside the keys' effects of the same record,
// which stay what they were; a snapshot's library records come back from
// Libraries and never from Load.
func TestStoreLibraries(t *testing.T) {
	// A sorted set's member op after a library's is no member of the
	// set before it: the record does not decode.
	var b Batch
	b.Put(1, []byte("z"), Value{Kind: KindZSetWide})
	b.DeleteLibrary([]byte("lib"))
	b.PutHeadMemberInt(5)
	var e Effect
	if err := decodeEffects(b.Encoded(), &e, noEffect); err == nil {
		t.Fatal("a head op after a library's delete was taken for the set's")
	}

	dir := t.TempDir()
	s, _ := openTest(t, dir, Options{})
	commit(t, s, func(b *Batch) {
		b.PutLibrary([]byte("lib"), []byte("code 1"))
		b.PutString(0, []byte("k"), 0, []byte("v"))
		b.DeleteLibrary([]byte("old"))
	})
	commit(t, s, func(b *Batch) { b.DeleteLibraries() })
	s.Close()
	s, _ = openTest(t, dir, Options{})
	want := []string{`lib -1/"lib"="code 1"`, `put 0/"k"=s:0:"v"`, `libdel -1/"old"`, `libflush -1`}
	if got := replayed(t, s); joined(got) != joined(want) {
		t.Fatalf("replay:\n%s\nwant\n%s", joined(got), joined(want))
	}

	// A checkpoint's snapshot: the range delete drops what came before
	// it, the libraries after it stay, the keys are Load's alone.
	from, err := s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	snap := s.NewBatch()
	snap.PutLibrary([]byte("gone"), []byte("x"))
	snap.PutString(0, []byte("k"), 0, []byte("v"))
	snap.DeleteLibraries()
	snap.PutLibrary([]byte("b"), []byte("code b"))
	snap.PutLibrary([]byte("a"), []byte("code a"))
	if err := s.WriteSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, _ = openTest(t, dir, Options{})
	if got := libraries(t, s); got != "a=code a,b=code b" {
		t.Fatalf("Libraries: %s", got)
	}
	if got := joined(dump(t, s)); got != `0/"k"=s:0:"v"` {
		t.Fatalf("Load: %s", got)
	}
	if got := replayed(t, s); len(got) != 0 {
		t.Fatalf("replay after the checkpoint: %v", got)
	}
	// A rewrite's end drops the key records, not the libraries.
	from, err = s.BeginCheckpoint()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.BeginRewrite()
	if err != nil {
		t.Fatal(err)
	}
	w.PutString(0, []byte("k2"), 0, []byte("v2"))
	w.Seal(snap)
	if err := s.WriteSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := s.EndCheckpoint(from, w); err != nil {
		t.Fatal(err)
	}
	if got := libraries(t, s); got != "a=code a,b=code b" {
		t.Fatalf("Libraries after a rewrite: %s", got)
	}
	if got := joined(dump(t, s)); got != `0/"k2"=s:0:"v2"` {
		t.Fatalf("Load after a rewrite: %s", got)
	}
}
