package keyspace

// Blocking pops (BLPOP, BZPOPMIN, ...) wait on keys that hold nothing
// they can pop. Redis wakes them where a key is added (dbAdd's
// signalKeyAsReady): here, while the server says some client waits
// (AddWaiting), an execution whose Tx has a Ready notes every list or
// sorted set it stores under a key, and the server serves the waiters of
// those keys once the execution is over.

// ReadyKey is a key that got a list or a sorted set while clients waited.
type ReadyKey struct {
	DB  int
	Key string
}

// Ready lists the keys an execution readied, in order, each once.
type Ready struct {
	keys []ReadyKey
}

// Keys are the keys noted since the last Reset.
func (r *Ready) Keys() []ReadyKey { return r.keys }

// Reset empties r.
func (r *Ready) Reset() {
	clear(r.keys)
	r.keys = r.keys[:0]
}

// Pop removes and returns the first key noted; ok false when r is empty.
func (r *Ready) Pop() (k ReadyKey, ok bool) {
	if len(r.keys) == 0 {
		return k, false
	}
	k = r.keys[0]
	copy(r.keys, r.keys[1:])
	r.keys[len(r.keys)-1] = ReadyKey{}
	r.keys = r.keys[:len(r.keys)-1]
	return k, true
}

// Note notes db's key, unless it is noted already.
func (r *Ready) Note(db int, key []byte) {
	for _, k := range r.keys {
		if k.DB == db && k.Key == string(key) {
			return
		}
	}
	r.keys = append(r.keys, ReadyKey{DB: db, Key: string(key)})
}

// AddWaiting changes the count of clients blocked on keys by d: while it
// is above zero, executions note the keys they ready.
func (ks *Keyspace) AddWaiting(d int64) { ks.waiting.Add(d) }

// SetReady makes the execution note in r the keys it readies (nil: none).
func (x *Tx) SetReady(r *Ready) { x.ready = r }

// Ready is where the execution notes the keys it readies (nil: nowhere).
func (x *Tx) Ready() *Ready { return x.ready }

// readied notes that db's key now holds obj, if obj can serve a blocked
// pop and some client waits.
func (x *Tx) readied(db int, key []byte, obj any) {
	if x.ready == nil || x.ks.waiting.Load() == 0 {
		return
	}
	switch obj.(type) {
	case *List, *ZSet:
		x.ready.Note(db, key)
	}
}
