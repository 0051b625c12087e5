package cell

import (
	"sync"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// Keys of a slot this node lost. When another master claims, with a newer
// config epoch, a slot this master still holds keys of (an UPDATE, or a
// PING whose slots say so), Redis's clusterUpdateSlotsConfigWith deletes
// those keys (delKeysInSlot) and propagates each deletion as a DEL: the
// slot's data is now the other master's, and what is left here would come
// back to life if the slot ever returned, or at the next restart. The bus
// tells the host with its lock held, so the deletion runs apart, in one
// goroutine, once the new slot map is in force: each key is its own
// execution through the keyspace's Tx, so the effect log records it (a
// restart does not bring it back), the stream carries a DEL to the
// replicas, and the key's WATCHes break.

// lostSlots is the queue of slots whose keys are to go.
type lostSlots struct {
	mu    sync.Mutex
	slots []int
	wake  chan struct{} // cap 1: the deleter has work
}

// add queues slot; start (after the new map is stored) wakes the deleter.
func (q *lostSlots) add(slot int) {
	q.mu.Lock()
	q.slots = append(q.slots, slot)
	q.mu.Unlock()
}

func (q *lostSlots) start() {
	q.mu.Lock()
	pending := len(q.slots) > 0
	q.mu.Unlock()
	if pending {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// next takes the next queued slot.
func (q *lostSlots) next() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.slots) == 0 {
		return 0, false
	}
	s := q.slots[0]
	q.slots = q.slots[1:]
	return s, true
}

// deleteLostSlots is the deleter: one goroutine for the server's life
// (startBackground), so that shutdown waits for the key it is deleting.
func (s *Server) deleteLostSlots(q *lostSlots) {
	defer s.bg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-q.wake:
		}
		for {
			slot, ok := q.next()
			if !ok {
				break
			}
			if n := s.delKeysInSlot(slot); n > 0 {
				s.log.Warn("cluster: deleted the keys of a slot another master took over", "slot", slot, "keys", n)
			}
		}
	}
}

// delKeysInSlot deletes slot's keys, one execution each, and returns how
// many. It stops when the slot routes to this node again or is being
// imported: keys written since then are not the lost slot's.
func (s *Server) delKeysInSlot(slot int) int {
	fx := keyspace.NewEffects(s.store)
	var jr keyspace.Journal
	var x keyspace.Tx
	var l keyspace.LockSet
	deleted := 0
	for {
		keys := s.ks.KeysInSlot(slot, 128)
		if len(keys) == 0 {
			return deleted
		}
		l.Add(s.ks.ShardOf(0, []byte(keys[0]))) // a slot's keys share a shard
		l.Lock(true)
		if s.slotIsMine(slot) {
			l.Unlock()
			return deleted
		}
		for _, k := range keys {
			select {
			case <-s.done:
				l.Unlock()
				return deleted
			default:
			}
			var fxp *keyspace.Effects
			if s.repl.on.Load() {
				fx.SetJournal(&jr)
				fxp = &fx
			} else if s.store != nil {
				fxp = &fx
			}
			x.Begin(s.ks, fxp, 0, time.Now().UnixMilli())
			if x.Remove([]byte(k)) { // an expired key goes too, as a DEL
				deleted++
			}
			s.commitEffects(&fx, &l)
		}
		if s.store != nil && s.fsyncAlways.Load() {
			if err := s.store.Sync(l.LastCommit()); err != nil {
				s.log.Error("persistence: fsync failed", "err", err)
			}
		}
		l.Unlock()
	}
}

// slotIsMine reports whether the slot map in force routes slot here or
// imports it.
func (s *Server) slotIsMine(slot int) bool {
	t := s.topo.Load()
	if t == nil {
		return false
	}
	_, importing := t.importing[slot]
	return importing || t.owner[slot] == int16(t.Self)
}
