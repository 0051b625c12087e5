package cell

import (
	"bytes"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/gcra"
)

func init() {
	register(
		// Like CL.THROTTLE, the handler checks the argument count (its
		// Usage error). Keys are every fifth argument: dispatch locks
		// their shards in order, and cluster mode wants them in one slot.
		&Command{Name: "cl.throttleall", Arity: -1, Flags: FlagWrite | FlagModule, FirstKey: 1, LastKey: -1, Step: 5, Handler: clThrottleAll,
			Doc: &CommandDoc{Summary: "Decides several GCRA limits at one instant, charging all of them or none", Complexity: "O(N) where N is the number of limits"}},
		&Command{Name: "cl.probeall", Arity: -1, Flags: FlagReadonly | FlagModule, FirstKey: 1, LastKey: -1, Step: 5, Handler: clProbeAll,
			Doc: &CommandDoc{Summary: "Replies what CL.THROTTLEALL would, charging nothing", Complexity: "O(N) where N is the number of limits"}},
	)
}

// clThrottleAll is our CL.THROTTLEALL key max_burst count period quantity
// [key ...]: several GCRA limits decided at one instant, all charged when
// every one allows, none when any refuses.
func clThrottleAll(x *Ctx) {
	x.countThrottle(limThrottleAll, throttleAll(x, true, MsgThrottleAllUsage))
}

// clProbeAll is our CL.PROBEALL: CL.THROTTLEALL's reply, charging nothing.
func clProbeAll(x *Ctx) { x.countThrottle(limProbeAll, throttleAll(x, false, MsgProbeAllUsage)) }

// limitState is one limit of a CL.THROTTLEALL call.
type limitState struct {
	key []byte
	p   gcra.Params
	e   *keyspace.Entry // the key's entry before the call; nil: none
	// tat and has are the state the limit is decided on: the stored one,
	// or what an earlier limit on the same key in this call left.
	tat  uint64
	has  bool
	r    gcra.Result
	last bool // the last limit on its key: the one whose state is written
}

// throttleAll runs CL.THROTTLEALL (write) or CL.PROBEALL and reports
// whether the call as a whole was limited.
//
// Every argument is parsed and every rate checked before any key is read,
// and every key read before anything is decided, so an error reply
// changes nothing. Limits on the same key are decided in order, each on
// the state the ones before it would leave, so the key is charged for all.
func throttleAll(x *Ctx, write bool, usage string) (limited bool) {
	n := len(x.Args) - 1
	if n == 0 || n%5 != 0 {
		x.Error(usage)
		return false
	}
	ls := make([]limitState, n/5)
	for i := range ls {
		g := x.Args[1+5*i : 6+5*i]
		p, ok := parseLimit(x, g[1:])
		if !ok {
			return false
		}
		ls[i] = limitState{key: g[0], p: p, last: true}
	}
	for i := range ls {
		l := &ls[i]
		if j := earlierSameKey(ls, i); j >= 0 {
			ls[j].last = false
			l.e = ls[j].e
			continue
		}
		e, tat, ok := readTAT(x, l.key)
		if !ok {
			return false
		}
		l.e, l.tat, l.has = e, tat, e != nil
	}
	now := x.limiterNow() // one instant for every limit
	var expireErr error
	for i := range ls {
		l := &ls[i]
		if j := earlierSameKey(ls, i); j >= 0 {
			l.tat, l.has = ls[j].tat, ls[j].has
			if r := ls[j].r; r.Store {
				l.tat, l.has = r.NewTAT, true
			}
		}
		r, err := gcra.Throttle(l.tat, l.has, now, l.p)
		switch err {
		case nil:
		case gcra.ErrExpire:
			expireErr = err
		default:
			x.Error(err.Error())
			return false
		}
		l.r = r
		limited = limited || r.Limited
	}
	if !limited {
		for i := range ls {
			if l := &ls[i]; write && l.last {
				x.storeTAT(l.key, l.e, l.r.NewTAT, tatExpiry(now, l.r))
			}
		}
		// As CL.THROTTLE (and CL.PROBE, which writes nothing): written
		// without a TTL, then the error.
		if expireErr != nil {
			x.Error(expireErr.Error())
			return false
		}
	}
	x.W.Array(1 + len(ls))
	if limited {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
	for i := range ls {
		writeGCRAReply(x, ls[i].r)
	}
	return limited
}

// earlierSameKey returns the index of the last limit before i on the same
// key, or -1. Calls name a handful of limits, so a scan beats a map.
func earlierSameKey(ls []limitState, i int) int {
	for j := i - 1; j >= 0; j-- {
		if bytes.Equal(ls[j].key, ls[i].key) {
			return j
		}
	}
	return -1
}
