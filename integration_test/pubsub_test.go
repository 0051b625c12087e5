package integration_test

import (
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Publish/subscribe compared byte for byte: confirmations, messages,
// pattern and shard messages pushed to a subscriber while another client publishes,
// subscribed mode's rules in RESP2 and their absence in RESP3, MULTI and
// scripts, RESET, the PUBSUB introspection, CLIENT LIST/KILL and INFO, and
// a subscriber that does not read closed at its output buffer limit.
//
// Redis's order is its hash tables' where it lists several channels at once
// (UNSUBSCRIBE without arguments, PUBSUB CHANNELS, several patterns matching
// one message), so those cases use one channel or pattern, or DoSorted.

// DoN sends args to both servers and compares n replies from each: one
// per channel for (P)(UN)SUBSCRIBE.
func (c *pair) DoN(n int, args ...string) {
	c.t.Helper()
	req := encodeCommand(args...)
	for _, side := range []*respConn{c.redis, c.cell} {
		if err := side.WriteRaw(req); err != nil {
			c.t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		c.receive(formatCommand(args) + " reply " + strconv.Itoa(i+1))
	}
}

// Receive reads what each server sent unasked (a published message) and
// compares them.
func (c *pair) Receive() {
	c.t.Helper()
	c.receive("pushed message")
}

func (c *pair) receive(what string) {
	c.t.Helper()
	redis, err := c.redis.ReadReply()
	if err != nil {
		c.t.Fatalf("%s: %s: %v", what, c.srv.redis.name, err)
	}
	cell, err := c.cell.ReadReply()
	if err != nil {
		c.t.Fatalf("%s: %s: %v%s", what, c.srv.cell.name, err, deathNote(c.srv.cell))
	}
	if !bytes.Equal(redis, cell) {
		c.mismatch(what, redis, cell)
	}
}

func TestPubsubSubscribe(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		c.Do("UNSUBSCRIBE")
		c.Do("PUNSUBSCRIBE")
		c.DoN(2, "UNSUBSCRIBE", "never", "subscribed")
		c.Error("SUBSCRIBE")
		c.Error("PSUBSCRIBE")
		c.DoN(3, "SUBSCRIBE", "ps:news", "ps:sport", "ps:news")
		o.Do("PUBLISH", "ps:news", "hello")
		c.Receive()
		o.Do("PUBLISH", "ps:nobody", "x")
		o.Do("PUBLISH", "ps:sport", "")
		c.Receive()
		o.Do("PUBLISH", "ps:news", "\x00\r\n\xff"+strings.Repeat("z", 100000))
		c.Receive()
		c.Do("PING")
		c.Do("PING", "x")
		c.Error("PING", "a", "b")
		o.Do("PUBSUB", "NUMSUB", "ps:news", "ps:sport", "ps:nobody")
		o.Do("PUBSUB", "NUMSUB")
		o.DoSorted("PUBSUB", "CHANNELS", "ps:*")
		o.Do("PUBSUB", "CHANNELS", "ps:n*")
		o.Error("PUBSUB", "CHANNELS", "a", "b")
		o.Error("PUBSUB", "NUMPAT", "x")
		o.Error("PUBSUB", "NOSUCH")
		o.Error("PUBSUB")
		o.Error("PUBLISH", "ps:news")
		o.Do("PUBSUB", "HELP")
		c.Do("PSUBSCRIBE", "ps:n*")
		c.Do("PSUBSCRIBE", "ps:n*")
		// Channel subscribers first, then patterns.
		o.Do("PUBLISH", "ps:news", "both")
		c.Receive()
		c.Receive()
		c.Do("UNSUBSCRIBE", "ps:news")
		o.Do("PUBLISH", "ps:news", "pattern only")
		c.Receive()
		o.Do("PUBLISH", "ps:sport", "channel only")
		c.Receive()
		c.Do("PUNSUBSCRIBE", "ps:n*")
		c.Do("PUNSUBSCRIBE", "ps:n*")
		c.Do("UNSUBSCRIBE") // the last channel: out of pub/sub mode
		o.Do("PUBLISH", "ps:sport", "nobody")
		c.Do("PING")
		c.Do("GET", "ps:k")
	})
}

