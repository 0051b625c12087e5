package cell

import (
	"math"
	"strconv"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/gcra"
)

func init() {
	register(
		// redis-cell checks the argument count itself (the Usage error), so
		// the table's arity lets everything through.
		&Command{Name: "cl.throttle", Arity: -1, Flags: FlagWrite | FlagModule, FirstKey: 1, LastKey: 1, Handler: clThrottle},
		&Command{Name: "cl.probe", Arity: -1, Flags: FlagReadonly | FlagModule | FlagFast, FirstKey: 1, LastKey: 1, Handler: clProbe},
	)
}

// clThrottle is redis-cell's CL.THROTTLE key max_burst count period [quantity]:
// GCRA over a string key holding the theoretical arrival time in ns.
func clThrottle(x *Ctx) { x.countThrottle(limThrottle, throttle(x, true, gcra.MsgUsage)) }

// clProbe is our CL.PROBE: the reply CL.THROTTLE would give now, without
// writing anything, creating the key or touching its TTL.
func clProbe(x *Ctx) { x.countThrottle(limProbe, throttle(x, false, MsgProbeUsage)) }

// throttle runs CL.THROTTLE or CL.PROBE and reports whether the reply
// said limited (for the metrics; errors are seen in x.failed).
func throttle(x *Ctx, write bool, usage string) (limited bool) {
	if n := len(x.Args); n != 5 && n != 6 {
		x.Error(usage)
		return false
	}
	p, ok := parseLimit(x, x.Args[2:])
	if !ok {
		return false
	}
	key := x.Args[1]
	e, tat, ok := readTAT(x, key)
	if !ok {
		return false
	}
	// redis-cell reads the wall clock on every call, also inside MULTI and
	// scripts, where Redis's own expiry clock is frozen.
	now := x.limiterNow()
	r, err := gcra.Throttle(tat, e != nil, now, p)
	if err != nil && err != gcra.ErrExpire {
		x.Error(err.Error())
		return false
	}
	if write && r.Store {
		x.storeTAT(key, e, r.NewTAT, tatExpiry(now, r))
	}
	if err != nil { // ErrExpire: the value is written without a TTL, then the error
		x.Error(err.Error())
		return false
	}
	writeGCRAReply(x, r)
	return r.Limited
}

// parseLimit parses CL.THROTTLE's numbers, max_burst count period and an
// optional quantity (default 1), and checks the rate, replying the error
// of the first bad one.
func parseLimit(x *Ctx, args [][]byte) (p gcra.Params, ok bool) {
	p.Quantity = 1
	fields := [4]*int64{&p.MaxBurst, &p.Count, &p.Period, &p.Quantity}
	for i, a := range args {
		v, ok := gcra.ParseInt(a)
		if !ok {
			x.Error(gcra.ParseFailure(a))
			return p, false
		}
		*fields[i] = v
	}
	if err := p.Validate(); err != nil {
		x.Error(err.Error())
		return p, false
	}
	return p, true
}

// readTAT returns key's live entry (nil: none) and the TAT it holds, as
// redis-cell reads it; ok is false with the error replied when the key is
// of another type or holds no u64.
func readTAT(x *Ctx, key []byte) (e *keyspace.Entry, tat uint64, ok bool) {
	e, ok = x.lookupString(key)
	if !ok || e == nil {
		return e, 0, ok
	}
	// The TAT is normally stored as an int (setInt below); any other
	// value is parsed as redis-cell parses it.
	if v, isInt := e.IntVal(); isInt && v >= 0 {
		return e, uint64(v), true
	}
	var buf [20]byte
	tat, err := gcra.ParseTAT(e.StrTo(&buf))
	if err != nil {
		x.Error(err.Error())
		return nil, 0, false
	}
	return e, tat, true
}

// tatExpiry is the absolute expiry in Unix ms of a TAT r stores at now
// (ns); 0 for none.
func tatExpiry(now int64, r gcra.Result) int64 {
	if r.TTLms < 0 {
		return 0
	}
	return now/int64(time.Millisecond) + r.TTLms
}

// writeGCRAReply writes the five integers of a CL.THROTTLE reply.
func writeGCRAReply(x *Ctx, r gcra.Result) {
	x.W.Array(5)
	for _, v := range r.Reply() {
		x.W.Int(v)
	}
}

// storeTAT writes the new TAT of key, whose live entry is e (nil: none):
// as an int when it fits an int64, which a time in ns does until 2262,
// else as its decimal bytes.
func (x *Ctx) storeTAT(key []byte, e *keyspace.Entry, tat uint64, exp int64) {
	switch {
	case tat > math.MaxInt64:
	case e != nil:
		x.SetIntOn(key, e, int64(tat), exp)
		return
	default:
		x.SetInt(key, int64(tat), exp)
		return
	}
	var buf [20]byte
	x.SetString(key, strconv.AppendUint(buf[:0], tat, 10), exp)
}
