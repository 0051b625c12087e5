package integration_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A pair is one client of redis-server and one of cellserver, driven in step.
// Its methods send the same command to both and compare the replies; a
// difference is reported with t.Error (the test goes on), a broken
// connection with t.Fatal.
type pair struct {
	t     testing.TB
	srv   *servers
	proto int // 2 or 3
	redis *respConn
	cell  *respConn
}

// newPair connects to the shared servers in RESP2, after a FLUSHALL on both.
func newPair(t testing.TB) *pair {
	t.Helper()
	c := connectPair(t, sharedServers(t), 2)
	c.Do("FLUSHALL")
	return c
}

// newPair3 is newPair switched to RESP3 with HELLO 3.
func newPair3(t testing.TB) *pair {
	t.Helper()
	c := newPair(t)
	c.DoMasked(maskHello, "HELLO", "3")
	c.proto = 3
	return c
}

// newPairOn connects to servers started by the test (startServers), without
// sending anything.
func newPairOn(t testing.TB, s *servers) *pair {
	t.Helper()
	return connectPair(t, s, 2)
}

// forBothProtocols runs fn twice, as subtests RESP2 and RESP3, each with a
// fresh pair on an empty keyspace.
func forBothProtocols(t *testing.T, fn func(t *testing.T, c *pair)) {
	t.Helper()
	t.Run("RESP2", func(t *testing.T) { fn(t, newPair(t)) })
	t.Run("RESP3", func(t *testing.T) { fn(t, newPair3(t)) })
}

// ownPair starts a fresh pair of servers and connects to them in proto:
// for tests of server-wide state (users, INFO's memory figures) that
// other tests must not touch.
func ownPair(t *testing.T, proto int, opt serverOptions) *pair {
	t.Helper()
	c := newPairOn(t, startServers(t, opt))
	if proto == 3 {
		c.DoMasked(maskHello, "HELLO", "3")
		c.proto = 3
	}
	return c
}

// forBothProtocolsOwn runs fn in RESP2 and RESP3, each on new servers.
func forBothProtocolsOwn(t *testing.T, opt serverOptions, fn func(t *testing.T, c *pair)) {
	t.Helper()
	t.Run("RESP2", func(t *testing.T) { fn(t, ownPair(t, 2, opt)) })
	t.Run("RESP3", func(t *testing.T) { fn(t, ownPair(t, 3, opt)) })
}

func connectPair(t testing.TB, s *servers, proto int) *pair {
	t.Helper()
	redis, err := dialRESP(s.redis.addr)
	if err != nil {
		t.Fatalf("connecting to %s: %v", s.redis.name, err)
	}
	cell, err := dialRESP(s.cell.addr)
	if err != nil {
		redis.Close()
		t.Fatalf("connecting to %s: %v%s", s.cell.name, err, deathNote(s.cell))
	}
	t.Cleanup(func() {
		redis.Close()
		cell.Close()
	})
	return &pair{t: t, srv: s, proto: proto, redis: redis, cell: cell}
}

// OtherClient opens a second pair of connections to the same servers, in the
// same protocol, without flushing: the other client in WATCH or expiry tests.
func (c *pair) OtherClient() *pair {
	c.t.Helper()
	o := connectPair(c.t, c.srv, 2)
	if c.proto == 3 {
		o.DoMasked(maskHello, "HELLO", "3")
		o.proto = 3
	}
	return o
}

// Replies sends args to both servers and returns both raw replies without
// comparing them.
func (c *pair) Replies(args ...string) (redis, cell []byte) {
	c.t.Helper()
	return c.exchange(formatCommand(args), encodeCommand(args...))
}

// exchange writes the same bytes to both servers and reads one reply from
// each. Both are asked at once, so time-sensitive sequences see the same
// moment on both servers.
func (c *pair) exchange(what string, req []byte) (redis, cell []byte) {
	c.t.Helper()
	var wg sync.WaitGroup
	var redisErr, cellErr error
	ask := func(conn *respConn, reply *[]byte, err *error) {
		defer wg.Done()
		if *err = conn.WriteRaw(req); *err == nil {
			*reply, *err = conn.ReadReply()
		}
	}
	wg.Add(2)
	go ask(c.redis, &redis, &redisErr)
	go ask(c.cell, &cell, &cellErr)
	wg.Wait()
	if redisErr != nil {
		c.t.Fatalf("%s\n  %s: %v after %s", what, c.srv.redis.name, redisErr, strconv.Quote(string(redis)))
	}
	if cellErr != nil {
		c.t.Fatalf("%s\n  %s: %v after %s\n  redis-server replied %s%s",
			what, c.srv.cell.name, cellErr, strconv.Quote(string(cell)), strconv.Quote(string(redis)), deathNote(c.srv.cell))
	}
	return redis, cell
}

