package cell

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/hashslot"
)

// TestDelKeysInSlot: the keys of a slot that routes elsewhere are deleted
// for good (a restart does not bring them back), other slots' keys stay,
// and a slot that routes here again, or is being imported, keeps its keys.
func TestDelKeysInSlot(t *testing.T) {
	top, err := ParseTopology(strings.ReplaceAll(testTopology, " [5->-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2]", ""), SelfHint{})
	if err != nil {
		t.Fatal(err)
	}
	// tag is a hash tag of one of this node's slots (0-5460), other than
	// not's.
	tag := func(not string) string {
		for i := 0; ; i++ {
			tg := fmt.Sprint("t", i)
			if s := hashslot.Of([]byte(tg)); s <= 5460 && (not == "" || s != hashslot.Of([]byte(not))) {
				return tg
			}
		}
	}
	lostTag := tag("")
	keptTag := tag(lostTag)
	lost, kept := hashslot.Of([]byte(lostTag)), hashslot.Of([]byte(keptTag))
	for _, tc := range []struct {
		name  string
		route func(t *Topology, slot int) // the map when the deleter runs
		// deleted is what delKeysInSlot returns (an expired key goes
		// uncounted); left and restarted the keys of the slot after it
		// and after a restart (which drops the expired key).
		deleted, left, restarted int
	}{
		{"taken by another master", func(t *Topology, slot int) { t.owner[slot] = int16(t.Self+1) % 3 }, 3, 0, 0},
		{"routes here again", func(t *Topology, slot int) {}, 0, 4, 3},
		{"being imported", func(t *Topology, slot int) { t.owner[slot] = int16(t.Self+1) % 3; t.importing[slot] = 1 }, 0, 4, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mod := func(c *Config) { c.Cluster = top }
			srv, stop := openServer(t, dir, mod)
			for i := range 3 {
				setKey(srv, 0, fmt.Sprintf("{%s}:%d", lostTag, i), "v", 0)
				setKey(srv, 0, fmt.Sprintf("{%s}:%d", keptTag, i), "v", 0)
			}
			setKey(srv, 0, "{"+lostTag+"}:expired", "v", time.Now().UnixMilli()+50)
			time.Sleep(60 * time.Millisecond)
			nt := *srv.topo.Load()
			nt.importing = map[int]int{}
			tc.route(&nt, lost)
			srv.topo.Store(&nt)
			if n := srv.delKeysInSlot(lost); n != tc.deleted {
				t.Errorf("delKeysInSlot deleted %d keys, want %d", n, tc.deleted)
			}
			check := func(when string, left int) {
				t.Helper()
				if n := srv.ks.CountKeysInSlot(kept); n != 3 {
					t.Errorf("%s: %d keys in the slot kept, want 3", when, n)
				}
				if n := srv.ks.CountKeysInSlot(lost); n != left {
					t.Errorf("%s: %d keys in the lost slot, want %d", when, n, left)
				}
			}
			check("after the deletion", tc.left)
			stop()
			srv, _ = openServer(t, dir, mod)
			check("after a restart", tc.restarted)
		})
	}
}
