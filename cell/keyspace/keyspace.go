package keyspace

import (
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cellserver/cellserver/cell/hashslot"
)

// Entry is one key's value and expiry.
//
// The value is a string, read with str and written with setStr or setInt,
// or an aggregate (*ZSet, *Hash, *List), read with obj and written with
// setObj (entry_value.go). Exp is the absolute expiry in Unix ms, 0 for
// none. A key is expired when now > Exp, as in Redis.
//
// The header is 32 bytes so that with a 16-byte key it fills a 48-byte
// object (entry_alloc.go): one pointer field serves the string's bytes
// and the aggregate alike, told apart by kind, and one 8-byte word holds
// the string's 32-bit length and capacity, or an integer value itself.
type Entry struct {
	Exp int64
	// ptr is the string value's data (valStr), its slice (valBig) or the
	// aggregate.
	ptr unsafe.Pointer
	// n is len | cap<<32 of the string's bytes (valStr: below 4 GB), or
	// the value as an int64 (valInt).
	n uint64
	// hash is the key's keyHash, which the shard's index probes by.
	hash uint32
	// klen is the key's length; the key's bytes follow the Entry in its
	// allocation, or a string header does when klen is keyLong
	// (entry_alloc.go).
	klen uint16
	// enc is how Redis would have encoded a string value, which depends on
	// the command that made it, not only on the bytes (OBJECT ENCODING).
	enc StrEnc
	// kind says what the value is, and so what ptr and n hold.
	kind valueKind
}

// StrEnc is Redis's choice of string encoding. setString resets it to
// EncAuto; commands that build a value the way Redis does without
// tryObjectEncoding set it afterwards.
type StrEnc uint8

const (
	// EncAuto: what tryObjectEncoding picks from the bytes: "int" for an
	// int64 of at most 20 characters, else "embstr" up to 44 bytes, else "raw".
	EncAuto StrEnc = iota
	// EncRaw: a value modified in place (APPEND, SETRANGE) is always "raw".
	EncRaw
	// EncNoInt: made by createStringObject (INCRBYFLOAT): "embstr" or "raw"
	// by length, never "int".
	EncNoInt

	// encUnsaved is not an encoding but a flag kept in the same byte (the
	// Entry has no other room): the key changed since the last
	// checkpoint began, so the next one must write it (checkpoint.go).
	encUnsaved StrEnc = 0x80
)

// StrEnc is the entry's string encoding, without the flag bits.
func (e *Entry) StrEnc() StrEnc { return e.enc &^ encUnsaved }

// setStrEnc sets the entry's string encoding, keeping the flag bits.
func (e *Entry) SetStrEnc(v StrEnc) { e.enc = e.enc&encUnsaved | v }

// Type names the value's type as TYPE replies it.
func (e *Entry) Type() string {
	switch e.kind {
	case valZSet:
		return "zset"
	case valHash:
		return "hash"
	case valList:
		return "list"
	case valSet:
		return "set"
	case valWindow:
		return "window"
	}
	return "string"
}

// expired reports whether the entry is logically gone at now (ms).
func (e *Entry) Expired(now int64) bool { return e.Exp != 0 && now > e.Exp }

// Shard is a slice of one database's keys behind one mutex. Every access
// to keys, withTTL and watchers happens with mu held.
type Shard struct {
	mu      sync.Mutex
	id      int      // global lock order: db*shards + index
	keys    keyIndex // keyindex.go
	withTTL int      // keys with an expiry, for INFO keyspace
	dirty   int64    // writes, for rdb_changes_since_last_save
	expired int64    // keys expired, for INFO expired_keys
	// avgTTL estimates the remaining TTL of the shard's keys with one,
	// in ms, as Redis's db->avg_ttl: the expiry cycle's samples folded
	// into a running average (expireSample); 0 when it has none.
	avgTTL   int64
	watchers map[string][]*atomic.Bool // WATCHed keys of this shard: each watcher's dirty flag
	peak     int                       // most keys seen by the expiry cycle, for shrink
	// lastCommit is the store's number for the last batch that changed
	// this shard: a reply that read the shard is not sent before that
	// batch is synced (appendfsync always).
	lastCommit uint64
	// What the next checkpoint must write (checkpoint.go): how many
	// entries carry encUnsaved (at least), and the keys deleted since the
	// last checkpoint began.
	unsaved int
	tombs   tombstones
	// script marks the running script that holds this shard, if any:
	// lock waits on it to answer BUSY once it passes busy-reply-threshold.
	script atomic.Pointer[Busy]
	// wake is closed when the shard is let go or marked, for lock waits
	// that must not block in mu (lockwait.go); nil when none waits.
	wake atomic.Pointer[chan struct{}]
	// snap is the snapshot this shard is still to be captured for
	// before anything changes it (snapshot.go), nil when none.
	snap atomic.Pointer[Snapshot]
	_    [64]byte // keep hot mutexes on separate cache lines
}

