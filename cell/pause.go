package cell

import (
	"sync"
	"time"
)

// Client pauses. As in Redis, each purpose (CLIENT PAUSE, a FAILOVER, a
// cluster manual failover on the master) keeps a pause of its own, which
// only its owner ends: CLIENT UNPAUSE leaves a failover's pause in
// effect. What applies is the strongest of those active (ALL over
// WRITE), until the latest end among the pauses of that kind; when it
// passes, a weaker or shorter one may still apply (Redis's
// updateClientPauseTypeAndEndTime).

// pauseState is a pause: until (Unix ms), for every command or only for
// those that write.
type pauseState struct {
	until     int64
	writeOnly bool
}

// pausePurpose names who paused.
type pausePurpose int

const (
	pauseByClient           pausePurpose = iota // CLIENT PAUSE
	pauseForFailover                            // FAILOVER, while the master waits for its target
	pauseForClusterFailover                     // CLUSTER FAILOVER, on the master (cluster_bus.go)
	numPausePurposes
)

// pauses is each purpose's pause, nil where none; Server.paused holds
// their effect, which commands read without the lock.
type pauses struct {
	mu sync.Mutex
	by [numPausePurposes]*pauseState
}

// pause starts or extends purpose's pause: its end is the later one, and
// ALL wins over WRITE, as Redis's pauseClients.
func (s *Server) pause(purpose pausePurpose, until int64, writeOnly bool) {
	s.pauses.mu.Lock()
	defer s.pauses.mu.Unlock()
	if p := s.pauses.by[purpose]; p != nil {
		until, writeOnly = max(until, p.until), writeOnly && p.writeOnly
	}
	s.pauses.by[purpose] = &pauseState{until: until, writeOnly: writeOnly}
	s.updatePauseLocked()
}

// unpause ends purpose's pause; the others stay.
func (s *Server) unpause(purpose pausePurpose) {
	s.pauses.mu.Lock()
	defer s.pauses.mu.Unlock()
	s.pauses.by[purpose] = nil
	s.updatePauseLocked()
}

// updatePause drops the pauses that ended and sets the effect of the
// rest.
func (s *Server) updatePause() {
	s.pauses.mu.Lock()
	defer s.pauses.mu.Unlock()
	s.updatePauseLocked()
}

func (s *Server) updatePauseLocked() {
	now := time.Now().UnixMilli()
	var eff *pauseState
	for i, p := range s.pauses.by {
		switch {
		case p == nil:
		case p.until <= now:
			s.pauses.by[i] = nil
		case eff == nil || eff.writeOnly && !p.writeOnly:
			eff = &pauseState{until: p.until, writeOnly: p.writeOnly}
		case eff.writeOnly == p.writeOnly:
			eff.until = max(eff.until, p.until)
		}
	}
	s.paused.Store(eff)
}

// waitPause holds the client, before its command runs or is queued, while
// a pause applies to the command: all commands under ALL; under WRITE the
// writing ones, and an EXEC whose queue writes (Redis's
// is_may_replicate_command). It re-checks every few milliseconds, so
// UNPAUSE and shutdown release it promptly. Meanwhile the client counts
// as blocked (INFO's blocked_clients, flag b, cmd= the held command), as
// Redis's postponed clients do. true: it waited, and the command's checks must run again
// (a failover may have made this server a replica meanwhile), as Redis
// processes a postponed command anew.
func (c *Client) waitPause(cmd *Command) (waited bool) {
	defer func() {
		if waited {
			c.srv.blockers.addPostponed(-1)
			setClientFlag(&c.shared.flags, cflagBlocked, false)
		}
	}()
	for {
		p := c.srv.paused.Load()
		if p == nil || c.srv.closing.Load() {
			return waited
		}
		now := time.Now().UnixMilli()
		if now >= p.until {
			c.srv.updatePause()
			continue
		}
		if p.writeOnly && !c.writes(cmd) {
			return waited
		}
		if !waited {
			waited = true
			c.srv.blockers.addPostponed(1)
			setClientFlag(&c.shared.flags, cflagBlocked, true)
			c.lastCmd.Store(cmd) // CLIENT LIST shows it, as Redis's cmd=
		}
		time.Sleep(time.Duration(min(p.until-now, 5)) * time.Millisecond)
	}
}
