package cell

import (
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/persist"
)

// checkpoint folds the effect log into the snapshot; one runs at a time.
func (s *Server) checkpoint() error { return s.checkpointWith(nil) }

// writtenBase is a rewrite's base written before its checkpoint, by a load
// that wrote each key as it put it (rdb_load.go): w holds keys keys, all
// of the keyspace, every chunk but its last already in the snapshot.
type writtenBase struct {
	w    *persist.BaseWriter
	keys int
}

// checkpointWith runs a checkpoint; with pre, a rewrite that puts pre's
// base in force instead of visiting the keyspace.
func (s *Server) checkpointWith(pre *writtenBase) error {
	s.ckptMu.Lock()
	defer s.ckptMu.Unlock()
	start := time.Now()
	full := s.ckptFull
	s.ckptFull = true // until this one ends well
	from, err := s.store.BeginCheckpoint()
	if err != nil {
		return err
	}
	// After the log's position: a database flushed from here on is
	// flushed again by replaying the log, and rewritten by the next
	// checkpoint.
	rewrite := pre != nil || s.ks.Flushed() || full || s.rewriteDue()
	if s.ckptBatch == nil {
		s.ckptBatch = s.store.NewBatch()
	}
	s.ckptBatch.Reset()
	// After the log's position too: a change of the libraries from here
	// on is in the log the next start replays.
	libVer := s.putLibraries(s.ckptBatch) // functions_persist.go
	var base *persist.BaseWriter
	var v keyspace.Visit
	switch {
	case pre != nil:
		base, v.Written = pre.w, pre.keys
	case rewrite:
		base, err = s.store.BeginRewrite()
	}
	if err == nil && pre == nil {
		v, err = s.ks.Visit(s.store, s.ckptBatch, base)
	}
	if err == nil {
		if base != nil {
			s.writeForeign(base)
			base.Seal(s.ckptBatch)
		}
		err = s.store.WriteSnapshot(s.ckptBatch)
	}
	if err == nil {
		err = s.saveKeyCounts()
	}
	if err == nil {
		err = s.store.EndCheckpoint(from, base)
	}
	if err != nil {
		return err
	}
	s.ckptFull = false
	s.checkpoints.Add(1)
	s.notedLibraries(libVer)
	if rewrite {
		s.overKeys = 0
		s.rewrites.Add(1)
		s.lastRewrite.Store(int64(time.Since(start) / time.Second))
	}
	s.overKeys += v.Records
	s.ckptBase.Store(int64(s.store.SnapshotSize()))
	if checkpointDone != nil {
		checkpointDone(rewrite)
	}
	took := time.Since(start)
	s.ckptNs.Store(int64(took))
	// Notice level: a checkpoint is rare and costs (Redis logs each
	// BGSAVE and AOF rewrite too).
	s.log.Info("persistence: checkpoint", "rewrite", rewrite, "keys_written", v.Written,
		"snapshot_bytes", s.store.SnapshotSize(), "ms", took.Milliseconds())
	return nil
}

// rewriteShare is the share of the keys changed (1/rewriteShare) from
// which a checkpoint rewrites: a base written whole costs about as much,
// per key, as an eighth of a record of its own. A var for the tests, which
// set 0 (never for that reason) or a huge one (always).
var rewriteShare = 8

// rewriteDue reports whether the next checkpoint is to rewrite the
// keyspace: when rewriteShare says so, and when the key records over the
// base, which a restart reads slowest, number half the keys. A store
// without a base yet rewrites too.
func (s *Server) rewriteDue() bool {
	if !s.store.HasBase() {
		return true
	}
	keys, changed := s.ks.ChangedKeys()
	return changed*rewriteShare >= keys && rewriteShare > 0 || s.overKeys*2 >= int64(keys)
}

// checkpointDone, when set (by tests), is told of each checkpoint that
// ended well and whether it rewrote.
var checkpointDone func(rewrite bool)

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

// checkpointLoop runs checkpoints when the log has grown enough (the save
// points' saves run a checkpoint too: save_rules.go), and once after a
// start that replayed the log, so that a server that crashes
// again does not replay it twice. After a start on a full disk it also
// opens the store for writing once there is room (persist/full_disk.go).
func (s *Server) checkpointLoop() {
	defer s.bg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	// After a start that skipped a damaged log too: the checkpoint drops
	// the damaged segments, whose loss the start reported.
	replayed := s.replayed > 0 || s.loadDamage.Damaged()
	for tick := 0; ; tick++ {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if tick%10 == 0 && s.store.ReadOnly() {
			// Started on a full disk (persist/full_disk.go): once a
			// second, see whether it has room for writes again.
			if err := s.store.Reopen(); err != nil {
				s.log.Error("persistence: opening the store for writing", "err", err)
			}
		}
		if s.store.Err() != nil || s.bgsave.Load() {
			continue
		}
		if !replayed && !s.checkpointDue() {
			continue
		}
		// rewriting goes first, so SAVE never sees our flag without it.
		s.rewriting.Store(true)
		if !s.bgsave.CompareAndSwap(false, true) {
			s.rewriting.Store(false)
			continue
		}
		err := s.syncCheckpoint()
		s.rewriting.Store(false)
		s.bgsave.Store(false)
		replayed = replayed && err != nil
		if err != nil {
			s.log.Error("persistence: checkpoint failed", "err", err)
		}
	}
}
