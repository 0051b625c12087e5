package cell

import (
	"strings"
)

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], Redis 7.0's options as far
// as they apply. There are no replicas to wait for, so NOW changes nothing
// and ABORT always finds no shutdown in progress. SHUTDOWN runs
// beforeExit (persistence's final save) in the calling client; if that
// fails, SHUTDOWN replies an error and the server keeps running, unless
// FORCE. Otherwise the caller's connection closes without a reply, as in
// Redis, and the process exits the way SIGTERM makes it: main sees
// ExitRequested and runs Shutdown (no new clients, the commands in flight
// finish and their replies are flushed).

func init() {
	register(&Command{Name: "shutdown", Arity: -1,
		Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy,
		ACL:   ACLDangerous, Handler: shutdown,
		Doc: &CommandDoc{"Synchronously save the dataset to disk and then shut down the server", "1.0.0", "server", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)"}})
}

// ShutdownMode is SHUTDOWN's options.
type ShutdownMode struct {
	NoSave, Save, Now, Force bool
}

func shutdown(x *Ctx) {
	var m ShutdownMode
	abort := false
	for _, a := range x.Args[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave":
			m.NoSave = true
		case "save":
			m.Save = true
		case "now":
			m.Now = true
		case "force":
			m.Force = true
		case "abort":
			abort = true
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	if abort && (m != ShutdownMode{}) || m.NoSave && m.Save {
		x.Error(ErrSyntax)
		return
	}
	if abort {
		x.Error(ErrNoShutdown)
		return
	}
	x.srv.log.Warn("User requested shutdown...")
	if err := x.srv.beforeExit(m); err != nil {
		x.srv.log.Error("Errors trying to shut down the server", "err", err)
		if !m.Force {
			x.Error(ErrShutdownFailed)
			return
		}
	}
	x.cl.closeAfter = true
	x.srv.requestExit(m)
}

// beforeExit does what must be done before the process exits on SHUTDOWN:
// persistence's final save, skipped with NoSave, forced with Save. An
// error makes SHUTDOWN fail unless Force.
//
// With the store, the save syncs the log and runs a checkpoint; NOSAVE
// skips the checkpoint but, as Redis still fsyncs its AOF, not the sync.
// SAVE, or save points without NOSAVE, also write the RDB file
// (save_rules.go), with or without a store; a server made in memory (New)
// has nowhere to save and fails SAVE, as Redis's would with no usable dir.
func (s *Server) beforeExit(m ShutdownMode) error {
	err := s.stopSave(m) // save_rules.go
	if err == nil {
		s.ops.stopSaved.Store(true)
	}
	return err
}

// requestExit asks main to stop the server, once.
func (s *Server) requestExit(m ShutdownMode) {
	s.ops.exitOnce.Do(func() {
		s.ops.exitMode.Store(&m)
		close(s.ops.exit)
	})
}

// ExitRequested is closed when a client ran SHUTDOWN successfully; main
// then stops the server as for SIGTERM.
func (s *Server) ExitRequested() <-chan struct{} { return s.ops.exit }

// ExitMode is the accepted SHUTDOWN's options (zero before one).
func (s *Server) ExitMode() ShutdownMode {
	if m := s.ops.exitMode.Load(); m != nil {
		return *m
	}
	return ShutdownMode{}
}
