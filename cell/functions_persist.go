package cell

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/cellserver/cellserver/cell/script"
	"github.com/cellserver/cellserver/persist"
)

// Function libraries in the store and in the replication stream.
//
// A change of the libraries (FUNCTION LOAD, DELETE, FLUSH, RESTORE) is a
// record of the effect log of its own (persist/library.go), committed
// before the reply while functionSet.writeMu is held, so that the log has
// the changes in the order memory had them; under appendfsync always the
// reply waits for it as for a key's write, and an FCALL's reply waits for
// the last change, as a read waits for the unsynced write of the key it
// read. A checkpoint writes the whole set when it changed since the last
// one. At start the snapshot's libraries and the log's changes to them
// are gathered by name and linked once the replay is done, before the
// server serves.
//
// Redis propagates these commands as they came, not as effects, and
// includes the libraries in a full resync's RDB (rdb_save.go): a replica,
// redis-server or cellserver, runs them as its master did.

// libraryState is the libraries' side of persistState.
type libraryState struct {
	// commit is the log position after the last change's record.
	commit atomic.Uint64
	// ckptVer is the functionSet.ver the last checkpoint wrote;
	// ckptWritten: one has, since start (the first writes the set
	// whatever the version, so that a set the log's replay emptied
	// empties the snapshot too).
	ckptVer     uint64
	ckptWritten bool
	// loading holds the libraries' code by name during the start.
	loading map[string][]byte
}

// functionsChanged records a change of the libraries that fill puts in a
// batch of the log, and streams x's command to the replicas (x nil: a
// change of no command's, only logged). functions.writeMu is held.
func (s *Server) functionsChanged(x *Ctx, fill func(b *persist.Batch)) {
	if s.store != nil {
		b := s.store.NewBatch()
		fill(b)
		n, err := s.store.Commit(b)
		if err != nil {
			s.log.Error("persistence: commit failed", "err", err)
		}
		s.libs.commit.Store(n)
		if x != nil && s.fsyncAlways.Load() {
			x.cl.syncTo = max(x.cl.syncTo, n)
		}
	}
	if x != nil && s.repl.on.Load() && !s.isReplica() {
		s.propagateRaw(-1, replCmd(nil, x.Args...))
	}
}

// waitLibraries makes x's reply wait, under appendfsync always, for the
// last change of the libraries: the function it calls may be that one.
func (s *Server) waitLibraries(x *Ctx) {
	if s.store != nil && s.fsyncAlways.Load() {
		x.cl.syncTo = max(x.cl.syncTo, s.libs.commit.Load())
	}
}

// putLibraries adds b the whole set of libraries, for a checkpoint, if it
// changed since the last checkpoint wrote it; the version to note once
// the checkpoint ends well (notedLibraries).
func (s *Server) putLibraries(b *persist.Batch) (ver uint64) {
	ver, libs := s.functions.version()
	if s.libs.ckptWritten && ver == s.libs.ckptVer {
		return ver
	}
	b.DeleteLibraries()
	for _, l := range libs {
		b.PutLibrary([]byte(l.Name), l.Code)
	}
	return ver
}

// notedLibraries records that a checkpoint wrote version ver of the set.
func (s *Server) notedLibraries(ver uint64) {
	s.libs.ckptVer, s.libs.ckptWritten = ver, true
}

// loadLibraries reads the snapshot's libraries, before the log's replay.
func (s *Server) loadLibraries() error {
	s.libs.loading = map[string][]byte{}
	return s.store.Libraries(func(name, code []byte) error {
		s.libs.loading[string(name)] = slices.Clone(code)
		return nil
	})
}

// replayLibrary applies e if it is a change of the libraries, and
// reports whether it was.
func (s *Server) replayLibrary(e *persist.Effect) bool {
	switch e.Kind {
	case persist.EffectPutLibrary:
		s.libs.loading[string(e.Key)] = slices.Clone(e.Data)
	case persist.EffectDeleteLibrary:
		delete(s.libs.loading, string(e.Key))
	case persist.EffectFlushLibraries:
		clear(s.libs.loading)
	default:
		return false
	}
	return true
}

// linkLibraries loads the libraries gathered at start. One that does not
// load stops the start, as a bad library in an RDB file stops Redis's:
// serving without it would lose it at the next checkpoint.
func (s *Server) linkLibraries() error {
	names := make([]string, 0, len(s.libs.loading))
	for name := range s.libs.loading {
		names = append(names, name)
	}
	slices.Sort(names)
	libs := make([]*script.Library, 0, len(names))
	for _, name := range names {
		lib, err := s.scripts.LoadLibrary(s.libs.loading[name])
		if err != nil {
			return fmt.Errorf("function library %q: %v", name, err)
		}
		libs = append(libs, lib)
	}
	s.libs.loading = nil
	if len(libs) == 0 {
		return nil
	}
	if msg := s.functions.replaceAll(libs); msg != "" {
		return fmt.Errorf("function libraries: %s", msg)
	}
	s.scripts.LibrariesChanged()
	s.log.Info("persistence: function libraries loaded", "count", len(libs))
	return nil
}

// flushFunctions removes every library (FUNCTION FLUSH; x nil: a
// replica's full resync).
func (s *Server) flushFunctions(x *Ctx) {
	f := &s.functions
	f.writeMu.Lock()
	defer f.writeMu.Unlock()
	f.flush()
	s.scripts.LibrariesChanged()
	s.functionsChanged(x, (*persist.Batch).DeleteLibraries)
}
