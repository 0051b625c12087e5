package persist

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cellserver/cellserver/persist/effectlog"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DirName is the store's directory inside the server's --dir, as Redis
// keeps its appendonlydir there.
const DirName = "cellserver.db"

// LogDirName is the effect log's directory inside the store's.
const LogDirName = "effectlog"

// formatVersion is the layout of the store: record.go and base.go in
// Pebble, the effect log beside it. A store written by another layout is
// refused rather than misread. Older formats are read and upgraded: format
// 1 (Pebble alone, before the effect log) is a snapshot with an empty log;
// format 2 wrote a member's key without AppendMemberKey's escape (so an
// empty member's was its set's own key) and only whole member keys in the
// log, which walkEffects still reads; format 3 is format 4 without a base;
// format 4 is format 5 without the changes in place of strings, hashes
// and lists in the log (KindStrPatch, KindHashHead, KindListHead) and
// without KindListAt; format 5 is format 6 without the function
// libraries (library.go). So their logs and snapshots read as they are.
const formatVersion = "6"

var versionKey = []byte{nsMeta, 'v', 'e', 'r', 's', 'i', 'o', 'n'}

// checkpointKey holds the log position the snapshot in Pebble is complete
// from (EndCheckpoint): recovery replays the log from there.
var checkpointKey = []byte{nsMeta, 'c', 'k', 'p', 't'}

// Options are the settings of Open.
type Options struct {
	// Logger receives recovery notes (a cut log tail, skipped corrupt
	// records) and disk errors. nil: slog.Default().
	Logger *slog.Logger
	// FS is the file system under Pebble; nil means the operating
	// system's. Tests inject failures here.
	FS vfs.FS
	// LogSegmentSize is the size of the effect log's files; 0: the
	// effectlog default.
	LogSegmentSize int64
	// LogFault, if set, is called before each disk operation of the
	// effect log ("create", "sync"); an error it returns is that
	// operation's. Tests inject failures here.
	LogFault func(op string) error
	// SkipDamagedLog opens an effect log damaged in the middle by
	// skipping exactly the damaged bytes (LogDamage reports the loss);
	// without it Open refuses with an error wrapping an
	// *effectlog.DamageError (damage.go).
	SkipDamagedLog bool
}

// Store is the durable keyspace: an effect log every execution appends
// to, and a snapshot in Pebble that checkpoints fold the log into. All
// methods are safe for concurrent use.
type Store struct {
	db *pebble.DB
	// popts are db's options, with Pebble's defaults filled in, for the
	// tables of BaseTables.
	popts *pebble.Options
	elog  *effectlog.Log
	lock  *pebble.Lock
	log   *slog.Logger
	path  string
	// failed is read by every write (Err, for MISCONF): here, in the
	// line of fields set once at Open, and not beside the checkpoint's,
	// whose writes would take the line from the cores serving clients.
	failed atomic.Bool

	// mu is held shared by every Pebble and log call and exclusively by
	// Close: Pebble panics on use after Close, and a client cut off at
	// shutdown may still be finishing a command.
	mu      sync.RWMutex
	closed  bool
	closing atomic.Bool

	// ckpt is the log position the snapshot is complete from.
	ckpt atomic.Uint64
	// ckptN is how many checkpoints the snapshot holds (ckpt_mark.go).
	ckptN atomic.Uint64
	// gen is the generation of the base in force (base.go), 0 for none.
	gen atomic.Uint64
	// snapMu serialises snapshot writes (pb).
	snapMu sync.Mutex
	pb     *pebble.Batch
	sorter snapSorter // WriteSnapshot's (snapshot_order.go)

	failMu  sync.Mutex
	failure error  // the disk error being retried, nil when healthy
	fs      vfs.FS // Open's, for Reopen

	// What LogSize and SnapshotSize last gave.
	lastLogSize  atomic.Int64
	lastSnapSize atomic.Uint64
	// replayedBytes is how far Replay has read the log since the
	// checkpoint, for the progress of a load (ReplayedBytes).
	replayedBytes atomic.Int64

	// damage is what Open skipped of a damaged effect log (LogDamage).
	damage LogDamage
	// corrupt is the first file Pebble found damaged (noteCorruption).
	corrupt atomic.Pointer[string]

	// readOnly is the error with which Open found no room on the disk
	// (full_disk.go): Pebble is then open read-only and writes are
	// refused until Reopen finds room. Set under mu too, so holding
	// either is enough to read it.
	readOnly error
}

