package integration_test

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Blocking pops compared byte for byte, with a client that blocks and
// others that wake it: by a push, by MULTI/EXEC, by a script, by RENAME
// and by another blocked client's BLMOVE; timeouts, CLIENT UNBLOCK, a
// disconnect, MULTI (where nothing blocks), scripts (which may not call them), and what INFO
// and CLIENT LIST show meanwhile.

// Silent checks that neither server sends anything for a while: the
// client is still blocked.
func (c *pair) Silent() {
	c.t.Helper()
	for _, side := range []struct {
		name string
		r    *bufio.Reader
		conn *respConn
	}{{c.srv.redis.name, c.redis.r, c.redis}, {c.srv.cell.name, c.cell.r, c.cell}} {
		side.conn.conn.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		if b, err := side.r.Peek(1); err == nil {
			c.t.Errorf("%s: expected the client to stay blocked, got %q", side.name, b)
		}
	}
}

// blockedClients reads INFO's blocked_clients of each server through c,
// and requires them equal to want.
func (c *pair) blockedClients(want int) {
	c.t.Helper()
	re := regexp.MustCompile(`blocked_clients:(\d+)`)
	redis, cell := c.Replies("INFO", "clients")
	for _, side := range []struct {
		name  string
		reply []byte
	}{{c.srv.redis.name, redis}, {c.srv.cell.name, cell}} {
		m := re.FindSubmatch(side.reply)
		if m == nil || string(m[1]) != strconv.Itoa(want) {
			c.t.Errorf("%s: blocked_clients: want %d in %q", side.name, want, side.reply)
		}
	}
}

func TestBlockingArguments(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, timeout := range []string{"abc", "", " 1", "1 ", "nan", "-1", "-0.002", "inf", "-inf", "1e400", "1e16",
			"9223372036854775807", "0x10x"} {
			c.Error("BLPOP", "k", timeout)
			c.Error("BRPOP", "k", "k2", timeout)
			c.Error("BLMOVE", "k", "d", "LEFT", "RIGHT", timeout)
			c.Error("BRPOPLPUSH", "k", "d", timeout)
			c.Error("BLMPOP", timeout, "1", "k", "LEFT")
			c.Error("BZPOPMIN", "k", timeout)
			c.Error("BZPOPMAX", "k", timeout)
			c.Error("BZMPOP", timeout, "1", "k", "MIN")
		}
		for _, args := range [][]string{
			{"BLPOP", "k"}, {"BRPOP"}, {"BLMOVE", "k", "d", "LEFT", "RIGHT"}, {"BRPOPLPUSH", "k", "d"},
			{"BLMPOP", "0", "1", "k"}, {"BZPOPMIN", "k"}, {"BZMPOP", "0", "1", "k"},
			{"BLMOVE", "k", "d", "UP", "RIGHT", "x"}, {"BLMOVE", "k", "d", "LEFT", "DOWN", "0"},
			{"BLMPOP", "x", "0", "k", "LEFT"}, {"BLMPOP", "0", "0", "k", "LEFT"}, {"BLMPOP", "0", "2", "k", "LEFT"},
			{"BLMPOP", "0", "1", "k", "UP"}, {"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0"},
			{"BLMPOP", "0", "1", "k", "LEFT", "COUNT", "1", "COUNT", "1"}, {"BZMPOP", "0", "1", "k", "LEFT"},
			{"BZMPOP", "0", "1", "k", "MIN", "COUNT", "-1"}, {"BZMPOP", "1", "x", "k", "MIN"},
		} {
			c.Error(args...)
		}
		// What is there is popped at once, from the first key that holds it.
		c.Do("RPUSH", "l2", "a", "b", "c", "d")
		c.Do("ZADD", "z2", "1", "a", "2.5", "b", "3", "c")
		c.Do("BLPOP", "l1", "l2", "0")
		c.Do("BRPOP", "l1", "l2", "0")
		c.Do("BLMOVE", "l2", "l3", "LEFT", "LEFT", "0")
		c.Do("BRPOPLPUSH", "l3", "l2", "0")
		c.Do("BLMPOP", "0", "2", "l1", "l2", "RIGHT", "COUNT", "10")
		c.Do("EXISTS", "l2")
		c.Do("BZPOPMIN", "z1", "z2", "0")
		c.Do("BZPOPMAX", "z1", "z2", "0")
		c.Do("BZMPOP", "0", "2", "z1", "z2", "MIN", "COUNT", "5")
		c.Do("EXISTS", "z2")
		// WRONGTYPE at the first key of another type, even after a missing one.
		c.Do("SET", "s", "x")
		c.Do("RPUSH", "l", "a")
		c.Do("ZADD", "z", "1", "a")
		c.Error("BLPOP", "nokey", "s", "l", "0")
		c.Error("BRPOP", "z", "l", "0")
		c.Error("BRPOPLPUSH", "s", "d", "0")
		c.Error("BRPOPLPUSH", "l", "z", "0")
		c.Error("BZPOPMIN", "l", "z", "0")
		c.Error("BZPOPMAX", "nokey", "s", "0")
		c.Error("BLMOVE", "s", "d", "LEFT", "RIGHT", "0")
		c.Error("BLMOVE", "l", "s", "LEFT", "RIGHT", "0")
		c.Do("LRANGE", "l", "0", "-1")
		c.Error("BLMPOP", "0", "2", "z", "l", "LEFT")
		c.Error("BZMPOP", "0", "2", "l", "z", "MIN")
		// Timeouts: a tiny one still ends.
		c.Do("BLPOP", "nokey", "0.0001")
		c.Do("BRPOPLPUSH", "nokey", "d", "0.01")
		c.Do("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0.01")
		c.Do("BLMPOP", "0.01", "1", "nokey", "LEFT")
		c.Do("BZPOPMAX", "nokey", "0.01")
		c.Do("BZMPOP", "0.01", "1", "nokey", "MAX")
		// Inside MULTI nothing blocks: each answers at once.
		c.Do("MULTI")
		c.Do("BLPOP", "nokey", "0")
		c.Do("BLMOVE", "nokey", "d", "LEFT", "RIGHT", "0")
		c.Do("BRPOPLPUSH", "nokey", "d", "0")
		c.Do("BLMPOP", "0", "1", "nokey", "LEFT")
		c.Do("BZPOPMIN", "nokey", "0")
		c.Do("BZMPOP", "0", "1", "nokey", "MIN")
		c.Do("BLPOP", "l", "0")
		c.Do("EXEC")
	})
}