// TestPubsubPatterns: Redis's glob rules on channel names, one pattern per
// message so that the order is Redis's too.
func TestPubsubPatterns(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		for _, tc := range []struct {
			pattern string
			publish []string
		}{
			{"pp:h?llo", []string{"pp:hello", "pp:hallo", "pp:hllo", "pp:heello"}},
			{"pp:h[ae]llo", []string{"pp:hello", "pp:hallo", "pp:hillo"}},
			{"pp:h[^e]llo", []string{"pp:hello", "pp:hallo"}},
			{"pp:h[a-b]llo", []string{"pp:hallo", "pp:hbllo", "pp:hcllo"}},
			{"pp:\\*", []string{"pp:*", "pp:x"}},
			{"pp:*", []string{"pp:", "pp:anything\x00at all", "pq:no"}},
		} {
			c.Do("PSUBSCRIBE", tc.pattern)
			for _, ch := range tc.publish {
				redis, cell := o.Replies("PUBLISH", ch, "m")
				if !bytes.Equal(redis, cell) {
					o.mismatch(formatCommand([]string{"PUBLISH", ch, "m"}), redis, cell)
				}
				if string(redis) == ":1\r\n" {
					c.Receive()
				}
			}
			c.Do("PUNSUBSCRIBE", tc.pattern)
		}
		c.Do("PING")
	})
}

// TestPubsubSubscribedMode: in RESP2 a subscribed client may only manage
// its subscriptions, PING, QUIT and RESET; other commands get Redis's
// error, after the checks that come first (unknown command, arity).
func TestPubsubSubscribedMode(t *testing.T) {
	c := newPair(t)
	c.Do("SUBSCRIBE", "mode:a")
	for _, args := range [][]string{
		{"GET", "k"}, {"SET", "k", "v"}, {"HELLO", "3"}, {"HELLO"}, {"MULTI"}, {"CLIENT", "ID"},
		{"PUBLISH", "mode:a", "x"}, {"PUBSUB", "NUMPAT"}, {"SELECT", "1"}, {"INFO"},
		{"EVAL", "return 1", "0"}, {"MONITOR"}, {"NOSUCHCMD"}, {"GET"}, {"CLIENT", "NOSUCH"},
	} {
		c.Error(args...)
	}
	c.Do("PING")
	c.DoN(2, "PSUBSCRIBE", "mode:*", "other:*")
	c.Do("SUBSCRIBE", "mode:b")
	c.DoN(2, "PUNSUBSCRIBE", "mode:*", "nope")
	c.Do("PUNSUBSCRIBE")
	c.DoN(2, "UNSUBSCRIBE", "mode:a", "mode:b")
	c.Do("GET", "k") // out of the mode again
	c.Do("SUBSCRIBE", "mode:a")
	c.Do("QUIT")
	c.ExpectClosed()
}

// TestPubsubResp3: a RESP3 subscriber receives pushes and may run any
// command, its own messages included; HELLO 2 brings RESP2's rules back.
func TestPubsubResp3(t *testing.T) {
	c := newPairOn(t, startServers(t, serverOptions{}))
	c.DoMasked(maskHello, "HELLO", "3")
	c.proto = 3
	o := c.OtherClient()
	c.Do("SUBSCRIBE", "r3:a")
	c.Do("SET", "r3:k", "v")
	c.Do("GET", "r3:k")
	c.Do("PING")
	c.Do("PING", "x")
	o.Do("PUBLISH", "r3:a", "from other")
	c.Receive()
	// To itself: the message comes before PUBLISH's reply, inside EXEC's
	// array, and before EVAL's result, as in Redis 7.0.
	c.DoPipeline([]string{"GET", "r3:k"}, []string{"PUBLISH", "r3:a", "self"})
	c.Receive()
	c.Do("MULTI")
	c.Do("PUBLISH", "r3:a", "in multi")
	c.Do("EXEC") // a reader takes the message for EXEC's one element...
	c.Receive()  // ...and PUBLISH's reply comes after
	c.Do("EVAL", "return redis.call('publish', 'r3:a', 'from lua')", "0")
	c.Receive()
	c.Do("PSUBSCRIBE", "r3:*")
	c.Do("PUBSUB", "NUMSUB", "r3:a")
	c.DoMasked(maskHello, "HELLO", "2")
	c.Error("GET", "r3:k")
	c.Do("PING")
	o.Do("PUBLISH", "r3:b", "now RESP2")
	c.Receive()
	c.Error("HELLO", "3") // RESP2's rules again
	c.Do("PUNSUBSCRIBE")
	c.Do("UNSUBSCRIBE")
	c.DoMasked(maskHello, "HELLO", "3")
	c.Do("UNSUBSCRIBE")
	c.Do("PUNSUBSCRIBE")
}