// DB is one of the numbered databases (SELECT n).
type DB struct {
	shards []Shard
}

// Keyspace holds every database. Its shape is fixed at start.
type Keyspace struct {
	dbs  []DB
	mask uint64
	// bySlot places keys by cluster hash slot instead of maphash, so that
	// all keys of a slot share a shard (CLUSTER GETKEYSINSLOT scans one).
	bySlot bool
	// flushed marks the databases flushed since the last checkpoint
	// began: the next one rewrites (checkpoint.go).
	flushed []atomic.Bool
	// expireNext is the shard the next expiry cycle starts at; the
	// expiry goroutine's only.
	expireNext int
	// onExpired is told of the keys active expiry deletes (journal.go).
	onExpired atomic.Pointer[ExpiredHook]
	// waiting counts the clients blocked on keys (ready.go).
	waiting atomic.Int64
}

// NewKeyspace makes databases x shards; shards is rounded up to a power of two.
func NewKeyspace(databases, shards int) *Keyspace {
	n := 1
	for n < shards {
		n <<= 1
	}
	ks := &Keyspace{dbs: make([]DB, databases), mask: uint64(n - 1), flushed: make([]atomic.Bool, databases)}
	for d := range ks.dbs {
		ks.dbs[d].shards = make([]Shard, n)
		for i := range ks.dbs[d].shards {
			s := &ks.dbs[d].shards[i]
			s.id = d*n + i
		}
	}
	return ks
}

// PlaceBySlot places keys by cluster hash slot (cluster mode). It must be
// called before any key is stored.
func (ks *Keyspace) PlaceBySlot() { ks.bySlot = true }

// DBs is the number of databases.
func (ks *Keyspace) DBs() int { return len(ks.dbs) }

// Shards is the number of shards per database.
func (ks *Keyspace) Shards() int { return int(ks.mask + 1) }

// shardOf returns the shard that owns key in db.
func (ks *Keyspace) shardOf(db int, key []byte) *Shard {
	if ks.bySlot {
		return &ks.dbs[db].shards[uint64(hashslot.Of(key))&ks.mask]
	}
	return &ks.dbs[db].shards[keyHash64(key)&ks.mask]
}

// locate returns the shard that owns key in db and the key's keyHash,
// from one hash of the key.
func (ks *Keyspace) locate(db int, key []byte) (*Shard, uint32) {
	return ks.locateHash(db, key, keyHash64(key))
}

// locateHash is locate for a key whose KeyHash is h.
func (ks *Keyspace) locateHash(db int, key []byte, h uint64) (*Shard, uint32) {
	if ks.bySlot {
		return &ks.dbs[db].shards[uint64(hashslot.Of(key))&ks.mask], indexHash(h)
	}
	return &ks.dbs[db].shards[h&ks.mask], indexHash(h)
}

// KeyHash is key's hash, which places it in its shard (outside cluster
// mode) and in the shard's index. A caller that hashed a key once (the
// key hints of a pipeline) hands it to ShardOfHash, HintHash and
// Tx.KnowHash, so that the key is not hashed again.
func KeyHash(key []byte) uint64 { return keyHash64(key) }

// ShardOfHash is ShardOf for a key whose KeyHash is h.
func (ks *Keyspace) ShardOfHash(db int, key []byte, h uint64) *Shard {
	s, _ := ks.locateHash(db, key, h)
	return s
}

// LockSet is the set of shards one execution holds, locked in ascending id
// order so that executions holding several shards cannot deadlock.
type LockSet struct {
	one    [4]*Shard
	shards []*Shard
	busyBy *Busy // the busy script that made the last Lock fail; see BusyBy
}

// Add adds s to the set.
func (l *LockSet) Add(s *Shard) {
	if l.shards == nil {
		l.shards = l.one[:0]
	}
	l.shards = append(l.shards, s)
}

// AddDB adds every shard of db.
func (l *LockSet) AddDB(ks *Keyspace, db int) {
	for i := range ks.dbs[db].shards {
		l.Add(&ks.dbs[db].shards[i])
	}
}

// Lock takes every shard of the set in ascending order. A shard held by a
// script past busy-reply-threshold makes it give up: it releases what it
// took and returns false, and the caller answers -BUSY. busyOK commands
// (Redis's allow-busy ones) wait for the script instead. A wait while
// holding shards of the set lets them go when the script it waits for
// needs one of them (lockwait.go), and starts again after that script.
func (l *LockSet) Lock(busyOK bool) bool {
	if len(l.shards) > 1 {
		slices.SortFunc(l.shards, func(a, b *Shard) int { return a.id - b.id })
		l.shards = slices.Compact(l.shards)
	}
	l.busyBy = nil
again:
	for i, s := range l.shards {
		switch res, r := s.lockWait(busyOK, i > 0); res {
		case lockBusy:
			l.release(i)
			l.shards = l.shards[:0]
			l.busyBy = r
			return false
		case lockYield:
			l.release(i)
			if !r.awaitEnd(busyOK) {
				l.shards = l.shards[:0]
				l.busyBy = r
				return false
			}
			goto again
		}
	}
	l.preserve()
	return true
}

