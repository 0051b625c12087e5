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
	isBusy   bool
	finished bool
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

// Hold marks every shard of shards as held by the script b marks (nil: by
// none).
func Hold(shards []*Shard, b *Busy) {
	for _, sh := range shards {
		sh.script.Store(b)
	}
}

// HeldBusy reports whether a script holding one of shards has passed
// busy-reply-threshold.
func HeldBusy(shards []*Shard) bool {
	for _, s := range shards {
		if b := s.script.Load(); b != nil && b.IsBusy() {
			return true
		}
	}
	return false
}

// Waited reports whether a command has asked for the script's signals.
func (b *Busy) Waited() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done != nil
}