func TestBlockingWokenByPush(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		third := c.OtherClient()
		// The key pushed first serves; the other keys are let go.
		c.Send("BLPOP", "k1", "k2", "0")
		c.Silent()
		o.Do("RPUSH", "k2", "a", "b")
		c.Receive()
		o.Do("LRANGE", "k2", "0", "-1")
		o.Do("DEL", "k2")
		// First blocked, first served; the second waits for the next push.
		c.Send("BRPOP", "q", "0")
		c.Silent()
		third.Send("BLPOP", "q", "0")
		third.Silent()
		o.blockedClients(2)
		o.Do("RPUSH", "q", "x")
		c.Receive()
		third.Silent()
		o.Do("EXISTS", "q")
		o.Do("LPUSH", "q", "y", "z")
		third.Receive()
		o.Do("LRANGE", "q", "0", "-1")
		o.blockedClients(0)
		// A push to another database, or to another key, wakes nobody.
		c.Send("BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2")
		c.Silent()
		o.Do("SELECT", "1")
		o.Do("RPUSH", "m1", "other-db")
		o.Do("SELECT", "0")
		o.Do("RPUSH", "m3", "x")
		c.Silent()
		o.Do("RPUSH", "m2", "a", "b", "c")
		c.Receive()
		o.Do("LRANGE", "m2", "0", "-1")
		// A sorted set serves BZPOP*; a list does not, nor a string.
		c.Send("BZPOPMIN", "z", "0")
		c.Silent()
		o.Do("RPUSH", "z", "not-a-zset")
		o.Do("SET", "z", "str")
		c.Silent()
		o.Do("DEL", "z")
		o.Do("ZADD", "z", "2", "b", "1", "a")
		c.Receive()
		c.Do("BZMPOP", "0", "1", "z", "MAX", "COUNT", "3")
		third.Send("BZPOPMAX", "z", "0")
		third.Silent()
		o.Do("ZADD", "z", "7", "x", "8", "y", "9", "z")
		third.Receive()
		o.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Send("BZPOPMAX", "z2", "z3", "0")
		c.Silent()
		o.Do("ZADD", "z3", "1.5", "m")
		c.Receive()
		o.Do("EXISTS", "z3")
	})
}