// Open opens or creates the store in dir/DirName and recovers it: a torn
// tail of Pebble's newest log file, and of the effect log, is cut (and
// logged) first, so that a crash never stops the server from starting;
// damage that is no torn tail (in the middle of the effect log, unless
// SkipDamagedLog; a snapshot that lost checkpoints) makes it fail. It
// fails if another process holds the store.
func Open(dir string, o Options) (*Store, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	s := &Store{log: o.Logger, path: o.FS.PathJoin(dir, DirName)}
	if err := o.FS.MkdirAll(s.path, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", s.path, err)
	}
	lock, err := pebble.LockDirectory(s.path, o.FS)
	if err != nil {
		return nil, fmt.Errorf("%s is in use by another cellserver (%v)", s.path, err)
	}
	if err := cutTornTail(o.FS, s.path, s.log); err != nil {
		lock.Close()
		return nil, err
	}
	s.fs, s.lock = o.FS, lock
	// A disk with no room left would stop Pebble's Open, which writes a
	// new MANIFEST, for as long as it stays full (stallFS): open the
	// snapshot read-only instead, so the server can start and serve reads
	// (full_disk.go).
	if err := hasRoom(o.FS, s.path); err != nil {
		s.fail("start", err)
		s.readOnly = err
		s.log.Warn("persistence: no room on the disk; the snapshot is opened read-only, writes wait until there is room")
	}
	manifest := currentManifest(o.FS, s.path)
	db, err := s.openPebble()
	if err != nil {
		lock.Close()
		if s.readOnly != nil {
			return nil, fmt.Errorf("opening %s read-only, the disk having no room (%v): %w", s.path, s.readOnly, err)
		}
		return nil, fmt.Errorf("opening %s: %w", s.path, s.explainCorrupt(err))
	}
	s.db, s.pb = db, newSnapshotBatch(db)
	if err := s.checkVersion(); err != nil {
		s.closeDB()
		return nil, s.explainCorrupt(err)
	}
	for _, m := range []struct {
		key  []byte
		what string
		dst  *atomic.Uint64
	}{{checkpointKey, "checkpoint position", &s.ckpt}, {genKey, "snapshot generation", &s.gen}, {ckptCountKey, "checkpoint count", &s.ckptN}} {
		n, err := s.metaUvarint(m.key)
		if err != nil {
			s.closeDB()
			return nil, fmt.Errorf("%s: unreadable %s: %w", s.path, m.what, s.explainCorrupt(err))
		}
		m.dst.Store(n)
	}
	if err := s.checkMark(manifest); err != nil {
		s.closeDB()
		return nil, err
	}
	if s.readOnly == nil {
		// Tables a load was writing when it crashed (base_tables.go).
		if err := s.removeIngestDir(); err != nil {
			s.log.Warn("persistence: deleting unfinished tables", "err", err)
		}
	}
	s.elog, err = effectlog.Open(o.FS.PathJoin(s.path, LogDirName), effectlog.Options{
		Logger: s.log, SegmentSize: o.LogSegmentSize, Fault: o.LogFault,
		From: s.ckpt.Load(), SkipDamaged: o.SkipDamagedLog,
	})
	if err != nil {
		s.closeDB()
		return nil, fmt.Errorf("opening the effect log of %s: %w", s.path, err)
	}
	s.damage = s.logDamage()
	return s, nil
}

