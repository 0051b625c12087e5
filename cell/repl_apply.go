package cell

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/cellserver/cellserver/resp"
)

// How a replica applies its master's stream. What the master sends is
// read into one buffer and applied a batch at a time (all the whole
// commands a read brought), as the master client, whose replies nobody
// reads:
//
//   - A command runs through callAt, the part of dispatch that locks,
//     runs, commits (effect log) and counts (INFO commandstats), without
//     dispatch's checks when none of them can apply to the master client
//     (streamChecksIdle): no ACL, auth, cluster, read-only or pub/sub
//     check is ever made for it, and the others (maxmemory, MISCONF,
//     CLIENT PAUSE, loading, busy scripts) are only skipped while they
//     have nothing to say. Otherwise, and for anything unexpected, the
//     command goes through dispatch as before.
//   - A MULTI ... EXEC block is applied once the whole block has arrived:
//     MULTI and EXEC run through callAt, the commands between are queued
//     as they are in the read buffer (no copy, no QUEUED reply), and EXEC
//     runs them as one execution with their shards locked once.
//   - What a batch applied is fed on to our own backlog and replicas in
//     one piece, byte for byte as it came, and only then counted in our
//     offset: as Redis 7.0 does (its master client's reploff moves at
//     the end of a command, not inside MULTI), the offset, our ACKs and
//     a partial resync after a drop never stand inside a transaction.
//   - REPLCONF GETACK answers with the offset of what came before it.

// streamBufMin is the read buffer's size; it grows for a command or a
// MULTI block bigger than that, and shrinks back once that is applied.
const streamBufMin = 64 << 10

// applyStream applies the master's stream from br until it fails, and
// acknowledges the offset every second.
func (l *replLink) applyStream(br *bufio.Reader) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	acks := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				l.sendAck()
			case <-acks:
				return
			}
		}
	}()
	defer close(acks)
	l.sendAck()
	var a streamApplier
	buf := make([]byte, 0, streamBufMin)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := br.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			buf = buf[:len(buf)+n]
			now := time.Now()
			l.lastIO.Store(now.Unix())
			l.readOff.Add(int64(n))
			used, aerr := a.apply(l, buf, now)
			if aerr != nil {
				return aerr
			}
			rest := copy(buf, buf[used:])
			if cap(buf) > streamBufMin && rest < streamBufMin/2 {
				buf = append(make([]byte, 0, streamBufMin), buf[:rest]...)
			}
			buf = buf[:rest]
		}
		if err != nil {
			return err
		}
	}
}

// streamApplier is applyStream's scratch: the parsed arguments, pointing
// into the read buffer, and where each command of a block starts in them.
type streamApplier struct {
	argv   [][]byte
	starts []int
	cmds   []*Command // each command's streamLookup
}

// apply applies the whole commands at the start of buf, feeds them on
// and counts them in the offset, and returns how many bytes that was: a
// command or MULTI block cut short stays for the next read.
func (a *streamApplier) apply(l *replLink, buf []byte, now time.Time) (int, error) {
	l.applyMu.Lock()
	defer l.applyMu.Unlock()
	c := l.masterClient()
	c.lastActive.Store(now.UnixMilli())
	c.clock.idle() // the wait for this read belongs to no command
	fed, p := 0, 0
	var err error
	for p < len(buf) {
		var n int
		a.argv, n, err = parseStreamCommand(buf[p:], a.argv[:0])
		if err != nil || n == 0 {
			break
		}
		args := a.argv
		if isGetack(args) {
			l.feed(buf[fed:p])
			fed = p
			l.sendAck()
			c.countGetack(args)
			p += n
			continue
		}
		cmd := c.streamLookup(args)
		if cmd == nil || cmd.Name != "multi" || len(args) != 1 {
			c.applyStreamCommand(cmd, args)
			p += n
			continue
		}
		end, whole, berr := a.parseBlock(c, buf, p)
		if berr != nil {
			err = berr
			break
		}
		if end == 0 {
			break // the block has not all arrived
		}
		a.applyBlock(l, c, whole)
		p = end
	}
	l.feed(buf[fed:p])
	c.tally.flush(c) // INFO shows what was applied
	c.publish()
	return p, err
}

