package keyspace

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cellserver/cellserver/zsetlite"
)

// readyString lists r's keys as "db:key ...".
func readyString(r *Ready) string {
	s := ""
	for i, k := range r.Keys() {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%s", k.DB, k.Key)
	}
	return s
}

// TestReadied: while clients wait, an execution notes each key that gets
// a list or a sorted set (stored or renamed there), once, in order; other
// types, and any store while nobody waits, are not noted.
func TestReadied(t *testing.T) {
	tests := []struct {
		name    string
		waiting int64
		ops     func(x *Tx)
		want    string
	}{
		{"nobody waits", 0, func(x *Tx) { x.SetObject([]byte("l"), NewList(), 0) }, ""},
		{"lists and sorted sets", 1, func(x *Tx) {
			x.SetObject([]byte("l"), NewList(), 0)
			x.SetObject([]byte("z"), NewZSet(zsetlite.Config{}), 0)
			x.SetObject([]byte("l"), NewList(), 0)
		}, "0:l 0:z"},
		{"not strings, hashes, sets", 2, func(x *Tx) {
			x.SetString([]byte("s"), []byte("v"), 0)
			x.SetObject([]byte("h"), NewHash(), 0)
			x.SetObject([]byte("set"), NewSet(), 0)
		}, ""},
		{"database and rename", 1, func(x *Tx) {
			x.SetDB(3)
			x.SetObject([]byte("src"), NewList(), 0)
			x.Rename([]byte("src"), []byte("dst"), x.Lookup([]byte("src")))
		}, "3:src 3:dst"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := NewKeyspace(16, 4)
			ks.AddWaiting(tc.waiting)
			var r Ready
			var x Tx
			x.Begin(ks, nil, 0, 1)
			x.SetReady(&r)
			tc.ops(&x)
			if got := readyString(&r); got != tc.want {
				t.Errorf("noted %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadyPop(t *testing.T) {
	var r Ready
	r.Note(0, []byte("a"))
	r.Note(1, []byte("a"))
	r.Note(0, []byte("a"))
	r.Note(0, []byte("b"))
	var got string
	for {
		k, ok := r.Pop()
		if !ok {
			break
		}
		got += fmt.Sprintf("%d:%s ", k.DB, k.Key)
	}
	if want := "0:a 1:a 0:b "; got != want {
		t.Errorf("popped %q, want %q", got, want)
	}
}

// TestSwapDB: the databases exchange their keys and expiries; a WATCH
// breaks when its key exists in either database, and only then.
func TestSwapDB(t *testing.T) {
	ks := NewKeyspace(4, 4)
	var x Tx
	x.Begin(ks, nil, 0, 1)
	x.SetString([]byte("a"), []byte("zero"), 0)
	x.SetString([]byte("only0"), []byte("x"), 5000)
	x.SetDB(1)
	x.SetString([]byte("a"), []byte("one"), 0)
	x.SetObject([]byte("only1"), NewList(), 0)
	var inOther, inNeither, inOwn, otherDB atomic.Bool
	ks.Watch(0, []byte("only1"), &inOther, 1)
	ks.Watch(0, []byte("nowhere"), &inNeither, 1)
	ks.Watch(1, []byte("only1"), &inOwn, 1)
	ks.Watch(2, []byte("a"), &otherDB, 1)
	x.SwapDB(0, 1)
	for _, c := range []struct {
		db   int
		key  string
		want string
	}{{0, "a", "one"}, {1, "a", "zero"}, {0, "only1", "list"}, {1, "only0", "x"}, {0, "only0", ""}, {1, "only1", ""}} {
		x.SetDB(c.db)
		e := x.Lookup([]byte(c.key))
		got := ""
		switch {
		case e == nil:
		case e.IsString():
			got = string(e.StrBytes())
		default:
			got = e.Type()
		}
		if got != c.want {
			t.Errorf("db %d %s = %q, want %q", c.db, c.key, got, c.want)
		}
	}
	x.SetDB(1)
	if e := x.Lookup([]byte("only0")); e == nil || e.Exp != 5000 {
		t.Errorf("only0 lost its expiry: %+v", e)
	}
	if ks.DBSize(0) != 2 || ks.DBSize(1) != 2 {
		t.Errorf("sizes %d %d, want 2 2", ks.DBSize(0), ks.DBSize(1))
	}
	if !inOther.Load() || !inOwn.Load() || inNeither.Load() || otherDB.Load() {
		t.Errorf("watches broken: other db's key %v, own %v, neither %v, unswapped db %v; want true true false false",
			inOther.Load(), inOwn.Load(), inNeither.Load(), otherDB.Load())
	}
}