// openPebble opens the snapshot, read-only while s.readOnly is set.
func (s *Store) openPebble() (*pebble.DB, error) {
	opts := &pebble.Options{
		FS:       s.pebbleFS(),
		Lock:     s.lock,
		Logger:   pebbleLogger{s.log},
		ReadOnly: s.readOnly != nil,
		// A damaged file is Pebble's Fatalf by default, wherever it is
		// found: at start that is a refusal with a stack trace, while
		// serving an exit over a table no client reads. Noted instead:
		// the read that found it fails (Load refuses), and a start
		// refuses for a damaged file a background task found (damaged).
		EventListener: &pebble.EventListener{DataCorruption: s.noteCorruption},
		// Checkpoints write every key changed since the last one in a
		// few large batches; a memtable bigger than Pebble's 4 MB
		// default takes more of them before a flush.
		MemTableSize: 16 << 20,
		// The effect log is the write-ahead log: a checkpoint is made
		// durable by flushing the memtables (EndCheckpoint), so Pebble
		// writing each checkpoint to a log of its own first would only
		// double its disk writes.
		DisableWAL: true,
		// Pebble reads the snapshot at start only, so its read
		// amplification (L0 sublevels) matters little, while compactions
		// run beside every client. Measured when every checkpoint wrote a
		// record per changed key (before rewrites, base.go): one of a
		// million changed keys was about ten overlapping L0 files (one per
		// snapshotBatchBytes, each over the whole key range), so at the
		// default of 4 Pebble compacted L0 into the base level after every
		// checkpoint, rewriting the whole snapshot each time: at 16 it
		// does so every other one. CL.THROTTLE at depth 16 over a million
		// keys under everysec went from 490-520k to 550-565k ops/s. A
		// restart reads more L0 then: after a kill -9 just before a
		// checkpoint of those keys it took about 1.96 s, against 2.07 s
		// at 4 (and 2.1-2.3 s at 32).
		L0CompactionThreshold: 16,
		L0StopWritesThreshold: 64,
		// Excise (EndCheckpoint) needs it; an older store is upgraded.
		FormatMajorVersion: pebble.FormatVirtualSSTables,
	}
	db, err := pebble.Open(s.path, opts)
	if err != nil {
		if oerr := checkOptionsFile(s.fs, s.path, opts); oerr != nil {
			return nil, oerr
		}
		return nil, err
	}
	s.popts = opts.Clone()
	s.popts.EnsureDefaults()
	return db, nil
}

// checkVersion refuses a store of another layout and upgrades an older
// one. A store opened read-only (full_disk.go) is upgraded when it is
// opened for writing; the formats read as they are wait until then.
func (s *Store) checkVersion() error {
	var ver string // "": a new store
	v, closer, err := s.db.Get(versionKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return err
	default:
		ver = string(v)
		closer.Close()
	}
	switch ver {
	case formatVersion:
		return nil
	case "", "1", "2", "3", "4", "5":
	default:
		return fmt.Errorf("%s holds data in format %q; this cellserver reads format %s", s.path, ver, formatVersion)
	}
	if s.readOnly != nil {
		if ver == "2" {
			return fmt.Errorf("%s must be upgraded from format 2, which needs room on the disk: %w", s.path, s.readOnly)
		}
		return nil
	}
	if ver == "2" {
		if err := s.escapeMemberKeys(); err != nil {
			return fmt.Errorf("upgrading %s from format 2: %w", s.path, err)
		}
	}
	return s.setDurable(versionKey, []byte(formatVersion))
}

