package cell

import (
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

// Ctx is one command's execution: its arguments, its client, where its
// reply goes, and its keyspace.Tx, through which alone handlers reach the
// keys, with the command's shards already locked. The Tx's clock is the
// time for expiry, in Unix ms: read once per command, once for a whole
// EXEC (Redis freezes time there too).
type Ctx struct {
	keyspace.Tx
	srv    *Server
	cl     *Client
	cmd    *Command
	Args   [][]byte
	W      *resp.Writer
	failed bool // the reply was an error (INFO commandstats failed_calls)
	// stepping: the command locks shards one at a time itself
	// (flagShardAtATime); busy: a script held one, so callAt answers BUSY.
	stepping, busy bool
	// inScript: a script called the command (Redis's CLIENT_SCRIPT).
	inScript bool
	// wallNs is the wall clock in Unix ns when the command started, read
	// by dispatch or EXEC for each command; 0 in scripts, whose commands
	// read the clock themselves (wallNow).
	wallNs int64
	// monoNs is monoNow when the command started, beside wallNs (0
	// where wallNs is).
	monoNs int64
}

// wallNow is the wall clock in Unix ns for a command that reads it per
// call (CL.THROTTLE, as redis-cell): the reading its caller took when it
// has one, else a fresh one.
func (x *Ctx) wallNow() int64 {
	if x.wallNs != 0 {
		return x.wallNs
	}
	return time.Now().UnixNano()
}

// Error replies with a Redis error text ("ERR ...", "WRONGTYPE ...").
func (x *Ctx) Error(msg string) {
	x.W.Error(msg)
	x.failed = true
	x.srv.stats.countError(msg)
}

// limiterNow is the wall clock in Unix ns for the rate limiting commands:
// wallNow, unless a test set the server's limiter clock to decide at a
// chosen instant (limiterState.fixedNow).
func (x *Ctx) limiterNow() int64 {
	if t := x.srv.limiters.fixedNow.Load(); t != 0 {
		return t
	}
	return x.wallNow()
}
