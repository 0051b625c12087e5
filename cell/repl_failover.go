package cell

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A coordinated failover (FAILOVER, Redis 6.2+): the master pauses
// writes, waits until a replica (the target, or the first to catch up)
// acknowledged everything streamed, then becomes a replica of it, asking
// with PSYNC <our replid> <offset> FAILOVER. The target, finding its
// master's ID, promotes itself and answers +CONTINUE (the history it now
// continues is ours), and writes resume here as -READONLY. A target that
// refuses, or a timeout before it caught up, ends the attempt and this
// server stays (or is again) the master. The target side is in psyncCmd.

// The values of INFO's master_failover_state.
const (
	noFailover = iota
	failoverWaitSync
	failoverInProgress
)

var failoverStateNames = [...]string{"no-failover", "waiting-for-sync", "failover-in-progress"}

// failoverState is the attempt in course. mu guards it.
type failoverState struct {
	mu    sync.Mutex
	state int
	host  string // the target; "" until one is chosen (FAILOVER without TO)
	port  int
	end   int64 // Unix ms the wait for the target ends; 0: no TIMEOUT
	force bool  // past end, fail over even to a replica behind
}

// failoverStateName is INFO's master_failover_state.
func (s *Server) failoverStateName() string {
	s.failover.mu.Lock()
	defer s.failover.mu.Unlock()
	return failoverStateNames[s.failover.state]
}

// failingOver says whether an attempt is in course: replicas may not
// sync with us meanwhile, and the master sends them no PINGs, which would
// move the offset the target must reach.
func (s *Server) failingOver() bool {
	s.failover.mu.Lock()
	defer s.failover.mu.Unlock()
	return s.failover.state != noFailover
}

// failoverInProgress says whether this server, a replica now, is asking
// its master (the target) to take over.
func (s *Server) failoverInProgress() bool {
	s.failover.mu.Lock()
	defer s.failover.mu.Unlock()
	return s.failover.state == failoverInProgress
}

// startFailover begins the wait for the target, with writes paused.
func (s *Server) startFailover(host string, port int, timeoutMs int64, force bool) {
	f := &s.failover
	f.mu.Lock()
	f.state, f.host, f.port, f.force, f.end = failoverWaitSync, host, port, force, 0
	if timeoutMs > 0 {
		f.end = time.Now().UnixMilli() + timeoutMs
	}
	s.pause(pauseForFailover, math.MaxInt64, true)
	f.mu.Unlock()
	s.bg.Add(1)
	go s.watchFailover()
}

// watchFailover checks the wait every few milliseconds, as Redis's
// updateFailoverStatus does from its cron, until the attempt moves on.
func (s *Server) watchFailover() {
	defer s.bg.Done()
	s.every(10*time.Millisecond, s.updateFailover)
}

// updateFailover moves a waiting attempt on: to the target once it is
// synced, or past the timeout to it (FORCE) or to an abort. false: no
// longer waiting.
func (s *Server) updateFailover() bool {
	f := &s.failover
	f.mu.Lock()
	if f.state != failoverWaitSync {
		f.mu.Unlock()
		return false
	}
	if f.end != 0 && time.Now().UnixMilli() >= f.end {
		if f.force {
			s.log.Info("FAILOVER to " + net.JoinHostPort(f.host, strconv.Itoa(f.port)) + " time out exceeded, failing over.")
			f.state = failoverInProgress
			host, port := f.host, f.port
			f.mu.Unlock()
			s.startFailoverLink(host, port)
			return false
		}
		f.mu.Unlock()
		s.abortFailover("Replica never caught up before timeout")
		return false
	}
	off, _, _ := s.masterOffsets()
	synced := false
	r := &s.repl
	r.mu.Lock()
	for _, rp := range r.replicas {
		if !rp.online {
			continue
		}
		if f.host != "" {
			if rp.ip == f.host && rp.port == f.port {
				synced = rp.ackOff.Load() == off
				break
			}
		} else if rp.ackOff.Load() == off {
			f.host, f.port, synced = rp.ip, rp.port, true
			break
		}
	}
	r.mu.Unlock()
	if !synced {
		f.mu.Unlock()
		return true
	}
	f.state = failoverInProgress
	host, port := f.host, f.port
	f.mu.Unlock()
	s.log.Info("Failover target " + net.JoinHostPort(host, strconv.Itoa(port)) + " is synced, failing over.")
	s.startFailoverLink(host, port)
	return false
}

// startFailoverLink makes this server a replica of the target, with the
// link's PSYNC asking it to take over.
func (s *Server) startFailoverLink(host string, port int) {
	s.startLink(host, port)
	s.disconnectReplicas() // as Redis's replicationSetMaster: they follow us again, partially
}

// failoverAnswered is the link's news of the target's answer to PSYNC
// FAILOVER: accepted ends the attempt (writes resume, refused as a
// replica's); refused aborts it.
func (s *Server) failoverAnswered(accepted bool) {
	if accepted {
		s.clearFailover()
		return
	}
	go s.abortFailover("Failover target rejected psync request")
}

// clearFailover ends the attempt and the pause.
func (s *Server) clearFailover() {
	f := &s.failover
	f.mu.Lock()
	s.unpause(pauseForFailover)
	f.state, f.host, f.port, f.end, f.force = noFailover, "", 0, 0, false
	f.mu.Unlock()
}

// abortFailover ends the attempt, master again if it had become the
// target's replica.
func (s *Server) abortFailover(reason string) {
	f := &s.failover
	f.mu.Lock()
	state, host, port := f.state, f.host, f.port
	f.mu.Unlock()
	if state == noFailover {
		return
	}
	to := "any replica"
	if host != "" {
		to = net.JoinHostPort(host, strconv.Itoa(port))
	}
	s.log.Info("FAILOVER to " + to + " aborted: " + reason)
	if state == failoverInProgress {
		s.unsetMaster("failover aborted")
	}
	s.clearFailover()
}

// unsetMaster makes a replica a master (REPLICAOF NO ONE, a failover's
// target, an aborted failover): a new history from here, which the
// replicas that followed the same master continue by partial resync
// (PSYNC2). false: it was a master already.
func (s *Server) unsetMaster(why string) bool {
	l := s.link.Swap(nil)
	if l == nil {
		return false
	}
	l.close()
	s.shiftReplID()
	s.disconnectReplicas()
	s.log.Info("MASTER MODE enabled (" + why + ")")
	return true
}

// errFailoverRefused ends a link whose PSYNC FAILOVER the target refused.
var errFailoverRefused = errors.New("the failover target refused PSYNC FAILOVER")

// psyncFailover is the target's side of PSYNC replid offset FAILOVER
// (args[3]): promote itself when replid is its master's. A reply was
// written when it returns false.
func (s *Server) psyncFailover(x *Ctx) bool {
	if len(x.Args) < 4 || !strings.EqualFold(string(x.Args[3]), "failover") {
		return true
	}
	s.log.Warn("Failover request received for replid " + string(x.Args[1]) + ".")
	if !s.isReplica() {
		x.Error(ErrFailoverToMaster)
		return false
	}
	if string(x.Args[1]) != s.replID() {
		x.Error(ErrFailoverReplID)
		return false
	}
	info := x.cl.appendInfo(nil, x)
	s.unsetMaster("failover request from '" + strings.TrimRight(string(info), "\n") + "'")
	return true
}