// escapeMemberKeys rewrites, in AppendMemberKey's form, the member keys a
// format 2 snapshot holds for members starting with a zero byte (the only
// ones whose key changed); setDurable's flush then makes the change
// durable with the new version. It goes from the last key back: a
// member's new key can be another's old one ("\x00" takes "\x00\x00"'s),
// which must have moved first.
func (s *Store) escapeMemberKeys() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsKey}, UpperBound: []byte{nsKey + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	b := s.db.NewBatch()
	defer b.Close()
	for it.Last(); it.Valid(); it.Prev() {
		k := it.Key()
		_, _, suffix, derr := DecodeKey(k)
		if derr != nil || len(suffix) == 0 || suffix[0] != 0 {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		head := k[:len(k)-len(suffix)]
		b.Set(AppendMemberKey(nil, head, suffix), v, nil)
		b.Delete(k, nil)
	}
	if err := it.Error(); err != nil {
		return err
	}
	return b.Commit(pebble.NoSync)
}

// setDurable stores a metadata record and flushes it to an sstable:
// without Pebble's WAL, a flush is what makes a write durable.
func (s *Store) setDurable(key, val []byte) error {
	if err := s.db.Set(key, val, pebble.NoSync); err != nil {
		return err
	}
	return s.db.Flush()
}

// metaUvarint reads a metadata record holding a uvarint; absent: 0.
func (s *Store) metaUvarint(key []byte) (uint64, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	n, w := binary.Uvarint(v)
	if w <= 0 {
		return 0, ErrCorrupt
	}
	return n, nil
}

// closeDB closes Pebble and the lock after a failed Open.
func (s *Store) closeDB() {
	s.db.Close()
	s.lock.Close()
}

// Path is the store's directory.
func (s *Store) Path() string { return s.path }

// Load calls fn for every key of the base (base.go), then for every key
// record, in key order, and returns how many records it skipped as
// corrupt (each is logged). A key may come more than once: each time
// replaces the one before (a rewrite writes a key again when it changed
// during the rewrite, and a key record over a base, which has Value.Over
// set, replaces what the base gave), and a KindGone record says the key
// is gone. A sorted set stored member by member arrives as one KindZSet
// value with its members gathered into Items. Values alias a buffer that
// is only valid during the call. An error from fn stops Load and is
// returned.
func (s *Store) Load(fn func(db int, key []byte, v Value) error) (skipped int, err error) {
	defer func() { err = s.explainCorrupt(err) }()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	over := false
	if gen := s.gen.Load(); gen != 0 {
		if skipped, err = s.loadBase(gen, fn); err != nil {
			return skipped, err
		}
		over = true
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsKey}, UpperBound: []byte{nsKey + 1}})
	if err != nil {
		return skipped, err
	}
	defer it.Close()
	var (
		items    [][]byte // every aggregate's Items, in turn (decodeReusing)
		head     []byte   // the pending sorted set's head key
		headDB   int
		headKey  []byte
		pending  Value
		havePend bool
	)
	emit := func() error {
		if !havePend {
			return nil
		}
		havePend = false
		return fn(headDB, headKey, pending)
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		db, key, member, derr := DecodeKey(k)
		if derr == nil && len(member) != 0 {
			// A member belongs to the sorted set whose head came just
			// before it; orphans (a head lost to corruption) are skipped.
			if !havePend || len(k) < len(head) || string(k[:len(head)]) != string(head) {
				skipped++
				s.log.Warn("persistence: skipping a sorted-set member without its key", "record", fmt.Sprintf("%q", k))
				continue
			}
			sc, serr := it.ValueAndErr()
			if serr == nil {
				if _, serr = DecodeScore(sc); serr == nil {
					pending.Items = append(pending.Items, append([]byte(nil), MemberOf(member)...), append([]byte(nil), sc...))
					continue
				}
			}
			skipped++
			s.log.Warn("persistence: skipping a corrupt sorted-set member", "record", fmt.Sprintf("%q", k))
			continue
		}
		if err := emit(); err != nil {
			return skipped, err
		}
		raw, verr := it.ValueAndErr()
		if verr != nil {
			return skipped, verr
		}
		var v Value
		if derr == nil {
			v, derr = decodeReusing(raw, items)
			if cap(v.Items) > cap(items) {
				items = v.Items[:0]
			}
		}
		if derr != nil {
			skipped++
			s.log.Warn("persistence: skipping a corrupt record", "record", fmt.Sprintf("%q", k))
			continue
		}
		if v.Kind == KindZSetWide {
			head = append(head[:0], k...)
			headDB, headKey = db, append([]byte(nil), key...)
			pending, havePend = Value{Kind: KindZSet, Exp: v.Exp, Wide: true, Over: over}, true
			continue
		}
		v.Over = over
		if err := fn(db, key, v); err != nil {
			return skipped, err
		}
	}
	if err := emit(); err != nil {
		return skipped, err
	}
	if err := it.Error(); err != nil {
		return skipped, err
	}
	return skipped, s.damaged()
}

// ErrClosed is returned by operations on a closed store.
var ErrClosed = errors.New("persist: store closed")

