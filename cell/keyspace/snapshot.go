package keyspace

// Snapshot is the keyspace as it was at one moment, for a save (BGSAVE,
// SAVE, a save point, SYNC's file): what Redis's fork gives its child.
//
// TakeSnapshot holds every shard of every database at once, only to mark
// each as pending and count it: the short stop of writes that makes the
// moment one for all shards. From then on, the first execution to take a
// pending shard (LockSet's Lock, TryLock and TryAdd; eviction, expiry and
// Put, which lock shards themselves) captures it first, under its lock,
// before it can change anything: the shard's keys are encoded as they
// still are (the snapshot's enc), which is the copy on write. The save
// takes each shard in turn (Part) and captures what no writer has yet. So
// every key is written as it was at the moment, whichever shard it lives
// in, at the cost of one capture in the first writer's time per shard a
// save meets while writes go on.
type Snapshot struct {
	ks    *Keyspace
	enc   func(dst []byte, db int, key string, e *Entry) []byte
	parts [][]byte // each shard's encoding, by id, once captured
	keys  []int    // keys per database at the moment
	dirty int64    // writes since start at the moment (Dirty)
}

// TakeSnapshot takes a snapshot whose parts enc encodes: it appends db's
// key with its entry to dst, or leaves dst as it is to skip the key.
func (ks *Keyspace) TakeSnapshot(enc func(dst []byte, db int, key string, e *Entry) []byte) *Snapshot {
	sn := &Snapshot{ks: ks, enc: enc, parts: make([][]byte, len(ks.dbs)*len(ks.dbs[0].shards)), keys: make([]int, len(ks.dbs))}
	var l LockSet
	for d := range ks.dbs {
		l.AddDB(ks, d)
	}
	l.Lock(true) // captures what an earlier snapshot still has pending
	for d := range ks.dbs {
		c := ks.Counts(d, false)
		sn.keys[d], sn.dirty = c.Keys, sn.dirty+c.Dirty
		for i := range ks.dbs[d].shards {
			ks.dbs[d].shards[i].snap.Store(sn)
		}
	}
	l.Unlock()
	return sn
}

// Keys is how many keys db held at the moment (expired ones included).
func (sn *Snapshot) Keys(db int) int { return sn.keys[db] }

// Dirty is the keyspace's count of writes at the moment.
func (sn *Snapshot) Dirty() int64 { return sn.dirty }

// Part returns the encoding of shard i of db as it was at the moment,
// capturing it now if no writer did, and lets the snapshot forget it.
func (sn *Snapshot) Part(db, i int) []byte {
	sh := &sn.ks.dbs[db].shards[i]
	sh.mu.Lock()
	sh.preserve()
	p := sn.parts[sh.id]
	sn.parts[sh.id] = nil
	sh.unlock()
	return p
}

// Release drops what the snapshot has not given yet (a save that failed
// part way): the shards still pending are no longer captured.
func (sn *Snapshot) Release() {
	for d := range sn.ks.dbs {
		for i := range sn.ks.dbs[d].shards {
			sh := &sn.ks.dbs[d].shards[i]
			sh.snap.CompareAndSwap(sn, nil)
		}
	}
	clear(sn.parts)
}

// preserve captures s, locked, for the snapshot it is pending for, if
// any: before the caller changes it.
func (s *Shard) preserve() {
	sn := s.snap.Load()
	if sn == nil {
		return
	}
	s.snap.Store(nil)
	db := s.id / len(sn.ks.dbs[0].shards)
	var b []byte
	for k, e := range s.keys.all() {
		b = sn.enc(b, db, k, e)
	}
	sn.parts[s.id] = b
}
