package persist

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DirName is the store's directory inside the server's --dir, as Redis
// keeps its appendonlydir there.
const DirName = "cellserver.db"

// formatVersion is the record layout of record.go. A store written by
// another layout is refused rather than misread.
const formatVersion = "1"

var versionKey = []byte{nsMeta, 'v', 'e', 'r', 's', 'i', 'o', 'n'}

// Options are the settings of Open.
type Options struct {
	// Logger receives recovery notes (a cut log tail, skipped corrupt
	// records) and disk errors. nil: slog.Default().
	Logger *slog.Logger
	// FS is the file system under the store; nil means the operating
	// system's. Tests inject failures here.
	FS vfs.FS
}

// Store is the durable mirror of the keyspace. Commit writes a batch to
// Pebble's WAL without waiting for the disk; Sync makes everything
// committed so far durable. Both are safe for concurrent use.
type Store struct {
	db   *pebble.DB
	lock *pebble.Lock
	log  *slog.Logger
	path string

	// mu is held shared by every Pebble call and exclusively by Close:
	// Pebble panics on use after Close, and a client cut off at shutdown
	// may still be finishing a command.
	mu      sync.RWMutex
	closed  bool
	closing atomic.Bool

	appended  atomic.Uint64 // batches handed to Commit
	committed atomic.Uint64 // batches committed to Pebble
	synced    atomic.Uint64 // batches known to be on disk

	// The group commit (group.go): pend is the group being formed (under
	// pendMu), spare the one being committed or ready for reuse; pb is the
	// Pebble batch groups are committed with (under commitMu).
	pendMu      sync.Mutex
	pend, spare *group
	commitMu    sync.Mutex
	pb          *pebble.Batch
	wake        chan bool // true: the group is full
	stop        chan struct{}
	loopDone    chan struct{}
	stopOnce    sync.Once

	failMu  sync.Mutex
	failure error // the disk error being retried, nil when healthy
	failed  atomic.Bool
}

// Open opens or creates the store in dir/DirName and recovers it: a torn or
// corrupt tail of the newest log file is cut (and logged) first, so that a
// crash never stops the server from starting. It fails if another process
// holds the store.
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
	opts := &pebble.Options{
		FS:     stallFS{o.FS, s},
		Lock:   lock,
		Logger: pebbleLogger{s.log},
		// Redis keys are small and hot keys are rewritten constantly: a
		// memtable bigger than Pebble's 4 MB default absorbs the rewrites
		// before they reach an sstable. It bounds what a restart replays
		// (with the one being flushed, 32 MB of log) and is memory beside
		// the keyspace's (in the Go heap when built without cgo).
		MemTableSize: 16 << 20,
	}
	db, err := pebble.Open(s.path, opts)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("opening %s: %w", s.path, err)
	}
	s.db, s.lock = db, lock
	s.pend, s.spare, s.pb = newGroup(), newGroup(), db.NewBatch()
	s.wake, s.stop, s.loopDone = make(chan bool, 1), make(chan struct{}), make(chan struct{})
	go s.commitLoop()
	if err := s.checkVersion(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) checkVersion() error {
	v, closer, err := s.db.Get(versionKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return s.db.Set(versionKey, []byte(formatVersion), pebble.Sync)
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	if string(v) != formatVersion {
		return fmt.Errorf("%s holds data in format %q; this cellserver reads format %s", s.path, v, formatVersion)
	}
	return nil
}

// Path is the store's directory.
func (s *Store) Path() string { return s.path }

// Load calls fn for every stored key, in key order, and returns how many
// records it skipped as corrupt (each is logged). A sorted set stored
// member by member arrives as one KindZSet value with its members gathered
// into Items. Values alias a buffer that is
// only valid during the call. An error from fn stops Load and is returned.
func (s *Store) Load(fn func(db int, key []byte, v Value) error) (skipped int, err error) {
	// What was committed but is still in the pending group is loaded too.
	s.mu.RLock()
	if s.closed {
		err = ErrClosed
	} else {
		err = s.commitPending(s.appended.Load())
	}
	s.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{nsKey}, UpperBound: []byte{nsKey + 1}})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var (
		head     []byte // the pending sorted set's head key
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
					pending.Items = append(pending.Items, append([]byte(nil), member...), append([]byte(nil), sc...))
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
			v, derr = Decode(raw)
		}
		if derr != nil {
			skipped++
			s.log.Warn("persistence: skipping a corrupt record", "record", fmt.Sprintf("%q", k))
			continue
		}
		if v.Kind == KindZSetWide {
			head = append(head[:0], k...)
			headDB, headKey = db, append([]byte(nil), key...)
			pending, havePend = Value{Kind: KindZSet, Exp: v.Exp, Wide: true}, true
			continue
		}
		if err := fn(db, key, v); err != nil {
			return skipped, err
		}
	}
	if err := emit(); err != nil {
		return skipped, err
	}
	return skipped, it.Error()
}

// Batch collects the effects of one command, EXEC or expiry cycle. It is
// reused: Commit empties it.
type Batch struct {
	records
	key []byte
	val []byte
}

// NewBatch makes an empty batch for s.
func (s *Store) NewBatch() *Batch { return &Batch{} }

// Empty reports whether the batch holds nothing to commit.
func (b *Batch) Empty() bool { return len(b.recs) == 0 }

// PutString stores db's key as a string value.
func (b *Batch) PutString(db int, key []byte, exp int64, val []byte) {
	b.key = AppendKey(b.key[:0], db, key)
	b.val = AppendString(b.val[:0], exp, val)
	b.add(opSet, b.key, b.val)
}

