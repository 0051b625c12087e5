package keyspace

import "time"

// How a lock wait may end without deadlock.
//
// Executions lock their shards in ascending order (LockSet.Lock), which
// alone rules out a cycle of waits. One kind of holder breaks the order: a
// script running on its declared shards that, after writing, reaches a
// shard it lacks (cell's script_shards.go). It cannot let its shards go,
// since what it wrote must stay unseen until it ends, so it waits for the
// new shard out of order. If that shard is held by an execution that is
// itself waiting, in ascending order, for one of the script's shards, the
// two wait for each other.
//
// An execution that is still taking its locks has shown nothing and can
// let go of what it took. So a wait that holds shards of its own never
// blocks where it cannot hear that a script needs them:
//   - a shard marked by a running script: it waits for the script's end
//     (or busy-reply-threshold) or for the script reaching out (Busy.
//     Reaching); then it lets its shards go, waits for the script's end,
//     and starts its locking again;
//   - a shard locked without a mark (a plain command, or a script that
//     has not yet marked it): it waits to be woken when the shard is let
//     go or marked (wake), looking again in short steps since not every
//     holder wakes it.
//
// A wait that holds nothing blocks in the mutex as before: it holds
// nothing anyone could need.

// lockResult is how one shard's lock wait ended.
type lockResult int

const (
	lockTaken lockResult = iota
	lockBusy             // a script holding it passed busy-reply-threshold
	lockYield            // the script holding it needs the caller's shards
)

// markedRecheck bounds a wait on a shard locked without a mark: some
// holders (the expiry cycle, iterators) let it go without waking.
const markedRecheck = 200 * time.Microsecond

// lockWait locks s. holding: the caller holds other shards, so its wait
// must stay interruptible. With lockYield it returns the script to wait
// for once the caller has let its shards go; with lockBusy, the busy one.
func (s *Shard) lockWait(busyOK, holding bool) (lockResult, *Busy) {
	// A free shard, the common case, without the wait's deferred timer
	// stop (CL.THROTTLE's profile: a sixth of its locking).
	if s.mu.TryLock() {
		return lockTaken, nil
	}
	return s.lockWaitSlow(busyOK, holding)
}

// lockWaitSlow is lockWait for a shard that was held at the first try.
func (s *Shard) lockWaitSlow(busyOK, holding bool) (lockResult, *Busy) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if s.mu.TryLock() {
			return lockTaken, nil
		}
		r := s.script.Load()
		if r == nil {
			if !holding {
				s.mu.Lock()
				return lockTaken, nil
			}
			ch := s.waitCh()
			if s.mu.TryLock() {
				return lockTaken, nil
			}
			if s.script.Load() != nil {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(markedRecheck)
			} else {
				timer.Reset(markedRecheck)
			}
			select {
			case <-ch:
			case <-timer.C:
			}
			continue
		}
		if busyOK && !holding {
			s.mu.Lock()
			return lockTaken, nil
		}
		busy, done := r.Signals()
		if busyOK {
			busy = nil // never ready: allow-busy commands wait
		}
		var reach <-chan struct{}
		if holding {
			reach = r.Reaching()
		}
		select {
		case <-busy:
		case <-done:
		case <-reach:
		}
		// A script that passed busy-reply-threshold while this waited
		// answers BUSY even if it has ended since (killed, say, a moment
		// later): Redis's event loop reads a waiting command during the
		// busy script and answers BUSY in the same pass as the kill, and
		// a command run after the kill instead could be that script again
		// (go-redis retries one whose read timed out).
		if busy != nil && r.IsBusy() {
			return lockBusy, r
		}
		select {
		case <-reach:
			return lockYield, r
		default:
		}
	}
}

// awaitEnd waits for the script to end. false: it passed
// busy-reply-threshold first, and the caller (not busyOK) answers BUSY.
func (b *Busy) awaitEnd(busyOK bool) bool {
	busy, done := b.Signals()
	if busyOK {
		busy = nil
	}
	select {
	case <-done:
	case <-busy:
	}
	return busyOK || !b.IsBusy() // as lockWaitSlow's waiters
}

// waitCh returns the channel closed when s is next let go or marked.
func (s *Shard) waitCh() <-chan struct{} {
	for {
		if p := s.wake.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if s.wake.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// wakeWaiters wakes the waits registered through waitCh.
func (s *Shard) wakeWaiters() {
	if s.wake.Load() == nil {
		return
	}
	if p := s.wake.Swap(nil); p != nil {
		close(*p)
	}
}

// unlock lets s go and wakes the waits that watch it.
func (s *Shard) unlock() {
	s.mu.Unlock()
	s.wakeWaiters()
}