// parseBlock parses the MULTI block at buf[p:] into a.argv, each
// command's start in a.starts, up to the EXEC or DISCARD that ends it,
// and returns the offset in buf after it (0: not all there yet) and
// whether the block can be applied whole (every command known, of the
// right arity, not one that MULTI refuses or that ends it early).
func (a *streamApplier) parseBlock(c *Client, buf []byte, p int) (end int, whole bool, err error) {
	a.argv, a.starts, a.cmds = a.argv[:0], a.starts[:0], a.cmds[:0]
	whole = true
	for {
		if p >= len(buf) {
			return 0, false, nil
		}
		at := len(a.argv)
		var n int
		a.argv, n, err = parseStreamCommand(buf[p:], a.argv)
		if err != nil || n == 0 {
			return 0, false, err
		}
		p += n
		args := a.argv[at:]
		cmd := c.streamLookup(args)
		a.starts, a.cmds = append(a.starts, at), append(a.cmds, cmd)
		if len(a.starts) == 1 {
			continue // the MULTI
		}
		switch {
		case cmd == nil:
			whole = false
		case cmd.Name == "exec" || cmd.Name == "discard":
			return p, whole && cmd.Name == "exec" && len(args) == 1, nil
		case cmd.Flags&(flagTxn|FlagNoMulti|flagScript) != 0 || isGetack(args):
			whole = false
		}
	}
}

// command is the i-th command of the block parseBlock parsed.
func (a *streamApplier) command(i int) [][]byte {
	end := len(a.argv)
	if i+1 < len(a.starts) {
		end = a.starts[i+1]
	}
	return a.argv[a.starts[i]:end:end]
}

// applyBlock applies the MULTI block parseBlock parsed: whole, as one
// execution; otherwise, or while dispatch's checks have something to say,
// command by command through dispatch, as any client's.
func (a *streamApplier) applyBlock(l *replLink, c *Client, whole bool) {
	last := len(a.starts) - 1
	multiArgs, execArgs := a.command(0), a.command(last)
	multiCmd, execCmd := a.cmds[0], a.cmds[last]
	if !whole || !c.streamChecksIdle(multiCmd) || !c.streamChecksIdle(execCmd) {
		for i := range last + 1 {
			args := a.command(i)
			if isGetack(args) {
				l.sendAck()
				c.countGetack(args)
				continue
			}
			c.dispatch(args)
			c.w.Reset()
		}
		return
	}
	mono, wall := c.clock.read()
	c.callAt(multiCmd, multiArgs, mono, wall)
	for i := 1; i < last; i++ {
		c.txn.addInPlace(a.cmds[i], a.command(i))
	}
	mono, wall = c.clock.read()
	c.callAt(execCmd, execArgs, mono, wall)
	c.w.Reset()
}

// applyStreamCommand runs one command of the stream (cmd: its
// streamLookup), its reply dropped.
func (c *Client) applyStreamCommand(cmd *Command, args [][]byte) {
	if cmd == nil || cmd.Flags&flagTxn != 0 || !c.streamChecksIdle(cmd) {
		c.dispatch(args)
	} else {
		mono, wall := c.clock.read()
		c.callAt(cmd, args, mono, wall)
	}
	c.w.Reset()
}

// streamChecksIdle reports whether every check dispatch makes before
// callAt would let cmd through for c, the master client, outside MULTI:
// then callAt may run it directly. A check added to dispatch that can
// refuse or hold the master's commands must be added here.
func (c *Client) streamChecksIdle(cmd *Command) bool {
	s := c.srv
	return c.authed && c.multi == nil && c.user.open.Load() && !c.monitoring && c.ps == nil &&
		!s.maxmemoryApplies() && s.repl.minToWrite.Load() == 0 && s.busyScripts.Load() == 0 &&
		!s.loading.Load() && s.paused.Load() == nil &&
		(s.store == nil && !s.bgsaveFailed.Load() || s.writesDenied() == "") &&
		c.repl != nil && c.repl.master && cmd != nil
}

