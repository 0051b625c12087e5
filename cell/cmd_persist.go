package cell

import (
	"strings"
)

// SAVE, BGSAVE and LASTSAVE over the Pebble store (persist.go). A save
// syncs the log and flushes Pebble's memtable into an sstable: after it,
// a restart loads that sstable instead of replaying the log, which is what
// an RDB snapshot buys Redis.

func init() {
	register(
		&Command{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoMulti, Handler: save},
		&Command{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript, Handler: bgsave},
		&Command{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: lastsave},
	)
}

func save(x *Ctx) {
	s := x.srv
	if s.store == nil {
		x.Error(ErrNoPersistence)
		return
	}
	if s.bgsave.Load() {
		x.Error(ErrSaveInProg)
		return
	}
	if err := s.saveNow(); err != nil {
		s.log.Error("persistence: SAVE failed", "err", err)
		x.Error("ERR " + err.Error())
		return
	}
	x.W.OK()
}

// bgsave saves in a goroutine. BGSAVE SCHEDULE while one runs answers as
// Redis does; the running save already covers every write acknowledged
// before it, so nothing more is scheduled.
func bgsave(x *Ctx) {
	s := x.srv
	schedule := false
	if len(x.Args) > 1 {
		if len(x.Args) != 2 || !strings.EqualFold(string(x.Args[1]), "schedule") {
			x.Error(ErrSyntax)
			return
		}
		schedule = true
	}
	if s.store == nil {
		x.Error(ErrNoPersistence)
		return
	}
	if !s.bgsave.CompareAndSwap(false, true) {
		if schedule {
			x.W.Status("Background saving scheduled")
			return
		}
		x.Error(ErrSaveInProg)
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.bgsave.Store(false)
		if err := s.saveNow(); err != nil {
			s.log.Error("persistence: BGSAVE failed", "err", err)
		}
	}()
	x.W.Status("Background saving started")
}

func lastsave(x *Ctx) {
	x.W.Int(x.srv.lastSave.Load())
}