// Commit appends the batch to the effect log as one record and empties it.
// It returns the log position after the record: Sync(n) waits until it is
// durable. The record is in the kernel's page cache when Commit returns
// (effectlog), so a crash of the process alone never loses it. Records
// reach the log in the order Commit is called, so a caller that commits
// while holding the locks of the keys it changed gets the lock order in
// the log too. While the disk cannot take a new log file, Commit waits
// and retries (the server refuses new writes meanwhile, Err).
func (s *Store) Commit(b *Batch) (uint64, error) {
	if b.Empty() {
		return s.Committed(), nil
	}
	// No s.mu here: the log is safe to use after Close (ErrClosed), and
	// the hot path of every write is better without a shared counter.
	end, err := s.elog.Append(b.wire)
	if err != nil && err != effectlog.ErrClosed {
		err = s.retry("log append", func() (err error) {
			end, err = s.elog.Append(b.wire)
			if err == effectlog.ErrClosed {
				return nil
			}
			return err
		})
	}
	if err == effectlog.ErrClosed {
		err = ErrClosed
	}
	b.reset()
	return end, err
}

// Committed is the log position after the last record.
func (s *Store) Committed() uint64 { return s.elog.End() }

// Synced reports whether the log is durable up to position n.
func (s *Store) Synced(n uint64) bool { return s.elog.Synced(n) }

// Unsynced is how many bytes of the log are not yet on disk.
func (s *Store) Unsynced() uint64 { return s.elog.Unsynced() }

// Sync returns once the log is on disk up to position n. Concurrent calls
// share fsyncs (effectlog's group commit), which is what `appendfsync
// always` needs. A failing disk is retried until it works again.
func (s *Store) Sync(n uint64) error {
	if s.elog.Synced(n) {
		return nil
	}
	err := s.retry("fsync", func() error {
		if err := s.elog.Sync(n); err != effectlog.ErrClosed {
			return err
		}
		return nil
	})
	if s.closing.Load() && !s.elog.Synced(n) {
		return ErrClosed
	}
	return err
}

// SyncAll makes every record committed so far durable.
func (s *Store) SyncAll() error { return s.Sync(s.Committed()) }

// TrimLog releases the memory of the log's written pages (effectlog's
// Trim); the server calls it once a second.
func (s *Store) TrimLog() { s.elog.Trim() }

// Checkpoints.
//
// A checkpoint folds the log into the snapshot so that the log can be
// dropped: BeginCheckpoint starts a new log file and returns its position;
// the caller then writes, with WriteSnapshot, the current state of every
// key changed since the previous checkpoint began (and the deletions), one
// shard at a time while writes go on; EndCheckpoint records that the
// snapshot is complete from that position and deletes the log files
// before it. The snapshot is fuzzy (each key is captured at some moment
// after the position), which replay tolerates (effect.go). A crash before
// EndCheckpoint leaves the previous position in force, with its log.

// BeginCheckpoint starts a checkpoint and returns its log position.
func (s *Store) BeginCheckpoint() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	if s.readOnly != nil {
		return 0, s.readOnly
	}
	return s.elog.Rotate()
}

