package persist

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestSnapshotOrder: a snapshot batch of random puts, deletes and range
// deletions leaves the same contents in Pebble whether its point
// operations are put in key order first (snapSorter) or applied as they
// came. The keys share long prefixes, differ in length and by zero bytes,
// and repeat, so that every path of the sort is taken.
func TestSnapshotOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	open := func() *pebble.DB {
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	long := strings.Repeat("ratelimit:api:v1:", 2)
	keys := []string{"", "a", "a\x00", "a\x00\x00b", "b", long, long + "1", long + "12", long + "2", long + "1\x00", long + long + "x"}
	for i := range 40 {
		keys = append(keys, fmt.Sprint("user:", i*37, ":reply"), fmt.Sprint(long, i*41))
	}
	var ss snapSorter
	for round := range 200 {
		b := &Batch{}
		for range 1 + r.IntN(600) {
			db := r.IntN(2)
			key := []byte(keys[r.IntN(len(keys))])
			switch r.IntN(80) {
			case 0:
				b.DeleteKey(db, key)
			case 1:
				b.DeleteDB(db)
			case 2, 3, 4:
				b.Delete(db, key)
			case 5, 6, 7, 8:
				b.PutMember(db, key, []byte{byte('m' + r.IntN(3))}, float64(r.IntN(5)))
			case 9:
				b.DeleteMember(db, key, []byte{byte('m' + r.IntN(3))})
			default:
				b.PutString(db, key, 0, []byte(fmt.Sprint(round, r.IntN(100))))
			}
		}
		sorted, plain := open(), open()
		pb := sorted.NewBatch()
		if err := ss.apply(pb, b.wire); err != nil {
			t.Fatal(err)
		}
		if err := pb.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		pb = plain.NewBatch()
		err := walkWire(b.wire, func(op opKind, k, v []byte) error {
			switch op {
			case opSet:
				return pb.Set(k, v, nil)
			case opDelete:
				return pb.Delete(k, nil)
			}
			return pb.DeleteRange(k, v, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := pb.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if got, want := dumpDB(t, sorted), dumpDB(t, plain); got != want {
			t.Fatalf("round %d: in key order\n%s\nas they came\n%s", round, got, want)
		}
	}
}

// TestSnapSorterSort: the operations come out in key order, and those on
// one key in the order they came, for runs big enough for the radix sort
// and keys that share long prefixes, end early or differ by zero bytes.
func TestSnapSorterSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ss snapSorter
	for round := range 300 {
		var wire []byte
		var ops []snapOp
		for i := range r.IntN(2000) {
			k := []byte(strings.Repeat("p", r.IntN(40)))
			for range r.IntN(4) {
				k = append(k, "ab\x00"[r.IntN(3)])
			}
			ops = append(ops, snapOp{koff: uint32(len(wire)), klen: uint32(len(k)), seq: int32(i)})
			wire = append(wire, k...)
		}
		ss.sort(wire, ops)
		for i := 1; i < len(ops); i++ {
			a := wire[ops[i-1].koff : ops[i-1].koff+ops[i-1].klen]
			b := wire[ops[i].koff : ops[i].koff+ops[i].klen]
			if c := bytes.Compare(a, b); c > 0 || c == 0 && ops[i-1].seq > ops[i].seq {
				t.Fatalf("round %d: %q (op %d) before %q (op %d)", round, a, ops[i-1].seq, b, ops[i].seq)
			}
		}
	}
}

func dumpDB(t *testing.T, db *pebble.DB) string {
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out bytes.Buffer
	for it.First(); it.Valid(); it.Next() {
		fmt.Fprintf(&out, "%q=%q\n", it.Key(), it.Value())
	}
	return out.String()
}
