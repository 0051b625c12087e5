package keyspace

// Reads and writes outside any execution, for the server's tests, tools
// and DEBUG-like inspection. None checks expiry, notes an effect or marks
// a key for the checkpoint; each takes the shard's lock.

// Peek returns db's key's entry, expired or not, or nil.
func (ks *Keyspace) Peek(db int, key []byte) *Entry {
	sh := ks.shardOf(db, key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.keys.get(key)
}

// Put stores the value and expiry of v, an Entry made outside the
// keyspace, under db's key, replacing what it held.
func (ks *Keyspace) Put(db int, key []byte, v *Entry) *Entry {
	sh := ks.shardOf(db, key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.preserve() // snapshot.go
	sh.drop(string(key))
	return sh.adopt(key, v)
}

// Each calls fn for every key of db, expired or not, a shard at a time
// under its lock.
func (ks *Keyspace) Each(db int, fn func(key string, e *Entry)) {
	for i := range ks.dbs[db].shards {
		sh := &ks.dbs[db].shards[i]
		sh.mu.Lock()
		for k, e := range sh.keys.all() {
			fn(k, e)
		}
		sh.mu.Unlock()
	}
}

// BySlot reports whether keys are placed by cluster hash slot.
func (ks *Keyspace) BySlot() bool { return ks.bySlot }

// Unsaved reports whether e changed since the last checkpoint began.
func (e *Entry) Unsaved() bool { return e.enc&encUnsaved != 0 }

// ForgetUnsaved clears every mark of what the next checkpoint must
// write, as a checkpoint that failed after clearing them leaves it.
func (ks *Keyspace) ForgetUnsaved() {
	for d := range ks.dbs {
		for i := range ks.dbs[d].shards {
			sh := &ks.dbs[d].shards[i]
			sh.mu.Lock()
			sh.tombs.reset()
			for _, e := range sh.keys.all() {
				e.enc &^= encUnsaved
			}
			sh.unsaved = 0
			sh.mu.Unlock()
		}
	}
}

// SetVisitChunk makes a checkpoint visit n slots per hold of a shard's
// lock, and returns the previous count (tests make it tiny).
func SetVisitChunk(n int) (old int) { return int(visitChunk.Swap(int64(n))) }

// SetVisitPause makes fn (nil: nothing) run between two parts of a
// shard's checkpoint visit, with the shard unlocked.
func SetVisitPause(fn func(sh *Shard)) {
	if fn == nil {
		visitPause.Store(nil)
		return
	}
	visitPause.Store(&fn)
}

// KeyBehindVisit is the key of the slot just behind where a checkpoint's
// visit of s stopped, or "", taking the shard's lock.
func (s *Shard) KeyBehindVisit() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.keys.mark; m > 0 && s.keys.slots[m-1] != nil {
		return s.keys.slots[m-1].Key()
	}
	return ""
}

// Compact rebuilds the index of every shard of db, as active expiry does
// after a burst of deletions, taking each shard's lock.
func (ks *Keyspace) Compact(db int) {
	for i := range ks.dbs[db].shards {
		sh := &ks.dbs[db].shards[i]
		sh.mu.Lock()
		sh.keys.compact()
		sh.mu.Unlock()
	}
}
