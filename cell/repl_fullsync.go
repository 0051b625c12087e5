package cell

import (
	"slices"
	"strconv"
	"time"
)

// A full resync: one snapshot (RDB), sent to the replicas that need it,
// then the stream from the snapshot's offset on.
//
// With repl-diskless-sync and a repl-diskless-sync-delay, a replica that
// can take an EOF-marked snapshot waits up to the delay so that replicas
// arriving together share one snapshot, as Redis's diskless transfer
// does; repl-diskless-sync-max-replicas replicas waiting start it at
// once. Others get their own snapshot without waiting, as with Redis's
// disk-based sync, which needs no delay either.

// syncBatch is the replicas waiting for the next shared snapshot.
type syncBatch struct {
	reps []*replica
	full chan struct{} // closed when max-replicas are waiting
}

// fullSync gives rp a full resync, now or with the next shared snapshot.
func (s *Server) fullSync(rp *replica) {
	delay, _ := strconv.Atoi(configParamByName("repl-diskless-sync-delay").value(s))
	if !s.disklessTo(rp) || delay <= 0 {
		s.sendSnapshot([]*replica{rp})
		return
	}
	most, _ := strconv.Atoi(configParamByName("repl-diskless-sync-max-replicas").value(s))
	r := &s.repl
	r.mu.Lock()
	b := r.batch
	if b == nil {
		b = &syncBatch{full: make(chan struct{})}
		r.batch = b
		s.bg.Add(1)
		go s.runBatch(b, time.Duration(delay)*time.Second)
	}
	b.reps = append(b.reps, rp)
	if most > 0 && len(b.reps) == most {
		close(b.full)
	}
	r.mu.Unlock()
	s.log.Info("Delay next BGSAVE for diskless SYNC", "replica", rp.c.addr)
}

// runBatch sends b's snapshot when the delay has passed or enough
// replicas wait.
func (s *Server) runBatch(b *syncBatch, delay time.Duration) {
	defer s.bg.Done()
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.full:
	case <-s.done:
		return
	}
	r := &s.repl
	r.mu.Lock()
	r.batch = nil
	reps := make([]*replica, 0, len(b.reps))
	for _, rp := range b.reps {
		if !rp.closed {
			reps = append(reps, rp)
		}
	}
	r.mu.Unlock()
	if len(reps) > 0 {
		s.sendSnapshot(reps)
	}
}

// disklessTo says whether rp gets an EOF-marked snapshot.
func (s *Server) disklessTo(rp *replica) bool {
	return rp.capaEOF && configParamByName("repl-diskless-sync").value(s) == "yes"
}

// sendSnapshot takes one snapshot and sends it to reps, each then
// streamed from the snapshot's offset.
func (s *Server) sendSnapshot(reps []*replica) {
	r := &s.repl
	// On a replica the snapshot and its offset are taken with the stream
	// from the master held back: a redis-server master's stream is not
	// idempotent (INCR), so the sub-replica must get it from exactly the
	// snapshot's offset.
	unhold := s.holdStream()
	r.mu.Lock()
	r.syncing++ // keys go whole until the snapshot is taken (repl_stream.go)
	start := r.off
	if !s.isReplica() {
		r.db = -1 // the replica starts from db 0 after loading: SELECT again
	}
	id := r.idLocked(s)
	for _, rp := range reps {
		if rp.closed {
			continue
		}
		if rp.psync {
			rp.sink.push([]byte("+FULLRESYNC "+id+" "+strconv.FormatInt(start, 10)+"\r\n"), nil)
		}
		r.replicas = append(r.replicas, rp)
	}
	r.mu.Unlock()

	target := "disk"
	if s.disklessTo(reps[0]) {
		target = "replicas sockets"
	}
	s.log.Info("Starting BGSAVE for SYNC with target: " + target)
	var buf chunkWriter
	_, _, err := s.encodeRDB(&buf)
	r.mu.Lock()
	r.syncing--
	r.mu.Unlock()
	unhold()
	if err != nil {
		s.log.Error("replication: snapshot failed", "err", err)
		for _, rp := range reps {
			rp.c.nc.Close()
		}
		return
	}
	for _, rp := range reps {
		eof := s.disklessTo(rp)
		// The chunks go to every replica's sink as they are, unchanged
		// from here on.
		if eof {
			mark := randomHex(20)
			rp.sink.pushExempt(slices.Concat([][]byte{[]byte("$EOF:" + mark + "\r\n")}, buf.chunks, [][]byte{[]byte(mark)})...)
		} else {
			rp.sink.pushExempt(slices.Concat([][]byte{[]byte("$" + strconv.Itoa(buf.n) + "\r\n")}, buf.chunks)...)
		}
		r.mu.Lock()
		if eof {
			rp.streamOnAck = true
		} else {
			rp.sink.push(rp.pending, nil)
			rp.pending = nil
		}
		rp.online = true
		rp.ackOff.Store(start)
		rp.ackTime.Store(time.Now().UnixMilli())
		r.mu.Unlock()
		s.log.Info("Synchronization with replica succeeded", "replica", rp.c.addr)
	}
}

// chunkWriter collects a snapshot for the replicas in chunks of
// snapChunk bytes: a growing buffer would copy it at every doubling and
// leave twice its size behind for the GC, which showed as the master's
// RSS going from 62 to 172 MB at a W1 replica's full resync.
type chunkWriter struct {
	chunks [][]byte
	n      int
}

const snapChunk = 256 << 10

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := len(w.chunks)
		if k == 0 || len(w.chunks[k-1]) == cap(w.chunks[k-1]) {
			w.chunks = append(w.chunks, make([]byte, 0, snapChunk))
			k++
		}
		c := w.chunks[k-1]
		m := copy(c[len(c):cap(c)], p)
		w.chunks[k-1] = c[:len(c)+m]
		p = p[m:]
	}
	w.n += n
	return n, nil
}
