package cell

import (
	"strconv"
	"time"
)

// min-replicas-to-write and min-replicas-max-lag: a master with both set
// refuses writes (-NOREPLICAS) while fewer replicas than the first are
// online with an acknowledgement at most max-lag seconds old, as Redis
// does, so that a master cut off from its replicas stops taking writes a
// failover would lose. Redis counts the good replicas once a second;
// here they are counted when a write asks, which only the settings'
// users pay for.

// setMinReplicas stores one of the two settings and arms the check when
// both are above 0.
func (s *Server) setMinReplicas(name, v string) string {
	s.setConfigValue(name, v)
	get := func(name, def string) int64 {
		v := s.configValue(name)
		if v == "" {
			v = def
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	toWrite, maxLag := get("min-replicas-to-write", "0"), get("min-replicas-max-lag", "10")
	s.repl.maxLag.Store(maxLag)
	if maxLag == 0 {
		toWrite = 0
	}
	s.repl.minToWrite.Store(toWrite)
	return ""
}

// goodReplicas counts the online replicas whose last acknowledgement is
// at most min-replicas-max-lag seconds old.
func (s *Server) goodReplicas() int {
	r := &s.repl
	maxLag := r.maxLag.Load()
	now := time.Now().UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rp := range r.replicas {
		if rp.online && (now-rp.ackTime.Load())/1000 <= maxLag {
			n++
		}
	}
	return n
}

// tooFewReplicas reports whether a write must be refused with
// -NOREPLICAS: on a master with the check armed, too few good replicas.
func (s *Server) tooFewReplicas() bool {
	n := s.repl.minToWrite.Load()
	return n > 0 && !s.isReplica() && int64(s.goodReplicas()) < n
}
