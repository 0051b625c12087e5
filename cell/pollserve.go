package cell

import (
	"errors"
	"strings"
)

// Serving requests inside the poller's read callback (sockIO.Serve): a
// connection whose next requests are plain key commands, or MULTI blocks
// of them, reads, runs them and replies there, then waits for its socket
// without the empty read that would otherwise follow every reply at
// pipeline depth 1.
//
// Why the callback stays, rather than a new read operation that waits
// before it reads: starting a read operation (RawConn.Read's
// prepareRead) clears the readiness the poller noted, so a request that
// came after the last read but before that start would never be
// announced again (TestPolledInputDuringOutsideCommand).
//
// Inside the callback nothing may wait for another connection: Close from
// another goroutine (CLIENT KILL, output limits, Shutdown) waits for the
// callback to return, and a wait for a shard held by, say, an EXEC that
// runs CLIENT KILL on this connection would never end. So the callback
// serves only while the connection is in its plain state and only the
// commands that cannot wait by their nature; the two waits left, for a
// shard (callAt, exec) and for CLIENT PAUSE (dispatch), are turned into
// a bail-out when noWait is set: the command is handed, untouched, to the
// ordinary loop, which runs it and may wait there as before.

// errFlushFailed ends the connection when its replies could not be sent.
var errFlushFailed = errors.New("cell: writing the replies failed")

// pollExcluded are the flags of commands that never run inside the
// callback: they wait by nature (blocking pops, WAIT, scripts, MULTI's
// EXEC, pub/sub), change the connection's state (AUTH, HELLO, CLIENT,
// MONITOR) or walk a whole database or several. The exceptions are an
// EVALSHA of a script run natively (polledNative), and MULTI and an EXEC
// of plain key commands (polledExec).
const pollExcluded = FlagBlocking | FlagNoScript | FlagAdmin | FlagPubSub |
	flagWholeDB | flagShardAtATime | flagAllDBs | flagTxn | flagScript | flagChannelKeys

// polledReady says whether c is in the plain state the callback serves:
// no second writer (MONITOR, subscriptions, a replica's stream), replies
// on, and no server-wide wait in force (CLIENT PAUSE, maxmemory's
// eviction, appendfsync always). A transaction may be open: queueing
// waits for nothing, and polledExec says which EXEC runs here.
func (c *Client) polledReady() bool {
	s := c.srv
	return c.out == nil && !c.monitoring && c.ps == nil && c.repl == nil &&
		c.reply == replyOn && !c.replyKeep && !c.asking &&
		s.paused.Load() == nil && !s.fsyncAlways.Load() && !s.maxmemoryApplies()
}

// polledCommand says whether args may run inside the callback.
func (c *Client) polledCommand(args [][]byte) bool {
	cmd := c.cmds.lookup(c.srv, args[0])
	if cmd == nil {
		return true // an error reply
	}
	if cmd.Flags&flagTxn != 0 {
		switch cmd.Name {
		case "multi":
			return true
		case "exec":
			return c.polledExec()
		}
		return false // WATCH, DISCARD: unwatchAll waits for the keys' shards
	}
	if c.multi != nil {
		return true // queued: dispatch's checks, whose waits become bail-outs
	}
	if cmd.Flags&flagScript != 0 {
		return c.polledNative(cmd, args) // native_scripts.go
	}
	return cmd.Sub == nil && polledPlain(cmd)
}

// polledPlain says whether cmd (not a container) waits for nothing by its
// nature when it runs: a key command outside pollExcluded.
func polledPlain(cmd *Command) bool {
	return cmd.Flags&pollExcluded == 0 && cmd.Flags&(FlagWrite|FlagReadonly|FlagFast) != 0 &&
		cmd.Name != "migrate"
}

// polledExec says whether EXEC may run inside the callback: when its
// queue holds only plain key commands (a MULTI block such as W1's) and no
// key is WATCHed, whose end (unwatchAll) would wait for the keys' shards.
// exec takes the queue's shards with TryLock there and hands itself,
// untouched, to the ordinary loop when one is held elsewhere.
func (c *Client) polledExec() bool {
	t := c.multi
	if t == nil {
		return true // an error reply
	}
	if len(c.watched) != 0 {
		return false
	}
	for _, q := range t.cmds {
		if strings.IndexByte(q.cmd.Name, '|') >= 0 || !polledPlain(q.cmd) {
			return false // a subcommand, a script, a blocking pop, an admin command...
		}
	}
	return true
}

// fill waits for more input and reads it: inside the poller's callback,
// serving what may be served there, when c allows it; with the reader's
// Fill otherwise. A command that must run outside is left in pending.
func (c *Client) fill() error {
	if c.loopReady() && c.parkInLoop() { // evloop.go
		return c.sendUnsent()
	}
	if c.sock == nil || c.srv.cfg.NoServeInPoller || !c.polledReady() {
		err := c.rd.Fill()
		if err == nil {
			c.prefetchKeys() // keyhint.go
		}
		return err
	}
	c.fillErr = nil
	if err := c.sock.Serve(c.pollBody); err != nil {
		return err
	}
	return c.sendUnsent()
}

// sendUnsent sends, waiting as long as it takes, the replies the socket
// did not take inside a callback, and returns fill's error.
func (c *Client) sendUnsent() error {
	if c.unsent != nil {
		_, err := c.sock.Write(c.unsent)
		c.unsent = nil
		if err != nil {
			return err
		}
	}
	return c.fillErr
}

// servePolled is the callback's body: read, run the complete requests,
// reply; false to wait for the socket, true to leave the callback, with
// the command to run outside in pending or the connection's end in
// fillErr.
func (c *Client) servePolled() bool {
	for {
		if err := c.rd.Fill(); err == errWouldBlock {
			return false
		} else if err != nil {
			c.fillErr = err
			return true
		}
		c.prefetchKeys()
		if c.runBuffered() {
			return true
		}
		if !c.endBatch() {
			c.fillErr = errFlushFailed
			return true
		}
		if c.unsent != nil {
			return true
		}
		if c.srv.closing.Load() {
			return true
		}
		if !c.sock.full {
			return false // the socket was drained: wait for it
		}
	}
}

// runBuffered runs, inside the callback, the complete requests the input
// holds: false once they are all done, true to leave the callback (as
// servePolled's result).
func (c *Client) runBuffered() bool {
	for {
		args, ok, err := c.rd.Next(c.authed)
		if err != nil {
			c.pendErr = err
			return true
		}
		if !ok {
			return false
		}
		if !c.polledReady() || !c.polledCommand(args) {
			c.pending = args
			return true
		}
		c.noWait = true
		c.run(args)
		c.noWait = false
		if c.wouldWait {
			c.wouldWait = false
			c.pending = args
			return true
		}
		if c.closeAfter {
			return true
		}
		if c.w.Len() > 64<<10 && !c.flush() {
			c.fillErr = errFlushFailed
			return true
		}
		if c.unsent != nil {
			return true // the socket is full: wait outside
		}
	}
}

// next is the next command to run: one the callback handed over, or the
// reader's next.
func (c *Client) next() ([][]byte, bool, error) {
	if args := c.pending; args != nil {
		c.pending = nil
		return args, true, nil
	}
	if err := c.pendErr; err != nil {
		c.pendErr = nil
		return nil, false, err
	}
	return c.rd.Next(c.authed)
}