func TestBlockingMove(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		third := c.OtherClient()
		// A BLMOVE served readies its destination for the next waiter.
		c.Send("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
		c.Silent()
		third.Send("BLPOP", "dst", "0")
		third.Silent()
		c.Silent()
		o.Do("RPUSH", "src", "a", "b")
		c.Receive()
		third.Receive()
		o.Do("LRANGE", "src", "0", "-1")
		o.Do("EXISTS", "dst")
		// BRPOPLPUSH onto itself rotates.
		o.Do("DEL", "src")
		c.Send("BRPOPLPUSH", "src", "src", "0")
		c.Silent()
		o.Do("RPUSH", "src", "x", "y")
		c.Receive()
		o.Do("LRANGE", "src", "0", "-1")
		// A destination of another type: WRONGTYPE, and the element stays.
		o.Do("DEL", "src")
		o.Do("SET", "dst", "str")
		c.Send("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
		c.Silent()
		o.Do("LPUSH", "src", "v")
		c.Receive()
		o.Do("LRANGE", "src", "0", "-1")
		o.blockedClients(0)
	})
}

func TestBlockingWokenByTransactionAndScript(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		c.Do("FLUSHALL")
		// Scripts may not call them (on servers of the test's own: the
		// scripts stay cached).
		c.Do("ZADD", "z", "1", "m")
		c.Error("EVAL", "return redis.call('blpop', KEYS[1], 0)", "1", "nokey")
		c.Error("EVAL", "return redis.call('blmove', KEYS[1], KEYS[2], 'left', 'left', 0)", "2", "nokey", "d")
		c.Error("EVAL", "return redis.call('bzpopmin', KEYS[1], 0)", "1", "z")
		// EXEC serves once it is over: what the transaction left.
		c.Send("BLPOP", "k", "0")
		c.Silent()
		o.Do("MULTI")
		o.Do("RPUSH", "k", "a", "b")
		o.Do("LPOP", "k")
		o.Do("EXEC")
		c.Receive()
		o.Do("EXISTS", "k")
		// A key pushed and emptied in one transaction wakes nobody.
		c.Send("BLPOP", "k", "0")
		c.Silent()
		o.Do("MULTI")
		o.Do("RPUSH", "k", "a")
		o.Do("DEL", "k")
		o.Do("EXEC")
		c.Silent()
		// A script serves the same way.
		o.Do("EVAL", "redis.call('rpush', KEYS[1], 'x', 'y'); return redis.call('llen', KEYS[1])", "1", "k")
		c.Receive()
		o.Do("LRANGE", "k", "0", "-1")
		c.Send("BZPOPMIN", "zk", "0")
		c.Silent()
		o.Do("EVAL", "redis.call('zadd', KEYS[1], 1, 'm'); redis.call('zrem', KEYS[1], 'm'); return 1", "1", "zk")
		c.Silent()
		o.Do("EVAL", "return redis.call('zadd', KEYS[1], 3, 'n')", "1", "zk")
		c.Receive()
		// RENAME moves a list under the key: it serves.
		o.Do("RPUSH", "from", "r1", "r2")
		c.Send("BRPOP", "to", "0")
		c.Silent()
		o.Do("RENAME", "from", "to")
		c.Receive()
		o.Do("LRANGE", "to", "0", "-1")
	})
}

