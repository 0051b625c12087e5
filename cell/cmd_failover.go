package cell

import (
	"strconv"
	"strings"
)

func init() {
	register(&Command{Name: "failover", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagStale, Handler: failoverCmd})
}

// failoverCmd is FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]:
// a coordinated switch to a replica (repl_failover.go), with Redis's
// checks in its order.
func failoverCmd(x *Ctx) {
	s := x.srv
	if s.clusterOn {
		x.Error(ErrFailoverCluster)
		return
	}
	if len(x.Args) == 2 && strings.EqualFold(string(x.Args[1]), "abort") {
		if !s.failingOver() {
			x.Error(ErrNoFailover)
			return
		}
		s.abortFailover("Failover manually aborted")
		x.W.OK()
		return
	}
	var timeout int64
	var force bool
	var host string
	var port int64
	for j := 1; j < len(x.Args); j++ {
		switch a := strings.ToLower(string(x.Args[j])); {
		case a == "timeout" && j+1 < len(x.Args) && timeout == 0:
			n, err := strconv.ParseInt(string(x.Args[j+1]), 10, 64)
			if err != nil {
				x.Error(ErrNotInteger)
				return
			}
			if n <= 0 {
				x.Error(ErrFailoverTimeout)
				return
			}
			timeout = n
			j++
		case a == "to" && j+2 < len(x.Args) && host == "":
			n, err := strconv.ParseInt(string(x.Args[j+2]), 10, 64)
			if err != nil {
				x.Error(ErrNotInteger)
				return
			}
			host, port = string(x.Args[j+1]), n
			j += 2
		case a == "force" && !force:
			force = true
		default:
			x.Error(ErrSyntax)
			return
		}
	}
	switch {
	case s.failingOver():
		x.Error(ErrFailoverInProgress)
		return
	case s.isReplica():
		x.Error(ErrFailoverOnReplica)
		return
	case len(s.replicaList()) == 0:
		x.Error(ErrFailoverNoReplicas)
		return
	case force && (timeout == 0 || host == ""):
		x.Error(ErrFailoverForce)
		return
	}
	if host != "" {
		var found, online bool
		for _, r := range s.replicaList() {
			if strings.EqualFold(r.ip, host) && int64(r.port) == port {
				found, online = true, r.online
				break
			}
		}
		if !found {
			x.Error(ErrFailoverNotReplica)
			return
		}
		if !online {
			x.Error(ErrFailoverNotOnline)
			return
		}
		s.log.Info("FAILOVER requested to " + host + ":" + strconv.FormatInt(port, 10) + ".")
	} else {
		s.log.Info("FAILOVER requested to any replica.")
	}
	s.startFailover(host, int(port), timeout, force)
	x.W.OK()
}
