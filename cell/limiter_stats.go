package cell

import "sync/atomic"

// limiterState is the server's view of its rate limiters.
type limiterState struct {
	// fixedNow, when a test sets it, is the wall clock in Unix ns the
	// limiter commands decide at (Ctx.limiterNow); 0: the real one.
	fixedNow atomic.Int64
}

// countWindow records the outcome of one CL.WINDOW call.
func (x *Ctx) countWindow(limited bool) {}