func TestBlockingEnds(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		// A timeout replies null (a null array in RESP2, even for BLMOVE).
		c.Send("BLMOVE", "k", "d", "LEFT", "LEFT", "0.5")
		c.Silent()
		c.Sleep(400 * time.Millisecond)
		c.Receive()
		c.Send("BZMPOP", "0.05", "1", "k", "MIN")
		c.Receive()
		// CLIENT UNBLOCK, with the timeout's reply or an error.
		for _, how := range [][]string{{}, {"TIMEOUT"}, {"ERROR"}} {
			c.Send("BLPOP", "k", "0")
			c.Silent()
			o.unblock(c, how...)
			c.Receive()
		}
		o.unblock(c)
		o.Do("RPUSH", "k", "stays")
		o.Do("LLEN", "k")
		o.Do("DEL", "k")
		// A client that disconnects while blocked takes nothing.
		gone := c.OtherClient()
		gone.Send("BLPOP", "k", "0")
		gone.Silent()
		o.blockedClients(1)
		gone.redis.Close()
		gone.cell.Close()
		o.Sleep(100 * time.Millisecond)
		o.blockedClients(0)
		o.Do("RPUSH", "k", "kept")
		o.Do("LRANGE", "k", "0", "-1")
		o.Do("DEL", "k")
		// So does one killed while blocked.
		killed := c.OtherClient()
		killed.Send("BRPOP", "k", "0")
		killed.Silent()
		o.withID(killed, []string{"CLIENT", "KILL", "ID"})
		killed.ExpectClosed()
		o.blockedClients(0)
		o.Do("RPUSH", "k", "kept")
		o.Do("LRANGE", "k", "0", "-1")
		// CLIENT LIST shows the blocked client's flag b.
		c.Send("BZPOPMIN", "nokey", "0")
		c.Silent()
		o.clientFlags(c)
		o.unblock(c)
		c.Receive()
		// Pipelined after a blocking command: the commands before it are
		// answered at once, those after it once it is served.
		c.Send("PING")
		c.Receive()
		req := append(encodeCommand("SET", "p", "1"), encodeCommand("BLPOP", "nokey2", "0")...)
		req = append(req, encodeCommand("GET", "p")...)
		for _, side := range []*respConn{c.redis, c.cell} {
			if err := side.WriteRaw(req); err != nil {
				t.Fatal(err)
			}
		}
		c.Receive()
		c.Silent()
		o.Do("RPUSH", "nokey2", "v")
		c.Receive()
		c.Receive()
	})
}

// unblock sends CLIENT UNBLOCK for blocked's connection on each server
// (whose ids differ) and compares the replies.
func (c *pair) unblock(blocked *pair, how ...string) {
	c.t.Helper()
	c.withID(blocked, []string{"CLIENT", "UNBLOCK"}, how...)
}

// withID sends cmd, blocked's id on each server, then rest, and compares
// the replies.
func (c *pair) withID(blocked *pair, cmd []string, rest ...string) {
	c.t.Helper()
	var replies [2][]byte
	for i, side := range []struct{ asker, target *respConn }{{c.redis, blocked.redis}, {c.cell, blocked.cell}} {
		id := clientID(c.t, c, side.target)
		args := append(append(append([]string(nil), cmd...), id), rest...)
		r, err := side.asker.Do(args...)
		if err != nil {
			c.t.Fatal(err)
		}
		replies[i] = r
	}
	if !bytes.Equal(replies[0], replies[1]) {
		c.mismatch(formatCommand(cmd), replies[0], replies[1])
	}
}

