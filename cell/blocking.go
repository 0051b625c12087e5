package cell

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Clients blocked on keys (BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP,
// BZPOPMIN, BZPOPMAX, BZMPOP), as Redis 7.0's blocked.c:
//
//   - A blocking command that finds nothing to pop registers a waiter on
//     each of its keys (block) while its shards are still locked, so a
//     push to one of them either came first (and was popped) or finds the
//     waiter. Then, once its shards are unlocked, the client's goroutine
//     waits (awaitBlocked), reading its socket so that a disconnect is
//     seen, and spends no CPU: only a wake nudges the read.
//   - An execution that stores a list or sorted set under a key while
//     someone waits notes the key (keyspace.Ready, Redis's
//     signalKeyAsReady in dbAdd). At the end of the execution, before its
//     shards are unlocked (serveHeld), it pops for the waiters of those
//     keys, first blocked first served, writes each waiter's reply and,
//     once its effects are committed, wakes it: no other command can
//     take an element pushed for a waiter in between, as none runs
//     between a command and Redis's handleClientsBlockedOnKeys. A BLMOVE
//     whose destination lies on a shard the execution cannot take
//     without waiting is served after the unlock (serveReady), under the
//     keys' own locks. The pops are the serving client's effects: the
//     effect log and the replicas get them as they get any change. A
//     BLMOVE served may ready its destination: that key is served in
//     turn.
//   - A timeout, CLIENT UNBLOCK, a disconnect or SHUTDOWN ends a wait. One
//     mutex (blockers.mu) arbitrates: whoever claims the waiter first
//     writes its reply, into the waiter's own buffer (out), which the
//     client's goroutine appends to its replies once woken: until then
//     that goroutine may still be sending what came before.
//
// Inside MULTI/EXEC and scripts a blocking command never blocks: it
// answers as a timeout would, at once.

// blockKind is what a waiter pops, and the shape of its reply.
type blockKind uint8

const (
	blockPop   blockKind = iota // BLPOP, BRPOP: [key, element]
	blockMove                   // BLMOVE, BRPOPLPUSH: the element, pushed onto dst
	blockMPop                   // BLMPOP: [key, [element, ...]]
	blockZPop                   // BZPOPMIN, BZPOPMAX: [key, member, score]
	blockZMPop                  // BZMPOP: [key, [[member, score], ...]]
)

// zset reports whether the kind pops sorted sets (else lists).
func (k blockKind) zset() bool { return k >= blockZPop }

// waiter is one blocked command.
type waiter struct {
	c    *Client
	db   int
	keys []string
	kind blockKind
	// front pops the head (LEFT) or the lowest score (MIN); to pushes
	// onto dst's head; count bounds BLMPOP's and BZMPOP's pops.
	front, to bool
	dst       []byte
	count     int64
	timeout   time.Duration // 0: none
	proto     int           // the client's protocol, for out

	// out is the reply, written by whoever claimed the waiter; syncTo is
	// the store's batch it may reveal (appendfsync always).
	out    *resp.Writer
	syncTo uint64

	// claimed is set under blockers.mu by whoever ends the wait: from
	// then on only that one touches the client's reply writer, until
	// done. woken is closed once the waiting goroutine's read has been
	// nudged.
	claimed bool
	done    atomic.Bool
	woken   chan struct{}
}

// blockKey names a key of a database.
type blockKey struct {
	db  int
	key string
}

// blockers is the server's registry of waiters, per key in blocking
// order.
type blockers struct {
	mu      sync.Mutex
	keys    map[blockKey][]*waiter
	clients int // blocked clients (INFO blocked_clients)
	timed   int // of which with a timeout (clients_in_timeout_table)
}

// counts reads INFO's figures.
func (b *blockers) counts() (clients, timed int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.clients, b.timed
}

// addPostponed counts a client held by a pause (pause.go) in or out of
// blocked_clients, as Redis counts its postponed clients.
func (b *blockers) addPostponed(n int) {
	b.mu.Lock()
	b.clients += n
	b.mu.Unlock()
}

// mayBlock reports whether x may block its client: only a command the
// client sent itself, never one of EXEC or of a script.
func (x *Ctx) mayBlock() bool { return x.cl != nil && x == &x.cl.ctx }

// block registers w for x's client, on each of its keys once. The keys'
// shards are locked (by dispatch).
func (x *Ctx) block(w *waiter) {
	c := x.cl
	w.c, w.db, w.woken, w.proto = c, x.DB(), make(chan struct{}), x.W.Proto()
	b := &x.srv.blockers
	b.mu.Lock()
	if b.keys == nil {
		b.keys = make(map[blockKey][]*waiter)
	}
	seen := w.keys[:0]
	for _, k := range w.keys {
		if containsString(seen, k) {
			continue
		}
		seen = append(seen, k)
		bk := blockKey{w.db, k}
		b.keys[bk] = append(b.keys[bk], w)
	}
	w.keys = seen
	b.clients++
	if w.timeout > 0 {
		b.timed++
	}
	b.mu.Unlock()
	x.srv.ks.AddWaiting(1)
	setClientFlag(&c.shared.flags, cflagBlocked, true)
	c.blocked.Store(w)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// claim ends w's wait: it leaves every queue. b.mu is held; false means
// someone else claimed it first.
func (b *blockers) claim(srv *Server, w *waiter) bool {
	if w.claimed {
		return false
	}
	w.claimed = true
	for _, k := range w.keys {
		bk := blockKey{w.db, k}
		q := b.keys[bk]
		for i, o := range q {
			if o == w {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(b.keys, bk)
		} else {
			b.keys[bk] = q
		}
	}
	b.clients--
	if w.timeout > 0 {
		b.timed--
	}
	srv.ks.AddWaiting(-1)
	return true
}

// reply is where w's reply is written: its own buffer, in its client's
// protocol.
func (w *waiter) reply() *resp.Writer {
	if w.out == nil {
		w.out = resp.NewWriter()
		w.out.SetProto(w.proto)
	}
	return w.out
}

// wake lets w's goroutine go on with its reply written: its read is
// nudged (a past deadline), then woken is closed, after which the
// goroutine clears the deadline.
func (w *waiter) wake() {
	w.done.Store(true)
	w.c.nc.SetReadDeadline(time.Unix(1, 0))
	close(w.woken)
}

// unblock ends w's wait with reply (a timeout's null or CLIENT UNBLOCK's
// error), unless it was served or ended already; it reports whether it
// ended it.
func (srv *Server) unblock(w *waiter, reply func(w *resp.Writer)) bool {
	b := &srv.blockers
	b.mu.Lock()
	ok := b.claim(srv, w)
	b.mu.Unlock()
	if !ok {
		return false
	}
	reply(w.reply())
	w.wake()
	return true
}

// timedOut writes a blocking command's timeout reply: a null array in
// RESP2 for every kind, null in RESP3.
func timedOut(w *resp.Writer) { w.NullArray() }

// awaitBlocked waits for the end of c's blocked command, whose shards are
// unlocked; mark is CLIENT REPLY's mark (startReply), which the replies
// flushed here move: it returns the new one. The goroutine sits in a read
// of the socket, which keeps what the client pipelines meanwhile and
// tells a disconnect; a wake ends the read with a past deadline.
func (c *Client) awaitBlocked(mark int) int {
	w := c.blocked.Load()
	c.tally.flush(c) // CLIENT LIST shows the blocked command
	if c.w.Len() > 0 {
		// What came before the blocked command is answered now, as Redis's
		// replies go out while a client blocks.
		if mark >= 0 {
			mark = 0
		}
		if !c.flush() {
			c.closeAfter = true
		}
	}
	var timer *time.Timer
	if w.timeout > 0 {
		timer = time.AfterFunc(w.timeout, func() { c.srv.unblock(w, timedOut) })
	}
	for !w.done.Load() && !c.closeAfter {
		err := c.rd.Fill()
		if w.done.Load() {
			break
		}
		if err == nil || (errors.Is(err, os.ErrDeadlineExceeded) && !c.srv.closing.Load()) {
			continue
		}
		// The connection ended (or the server is shutting down): the wait
		// ends with it, its reply unsent.
		c.closeAfter = true
	}
	if timer != nil {
		timer.Stop()
	}
	if !c.srv.unblock(w, func(*resp.Writer) {}) {
		<-w.woken // served or unblocked: its reply is written
		c.nc.SetReadDeadline(time.Time{})
		if w.out != nil {
			c.w.Raw(w.out.Bytes())
		}
		c.syncTo = max(c.syncTo, w.syncTo)
	}
	setClientFlag(&c.shared.flags, cflagBlocked, false)
	c.blocked.Store(nil)
	if c.srv.closing.Load() {
		c.closeAfter = true
	}
	return mark
}

// serveHeld serves the waiters of the keys c's execution readied, in the
// order they were readied, while the execution still holds locks: it
// stops at the first key it cannot serve whole that way (its shard is not
// held, or a BLMOVE's destination shard is held by someone else), which
// serveReady serves after the unlock. The waiters served are woken by
// wakeServed, once the effects are committed.
func (c *Client) serveHeld(locks *keyspace.LockSet) {
	srv := c.srv
	b := &srv.blockers
	for {
		keys := c.ready.Keys()
		if len(keys) == 0 {
			return
		}
		k := keys[0]
		key := []byte(k.Key)
		if !holds(locks, srv.ks.ShardOf(k.DB, key)) {
			return
		}
		x := &c.serveCtx
		*x = Ctx{srv: srv}
		x.Begin(srv.ks, c.ctx.Effects(), k.DB, time.Now().UnixMilli())
		x.SetReady(&c.ready)
		whole := true
		b.mu.Lock()
		for {
			w := nextServed(x, b.keys[blockKey{k.DB, k.Key}], key)
			if w == nil {
				break
			}
			if w.kind == blockMove && !locks.TryAdd(srv.ks.ShardOf(w.db, w.dst)) {
				whole = false
				break
			}
			b.claim(srv, w)
			x.cl, x.W = c, w.reply()
			servePop(x, w, key)
			c.served = append(c.served, w)
		}
		b.mu.Unlock()
		*x = Ctx{}
		if !whole {
			return
		}
		c.ready.Pop()
	}
}

// wakeServed wakes the waiters serveHeld served, whose pops are
// committed.
func (c *Client) wakeServed() {
	for i, w := range c.served {
		w.syncTo = c.syncTo
		w.wake()
		c.served[i] = nil
	}
	c.served = c.served[:0]
}

// serveReady serves the waiters of the keys c's execution readied, key by
// key in the order they were readied (Redis's handleClientsBlockedOnKeys).
// No shard is locked.
func (c *Client) serveReady() {
	for {
		k, ok := c.ready.Pop()
		if !ok {
			return
		}
		c.serveKey(k)
	}
}

// serveKey pops for the waiters of k, first blocked first served, while k
// holds what they pop, with k's shard and the shards of the BLMOVE
// destinations locked.
func (c *Client) serveKey(k keyspace.ReadyKey) {
	srv := c.srv
	b := &srv.blockers
	bk := blockKey{k.DB, k.Key}
	key := []byte(k.Key)
	locks := &c.serveLocks
	for {
		b.mu.Lock()
		q := b.keys[bk]
		if len(q) == 0 {
			b.mu.Unlock()
			return
		}
		locks.Add(srv.ks.ShardOf(k.DB, key))
		for _, w := range q {
			if w.kind == blockMove {
				locks.Add(srv.ks.ShardOf(w.db, w.dst))
			}
		}
		b.mu.Unlock()
		locks.Lock(true)
		x := &c.serveCtx
		*x = Ctx{srv: srv}
		x.Begin(srv.ks, c.ctx.Effects(), k.DB, time.Now().UnixMilli())
		x.SetReady(&c.ready)
		var served []*waiter
		retry := false
		b.mu.Lock()
		for {
			w := nextServed(x, b.keys[bk], key)
			if w == nil {
				break
			}
			if w.kind == blockMove && !holds(locks, srv.ks.ShardOf(w.db, w.dst)) {
				retry = true // blocked since the shards were chosen
				break
			}
			b.claim(srv, w)
			x.cl, x.W = c, w.reply()
			servePop(x, w, key)
			served = append(served, w)
		}
		b.mu.Unlock()
		*x = Ctx{}
		c.commitEffects(locks)
		locks.Unlock()
		for _, w := range served {
			w.syncTo = c.syncTo
			w.wake()
		}
		if !retry {
			return
		}
	}
}

// nextServed is the first waiter of q that key's value can serve, or nil
// (no key, or nobody waiting for its type).
func nextServed(x *Ctx, q []*waiter, key []byte) *waiter {
	if len(q) == 0 {
		return nil
	}
	e := x.Lookup(key)
	if e == nil {
		return nil
	}
	var isZSet bool
	switch e.Obj().(type) {
	case *keyspace.List:
	case *keyspace.ZSet:
		isZSet = true
	default:
		return nil
	}
	for _, w := range q {
		if w.kind.zset() == isZSet {
			return w
		}
	}
	return nil
}

func holds(l *keyspace.LockSet, s *keyspace.Shard) bool {
	for _, h := range l.Shards() {
		if h == s {
			return true
		}
	}
	return false
}

// servePop pops key's value for w and writes w's reply, as the command
// would have had the key held it when it came.
func servePop(x *Ctx, w *waiter, key []byte) {
	switch w.kind {
	case blockPop:
		l, _ := x.lookupList(key)
		popReplyWithKey(x, key, l, w.front)
	case blockMove:
		moveElement(x, key, w.dst, w.front, w.to)
	case blockMPop:
		l, _ := x.lookupList(key)
		lmpopFrom(x, key, l, w.front, w.count)
	case blockZPop:
		z, _ := x.lookupZSetW(key)
		bzpopFrom(x, key, z, !w.front)
	case blockZMPop:
		z, _ := x.lookupZSetW(key)
		zmpopFrom(x, key, z, !w.front, w.count)
	}
}

// unblockClient is CLIENT UNBLOCK's work on c: a blocked client's wait
// ends with the timeout's reply, or with -UNBLOCKED when withError.
func (srv *Server) unblockClient(c *Client, withError bool) bool {
	w := c.blocked.Load()
	if w == nil {
		return false
	}
	return srv.unblock(w, func(out *resp.Writer) {
		if withError {
			out.Error(ErrUnblocked)
			srv.stats.countError(ErrUnblocked)
			return
		}
		timedOut(out)
	})
}

// readyIn notes in r every key of databases a and b that clients wait on
// (SWAPDB): serveKey then serves those that hold what their waiters pop.
func (b *blockers) readyIn(r *keyspace.Ready, dbs ...int) {
	if r == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for bk := range b.keys {
		for _, db := range dbs {
			if bk.db == db {
				r.Note(db, []byte(bk.key))
			}
		}
	}
}