// BusyBy is the mark of the script, past busy-reply-threshold, that made
// the last Lock fail, so the caller can name it in its BUSY reply.
func (l *LockSet) BusyBy() *Busy { return l.busyBy }

// TryLock takes every shard of the set if none is held by another
// execution, without waiting; otherwise it takes none, empties the set and
// returns false. A connection serving requests inside the poller's read
// callback uses it: it must not wait there (cell/sockio.go).
func (l *LockSet) TryLock() bool {
	if len(l.shards) > 1 {
		slices.SortFunc(l.shards, func(a, b *Shard) int { return a.id - b.id })
		l.shards = slices.Compact(l.shards)
	}
	for i, s := range l.shards {
		if !s.mu.TryLock() {
			l.release(i)
			l.shards = l.shards[:0]
			return false
		}
	}
	l.preserve()
	return true
}

// release unlocks the first n shards of the set, in descending order.
func (l *LockSet) release(n int) {
	for j := n - 1; j >= 0; j-- {
		l.shards[j].unlock()
	}
}

// TryAdd adds s to a set that is already locked, locking s only if that
// needs no wait: a script that reaches past its shards after writing
// must not wait out of ascending order, which could deadlock.
func (l *LockSet) TryAdd(s *Shard) bool {
	if slices.Contains(l.shards, s) {
		return true
	}
	if !s.mu.TryLock() {
		return false
	}
	s.preserve()
	l.Add(s)
	return true
}

// preserve captures the set's shards, just locked, for a pending
// snapshot (snapshot.go).
func (l *LockSet) preserve() {
	for _, s := range l.shards {
		if s.snap.Load() != nil {
			s.preserve()
		}
	}
}

// Unlock releases every shard of the set and empties it.
func (l *LockSet) Unlock() {
	l.release(len(l.shards))
	l.shards = l.shards[:0]
}

// Shards lists the shards of the set.
func (l *LockSet) Shards() []*Shard { return l.shards }

// LastCommit is the store's number for the last batch that changed one of
// the set's shards, locked: a reply that read them waits for it to be
// synced (appendfsync always).
func (l *LockSet) LastCommit() uint64 {
	var n uint64
	for _, s := range l.shards {
		n = max(n, s.lastCommit)
	}
	return n
}

// ShardOf returns the shard that owns key in db, for a LockSet.
func (ks *Keyspace) ShardOf(db int, key []byte) *Shard { return ks.shardOf(db, key) }

// KeyHint is where a key's lines are, for asking the CPU for them in
// steps (Keyspace.Hint, PrefetchEntry, PrefetchValue, PrefetchInside): each step reads
// what the one before asked for, so a pipeline's keys go through each
// step together and their lines arrive side by side, not one after
// another. The zero KeyHint does nothing.
type KeyHint struct {
	ix *keyIndex
	h  uint32
}

// Hint asks the CPU for the index lines a lookup of key in db will read,
// without locking or waiting (keyIndex.prefetchHome): for the keys of
// requests that are about to run. It returns the key's place for the
// next steps.
func (ks *Keyspace) Hint(db int, key []byte) KeyHint { return ks.HintHash(db, key, keyHash64(key)) }

// HintHash is Hint for a key whose KeyHash is h.
func (ks *Keyspace) HintHash(db int, key []byte, h64 uint64) KeyHint {
	if uint(db) >= uint(len(ks.dbs)) {
		return KeyHint{}
	}
	s, h := ks.locateHash(db, key, h64)
	s.keys.prefetchHome(h)
	return KeyHint{&s.keys, h}
}

// PrefetchEntry asks for the line of the key's entry (keyIndex.prefetchEntry).
func (k KeyHint) PrefetchEntry() {
	if k.ix != nil {
		k.ix.prefetchEntry(k.h)
	}
}

// PrefetchValue asks for the first line of the key's value
// (keyIndex.prefetchValue). False: PrefetchInside has nothing to ask
// for (the key is not a sorted set, or was not found).
func (k KeyHint) PrefetchValue() bool {
	return k.ix != nil && k.ix.prefetchValue(k.h)
}

// PrefetchInside asks for the lines inside the value that commands read
// first: a packed sorted set's first and last entries
// (keyIndex.prefetchPacked).
func (k KeyHint) PrefetchInside() {
	if k.ix != nil {
		k.ix.prefetchPacked(k.h)
	}
}