// TestPubsubTransactionsAndScripts: PUBLISH runs in MULTI and in scripts;
// SUBSCRIBE runs in MULTI (Redis keeps it for compatibility) but not in
// scripts.
func TestPubsubTransactionsAndScripts(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		o.Do("SUBSCRIBE", "tx:a")
		c.Do("MULTI")
		c.Do("PUBLISH", "tx:a", "in multi")
		c.Do("PUBLISH", "tx:none", "x")
		c.Do("EXEC")
		o.Receive()
		c.Do("EVAL", "return redis.call('publish', 'tx:a', 'from lua')", "0")
		o.Receive()
		c.Error("EVAL", "return redis.call('subscribe', 'tx:b')", "0")
		c.Error("EVAL", "return redis.call('psubscribe', 'tx:*')", "0")
		c.Error("EVAL", "return redis.call('unsubscribe')", "0")
		c.Do("EVAL", "return redis.call('pubsub', 'numsub', 'tx:a')", "0")
		c.Do("MULTI")
		c.Do("SUBSCRIBE", "tx:b")
		c.Do("PING")
		c.Do("EXEC")
		p := c.OtherClient()
		p.Do("PUBLISH", "tx:b", "to the new subscriber")
		c.Receive()
		c.Do("UNSUBSCRIBE", "tx:b")
	})
}

// TestPubsubSharded: SSUBSCRIBE, SPUBLISH and SUNSUBSCRIBE outside cluster
// mode: shard channels are a namespace of their own, counted apart, that
// patterns do not see; SSUBSCRIBE is refused inside EXEC.
func TestPubsubSharded(t *testing.T) {
	forBothProtocolsOwn(t, serverOptions{}, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		c.Do("SUNSUBSCRIBE")
		c.Error("SSUBSCRIBE")
		c.DoN(2, "SSUBSCRIBE", "sh:a", "sh:b")
		c.Do("SUBSCRIBE", "sh:a")
		c.Do("SSUBSCRIBE", "sh:a")
		o.Do("SPUBLISH", "sh:a", "hi")
		c.Receive()
		o.Do("PUBLISH", "sh:a", "plain")
		c.Receive()
		o.Do("PUBSUB", "SHARDNUMSUB", "sh:a", "sh:none")
		o.Do("PUBSUB", "SHARDNUMSUB")
		o.DoSorted("PUBSUB", "SHARDCHANNELS", "sh:*")
		o.Do("PUBSUB", "SHARDCHANNELS", "sh:b")
		o.Error("PUBSUB", "SHARDCHANNELS", "a", "b")
		c.Do("PSUBSCRIBE", "sh:*")
		o.Do("SPUBLISH", "sh:b", "no patterns")
		c.Receive()
		c.Do("SUNSUBSCRIBE", "sh:a")
		c.Do("UNSUBSCRIBE")
		c.Do("PUNSUBSCRIBE")
		c.Do("GET", "sh:k") // refused in RESP2: still subscribed (sh:b)
		c.Do("SUNSUBSCRIBE")
		c.Do("GET", "sh:k")
		o.Do("MULTI")
		o.Do("SSUBSCRIBE", "sh:m")
		o.Do("SPUBLISH", "sh:m", "x")
		o.Do("EXEC")
		o.Do("EVAL", "return redis.call('spublish', 'sh:m', 'x')", "0")
		o.Error("EVAL", "return redis.call('ssubscribe', 'sh:m')", "0")
		o.Error("SPUBLISH", "sh:m")
	})
}

// TestPubsubReset: RESET ends every subscription without replies for them.
func TestPubsubReset(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		o := c.OtherClient()
		c.DoN(2, "SUBSCRIBE", "rs:a", "rs:b")
		c.Do("PSUBSCRIBE", "rs:*")
		c.Do("RESET")
		c.Do("PING")
		o.Do("PUBSUB", "NUMSUB", "rs:a", "rs:b")
		o.Do("PUBLISH", "rs:a", "x")
		c.Do("GET", "rs:k")
		c.DoPipeline([]string{"SUBSCRIBE", "rs:c"}, []string{"PING"}, []string{"RESET"}, []string{"PING"})
	})
}

// TestPubsubClientsAndInfo: CLIENT LIST's flags and counts, CLIENT
// LIST/KILL TYPE pubsub, INFO's counters and PUBSUB NUMPAT, on servers of
// the test's own (other tests' subscribers would count).
func TestPubsubClientsAndInfo(t *testing.T) {
	s := startServers(t, serverOptions{})
	c := newPairOn(t, s)
	o := c.OtherClient()
	p := c.OtherClient()
	c.DoN(2, "SUBSCRIBE", "a", "b")
	c.DoN(3, "PSUBSCRIBE", "x*", "y*", "x*")
	p.Do("PSUBSCRIBE", "x*")
	p.DoN(2, "SSUBSCRIBE", "s1", "s2")
	o.Do("PUBSUB", "NUMPAT")
	o.Do("PUBLISH", "xa", "m")
	c.Receive()
	p.Receive()
	compareInfoFields(t, o, "stats", "pubsub_channels", "pubsub_patterns", "pubsubshard_channels")
	compareClientList(t, o, "CLIENT", "LIST", "TYPE", "pubsub")
	compareClientList(t, o, "CLIENT", "LIST", "TYPE", "normal")
	compareClientList(t, o, "CLIENT", "LIST")
	o.Do("CLIENT", "KILL", "TYPE", "pubsub")
	c.ExpectClosed()
	p.ExpectClosed()
	for _, name := range []string{"pubsub_channels", "pubsub_patterns", "pubsubshard_channels"} {
		waitInfoField(t, s.cell.addr, "stats", name, "0")
	}
	compareInfoFields(t, o, "stats", "pubsub_channels", "pubsub_patterns", "pubsubshard_channels")
	o.Do("PUBSUB", "NUMPAT")
	o.Do("CLIENT", "KILL", "TYPE", "pubsub")
}