// WriteSnapshot writes b's records to the snapshot, without waiting for
// the disk, and empties b.
func (s *Store) WriteSnapshot(b *Batch) error {
	if b.Empty() {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	pb := s.pb
	err := s.sorter.apply(pb, b.wire)
	if err != nil {
		pb.Reset()
		b.reset()
		return err
	}
	err = pb.Commit(pebble.NoSync)
	pb.Reset()
	b.reset()
	return err
}

// newSnapshotBatch makes the Pebble batch WriteSnapshot reuses. Pebble
// lets a batch keep a buffer of 1 MB at most, so each of a checkpoint's
// batches of a few MB grew its own from nothing, doubling and copying,
// and left it to the collector: over a million CL.THROTTLE keys the
// checkpoint and the collector took 173 ns of CPU per operation, 99 with
// the buffer kept. It keeps up to 16 MB, from one checkpoint to the next
// too: a new one each time was 14 MB of garbage per rewrite of a million
// keys (BenchmarkCheckpointRewrite), and the collector's cycles over a
// keyspace that size are what garbage costs.
func newSnapshotBatch(db *pebble.DB) *pebble.Batch {
	return db.NewBatch(pebble.WithMaxRetainedSizeBytes(16 << 20))
}

// crashBeforeExcise, set by tests, makes a rewrite's end leave the old
// files as a crash right after its flush would.
var crashBeforeExcise bool

// HasBase reports whether the snapshot has a base (base.go): then a key
// record replaces the base's, and a deletion must be a KindGone record.
func (s *Store) HasBase() bool { return s.gen.Load() != 0 }

// BeginRewrite starts a rewrite (base.go) by the checkpoint just begun: it
// deletes what rewrites cut short left and returns the writer of the new
// generation. Its chunks reach the snapshot with WriteSnapshot, and
// EndCheckpoint puts them in force.
func (s *Store) BeginRewrite() (*BaseWriter, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	gen := s.gen.Load()
	// What a rewrite cut short left: every generation after the one in
	// force.
	if err := s.db.Excise(context.Background(), pebble.KeyRange{Start: baseKey(gen+1, 0), End: []byte{nsBase + 1}}); err != nil {
		return nil, err
	}
	return NewBaseWriter(gen + 1), nil
}

// EndCheckpoint makes the snapshot durable, records that it is complete
// from log position from, and deletes the log files before it. w is the
// checkpoint's BaseWriter if it rewrote the keyspace (nil otherwise): then,
// in the same batch, its generation goes in force and every key record
// goes, and the previous base's files go after.
func (s *Store) EndCheckpoint(from uint64, w *BaseWriter) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.snapMu.Lock()
	s.sorter.release()
	s.snapMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	var err error
	if w != nil {
		// Load reads only the generation in force, so older ones may
		// stay until excised below (or by the next rewrite, after a
		// crash); the records must go with the batch.
		err = errors.Join(
			b.DeleteRange([]byte{nsKey}, []byte{nsKey + 1}, nil),
			b.Set(genKey, binary.AppendUvarint(nil, w.gen), nil),
		)
	}
	if err == nil {
		err = b.Set(checkpointKey, binary.AppendUvarint(nil, from), nil)
	}
	count := s.ckptN.Load() + 1
	if err == nil {
		err = b.Set(ckptCountKey, binary.AppendUvarint(nil, count), nil)
	}
	if err == nil {
		err = b.Commit(pebble.NoSync)
	}
	if err != nil {
		return err
	}
	if w != nil {
		// In the memtable, the batch may reach the disk with any later
		// flush, even if this one fails: from here the next rewrite must
		// take the generation after w's, and not excise w's as one cut
		// short.
		s.gen.Store(w.gen)
	}
	if err := s.db.Flush(); err != nil {
		return err
	}
	s.ckpt.Store(from)
	s.ckptN.Store(count)
	if err := writeMark(s.fs, s.path, count); err != nil {
		// The checkpoint holds; only the check of the next start is weaker.
		s.log.Warn("persistence: writing the checkpoint mark", "err", err)
	}
	if w == nil || crashBeforeExcise {
		return s.elog.DropBefore(from)
	}
	// The range deletions hide the old base and the records; excising
	// them drops their files now. Left to Pebble, they stayed on disk
	// until enough files piled up for a compaction, which with a base of
	// a million keys rewritten every few seconds tripled the disk used.
	ctx := context.Background()
	if err := errors.Join(
		s.db.Excise(ctx, pebble.KeyRange{Start: []byte{nsBase}, End: baseKey(w.gen, 0)}),
		s.db.Excise(ctx, pebble.KeyRange{Start: []byte{nsKey}, End: []byte{nsKey + 1}}),
	); err != nil {
		s.log.Warn("persistence: dropping the previous snapshot's files", "err", err)
	}
	return s.elog.DropBefore(from)
}

// LogSize is the bytes of log since the last checkpoint began: what a
// restart would replay. While a Close or a Reopen holds the store (either
// may wait for the disk) it is the last size it gave, so that INFO does
// not wait with them.
func (s *Store) LogSize() int64 {
	if !s.mu.TryRLock() {
		return s.lastLogSize.Load()
	}
	defer s.mu.RUnlock()
	if s.closed {
		return 0
	}
	n := s.elog.Size(s.ckpt.Load())
	s.lastLogSize.Store(n)
	return n
}