// clientID finds target's id in its server's CLIENT LIST (target may be
// blocked) by its local address.
func clientID(t testing.TB, c *pair, target *respConn) string {
	t.Helper()
	line := clientLine(t, c, target)
	m := regexp.MustCompile(`id=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no id in %q", line)
	}
	return m[1]
}

// clientLine is target's line of CLIENT LIST, asked through c's
// connection to the same server.
func clientLine(t testing.TB, c *pair, target *respConn) string {
	t.Helper()
	asker := c.redis
	if c.cell.conn.RemoteAddr().String() == target.conn.RemoteAddr().String() {
		asker = c.cell
	}
	list, err := asker.Do("CLIENT", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	addr := "addr=" + target.conn.LocalAddr().String() + " "
	for _, line := range bytes.Split(list, []byte("\n")) {
		if bytes.Contains(line, []byte(addr)) {
			return string(line)
		}
	}
	t.Fatalf("%s not in CLIENT LIST %q", addr, list)
	return ""
}

// clientFlags compares blocked's flags= and cmd= in CLIENT LIST.
func (c *pair) clientFlags(blocked *pair) {
	c.t.Helper()
	re := regexp.MustCompile(`flags=\S+|cmd=\S+`)
	redis := re.FindAllString(clientLine(c.t, c, blocked.redis), -1)
	cell := re.FindAllString(clientLine(c.t, c, blocked.cell), -1)
	if strconv.Quote(fmtList(redis)) != strconv.Quote(fmtList(cell)) {
		c.mismatch("CLIENT LIST flags", []byte(fmtList(redis)), []byte(fmtList(cell)))
	}
}

func fmtList(s []string) string {
	var b bytes.Buffer
	for _, v := range s {
		b.WriteString(v + " ")
	}
	return b.String()
}

// TestBlockingShutdown: SHUTDOWN closes a blocked client's connection
// and exits, as Redis does.
func TestBlockingShutdown(t *testing.T) {
	s := startServers(t, serverOptions{})
	c := newPairOn(t, s)
	o := newPairOn(t, s)
	c.Send("BLPOP", "k", "0")
	c.Silent()
	o.Send("SHUTDOWN", "NOSAVE")
	c.ExpectClosed()
	o.ExpectClosed()
}

// TestBlockingEachWaker: each blocking pop, blocked on a missing key and
// a key that gets a value, woken each way there is: a write on another
// connection, a MULTI/EXEC, a script, and its own timeout (fractional);
// the reply, what the keys hold after and blocked_clients compared byte
// for byte.
func TestBlockingEachWaker(t *testing.T) {
	list := []string{"RPUSH", "k", "x", "y", "z"}
	zset := []string{"ZADD", "k", "1", "x", "2", "y", "3", "z"}
	for _, tc := range []struct {
		block []string // "T" is the timeout
		feed  []string
	}{
		{[]string{"BLPOP", "a", "k", "T"}, list},
		{[]string{"BRPOP", "a", "k", "T"}, list},
		{[]string{"BRPOPLPUSH", "k", "d", "T"}, list},
		{[]string{"BLMOVE", "k", "d", "RIGHT", "LEFT", "T"}, list},
		{[]string{"BLMPOP", "T", "2", "a", "k", "RIGHT", "COUNT", "2"}, list},
		{[]string{"BZPOPMIN", "a", "k", "T"}, zset},
		{[]string{"BZPOPMAX", "a", "k", "T"}, zset},
		{[]string{"BZMPOP", "T", "2", "a", "k", "MAX", "COUNT", "2"}, zset},
	} {
		t.Run(tc.block[0], func(t *testing.T) {
			forBothProtocols(t, func(t *testing.T, c *pair) {
				o := c.OtherClient()
				block := func(timeout string) {
					args := append([]string(nil), tc.block...)
					for i := range args {
						if args[i] == "T" {
							args[i] = timeout
						}
					}
					c.Send(args...)
				}
				after := func() {
					t.Helper()
					o.blockedClients(0)
					if tc.feed[0] == "RPUSH" {
						o.Do("LRANGE", "k", "0", "-1")
						o.Do("LRANGE", "d", "0", "-1")
					} else {
						o.Do("ZRANGE", "k", "0", "-1", "WITHSCORES")
					}
					o.Do("DEL", "k", "d")
				}
				script := "return redis.call(unpack(ARGV))"
				for _, wake := range []func(){
					func() { o.Do(tc.feed...) },
					func() {
						o.Do("MULTI")
						o.Do(tc.feed...)
						o.Do("DEL", "a")
						o.Do("EXEC")
					},
					func() { o.Do(append([]string{"EVAL", script, "1", "k"}, tc.feed...)...) },
				} {
					block("0")
					c.Silent()
					o.blockedClients(1)
					wake()
					c.Receive()
					after()
				}
				block("0.05")
				c.Receive()
				after()
			})
		})
	}
}