// Do sends args to both servers and requires byte-identical replies.
func (c *pair) Do(args ...string) {
	c.t.Helper()
	redis, cell := c.Replies(args...)
	if !bytes.Equal(redis, cell) {
		c.mismatch(formatCommand(args), redis, cell)
	}
}

// Error is Do for commands that must fail: it also checks that redis-server
// replied with an error, which catches a wrong expectation in the test.
func (c *pair) Error(args ...string) {
	c.t.Helper()
	redis, cell := c.Replies(args...)
	if len(redis) == 0 || (redis[0] != '-' && redis[0] != '!') {
		c.t.Errorf("%s\n  expected an error, but redis-server replied %s", formatCommand(args), strconv.Quote(string(redis)))
	}
	if !bytes.Equal(redis, cell) {
		c.mismatch(formatCommand(args), redis, cell)
	}
}

// DoPipeline writes all the commands to each server in one write, as a
// pipelining client does, then reads and compares one reply per command.
func (c *pair) DoPipeline(cmds ...[]string) {
	c.t.Helper()
	var req []byte
	var what []string
	for _, args := range cmds {
		req = append(req, encodeCommand(args...)...)
		what = append(what, formatCommand(args))
	}
	for _, side := range []*respConn{c.redis, c.cell} {
		if err := side.WriteRaw(req); err != nil {
			c.t.Fatal(err)
		}
	}
	for i := range cmds {
		redis, err := c.redis.ReadReply()
		if err != nil {
			c.t.Fatalf("%s: %s: %v", what[i], c.srv.redis.name, err)
		}
		cell, err := c.cell.ReadReply()
		if err != nil {
			c.t.Fatalf("%s: %s: %v%s", what[i], c.srv.cell.name, err, deathNote(c.srv.cell))
		}
		if string(redis) != string(cell) {
			c.mismatch("pipelined "+what[i], redis, cell)
		}
	}
}

// DoInline sends line (plus CRLF) as an inline command to both servers and
// compares one reply from each.
func (c *pair) DoInline(line string) {
	c.t.Helper()
	what := "inline " + strconv.Quote(line)
	redis, cell := c.exchange(what, []byte(line+"\r\n"))
	if !bytes.Equal(redis, cell) {
		c.mismatch(what, redis, cell)
	}
}

// DoSorted compares the replies after sorting what Redis leaves unordered:
// sets, maps, and arrays of scalars at any depth (see value.sorted). For
// KEYS, SMEMBERS, SCAN and the like.
func (c *pair) DoSorted(args ...string) {
	c.t.Helper()
	c.compareParsed(args, "sorted", func(v *value) []byte { return v.sorted().encode() })
}

// DoLoosely compares only the shape of the replies: types, nulls and element
// counts, not contents. For RANDOMKEY, SRANDMEMBER and such.
func (c *pair) DoLoosely(args ...string) {
	c.t.Helper()
	c.compareParsed(args, "shape", func(v *value) []byte { return []byte(v.shape()) })
}

// DoMasked compares the replies after applying m to each. Masks are narrow:
// each replaces only the fields it names, and only when they look right.
func (c *pair) DoMasked(m mask, args ...string) {
	c.t.Helper()
	c.compareParsed(args, "masked", func(v *value) []byte { m(v); return v.encode() })
}

// compareParsed parses both replies and compares them after view.
func (c *pair) compareParsed(args []string, how string, view func(*value) []byte) {
	c.t.Helper()
	redis, cell := c.Replies(args...)
	if bytes.Equal(redis, cell) {
		return
	}
	rv, err := parseReply(redis)
	if err != nil {
		c.t.Fatalf("%s: cannot parse redis-server's reply %s: %v", formatCommand(args), strconv.Quote(string(redis)), err)
	}
	cv, err := parseReply(cell)
	if err != nil {
		c.t.Fatalf("%s: cannot parse the reply %s: %v", formatCommand(args), strconv.Quote(string(cell)), err)
	}
	rs, cs := view(rv), view(cv)
	if !bytes.Equal(rs, cs) {
		c.mismatch(fmt.Sprintf("%s (%s)", formatCommand(args), how), rs, cs)
	}
}

