package cell

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The slow log, MONITOR and the latency monitor all look at a command after
// it ran. They share one gate so that a server using none of them pays a
// single atomic load and comparison per command (record, dispatch.go):
//
//	gate = 0                       while a MONITOR client is attached
//	     = min(slowlog threshold, latency-monitor threshold) in ns otherwise
//	     = MaxInt64                when everything is off
//
// A command whose duration reaches the gate takes the slow path (observe),
// which checks each feature on its own. The thresholds live in atomics that
// CONFIG SET changes; every change recomputes the gate under mu.

// observer is the server's slow log, MONITOR and latency monitor state.
type observer struct {
	gate atomic.Int64 // ns; see above

	mu               sync.Mutex   // serializes recomputing gate
	slowlogThreshold atomic.Int64 // µs; negative: slow log off
	slowlogMaxLen    atomic.Int64
	latencyThreshold atomic.Int64 // ms; 0: latency monitor off

	slowlog  slowlog      // slowlog.go
	monitors monitorSet   // monitor.go
	latency  latencyTable // cmd_latency.go

	throttle throttleCounters // metrics.go
}

// init sets Redis's defaults; CONFIG SET changes them.
func (o *observer) init() {
	o.slowlogThreshold.Store(10000)
	o.slowlogMaxLen.Store(128)
	o.latency.events = map[string]*latencySeries{}
	o.updateGate()
}

// updateGate recomputes the gate from the current settings.
func (o *observer) updateGate() {
	o.mu.Lock()
	defer o.mu.Unlock()
	g := int64(math.MaxInt64)
	if t := o.slowlogThreshold.Load(); t >= 0 {
		g = min(g, scaleCapped(t, int64(time.Microsecond)))
	}
	if t := o.latencyThreshold.Load(); t > 0 {
		g = min(g, scaleCapped(t, int64(time.Millisecond)))
	}
	if o.monitors.count.Load() > 0 {
		g = 0
	}
	o.gate.Store(g)
}

// scaleCapped is n*unit, or MaxInt64 where that overflows.
func scaleCapped(n, unit int64) int64 {
	if n > math.MaxInt64/unit {
		return math.MaxInt64
	}
	return n * unit
}

// observe is the slow path of record: the command ran for d and reached
// the gate. It feeds the slow log, the latency monitor and MONITOR, in
// Redis's order (call() in server.c).
func (c *Client) observe(cmd *Command, args [][]byte, d time.Duration) {
	o := &c.srv.obs
	o.observe(c, cmd, args, d)
	if o.monitors.count.Load() > 0 && cmd.Flags&(FlagSkipMonitor|FlagAdmin) == 0 {
		c.feedMonitors(cmd, args)
	}
}

// observe feeds the latency monitor and the slow log with a command that
// ran for d, past the gate (record and scripts check it, the one gate of
// every observer). c is the client that ran it; nil for a script's
// command, which the slow log shows as Redis's Lua client ("?:0", no
// name).
func (o *observer) observe(c *Client, cmd *Command, args [][]byte, d time.Duration) {
	us := int64(d / time.Microsecond)
	if t := o.latencyThreshold.Load(); t > 0 && us/1000 >= t {
		event := "command"
		if cmd.Flags&FlagFast != 0 {
			event = "fast-command"
		}
		o.latency.add(event, us/1000)
	}
	if cmd.Flags&FlagSkipSlowlog != 0 {
		return
	}
	if t := o.slowlogThreshold.Load(); t >= 0 && us >= t {
		if c == nil {
			o.slowlog.pushFrom("?:0", "", cmd, args, us, o.slowlogMaxLen.Load())
		} else {
			o.slowlog.push(c, cmd, args, us, o.slowlogMaxLen.Load())
		}
	}
}

// redactedArg is what Redis shows in place of a secret argument.
const redactedArg = "(redacted)"

// redactions marks the arguments that the slow log and MONITOR must not
// show, as Redis's commands do with redactClientCommandArgument: every
// argument of AUTH, the user and password of HELLO's AUTH option (once
// HELLO's protocol version parsed), and the value of a sensitive parameter
// in CONFIG SET. It returns nil when nothing is secret.
func redactions(cmd *Command, args [][]byte) []bool {
	var r []bool
	mark := func(i int) {
		if i >= len(args) {
			return
		}
		if r == nil {
			r = make([]bool, len(args))
		}
		r[i] = true
	}
	switch cmd.Name {
	case "auth":
		for i := 1; i < len(args); i++ {
			mark(i)
		}
	case "hello":
		if len(args) >= 2 {
			v, err := strconv.ParseInt(string(args[1]), 10, 64)
			if err != nil || !canonicalInt(string(args[1])) || v < 2 || v > 3 {
				return nil
			}
		}
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch opt := string(args[j]); {
			case strings.EqualFold(opt, "auth") && more >= 2:
				mark(j + 1)
				mark(j + 2)
				j += 2
			case strings.EqualFold(opt, "setname") && more >= 1:
				j++
			default:
				return r
			}
		}
	case "config|set":
		if len(args)%2 != 0 {
			return nil
		}
		for j := 2; j+1 < len(args); j += 2 {
			if n := string(args[j]); strings.EqualFold(n, "requirepass") || strings.EqualFold(n, "masterauth") {
				mark(j + 1)
			}
		}
	}
	return r
}
