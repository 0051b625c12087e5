package effectlog

import (
	"fmt"
	"os"
)

// Synced reports whether every record ending at or before n is durable.
// n is meant to be an LSN that Append or End returned.
func (l *Log) Synced(n uint64) bool { return l.synced.Load() >= n }

// Unsynced is how far the log runs past what is durable, in log
// positions (bytes): the fsync lag.
func (l *Log) Unsynced() uint64 {
	end, synced := l.End(), l.synced.Load()
	if end < synced {
		return 0
	}
	return end - synced
}

// Sync returns once every record ending at or before n is on disk
// (fdatasync of the segments holding [synced, n)). Concurrent calls share
// fsyncs: callers that arrive while an fsync runs are served by the next one
// (group commit), never one fsync per caller. On an fsync error it returns
// the error (and Err reports it) without advancing Synced.
//
// One caller at a time runs a round, which syncs everything appended when
// it starts; the others wait on a condition variable and are woken together
// when it ends, so a caller whose record the round covered returns without
// queueing behind the next round, and the callers it did not cover start
// the next one together.
func (l *Log) Sync(n uint64) error {
	if l.isClosed.Load() {
		return ErrClosed
	}
	if l.synced.Load() >= n {
		return nil
	}
	l.waitMu.Lock()
	defer l.waitMu.Unlock()
	for {
		if l.isClosed.Load() {
			return ErrClosed
		}
		if l.synced.Load() >= n {
			return nil
		}
		if !l.syncing {
			l.syncing = true
			l.waitMu.Unlock()
			target, err := l.syncRound()
			l.waitMu.Lock()
			l.syncing = false
			l.rounds++
			l.roundTarget, l.roundErr = target, err
			l.roundDone.Broadcast()
			// Success covers every record that existed when Sync was called,
			// even if n is past them.
			return err
		}
		r := l.rounds
		for l.rounds == r {
			l.roundDone.Wait()
		}
		if l.roundErr != nil && l.roundTarget >= n {
			return l.roundErr
		}
	}
}

// syncRound runs one round of Sync and returns the LSN it made durable.
func (l *Log) syncRound() (uint64, error) {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if l.isClosed.Load() {
		return 0, ErrClosed
	}
	return l.syncLocked()
}

// syncLocked syncs every record appended so far: the retired segments
// oldest first (each is unmapped and closed once synced, having no more
// writes to take), then the current one. Oldest first keeps what is durable
// a prefix of the log, which is what Open's recovery relies on.
func (l *Log) syncLocked() (target uint64, err error) {
	l.mu.Lock()
	target = l.endLocked()
	cur, pos := l.cur, l.pos
	retired := l.retired
	l.mu.Unlock()

	// Unmap the written pages before the fsync, not after: writeback of a
	// page that is still mapped write-protects it in every page table, one
	// TLB shootdown (an interrupt on every core running the server) per
	// page, where one madvise over the whole range costs one.
	for _, s := range retired {
		s.trim(len(s.data))
	}
	cur.trim(pos)

	l.syncRounds.Add(1)
	done := 0
	err = l.fault("sync")
	for _, s := range retired {
		if err != nil {
			break
		}
		if err = fdatasync(s.f); err != nil {
			err = fmt.Errorf("effectlog: syncing %s: %w", s.path, err)
			break
		}
		s.headerSynced = true
		l.release(s)
		done++
	}
	if done > 0 {
		l.mu.Lock()
		l.retired = l.retired[done:]
		l.mu.Unlock()
	}
	if err == nil && (l.synced.Load() < target || !cur.headerSynced) {
		if err = fdatasync(cur.f); err != nil {
			err = fmt.Errorf("effectlog: syncing %s: %w", cur.path, err)
		}
	}
	l.errMu.Lock()
	l.syncErr = err
	l.errMu.Unlock()
	if err != nil {
		return target, err
	}
	cur.headerSynced = true
	if target > l.synced.Load() {
		l.synced.Store(target)
	}
	return target, nil
}

// Trim gives back the resident pages of the log's mappings that Append
// will never write again: the page-aligned written prefix of the current
// segment, and retired segments not yet synced. Sync does it too; the
// server calls Trim about once a second so that the mapped log does not
// grow its RSS even when it syncs rarely. If a Sync is running, Trim
// returns at once (that Sync trims).
//
// MADV_DONTNEED on a MAP_SHARED file mapping only removes the pages from
// this process's page tables: the kernel first moves their dirty bits to
// the page cache, so the data stays there and is written back (or synced
// by fdatasync) as if the mapping still held it, and a later access would
// fault the same bytes back in. Nothing appended is lost, and Append
// never touches those pages again since it only writes at or after its
// position.
func (l *Log) Trim() {
	if !l.syncMu.TryLock() {
		return
	}
	defer l.syncMu.Unlock()
	l.trimLocked()
}

func (l *Log) trimLocked() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	cur, pos, retired := l.cur, l.pos, l.retired
	l.mu.Unlock()
	for _, s := range retired {
		s.trim(len(s.data))
	}
	cur.trim(pos)
}

// DropBefore deletes the segment files whose records all end at or before
// lsn (never the current segment). The lead calls it after a checkpoint
// made them redundant.
//
// The oldest segment left must carry a durable header, because after a
// machine crash Open takes the log's LSNs from it; if it has not been
// synced yet, DropBefore syncs it first.
func (l *Log) DropBefore(lsn uint64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	k := 0
	for k < len(l.segs)-1 && l.segs[k].end <= lsn {
		k++
	}
	if k == 0 {
		l.mu.Unlock()
		return nil
	}
	drop := l.segs[:k:k]
	first := l.segs[k]
	l.segs = append([]*segment(nil), l.segs[k:]...)
	r := 0
	for r < len(l.retired) && l.retired[r].end <= lsn && r < k {
		r++
	}
	// Retired segments are the newest of the dropped ones (retirement is in
	// log order), so they are a prefix of l.retired.
	l.retired = l.retired[r:]
	l.mu.Unlock()

	if !first.headerSynced && first.f != nil {
		if err := fdatasync(first.f); err != nil {
			return fmt.Errorf("effectlog: syncing %s: %w", first.path, err)
		}
		first.headerSynced = true
	}
	var err error
	for _, s := range drop {
		l.release(s)
		if rerr := os.Remove(s.path); rerr != nil && err == nil && !os.IsNotExist(rerr) {
			err = rerr
		}
	}
	return err
}
