package keyspace

import (
	"testing"
	"time"
)

// TestLockYieldsToReachingScript: a lock set that holds a lower shard and
// waits for a higher one marked by a script lets the lower one go once the
// script reaches out for it, whether the mark was set before the wait
// began or after it (the script marks its shards just after locking them),
// and it still ends holding all its shards once the script is done.
func TestLockYieldsToReachingScript(t *testing.T) {
	for _, markLate := range []bool{false, true} {
		ks := NewKeyspace(1, 4)
		low, high := &ks.dbs[0].shards[0], &ks.dbs[0].shards[3]
		var mark Busy
		var script LockSet
		script.Add(high)
		if !script.Lock(false) {
			t.Fatal("script lock")
		}
		if !markLate {
			Hold(script.Shards(), &mark)
		}
		var waiter LockSet
		waiter.Add(high)
		waiter.Add(low)
		locked := make(chan bool)
		go func() { locked <- waiter.Lock(false) }()
		// The waiter holds low and waits on high.
		for low.mu.TryLock() {
			low.mu.Unlock()
			time.Sleep(time.Millisecond)
		}
		if markLate {
			Hold(script.Shards(), &mark)
		}
		mark.MarkReaching()
		deadline := time.Now().Add(10 * time.Second)
		for !script.TryAdd(low) {
			if time.Now().After(deadline) {
				t.Fatalf("markLate %v: the waiter kept the shard the script reached for", markLate)
			}
			time.Sleep(50 * time.Microsecond)
		}
		select {
		case <-locked:
			t.Fatalf("markLate %v: the waiter locked while the script held its shards", markLate)
		default:
		}
		Hold(script.Shards(), nil)
		mark.Finish()
		script.Unlock()
		if !<-locked {
			t.Fatalf("markLate %v: the waiter gave up", markLate)
		}
		if got := len(waiter.Shards()); got != 2 {
			t.Fatalf("markLate %v: waiter holds %d shards, want 2", markLate, got)
		}
		waiter.Unlock()
	}
}

// TestTryLock: TryLock takes every shard of the set when all are free,
// and none (emptying the set) when another execution holds one of them,
// whichever one that is.
func TestTryLock(t *testing.T) {
	ks := NewKeyspace(1, 4)
	for held := -1; held < 4; held++ { // -1: none held elsewhere
		var other LockSet
		if held >= 0 {
			other.Add(&ks.dbs[0].shards[held])
			other.Lock(false)
		}
		var l LockSet
		l.Add(&ks.dbs[0].shards[3])
		l.Add(&ks.dbs[0].shards[0])
		l.Add(&ks.dbs[0].shards[2])
		got := l.TryLock()
		want := held != 0 && held != 2 && held != 3
		if got != want {
			t.Fatalf("shard %d held elsewhere: TryLock = %v, want %v", held, got, want)
		}
		if got {
			l.Unlock()
		} else if len(l.Shards()) != 0 {
			t.Errorf("shard %d held elsewhere: the failed set still lists %d shards", held, len(l.Shards()))
		}
		other.Unlock()
		// Nothing is left locked: every shard can be taken now.
		for i := range ks.dbs[0].shards {
			if !ks.dbs[0].shards[i].mu.TryLock() {
				t.Fatalf("shard %d held elsewhere: shard %d left locked", held, i)
			}
			ks.dbs[0].shards[i].mu.Unlock()
		}
	}
}

// TestLockBusyAfterKill: a command that waits on a script's shard answers
// BUSY once the script passed busy-reply-threshold, even when the script
// has ended by the time the waiter looks (killed at once, say), rather
// than running after it as if it had arrived later: Redis answers BUSY to
// what it reads during the busy script, in the pass that runs the kill.
func TestLockBusyAfterKill(t *testing.T) {
	for _, busyOK := range []bool{false, true} {
		ks := NewKeyspace(1, 1)
		sh := &ks.dbs[0].shards[0]
		var mark Busy
		var script LockSet
		script.Add(sh)
		if !script.Lock(false) {
			t.Fatal("script lock")
		}
		Hold(script.Shards(), &mark)
		mark.MarkBusy()
		mark.Finish() // ended, but not yet let go of its shard
		got := make(chan lockResult, 1)
		go func() {
			r, _ := sh.lockWait(busyOK, false)
			got <- r
		}()
		time.Sleep(20 * time.Millisecond)
		Hold(script.Shards(), nil)
		script.Unlock()
		want := lockBusy
		if busyOK {
			want = lockTaken // allow-busy commands wait and run
		}
		if r := <-got; r != want {
			t.Fatalf("busyOK %v: lockWait = %v, want %v", busyOK, r, want)
		}
		if want == lockTaken {
			sh.mu.Unlock()
		}
	}
}
