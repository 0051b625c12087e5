package cell

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Redis's save points: the "save" parameter ("3600 1 300 100 60 10000" by
// default, "" for none, as --save, CONFIG SET save and redis.conf set it)
// makes the server write <dir>/<dbfilename> in the background once a
// point's seconds have passed since the last save with at least its count
// of changes, as Redis's serverCron does: a BGSAVE (with a store, its
// checkpoint first, rdb_save.go). After a failed one, a point tries again
// only saveRetryDelay seconds after the last try. With points set, a stop
// (SHUTDOWN, SIGTERM) writes the file too unless SHUTDOWN NOSAVE, and,
// with stop-writes-on-bgsave-error yes, writes are refused with Redis's
// MISCONF while the last background save failed, until a save succeeds.
//
// rdb_changes_since_last_save, rdb_last_save_time (LASTSAVE) and rdb_saves
// count the saves that wrote the file (SAVE, BGSAVE, save points, SHUTDOWN
// SAVE), as Redis's do; a checkpoint that only folds the effect log into
// the store (its size, Redis's AOF rewrite) is no save.

// saveRetryDelay is Redis's CONFIG_BGSAVE_RETRY_DELAY, in seconds.
const saveRetryDelay = 5

// saveRulesSet reports whether any save point is set.
func (s *Server) saveRulesSet() bool { return strings.TrimSpace(saveParam(s)) != "" }

// saveRuleDue returns the first save point that asks for a save now: its
// seconds passed since the last save (strictly, as Redis compares) and at
// least its count of changes; and, after a failed save, saveRetryDelay
// seconds since the last try.
func (s *Server) saveRuleDue() (secs, count int64, due bool) {
	rules := strings.Fields(saveParam(s))
	if len(rules) < 2 {
		return 0, 0, false
	}
	now := time.Now().Unix()
	if s.bgsaveFailed.Load() && now-s.lastBgsaveTry.Load() <= saveRetryDelay {
		return 0, 0, false
	}
	elapsed := now - s.lastSave.Load()
	changes := s.totalDirty() - s.dirtyAtSave.Load()
	for i := 0; i+1 < len(rules); i += 2 {
		secs, err1 := strconv.ParseInt(rules[i], 10, 64)
		count, err2 := strconv.ParseInt(rules[i+1], 10, 64)
		if err1 == nil && err2 == nil && changes >= count && elapsed > secs {
			return secs, count, true
		}
	}
	return 0, 0, false
}

// saveRuleLoop runs the save points' saves, checking ten times a second
// (Redis's serverCron at hz 10).
func (s *Server) saveRuleLoop() {
	defer s.bg.Done()
	s.every(100*time.Millisecond, func() bool {
		if s.bgsave.Load() {
			return true
		}
		secs, count, due := s.saveRuleDue()
		if !due || !s.bgsave.CompareAndSwap(false, true) {
			return true
		}
		s.log.Info(fmt.Sprintf("%d changes in %d seconds. Saving...", count, secs))
		s.runBGSave()
		s.bgsave.Store(false)
		return true
	})
}

// runBGSave is a background save's work (BGSAVE's, a save point's); the
// caller holds the bgsave flag.
func (s *Server) runBGSave() {
	start := time.Now()
	s.bgsaveStart.Store(start.Unix())
	s.lastBgsaveTry.Store(start.Unix())
	err := s.saveWithRDB()
	s.bgsaveFailed.Store(err != nil)
	s.bgsaveSecs.Store(int64(time.Since(start) / time.Second))
	if err != nil {
		s.log.Error("persistence: background save failed", "err", err)
	} else {
		s.log.Info("Background saving terminated with success")
	}
}

// bgsaveMisconf is the MISCONF refusal of writes after a failed
// background save (stop-writes-on-bgsave-error), or "".
func (s *Server) bgsaveMisconf() string {
	if !s.bgsaveFailed.Load() || !s.saveRulesSet() || configParamByName("stop-writes-on-bgsave-error").value(s) != "yes" {
		return ""
	}
	return ErrBgsaveMisconf
}

// stopSave is the save of a stop (SHUTDOWN's, SIGTERM's): the RDB file
// when SHUTDOWN SAVE asks or save points are set, unless NOSAVE; with a
// store, its checkpoint in any case but NOSAVE, which only syncs the log
// (Redis fsyncs its AOF at any stop).
func (s *Server) stopSave(m ShutdownMode) error {
	if m.Save && s.memOnly {
		return errors.New(ErrNoPersistence)
	}
	switch {
	case m.NoSave && s.store != nil:
		return s.store.SyncAll()
	case m.NoSave:
		return nil
	case !s.memOnly && (m.Save || s.saveRulesSet()):
		return s.saveWithRDB() // rdb_save.go: the store's checkpoint, then the file
	case s.store != nil:
		return s.syncCheckpoint()
	}
	return nil
}
