package cell

import "time"

// writePersistMetrics adds the persistence figures to /metrics, each the
// INFO persistence field its help names, so a dashboard and INFO agree.
func (s *Server) writePersistMetrics(gauge, counter func(name, help string, v float64, labels ...string)) {
	b2f := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	gauge("cellserver_persistence_enabled", "1 when data is persisted to disk (INFO aof_enabled).", b2f(s.store != nil))
	gauge("cellserver_persistence_loading", "1 while the data set is loaded at start (INFO loading).", b2f(s.loading.Load()))
	if s.store == nil {
		return
	}
	dirty, _ := s.shardTotals()
	gauge("cellserver_persistence_changes_since_checkpoint", "Writes since the last save (INFO rdb_changes_since_last_save).",
		float64(max(dirty-s.dirtyAtSave.Load(), 0)))
	counter("cellserver_persistence_checkpoints_total", "Saves (SAVE, BGSAVE, save points: a checkpoint and the RDB file) done since start (INFO rdb_saves).",
		float64(s.saves.Load()))
	counter("cellserver_persistence_rewrites_total", "Checkpoints that rewrote the whole snapshot (INFO aof_rewrites).", float64(s.rewrites.Load()))
	gauge("cellserver_persistence_checkpoint_in_progress", "1 while a checkpoint runs (INFO rdb_bgsave_in_progress).", b2f(s.bgsave.Load()))
	gauge("cellserver_persistence_last_checkpoint_timestamp_seconds", "Unix time of the last save, or of the start (INFO rdb_last_save_time).",
		float64(s.lastSave.Load()))
	gauge("cellserver_persistence_last_checkpoint_duration_seconds", "How long the last checkpoint took.",
		time.Duration(s.ckptNs.Load()).Seconds())
	gauge("cellserver_persistence_last_checkpoint_failed", "1 when the last BGSAVE failed (INFO rdb_last_bgsave_status:err).", b2f(s.bgsaveFailed.Load()))
	base := int64(s.store.SnapshotSize())
	gauge("cellserver_persistence_log_bytes", "Effect log written since the last checkpoint (INFO aof_current_size - aof_base_size).", float64(s.store.LogSize()))
	gauge("cellserver_persistence_snapshot_bytes", "Size of the snapshot (INFO aof_base_size).", float64(base))
	gauge("cellserver_persistence_unsynced_bytes", "Effect log written but not yet fsynced: the fsync lag in bytes.", float64(s.store.Unsynced()))
	lag := 0.0
	if t := s.lastFsync.Load(); t != 0 && s.store.Unsynced() > 0 {
		lag = time.Since(time.Unix(0, t)).Seconds()
	}
	gauge("cellserver_persistence_fsync_lag_seconds", "Seconds since the last fsync of the log while some of it is unsynced (0: all synced).", lag)
	gauge("cellserver_persistence_last_load_corrupt_skipped", "Records the last start dropped as damaged (INFO aof_last_load_corrupt_skipped).",
		float64(s.loadCorrupt))
	gauge("cellserver_persistence_last_load_damaged_bytes", "Bytes of effect log the last start skipped as damaged (INFO aof_last_load_damaged_bytes).",
		float64(s.loadDamage.Bytes))
	gauge("cellserver_persistence_misconf", "1 while the disk fails and writes are refused with MISCONF (INFO aof_last_write_status:err).",
		b2f(s.store.Err() != nil))
}
