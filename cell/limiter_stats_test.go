package cell

import (
	"strconv"
	"testing"
	"time"
)

// TestRefusedTop: the sketch counts repeated keys, gives a new key the
// place and count (plus one) of the least counted one when full, halves
// the counts per topHalfLife, and its list does not change when a
// replaced key's buffer is reused.
func TestRefusedTop(t *testing.T) {
	var top refusedTop
	now := int64(1_700_000_000) * int64(time.Second)
	for i := range topSize {
		k := []byte("key:" + strconv.Itoa(i))
		for range i + 2 { // key:i is refused i+2 times
			top.add(k, now)
		}
	}
	got := top.list(3, now)
	want := []topEntry{{"key:63", 65}, {"key:62", 64}, {"key:61", 63}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("list 3 = %v, want %v", got, want)
	}
	all := top.list(topSize, now)
	if all[topSize-1] != (topEntry{"key:0", 2}) {
		t.Fatalf("least = %v", all[topSize-1])
	}
	// Full: a new key takes key:0's place with its count plus one.
	top.add([]byte("new-key-longer-than-the-others"), now)
	after := top.list(topSize, now)
	found := false
	for _, e := range after {
		if e.key == "key:0" {
			t.Fatalf("key:0 still listed: %v", after)
		}
		if e.key == "new-key-longer-than-the-others" {
			found = e.count == 3
		}
	}
	if !found || all[topSize-1].key != "key:0" {
		t.Fatalf("new key not in key:0's place with count 3: %v (earlier list %v)", after, all[topSize-1])
	}
	// A half-life later every count is halved, and those at 0 dropped.
	top.add([]byte("key:63"), now+int64(topHalfLife))
	got = top.list(2, now+int64(topHalfLife))
	if got[0] != (topEntry{"key:63", 33}) || got[1] != (topEntry{"key:62", 32}) {
		t.Fatalf("after a half-life: %v", got)
	}
	if n := len(top.list(topSize, now+7*int64(topHalfLife))); n != 0 {
		t.Fatalf("%d keys left after seven half-lives", n)
	}
}