// Put stores db's key as v. For a KindZSetWide head, the caller also
// calls PutMember for the members and must have called DeleteKey first if
// the key held anything else.
func (b *Batch) Put(db int, key []byte, v Value) {
	b.key = AppendKey(b.key[:0], db, key)
	b.val = AppendValue(b.val[:0], v)
	b.add(opSet, b.key, b.val)
}

// Scratch returns the batch's value buffer, emptied, for an encoding that
// PutEncoded then stores: the buffer is reused from put to put.
func (b *Batch) Scratch() []byte { return b.val[:0] }

// PutEncoded stores val, an encoding made with AppendAggregate and
// AppendItem (or AppendValue), as db's key.
func (b *Batch) PutEncoded(db int, key, val []byte) {
	b.key = AppendKey(b.key[:0], db, key)
	b.val = val
	b.add(opSet, b.key, val)
}

// PutMember stores one member of the sorted set db's key.
func (b *Batch) PutMember(db int, key, member []byte, score float64) {
	b.key = AppendKey(b.key[:0], db, key)
	b.key = append(b.key, member...)
	sc := EncodeScore(score)
	b.add(opSet, b.key, sc[:])
}

// DeleteMember removes one member of the sorted set db's key.
func (b *Batch) DeleteMember(db int, key, member []byte) {
	b.key = AppendKey(b.key[:0], db, key)
	b.key = append(b.key, member...)
	b.add(opDelete, b.key, nil)
}

// Delete removes db's key when it is known to have one record only (a
// string, list or hash): a point delete, much cheaper than DeleteKey.
func (b *Batch) Delete(db int, key []byte) {
	b.key = AppendKey(b.key[:0], db, key)
	b.add(opDelete, b.key, nil)
}

// DeleteKey removes db's key and every member record under it.
func (b *Batch) DeleteKey(db int, key []byte) {
	b.key = AppendKey(b.key[:0], db, key)
	b.add(opDeleteRange, b.key, PrefixEnd(b.key))
}

// DeleteDB removes every key of db (FLUSHDB, FLUSHALL): one range
// tombstone, whatever the number of keys.
func (b *Batch) DeleteDB(db int) {
	b.key = AppendDBPrefix(b.key[:0], db)
	b.add(opDeleteRange, b.key, PrefixEnd(b.key))
}

// ErrClosed is returned by operations on a closed store.
var ErrClosed = errors.New("persist: store closed")

// Commit hands the batch to the log without waiting for the disk, and
// empties it. It returns the batch's number: Sync(n) waits until that
// batch is durable. Batches reach the log in the order Commit is called
// (group.go), so a caller that commits while holding the locks of the
// keys it changed gets the lock order on disk too.
func (s *Store) Commit(b *Batch) (uint64, error) {
	if b.Empty() {
		return s.appended.Load(), nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.pendMu.Lock()
	first := len(s.pend.recs) == 0
	s.pend.merge(&b.records)
	n := s.appended.Add(1)
	s.pend.last = n
	full := s.pend.full()
	s.pendMu.Unlock()
	b.reset()
	if first || full {
		select {
		case s.wake <- full:
		default:
		}
	}
	return n, nil
}

// Committed is the number of the last batch handed to Commit.
func (s *Store) Committed() uint64 { return s.appended.Load() }

// Synced reports whether batch n is known to be durable.
func (s *Store) Synced(n uint64) bool { return s.synced.Load() >= n }

// Sync returns once batch n and every batch before it are on disk.
// Concurrent calls share fsyncs: the first commits the pending group for
// all of them, and Pebble's log writer syncs once for all the sync
// requests queued while the previous fsync ran, which is the group commit
// `appendfsync always` needs.
func (s *Store) Sync(n uint64) error {
	if s.synced.Load() >= n {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if err := s.commitPending(n); err != nil {
		return err
	}
	// The log is sequential: syncing an empty record written now syncs
	// every batch committed before it.
	target := s.committed.Load()
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return err
	}
	for {
		cur := s.synced.Load()
		if cur >= target || s.synced.CompareAndSwap(cur, target) {
			return nil
		}
	}
}

// SyncAll makes every batch committed so far durable.
func (s *Store) SyncAll() error { return s.Sync(s.appended.Load()) }

// Save flushes the memtable into an sstable, which makes the log before it
// obsolete: this is the snapshot, and it bounds what a restart replays.
// Pebble also does it by itself each time the memtable fills.
func (s *Store) Save() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	if err := s.commitPending(s.appended.Load()); err != nil {
		return err
	}
	return s.db.Flush()
}

// DiskSize is the bytes the store uses on disk (log and sstables).
func (s *Store) DiskSize() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0
	}
	return s.db.Metrics().DiskSpaceUsage()
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
	was := s.failure
	s.failure = nil
	s.failMu.Unlock()
	s.failed.Store(false)
	if was != nil {
		s.log.Warn("persistence: disk works again; accepting writes", "op", what)
	}
}

// Close syncs and closes the store. Operations after Close return ErrClosed.
func (s *Store) Close() error {
	s.closing.Store(true)
	// The committer stops first: it takes s.mu itself.
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.loopDone
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	err := s.commitPending(s.appended.Load())
	s.closed = true
	if lerr := s.db.LogData(nil, pebble.Sync); err == nil {
		err = lerr
	}
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

// Len is the number of records in the batch.
func (b *Batch) Len() int { return len(b.recs) }

// metaKey is the Pebble key of server metadata name.
func metaKey(name string) []byte { return append([]byte{nsMeta, 'm', ':'}, name...) }

// PutMeta stores server metadata beside the keyspace, such as a hint for
// the next load; it is committed with the next sync or save. Recovery must
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
