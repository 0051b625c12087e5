package cell

import (
	"strings"
	"time"
)

// SAVE, BGSAVE and LASTSAVE over the store (persist.go). A save syncs the
// effect log and runs a checkpoint (checkpoint.go): after it, a restart
// loads the snapshot instead of replaying the log, which is what an RDB
// snapshot buys Redis. It then writes <dir>/<dbfilename> in Redis's RDB
// format too (rdb_save.go), with or without a store, for tools and
// servers that read Redis's files.

func init() {
	register(
		&Command{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoMulti, Handler: save},
		&Command{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoScript, Handler: bgsave},
		&Command{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: lastsave},
	)
}

func save(x *Ctx) {
	s := x.srv
	if s.memOnly {
		x.Error(ErrNoPersistence)
		return
	}
	// A checkpoint of our own is Redis's AOF rewrite, which SAVE does
	// not refuse: it waits for it.
	for s.bgsave.Load() && s.rewriting.Load() && !s.closing.Load() {
		time.Sleep(time.Millisecond)
	}
	if s.bgsave.Load() {
		x.Error(ErrSaveInProg)
		return
	}
	if err := s.saveWithRDB(); err != nil { // rdb_save.go
		s.log.Error("persistence: SAVE failed", "err", err)
		x.Error("ERR " + err.Error())
		return
	}
	x.W.OK()
}

// bgsave saves in a goroutine. SCHEDULE is accepted; as in Redis it only
// defers a save behind an AOF rewrite, which never runs here.
func bgsave(x *Ctx) {
	s := x.srv
	if len(x.Args) > 1 && (len(x.Args) != 2 || !strings.EqualFold(string(x.Args[1]), "schedule")) {
		x.Error(ErrSyntax)
		return
	}
	if s.memOnly {
		x.Error(ErrNoPersistence)
		return
	}
	if !s.bgsave.CompareAndSwap(false, true) {
		x.Error(ErrSaveInProg)
		return
	}
	s.bgsaveStart.Store(time.Now().Unix())
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.bgsave.Store(false)
		s.runBGSave() // save_rules.go
	}()
	x.W.Status("Background saving started")
}

func lastsave(x *Ctx) {
	x.W.Int(x.srv.lastSave.Load())
}