// ExpectClosed checks that both servers close the connection without sending
// anything more, as after QUIT.
func (c *pair) ExpectClosed() {
	c.t.Helper()
	for _, side := range []struct {
		name string
		conn *respConn
	}{{c.srv.redis.name, c.redis}, {c.srv.cell.name, c.cell}} {
		data, closed, err := side.conn.ReadUntilClose(2 * time.Second)
		if err != nil || !closed || len(data) > 0 {
			c.t.Errorf("%s: expected the connection to close; got %s, closed=%v, err=%v",
				side.name, strconv.Quote(string(data)), closed, err)
		}
	}
}

// Sleep pauses the sequence, for expiry tests.
func (c *pair) Sleep(d time.Duration) {
	time.Sleep(d)
}

func (c *pair) mismatch(what string, redis, cell []byte) {
	c.t.Helper()
	c.t.Errorf("%s\n%s", what, describeDiff(c.srv.redis.name, redis, c.srv.cell.name, cell))
}

// describeDiff shows both replies quoted; long ones around their first
// difference.
func describeDiff(nameA string, a []byte, nameB string, b []byte) string {
	const whole, context = 1000, 200
	show := func(x []byte, from int) string {
		if len(a) <= whole && len(b) <= whole {
			return strconv.Quote(string(x))
		}
		lo, hi := max(0, from-context), min(len(x), from+context)
		return fmt.Sprintf("...%s... (%d bytes)", strconv.Quote(string(x[lo:hi])), len(x))
	}
	first := 0
	for first < len(a) && first < len(b) && a[first] == b[first] {
		first++
	}
	width := max(len(nameA), len(nameB)) + 1
	return fmt.Sprintf("  %-*s %s\n  %-*s %s", width, nameA+":", show(a, first), width, nameB+":", show(b, first))
}

// deathNote explains a broken connection when the server itself died.
func deathNote(p *process) string {
	if p.Alive() {
		return ""
	}
	return fmt.Sprintf("\n  %s has exited (%v); its last output:\n%s", p.name, p.Err(), p.LogTail(40))
}

// formatCommand shows a command for messages, quoting each argument and
// shortening long ones.
func formatCommand(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if len(a) > 80 {
			parts[i] = fmt.Sprintf("%s...(%d bytes)", strconv.Quote(a[:60]), len(a))
		} else {
			parts[i] = strconv.Quote(a)
		}
	}
	return strings.Join(parts, " ")
}

// rawExchange is what one server did with some raw bytes: what it sent back
// before going quiet or closing, and whether it closed.
type rawExchange struct {
	reply  []byte
	closed bool
}

func (r rawExchange) String() string {
	state := "connection left open"
	if r.closed {
		state = "connection closed"
	}
	return fmt.Sprintf("%s, %s", strconv.Quote(string(r.reply)), state)
}

// rawIdle is how long a server must stay silent before we decide it has
// nothing more to say.
const rawIdle = 300 * time.Millisecond

// compareRaw writes data on a new connection to each shared server and
// compares what comes back and whether the connection is closed. For
// protocol errors and inline commands, which a pair cannot send.
func compareRaw(t testing.TB, data []byte) {
	t.Helper()
	s := sharedServers(t)
	var got [2]rawExchange
	var errs [2]error
	var wg sync.WaitGroup
	for i, p := range []*process{s.redis, s.cell} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = sendRaw(p.addr, data)
		}()
	}
	wg.Wait()
	for i, p := range []*process{s.redis, s.cell} {
		if errs[i] != nil {
			t.Fatalf("sending %s to %s: %v%s", strconv.Quote(string(data)), p.name, errs[i], deathNote(p))
		}
	}
	if !bytes.Equal(got[0].reply, got[1].reply) || got[0].closed != got[1].closed {
		t.Errorf("raw %s\n  %s: %v\n  %s: %v", strconv.Quote(string(data)), s.redis.name, got[0], s.cell.name, got[1])
	}
}

func sendRaw(addr string, data []byte) (rawExchange, error) {
	c, err := dialRESP(addr)
	if err != nil {
		return rawExchange{}, err
	}
	defer c.Close()
	if err := c.WriteRaw(data); err != nil {
		return rawExchange{}, err
	}
	reply, closed, err := c.ReadUntilClose(rawIdle)
	return rawExchange{reply, closed}, err
}