// infoField is one field of an INFO section reply.
func infoField(reply []byte, name string) string {
	for _, line := range strings.Split(string(reply), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return "(absent)"
}

func compareInfoFields(t *testing.T, c *pair, section string, names ...string) {
	t.Helper()
	redis, cell := c.Replies("INFO", section)
	for _, n := range names {
		if r, v := infoField(redis, n), infoField(cell, n); r != v {
			t.Errorf("INFO %s %s: redis-server %s, cellserver %s", section, n, r, v)
		}
	}
}

// waitInfoField waits for a field to reach want: a killed client's
// subscriptions end when its connection's goroutine sees the close.
func waitInfoField(t *testing.T, addr, section, name, want string) {
	t.Helper()
	conn, err := dialRESP(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var got string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		reply, err := conn.Do("INFO", section)
		if err != nil {
			t.Fatal(err)
		}
		if got = infoField(reply, name); got == want {
			return
		}
	}
	t.Fatalf("INFO %s %s stayed %s, want %s", section, name, got, want)
}

// clientListFields keeps what two servers' CLIENT LIST lines can share:
// the flags, the database, the subscription counts and the last command.
var clientListFields = regexp.MustCompile(`flags=\S+ db=\d+ sub=\d+ psub=\d+ ssub=\d+ multi=-?\d+|cmd=\S+`)

func compareClientList(t *testing.T, c *pair, args ...string) {
	t.Helper()
	view := func(raw []byte) string {
		v, err := parseReply(raw)
		if err != nil {
			t.Fatalf("%s: %v", formatCommand(args), err)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(v.text), "\n") {
			lines = append(lines, strings.Join(clientListFields.FindAllString(l, -1), " "))
		}
		sort.Strings(lines)
		return strings.Join(lines, "\n")
	}
	redis, cell := c.Replies(args...)
	if r, v := view(redis), view(cell); r != v {
		t.Errorf("%s\n  redis-server:\n%s\n  cellserver:\n%s", formatCommand(args), r, v)
	}
}

// TestPubsubOutputLimit: a subscriber that does not read is closed once
// its unsent messages pass client-output-buffer-limit pubsub's hard limit,
// by both servers, and cellserver logs Redis's line for it.
func TestPubsubOutputLimit(t *testing.T) {
	s := startServers(t, serverOptions{})
	payload := strings.Repeat("m", 64<<10)
	for _, p := range []*process{s.redis, s.cell} {
		ctl, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()
		if r, err := ctl.Do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 0 0"); err != nil || string(r) != "+OK\r\n" {
			t.Fatalf("%s: CONFIG SET: %q %v", p.name, r, err)
		}
		sub, err := dialRESP(p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		if _, err := sub.Do("SUBSCRIBE", "flood"); err != nil {
			t.Fatal(err)
		}
		// Sockets buffer a few megabytes between the two ends; the limit
		// counts what is left in the server.
		closed := false
		for sent := 0; sent < 256<<20 && !closed; sent += len(payload) {
			r, err := ctl.Do("PUBLISH", "flood", payload)
			if err != nil {
				t.Fatalf("%s: PUBLISH: %v", p.name, err)
			}
			closed = string(r) == ":0\r\n"
		}
		if !closed {
			t.Fatalf("%s: the subscriber that does not read was never closed", p.name)
		}
		if _, closed, err := sub.ReadUntilClose(2 * time.Second); !closed {
			t.Errorf("%s: the subscriber's connection is still open (%v)", p.name, err)
		}
		if r, _ := ctl.Do("PUBSUB", "NUMSUB", "flood"); !strings.HasSuffix(string(r), ":0\r\n") {
			t.Errorf("%s: NUMSUB after the close: %q", p.name, r)
		}
	}
	if log := s.cell.LogTail(50); !selfTest() && !strings.Contains(log, "scheduled to be closed ASAP for overcoming of output buffer limits") {
		t.Errorf("cellserver did not log the close:\n%s", log)
	}
}
