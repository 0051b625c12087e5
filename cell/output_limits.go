package cell

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"time"
)

// outputLimits is client-output-buffer-limit for the normal class: the
// replies a client has not read yet. 0 disables a limit.
//
// Redis queues replies without bound and checks these limits as it does;
// cellserver writes each batch of replies before it reads more commands,
// so a client that stops reading stops being served (TCP backpressure)
// and its unsent replies stay within about one batch (64 KiB plus the last
// reply), whatever the limits. The limits then close clients whose unsent
// replies stay large: at once past hard, or after softSec above soft.
type outputLimits struct {
	hard, soft int64
	softSec    int64
	// pubsub is the class of subscribed clients, whose messages are queued
	// for them as in Redis (outsink.go).
	pubsub classLimits
	// replica is the class of replicas' connections (repl_master.go).
	replica classLimits
	// text is the whole parameter as CONFIG GET prints it.
	text string
}

// classLimits is one class's hard and soft limits in bytes (0: none) and
// the soft limit's seconds.
type classLimits struct {
	hard, soft, softSec int64
}

const defaultOutputLimits = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"

// parseOutputLimits validates "class hard soft seconds ..." as Redis's
// CONFIG SET client-output-buffer-limit and returns it with sizes in
// bytes; the classes it does not name keep their values (apply merges).
func parseOutputLimits(v string) (string, string) {
	merged := mergeOutputLimits(defaultOutputLimits, v)
	switch merged {
	case "":
		return "", MsgOutputLimitArgs
	case "!":
		return "", MsgOutputLimitClass
	case "?":
		return "", MsgOutputLimitNumber
	}
	// Only the classes given, normalised: merging them into the default
	// picks their numbers out.
	f, m := strings.Fields(v), strings.Fields(merged)
	var out []string
	for i := 0; i+3 < len(f); i += 4 {
		class := strings.ToLower(f[i])
		if class == "replica" {
			class = "slave"
		}
		for k := 0; k+3 < len(m); k += 4 {
			if m[k] == class {
				out = append(out, m[k:k+4]...)
			}
		}
	}
	return strings.Join(out, " "), ""
}

// mergeOutputLimits applies the classes set in v over base (both in the
// CONFIG GET form). It returns "" for a wrong word count, "!" for an
// unknown class and "?" for a bad number, the caller's cue for the error.
func mergeOutputLimits(base, v string) string {
	if base == "" {
		base = defaultOutputLimits
	}
	f := strings.Fields(v)
	if len(f) == 0 || len(f)%4 != 0 {
		return ""
	}
	cur := strings.Fields(base)
	for i := 0; i < len(f); i += 4 {
		class := strings.ToLower(f[i])
		switch class {
		case "replica":
			class = "slave"
		case "normal", "slave", "pubsub":
		default:
			return "!"
		}
		var nums [3]string
		for j := 0; j < 3; j++ {
			var n int64
			var ok bool
			if j < 2 {
				n, ok = ParseMemory(f[i+1+j])
			} else {
				var err error
				n, err = strconv.ParseInt(f[i+1+j], 10, 64)
				ok = err == nil && n >= 0
			}
			if !ok {
				return "?"
			}
			nums[j] = itoa(n)
		}
		for k := 0; k+3 < len(cur); k += 4 {
			if cur[k] == class {
				copy(cur[k+1:k+4], nums[:])
			}
		}
	}
	return strings.Join(cur, " ")
}

// replicaLimits is the replica class of client-output-buffer-limit, for
// c, a replica's connection.
func replicaLimits(c *Client) classLimits { return c.srv.ops.outLimit.Load().replica }

// setOutputLimits makes a validated parameter value live.
func (s *Server) setOutputLimits(v string) {
	f := strings.Fields(v)
	l := &outputLimits{text: v}
	for k := 0; k+3 < len(f); k += 4 {
		var cl classLimits
		cl.hard, _ = strconv.ParseInt(f[k+1], 10, 64)
		cl.soft, _ = strconv.ParseInt(f[k+2], 10, 64)
		cl.softSec, _ = strconv.ParseInt(f[k+3], 10, 64)
		switch f[k] {
		case "normal":
			l.hard, l.soft, l.softSec = cl.hard, cl.soft, cl.softSec
		case "pubsub":
			l.pubsub = cl
		case "slave":
			l.replica = cl
		}
	}
	s.ops.outLimit.Store(l)
}

// writeLimited writes b under the output buffer limits: it refuses to
// start past the hard limit and gives up when more than soft bytes have
// stayed unsent for softSec. It reports whether everything was written.
func (c *Client) writeLimited(b []byte, l *outputLimits) bool {
	if l.hard > 0 && int64(len(b)) > l.hard {
		c.srv.log.Warn("closing client that reached max output buffer length",
			"id", c.id, "addr", c.addr, "pending", len(b), "class", "normal")
		return false
	}
	const chunk = 16 << 10
	var over time.Time // when the unsent bytes went above soft
	for len(b) > 0 {
		dl := time.Time{}
		if l.soft > 0 && int64(len(b)) > l.soft {
			if over.IsZero() {
				over = time.Now()
			}
			dl = over.Add(time.Duration(l.softSec) * time.Second)
		} else {
			over = time.Time{}
		}
		c.nc.SetWriteDeadline(dl)
		n, err := c.nc.Write(b[:min(len(b), chunk)])
		b = b[n:]
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.srv.log.Warn("closing client that reached max output buffer length",
					"id", c.id, "addr", c.addr, "pending", len(b), "class", "normal")
			}
			return false
		}
	}
	c.nc.SetWriteDeadline(time.Time{})
	return true
}

// flushOps writes the pending replies, under output limits when some are
// set. It replaces a plain Write in Client.flush.
func (c *Client) flushOps() bool {
	if l := c.srv.ops.outLimit.Load(); l != nil && (l.hard > 0 || l.soft > 0) {
		return c.writeLimited(c.w.Bytes(), l)
	}
	var err error
	if c.sock != nil && c.sock.inside {
		// Inside a read callback (pollserve.go, evloop.go) nothing waits
		// for the socket: what it does not take now, fill sends outside.
		b := c.w.Bytes()
		n, werr := c.sock.WriteNow(b)
		if werr == errWouldBlock {
			c.unsent = append([]byte(nil), b[n:]...)
			werr = nil
		}
		err = werr
	} else if c.sock != nil {
		_, err = c.sock.Write(c.w.Bytes())
	} else {
		_, err = c.nc.Write(c.w.Bytes())
	}
	return err == nil
}
