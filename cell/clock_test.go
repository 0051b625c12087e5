package cell

import (
	"testing"
	"time"
)

// TestCmdClock: the derived wall clock tracks time.Now, and an anchor older
// than clockAnchorAge is replaced, so a wall clock step (simulated by a
// wrong anchor) shows within that age.
func TestCmdClock(t *testing.T) {
	const hour = int64(time.Hour)
	tests := []struct {
		name   string
		setup  func(k *cmdClock)
		offset int64 // expected wall minus the true wall clock
	}{
		{"first read", func(k *cmdClock) {}, 0},
		{"fresh anchor", func(k *cmdClock) { k.read() }, 0},
		{"fresh wrong anchor is used", func(k *cmdClock) { k.read(); k.anchorWall -= hour }, -hour},
		{"old wrong anchor is replaced", func(k *cmdClock) {
			k.read()
			k.anchorWall -= hour
			k.anchorMono -= 2 * clockAnchorAge
		}, 0},
		{"anchor from the future is replaced", func(k *cmdClock) {
			k.read()
			k.anchorWall -= hour
			k.anchorMono += hour
		}, 0},
	}
	for _, tc := range tests {
		var k cmdClock
		tc.setup(&k)
		before := time.Now().UnixNano()
		mono, wall := k.read()
		after := time.Now().UnixNano()
		// The derived clock may differ from the true one by the slew since
		// the anchor, far below a millisecond.
		slack := int64(time.Millisecond)
		if wall < before+tc.offset-slack || wall > after+tc.offset+slack {
			t.Errorf("%s: wall %d outside [%d, %d] + %d", tc.name, wall, before, after, tc.offset)
		}
		if m := monoNow(); m < mono {
			t.Errorf("%s: monotonic clock went back from %d to %d", tc.name, mono, m)
		}
	}
}

// TestCmdClockChain: a read right after end starts where end stopped, once;
// after idle it reads the clock again.
func TestCmdClockChain(t *testing.T) {
	var k cmdClock
	k.read()
	e := k.end()
	if mono, _ := k.read(); mono != e {
		t.Errorf("read after end: %d, want end's %d", mono, e)
	}
	// A reading inside the anchor's age however long this test takes, that
	// a later fresh read cannot return.
	old := monoNow()
	k.anchorMono = old - 1
	k.last = old
	if mono, _ := k.read(); mono != old {
		t.Errorf("read of a handed-over reading: %d, want %d", mono, old)
	}
	if mono, _ := k.read(); mono == old {
		t.Error("a handed-over reading was used twice")
	}
	k.end()
	k.last = old
	k.idle()
	if mono, _ := k.read(); mono == old {
		t.Error("read after idle used end's reading")
	}
}

// TestCmdClockQueued: commands queued one after another share one reading
// (the first takes end's, if any); the read after them, and one after
// idle, take their own.
func TestCmdClockQueued(t *testing.T) {
	var k cmdClock
	k.read()
	e := k.end()
	for i := range 3 {
		if mono, _ := k.readQueued(); mono != e {
			t.Errorf("queued command %d: reading %d, want end's %d", i, mono, e)
		}
	}
	old := monoNow()
	k.anchorMono = old - 1
	k.queued = old
	if mono, _ := k.read(); mono == old {
		t.Error("a read after queued commands used their reading")
	}
	k.end()
	k.queued = old
	k.idle()
	if mono, _ := k.readQueued(); mono == old {
		t.Error("a queued command after idle used the reading before it")
	}
}
