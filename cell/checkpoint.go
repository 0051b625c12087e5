package cell

import (
	"encoding/binary"
	"time"

	"github.com/cellserver/cellserver/persist"
)

// Checkpoints: folding the effect log into the snapshot.
//
// Every execution appends its effects to the log (persist.go); the
// snapshot in Pebble only changes at a checkpoint, which writes the
// current state of every key changed since the previous checkpoint began,
// then lets the store drop the log before its own start. A key written a
// thousand times between two checkpoints costs the snapshot one record,
// which is what keeps persistence cheap for hot rate-limiter keys.
//
// What changed is tracked in memory, for free on the write path: the
// commit of an execution sets the encUnsaved flag on each entry it wrote
// (and counts it in its shard), and appends each key it deleted, or
// whose value stored member by member it replaced, to its shard's
// tombstones; a flushed database sets flushedDBs. A checkpoint visits the
// shards one at a time, under each shard's lock, while clients go on
// writing: a change made after the checkpoint began is also in the log
// after its position, so it is either in the snapshot already or replayed
// over it, and replay is idempotent (persist/effect.go).
//
// A checkpoint that fails (a disk error) may have cleared flags whose
// records never reached the disk; the next one is then full: it writes
// every key and deletes from the snapshot each key memory does not hold,
// so nothing depends on what the failed one did. The log is only dropped
// once a checkpoint has ended, so until then a crash replays it all.
//
// A checkpoint starts when the log since the last one reaches
// auto-aof-rewrite-min-size and auto-aof-rewrite-percentage of the
// snapshot's size (Redis's rule for rewriting its AOF), on SAVE and
// BGSAVE, by the save rules' clock, and at shutdown.

// snapshotBatchBytes is how much a checkpoint gathers before writing it to
// the snapshot.
const snapshotBatchBytes = 4 << 20

// tombstones lists keys deleted since the last checkpoint began, each as
// a flag byte (1: it was stored member by member) and its length-prefixed
// bytes.
type tombstones struct{ buf []byte }

func (t *tombstones) add(key []byte, wide bool) {
	flag := byte(0)
	if wide {
		flag = 1
	}
	t.buf = append(t.buf, flag)
	t.buf = binary.AppendUvarint(t.buf, uint64(len(key)))
	t.buf = append(t.buf, key...)
}

// reset empties the list, giving back a buffer a burst of deletions grew.
func (t *tombstones) reset() {
	if cap(t.buf) > 1<<20 {
		t.buf = nil
		return
	}
	t.buf = t.buf[:0]
}

func (t *tombstones) each(fn func(key []byte, wide bool)) {
	b := t.buf
	for len(b) > 0 {
		wide := b[0] == 1
		n, w := binary.Uvarint(b[1:])
		b = b[1+w:]
		fn(b[:n], wide)
		b = b[n:]
	}
}

// markUnsaved flags e for the next checkpoint.
func (s *Shard) markUnsaved(e *Entry) {
	if e.enc&encUnsaved == 0 {
		e.enc |= encUnsaved
		s.unsaved++
	}
}

// noteChanged records for the next checkpoint that key changed: e is its
// entry now (nil: it is gone), wide says it held a value stored member by
// member that was deleted or replaced.
func (s *Shard) noteChanged(key []byte, e *Entry, wide bool) {
	if e != nil {
		s.markUnsaved(e)
	}
	if e == nil || wide {
		s.tombs.add(key, wide)
	}
}

// checkpoint folds the effect log into the snapshot; one runs at a time.
func (s *Server) checkpoint() error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	start := time.Now()
	full := s.ckptFull
	s.ckptFull = true // until this one ends well
	from, err := s.store.BeginCheckpoint()
	if err != nil {
		return err
	}
	b := s.store.NewBatch()
	keys, err := s.writeCheckpoint(b, full)
	if err == nil && full {
		err = s.dropStale(b)
	}
	if err == nil {
		err = s.saveKeyCounts()
	}
	if err == nil {
		err = s.store.EndCheckpoint(from)
	}
	if err != nil {
		return err
	}
	s.ckptFull = false
	s.ckptBase.Store(int64(s.store.SnapshotSize()))
	s.log.Debug("persistence: checkpoint", "keys_written", keys, "full", full, "ms", time.Since(start).Milliseconds())
	return nil
}

// writeCheckpoint writes the changed keys of every shard, one shard lock
// at a time, and reports how many it wrote.
func (s *Server) writeCheckpoint(b *persist.Batch, full bool) (int, error) {
	written := 0
	var wideTombs map[string]bool
	for d := range s.ks.dbs {
		if s.flushedDBs[d].Swap(false) && !full {
			b.DeleteDB(d)
		}
		for i := range s.ks.dbs[d].shards {
			sh := &s.ks.dbs[d].shards[i]
			sh.mu.Lock()
			clear(wideTombs)
			sh.tombs.each(func(key []byte, wide bool) {
				switch {
				case wide:
					b.DeleteKey(d, key)
					if wideTombs == nil {
						wideTombs = map[string]bool{}
					}
					wideTombs[string(key)] = true
				case sh.keys.get(key) == nil:
					b.Delete(d, key)
				}
			})
			sh.tombs.reset()
			if sh.unsaved != 0 || full {
				for k, e := range sh.keys.all() {
					if full || e.enc&encUnsaved != 0 {
						storeEntry(b, d, []byte(k), e, full || wideTombs[k], s)
						e.enc &^= encUnsaved
						written++
					}
				}
				sh.unsaved = 0
			}
			sh.mu.Unlock()
			if b.Size() >= snapshotBatchBytes {
				if err := s.store.WriteSnapshot(b); err != nil {
					return written, err
				}
			}
		}
	}
	return written, s.store.WriteSnapshot(b)
}

// dropStale deletes from the snapshot every key memory does not hold: the
// second half of a full checkpoint.
func (s *Server) dropStale(b *persist.Batch) error {
	err := s.store.Heads(func(db int, key []byte) error {
		if db >= len(s.ks.dbs) {
			return nil
		}
		sh := s.ks.shardOf(db, key)
		sh.mu.Lock()
		gone := sh.keys.get(key) == nil
		sh.mu.Unlock()
		if gone {
			b.DeleteKey(db, key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.store.WriteSnapshot(b)
}

// checkpointDue reports whether the log has grown enough for a checkpoint.
func (s *Server) checkpointDue() bool {
	size := s.store.LogSize()
	if size < s.live.ckptMinSize.Load() {
		return false
	}
	pct := s.live.ckptPercent.Load()
	if pct <= 0 {
		return false
	}
	return size*100 >= s.ckptBase.Load()*pct
}

// checkpointLoop runs checkpoints when the log has grown enough, or when a
// save rule's interval has passed with at least its count of changes, and
// once after a start that replayed the log, so that a server that crashes
// again does not replay it twice.
func (s *Server) checkpointLoop() {
	defer s.bg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	replayed := s.replayed > 0
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if s.store.Err() != nil || s.bgsave.Load() {
			continue
		}
		if !replayed && !s.checkpointDue() && !s.saveRuleDue() {
			continue
		}
		if !s.bgsave.CompareAndSwap(false, true) {
			continue
		}
		err := s.saveNow()
		s.bgsave.Store(false)
		replayed = replayed && err != nil
		if err != nil {
			s.log.Error("persistence: checkpoint failed", "err", err)
		}
	}
}