// Replay calls fn for every effect logged since the snapshot's checkpoint,
// in log order; the server calls it once, after Load and before serving.
// A record that does not decode is skipped whole and counted; the log's
// own framing has already cut a torn tail (effectlog.Open).
func (s *Store) Replay(fn func(e *Effect) error) (records, skipped int, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, 0, ErrClosed
	}
	var e Effect
	from := s.ckpt.Load()
	err = s.elog.Replay(from, func(start uint64, payload []byte) error {
		records++
		s.replayedBytes.Store(int64(start-from) + int64(len(payload)))
		derr := decodeEffects(payload, &e, fn)
		if derr == nil {
			e = Effect{Kind: EffectEnd}
			derr = fn(&e)
		}
		if errors.Is(derr, ErrCorrupt) {
			skipped++
			s.log.Warn("persistence: skipping a corrupt log record", "position", start, "bytes", len(payload))
			return nil
		}
		return derr
	})
	return records, skipped, err
}

// ReplayedBytes is how much of the log a running Replay has read: the
// progress of a load (INFO loading_loaded_bytes).
func (s *Store) ReplayedBytes() int64 { return s.replayedBytes.Load() }

// SnapshotSize is the bytes the snapshot uses on disk; the last size it
// gave while a Close or a Reopen holds the store, as LogSize.
func (s *Store) SnapshotSize() uint64 {
	if !s.mu.TryRLock() {
		return s.lastSnapSize.Load()
	}
	defer s.mu.RUnlock()
	if s.closed {
		return 0
	}
	n := s.db.Metrics().DiskSpaceUsage()
	s.lastSnapSize.Store(n)
	return n
}

// Err is the disk error the store is retrying, nil when the disk works.
// While it is set, the server refuses writes.
func (s *Store) Err() error {
	if !s.failed.Load() {
		return nil
	}
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failure
}

func (s *Store) fail(what string, err error) {
	s.failMu.Lock()
	first := s.failure == nil
	s.failure = err
	s.failMu.Unlock()
	s.failed.Store(true)
	if first {
		s.log.Error("persistence: disk error; refusing writes and retrying", "op", what, "err", err)
	}
}

func (s *Store) recovered(what string) {
	s.failMu.Lock()
	if s.readOnly != nil {
		// Writes wait for Reopen all the same.
		s.failure = s.readOnly
		s.failMu.Unlock()
		return
	}
	was := s.failure
	s.failure = nil
	s.failMu.Unlock()
	s.failed.Store(false)
	if was != nil {
		s.log.Warn("persistence: disk works again; accepting writes", "op", what)
	}
}

// Close syncs the log and closes the store. Operations after Close return
// ErrClosed.
func (s *Store) Close() error {
	s.closing.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.elog.Close()
	if cerr := s.db.Close(); err == nil {
		err = cerr
	}
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// Strerror is err as C's strerror words it when it carries an errno ("No
// space left on device"), which is what Redis puts in its MISCONF reply;
// otherwise err's own text.
func Strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
			msg = string(msg[0]-32) + msg[1:]
		}
		return msg
	}
	return err.Error()
}

// pebbleLogger sends Pebble's own messages to the server's log: its
// routine notes at debug level, its errors as errors.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error("pebble: " + fmt.Sprintf(format, args...))
}

// Fatalf is Pebble's report of a state it cannot continue from; it must
// not return.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.log.Error("pebble: fatal: " + fmt.Sprintf(format, args...))
	os.Exit(1)
}

// metaKey is the Pebble key of server metadata name.
func metaKey(name string) []byte { return append([]byte{nsMeta, 'm', ':'}, name...) }

// PutMeta stores server metadata beside the keyspace, such as a hint for
// the next load; it is durable with the next checkpoint. Recovery must
// never depend on it: it may be older than the data.
func (s *Store) PutMeta(name string, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.db.Set(metaKey(name), val, pebble.NoSync)
}

// Meta returns the metadata PutMeta stored under name.
func (s *Store) Meta(name string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, false
	}
	v, closer, err := s.db.Get(metaKey(name))
	if err != nil {
		return nil, false
	}
	defer closer.Close()
	return append([]byte(nil), v...), true
}
