package keyspace

import "sync"

// Busy marks the shards a running script holds, for the commands that
// wait on them: it knows when the script passes busy-reply-threshold
// (they answer -BUSY from then on) and when it ends. The script's runner
// owns it; the keyspace knows nothing else of scripts.
type Busy struct {
	mu       sync.Mutex
	busy     chan struct{} // closed at busy-reply-threshold; see Signals
	done     chan struct{} // closed when the script has ended; see Signals
	reach    chan struct{} // closed when it waits for a shard it lacks; see Reaching
	isBusy   bool
	finished bool
	reaching bool
}

// Signals returns the channels closed when the script passes
// busy-reply-threshold and when it has ended. They are made on first
// demand: nearly every script ends long before a command waits on it,
// and two channels per run were a third of a short script's
// allocations. A signal that has already happened gets a closed channel.
func (b *Busy) Signals() (busy, done <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.busy == nil {
		b.busy = make(chan struct{})
		if b.isBusy {
			close(b.busy)
		}
	}
	if b.done == nil {
		b.done = make(chan struct{})
		if b.finished {
			close(b.done)
		}
	}
	return b.busy, b.done
}

// MarkBusy records that the script passed busy-reply-threshold, and
// reports whether it had not before.
func (b *Busy) MarkBusy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.isBusy {
		return false
	}
	b.isBusy = true
	if b.busy != nil {
		close(b.busy)
	}
	return true
}

// IsBusy reports whether the script passed busy-reply-threshold.
func (b *Busy) IsBusy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.isBusy
}

// Finish records that the script has ended.
func (b *Busy) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.finished = true
	if b.done != nil {
		close(b.done)
	}
}

// Reaching returns a channel closed once the script, having written,
// waits for a shard it does not hold. A lock wait that holds shards of its
// own lets them go then (LockSet.Lock): it may hold the one the script
// waits for, and the script cannot give its own back.
func (b *Busy) Reaching() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reach == nil {
		b.reach = make(chan struct{})
		if b.reaching {
			close(b.reach)
		}
	}
	return b.reach
}

// MarkReaching records that the script waits for a shard it lacks.
func (b *Busy) MarkReaching() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reaching {
		return
	}
	b.reaching = true
	if b.reach != nil {
		close(b.reach)
	}
}

// Hold marks every shard of shards as held by the script b marks (nil: by
// none).
func Hold(shards []*Shard, b *Busy) {
	for _, sh := range shards {
		sh.script.Store(b)
		sh.wakeWaiters() // a waiter that saw no mark looks again
	}
}

// Holder is the mark of the running script holding s, or nil: none, or
// one that has not marked it yet (Hold comes after the lock, and the mark
// is cleared before the lock is let go, so a mark read means held).
func (s *Shard) Holder() *Busy { return s.script.Load() }

// HeldBusy returns the mark of a script holding one of shards that has
// passed busy-reply-threshold, or nil.
func HeldBusy(shards []*Shard) *Busy {
	for _, s := range shards {
		if b := s.script.Load(); b != nil && b.IsBusy() {
			return b
		}
	}
	return nil
}

// Waited reports whether a command has asked for the script's signals.
func (b *Busy) Waited() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done != nil
}
