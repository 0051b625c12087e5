package cell

import (
	"strconv"
	"strings"
	"sync/atomic"
)

// limiterState is the server's view of its rate limiters.
type limiterState struct {
	// fixedNow, when a test sets it, is the wall clock in Unix ns the
	// limiter commands decide at (Ctx.limiterNow); 0: the real one.
	fixedNow atomic.Int64
}

// limiterCmd indexes the rate limiting commands in their outcome counters
// (throttleCounters, metrics.go).
type limiterCmd int

const (
	limThrottle limiterCmd = iota
	limProbe
	limThrottleAll
	limProbeAll
	limWindow
	limiterCmds
)

// limiterCmdNames are the commands' names, by limiterCmd.
var limiterCmdNames = [limiterCmds]string{"cl.throttle", "cl.probe", "cl.throttleall", "cl.probeall", "cl.window"}

// infoLimiters is INFO's limiters section (ours; asked for by name): per
// command, the calls allowed, limited and answered with an error, as
// limiter_<cmd>:allowed=N,limited=N,errors=N with the dot an underscore.
func infoLimiters(s *Server, _ *Ctx, b *strings.Builder) {
	for i, name := range limiterCmdNames {
		c := &s.obs.throttle[i]
		b.WriteString("limiter_" + strings.ReplaceAll(name, ".", "_") + ":allowed=")
		b.WriteString(strconv.FormatInt(c[throttleAllowed].Load(), 10))
		b.WriteString(",limited=")
		b.WriteString(strconv.FormatInt(c[throttleLimited].Load(), 10))
		b.WriteString(",errors=")
		b.WriteString(strconv.FormatInt(c[throttleError].Load(), 10))
		b.WriteString("\r\n")
	}
}