// streamLookup is cmd's table entry as dispatch finds it (rename-command
// applied, subcommand resolved), or nil where dispatch would refuse it
// as unknown or of the wrong arity.
func (c *Client) streamLookup(args [][]byte) *Command {
	cmd := c.cmds.lookup(c.srv, args[0])
	if cmd == nil {
		return nil
	}
	if cmd.Sub != nil && len(args) >= 2 {
		if cmd = lookupCommand(cmd.Sub, args[1]); cmd == nil {
			return nil
		}
	}
	if !cmd.arityOK(len(args)) {
		return nil
	}
	return cmd
}

// addInPlace queues a command of the master's MULTI block with its
// arguments where they are, in the stream's read buffer, which keeps them
// until EXEC has run.
func (t *txn) addInPlace(cmd *Command, args [][]byte) {
	t.cmds = append(t.cmds, queued{cmd, args})
	t.writes = t.writes || cmd.Flags&FlagWrite != 0
}

// countGetack counts a REPLCONF GETACK the link answered itself in INFO
// commandstats, as Redis counts its master's REPLCONF.
func (c *Client) countGetack(args [][]byte) {
	if cmd := c.streamLookup(args); cmd != nil {
		c.record(cmd, args, false, 0)
	}
}

// feed passes b, stream just applied, on to our backlog and replicas and
// counts it in our offset. applyMu is held.
func (l *replLink) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	l.srv.feedFromMaster(b)
	l.off.Add(int64(len(b)))
}

// isGetack reports whether args are REPLCONF GETACK.
func isGetack(args [][]byte) bool {
	return len(args) >= 2 && strings.EqualFold(string(args[0]), "replconf") && strings.EqualFold(string(args[1]), "getack")
}

// parseStreamCommand parses the RESP array of bulks at the start of b,
// blank keepalive lines before it included, appending its arguments
// (slices of b) to argv, and returns how many bytes it took; 0 if b does
// not hold all of it yet.
func parseStreamCommand(b []byte, argv [][]byte) ([][]byte, int, error) {
	p := 0
	var line []byte
	for {
		i := bytes.IndexByte(b[p:], '\n')
		if i < 0 {
			return argv, 0, nil
		}
		line = b[p : p+i+1]
		p += i + 1
		if len(bytes.TrimSpace(line)) != 0 {
			break
		}
	}
	count, ok := streamInt(line, '*')
	if !ok || count < 1 || count > 1<<20 {
		return argv, 0, fmt.Errorf("replication stream: bad array %q", line)
	}
	base := len(argv)
	for range count {
		i := bytes.IndexByte(b[p:], '\n')
		if i < 0 {
			return argv[:base], 0, nil
		}
		h := b[p : p+i+1]
		size, ok := streamInt(h, '$')
		if !ok || size < 0 {
			return argv[:base], 0, fmt.Errorf("replication stream: bad bulk %q", h)
		}
		p += i + 1
		if len(b)-p < size+2 {
			return argv[:base], 0, nil
		}
		argv = append(argv, b[p:p+size:p+size])
		p += size + 2
	}
	return argv, p, nil
}

// streamInt reads a header line, kind then a decimal number and CRLF (or
// LF), as "*3\r\n" or "$5\r\n".
func streamInt(line []byte, kind byte) (int, bool) {
	if len(line) < 2 || line[0] != kind {
		return 0, false
	}
	digits := line[1 : len(line)-1] // the LF
	if len(digits) > 0 && digits[len(digits)-1] == '\r' {
		digits = digits[:len(digits)-1]
	}
	n, ok := resp.ParseInt(digits) // as Redis's string2ll reads them
	return int(n), ok
}
