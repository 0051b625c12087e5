package cell

import (
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

func init() {
	register(&Command{Name: "cl.window", Arity: -4, Flags: FlagWrite | FlagModule | FlagFast, FirstKey: 1, LastKey: 1, Handler: clWindow,
		Doc: &CommandDoc{Summary: "Decides one call of a sliding-window log limit and records it when allowed", Complexity: "O(1) amortized; O(N) for a refused call, where N is the number of distinct milliseconds in the window"}})
}

// clWindow is our CL.WINDOW key limit window_ms [cost]: a sliding-window
// log in one value (keyspace.Window). With now the wall clock in ms, the
// events admitted at times after now-window_ms are counted; the call is
// allowed iff they plus cost fit in limit, and then cost events are
// recorded at now. Reply: [limited, limit, remaining, retry_after_ms,
// reset_ms]. These are W1's decisions with one member per event and a
// refused call's members taken back (TestWindowMatchesW1): a refused call
// logs nothing, and calls in one millisecond are as many events.
func clWindow(x *Ctx) {
	x.countThrottle(limWindow, windowCall(x))
}

// windowCall runs CL.WINDOW and reports whether the call was limited.
func windowCall(x *Ctx) (limited bool) {
	if len(x.Args) > 5 {
		x.Error(ErrSyntax)
		return false
	}
	cost := int64(1)
	vals := [3]*int64{new(int64), new(int64), &cost}
	for i, a := range x.Args[2:] {
		v, ok := resp.ParseInt(a)
		if !ok {
			x.Error(ErrNotInteger)
			return false
		}
		*vals[i] = v
	}
	limit, window := *vals[0], *vals[1]
	switch {
	case limit < 0:
		x.Error(ErrWindowLimit)
		return false
	case window <= 0 || window > maxWindowMs:
		x.Error(ErrWindowSpan)
		return false
	case cost < 0:
		x.Error(ErrWindowCost)
		return false
	}
	key := x.Args[1]
	e := x.Lookup(key)
	var w *keyspace.Window
	if e != nil {
		var ok bool
		if w, ok = e.Obj().(*keyspace.Window); !ok {
			x.Error(ErrWrongType)
			return false
		}
	}
	now := x.limiterNow() / int64(time.Millisecond)
	fresh := w == nil
	if fresh {
		w = new(keyspace.Window)
	}
	d := w.Decide(now, window, limit, cost)
	exp := d.Newest + window
	switch {
	case w.Empty():
		if !fresh {
			x.Remove(key)
		}
	case fresh:
		x.SetObject(key, w, exp)
	default:
		// The key expires window_ms after its newest event, window_ms
		// being this call's (a call with another window moves it).
		if e.Exp != exp {
			x.SetExpire(key, e, exp)
		}
		if d.Changed {
			x.Touched(key)
		}
	}
	x.W.Array(5)
	if d.Limited {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
	x.W.Int(limit)
	x.W.Int(d.Remaining)
	x.W.Int(d.RetryAfter)
	x.W.Int(d.Reset)
	return d.Limited
}

// maxWindowMs bounds window_ms to 100 years, so that times plus the window
// stay far inside an int64 of ms.
const maxWindowMs = 100 * 365 * 24 * 3600 * 1000
