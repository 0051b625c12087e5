package cell

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	register(
		&Command{Name: "sync", Arity: 1, Flags: FlagAdmin | FlagNoScript | FlagNoMulti, Handler: syncCmd},
		&Command{Name: "psync", Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagNoMulti, Handler: psyncCmd},
		&Command{Name: "replconf", Arity: -1, Flags: FlagAdmin | FlagNoScript | FlagLoading | FlagStale | FlagAllowBusy, Handler: replconf},
		&Command{Name: "wait", Arity: 3, Flags: FlagNoScript, Handler: waitCmd},
		&Command{Name: "replicaof", Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagStale, Handler: replicaof},
		&Command{Name: "slaveof", Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagStale, Handler: replicaof},
		&Command{Name: "role", Arity: 1, Flags: FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagSentinel, Handler: roleCmd},
	)
}

// syncCmd is SYNC: a full resync without the +FULLRESYNC line, as old
// replicas and `redis-cli --rdb` use it; the connection then gets the
// stream (redis-cli closes it after the file).
func syncCmd(x *Ctx) {
	if x.cl.repl != nil && x.cl.repl.rep != nil {
		return // already a replica: Redis ignores it
	}
	if x.srv.failingOver() {
		x.Error(ErrSyncFailingOver)
		return
	}
	x.srv.attachReplica(x, false, "", 0)
}

// psyncCmd is PSYNC replid offset: a partial resync (+CONTINUE) when the
// ID is ours and the backlog holds the offset, else a full one
// (+FULLRESYNC replid offset, then the snapshot).
func psyncCmd(x *Ctx) {
	if x.cl.repl != nil && x.cl.repl.rep != nil {
		return
	}
	if !x.srv.psyncFailover(x) { // PSYNC ... FAILOVER (repl_failover.go)
		return
	}
	if x.srv.failingOver() {
		x.Error(ErrSyncFailingOver)
		return
	}
	off, err := strconv.ParseInt(string(x.Args[2]), 10, 64)
	if err != nil {
		x.Error(ErrNotInteger)
		return
	}
	x.srv.attachReplica(x, true, string(x.Args[1]), off)
}

// replconf takes what a replica announces before SYNC/PSYNC (in pairs,
// of known names, as Redis checks them) and, once it is one, its ACKs,
// which get no reply.
func replconf(x *Ctx) {
	if len(x.Args)%2 == 0 {
		x.Error(ErrSyntax)
		return
	}
	st := x.cl.replState()
	for i := 1; i < len(x.Args); i += 2 {
		val := string(x.Args[i+1])
		switch opt := string(bytes.ToLower(x.Args[i])); opt {
		case "listening-port":
			n, err := strconv.Atoi(val)
			if err != nil {
				x.Error(ErrNotInteger)
				return
			}
			st.port = n
		case "ip-address":
			st.ip = val
		case "capa":
			if strings.EqualFold(val, "eof") {
				st.capaEOF = true
			}
		case "ack":
			if rp := st.rep; rp != nil {
				if n, err := strconv.ParseInt(val, 10, 64); err == nil && n > rp.ackOff.Load() {
					rp.ackOff.Store(n)
				}
				rp.ackTime.Store(time.Now().UnixMilli())
				x.srv.replicaAcked(rp)
			}
			return // no reply, as Redis
		case "getack":
			if x.srv.replicaAck(x) {
				return
			}
		case "rdb-only", "rdb-filter-only":
		default:
			x.Error(errReplconfOption(string(x.Args[i])))
			return
		}
	}
	x.W.OK()
}

// waitCmd is WAIT numreplicas timeout: it blocks until that many replicas
// acknowledged everything streamed so far, or the timeout (ms; 0: no
// limit) passes, asking them with REPLCONF GETACK, and answers how many
// did.
func waitCmd(x *Ctx) {
	want, err1 := strconv.ParseInt(string(x.Args[1]), 10, 64)
	timeout, err2 := strconv.ParseInt(string(x.Args[2]), 10, 64)
	if err1 != nil || err2 != nil {
		x.Error(ErrNotInteger)
		return
	}
	if timeout < 0 {
		x.Error("ERR timeout is negative")
		return
	}
	s := x.srv
	if s.isReplica() {
		x.Error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
		return
	}
	s.repl.mu.Lock()
	target := s.repl.off
	s.repl.mu.Unlock()
	n := s.ackedReplicas(target)
	if int64(n) >= want || x.cl.multi != nil {
		x.W.Int(int64(n))
		return
	}
	s.propagateRaw(-1, replCmd(nil, []byte("REPLCONF"), []byte("GETACK"), []byte("*")))
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(time.Duration(timeout) * time.Millisecond)
	}
	for {
		time.Sleep(2 * time.Millisecond)
		n = s.ackedReplicas(target)
		if int64(n) >= want || (!deadline.IsZero() && time.Now().After(deadline)) || x.cl.killed.Load() || s.closing.Load() {
			break
		}
	}
	x.W.Int(int64(n))
}

// roleCmd is ROLE: master, its offset and its replicas; or, on a replica,
// its master and link state.
func roleCmd(x *Ctx) {
	if x.srv.isReplica() {
		x.srv.replicaRole(x)
		return
	}
	off, _, _ := x.srv.masterOffsets()
	// Only online replicas, as Redis's ROLE: INFO lists the others.
	reps := slices.DeleteFunc(x.srv.replicaList(), func(r replicaInfo) bool { return !r.online })
	x.W.Array(3)
	x.W.Bulk([]byte("master"))
	x.W.Int(off)
	x.W.Array(len(reps))
	for _, r := range reps {
		x.W.Array(3)
		x.W.Bulk([]byte(r.ip))
		x.W.Bulk([]byte(strconv.Itoa(r.port)))
		x.W.Bulk([]byte(strconv.FormatInt(r.off, 10)))
	}
}
