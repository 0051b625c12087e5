package keyspace

import (
	"strconv"
	"testing"
)

// shrink gives the index's table back once it holds a quarter of its
// peak or less, and keeps every key.
func TestShardShrink(t *testing.T) {
	sh := &Shard{}
	for i := 0; i < 2*shrinkMin; i++ {
		k := []byte(strconv.Itoa(i))
		sh.newEntry(keyHash(k), k, 0)
	}
	sh.shrink()
	if sh.peak != 2*shrinkMin {
		t.Fatalf("peak = %d", sh.peak)
	}
	size := len(sh.keys.slots)
	for i := 0; i < shrinkMin; i++ {
		sh.drop(strconv.Itoa(i))
	}
	sh.shrink()
	if sh.keys.len() != shrinkMin || len(sh.keys.slots) != size {
		t.Fatal("rebuilt at half the peak")
	}
	for i := shrinkMin; i < 2*shrinkMin-10; i++ {
		sh.drop(strconv.Itoa(i))
	}
	sh.shrink()
	if len(sh.keys.slots) >= size || sh.keys.len() != 10 || sh.peak != 10 {
		t.Fatalf("not rebuilt: len %d size %d peak %d", sh.keys.len(), len(sh.keys.slots), sh.peak)
	}
	for i := 2*shrinkMin - 10; i < 2*shrinkMin; i++ {
		if sh.keys.getS(strconv.Itoa(i)) == nil {
			t.Fatalf("key %d lost in the rebuild", i)
		}
	}
}
