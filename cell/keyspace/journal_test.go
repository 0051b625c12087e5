package keyspace

import (
	"fmt"
	"testing"
)

// TestJournal: each key once, in the order of its first change; a flush
// of a database drops the earlier changes of that database only.
func TestJournal(t *testing.T) {
	tests := []struct {
		name string
		ops  func(j *Journal)
		want string
	}{
		{"order and once", func(j *Journal) {
			j.note(0, []byte("a"), false, false, false)
			j.note(0, []byte("b"), false, false, false)
			j.note(0, []byte("a"), false, false, false)
		}, "0:a 0:b"},
		{"same key other db", func(j *Journal) {
			j.note(0, []byte("a"), false, false, false)
			j.note(1, []byte("a"), false, false, false)
		}, "0:a 1:a"},
		{"flush", func(j *Journal) {
			j.note(0, []byte("a"), false, false, false)
			j.note(1, []byte("b"), false, false, false)
			j.flush(0)
			j.note(0, []byte("a"), false, false, false)
		}, "1:b 0:FLUSH 0:a"},
	}
	for _, tc := range tests {
		var j Journal
		tc.ops(&j)
		got := ""
		for i, e := range j.Entries() {
			if i > 0 {
				got += " "
			}
			if e.Flush {
				got += fmt.Sprintf("%d:FLUSH", e.DB)
			} else {
				got += fmt.Sprintf("%d:%s", e.DB, j.Key(e))
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		j.Reset()
		if len(j.Entries()) != 0 {
			t.Errorf("%s: Reset left %d entries", tc.name, len(j.Entries()))
		}
	}
}

// journaled begins an execution at 1000 ms, with no store, noting its
// changes in a journal, on a keyspace of two databases; the first dbs
// are locked.
func journaled(dbs int) (*Tx, *Effects, *Journal, *LockSet) {
	ks := NewKeyspace(2, 4)
	fx, j, x, l := new(Effects), new(Journal), new(Tx), new(LockSet)
	fx.SetJournal(j)
	x.Begin(ks, fx, 0, 1000)
	for db := range dbs {
		l.AddDB(ks, db)
	}
	l.Lock(false)
	return x, fx, j, l
}

// TestJournalWithoutStore: a Tx whose Effects has no store notes its
// changes, expired keys included, for the stream.
func TestJournalWithoutStore(t *testing.T) {
	x, fx, j, l := journaled(1)
	x.SetString([]byte("s"), []byte("v"), 0)
	x.SetInt([]byte("n"), 5, 1500)
	x.SetNow(2000)
	if x.Lookup([]byte("n")) != nil {
		t.Fatal("n should have expired")
	}
	if err := fx.Commit(l); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if n := len(j.Entries()); n != 2 || string(j.Key(j.Entries()[0])) != "s" || string(j.Key(j.Entries()[1])) != "n" {
		t.Fatalf("journal: %d entries", n)
	}
}

// TestJournalExisted: an entry says whether its key held a value before
// the execution's first change of it, expired or not, after any flush of
// its database the execution made.
func TestJournalExisted(t *testing.T) {
	x, _, j, l := journaled(2)
	defer l.Unlock()
	x.SetString([]byte("old"), []byte("v"), 0)
	x.SetString([]byte("gone"), []byte("v"), 1500)
	x.SetString([]byte("src"), []byte("v"), 0)
	x.SetDB(1)
	x.SetString([]byte("after"), []byte("v"), 0)
	x.SetDB(0)
	j.Reset()
	x.SetNow(2000)

	x.SetString([]byte("old"), []byte("w"), 0)                      // replaced
	x.SetObject([]byte("new"), NewHash(), 0)                        // created
	x.SetString([]byte("new"), []byte("x"), 0)                      // then replaced: still created
	x.Lookup([]byte("gone"))                                        // expired on the way
	x.SetInt([]byte("gone"), 1, 0)                                  // over the expired key
	x.Rename([]byte("src"), []byte("dst"), x.Lookup([]byte("src"))) // src existed, dst did not
	x.SetInt([]byte("n"), 1, 0)                                     // created
	x.Remove([]byte("n"))
	x.FlushDB(1)
	x.SetDB(1)
	x.SetString([]byte("after"), []byte("w"), 0) // in db 1, after its flush
	want := map[string]bool{"old": true, "new": false, "gone": true, "src": true, "dst": false, "n": false, "after": false}
	for _, e := range j.Entries() {
		if e.Flush {
			continue
		}
		k := string(j.Key(e))
		if e.Existed != want[k] {
			t.Errorf("%s: Existed %v, want %v", k, e.Existed, want[k])
		}
		delete(want, k)
	}
	for k := range want {
		t.Errorf("%s: no entry", k)
	}
}
