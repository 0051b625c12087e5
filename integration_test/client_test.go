package integration_test

import (
	"strconv"
	"strings"
	"testing"
)

func TestClientName(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CLIENT", "GETNAME")
		c.Do("CLIENT", "SETNAME", "worker-1")
		c.Do("CLIENT", "GETNAME")
		c.Error("CLIENT", "SETNAME", "a b")
		c.Error("CLIENT", "SETNAME", "a\nb")
		c.Error("CLIENT", "SETNAME", "é")
		c.Do("CLIENT", "GETNAME")
		c.Do("CLIENT", "SETNAME", "")
		c.Do("CLIENT", "GETNAME")
		c.Error("CLIENT", "SETNAME")
		c.Error("CLIENT", "SETNAME", "a", "b")
		c.Error("CLIENT", "GETNAME", "x")
	})
}

// go-redis sends CLIENT SETINFO after connecting; 7.0 does not know it.
func TestClientSetInfoUnknown(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.22.0)")
		c.Error("CLIENT", "SETINFO", "LIB-VER", "9.7.3")
		c.Error("client", "setinfo")
		c.Error("CLIENT")
		c.Error("CLIENT", "nosuch")
		c.Do("PING")
	})
}

func TestClientIDAndInfo(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.DoMasked(maskInt, "CLIENT", "ID")
		c.Error("CLIENT", "ID", "x")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
		c.Do("CLIENT", "SETNAME", "info-test")
		c.Do("SELECT", "3")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
		c.Do("MULTI")
		c.Do("PING")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
		c.Do("DISCARD")
		c.Do("CLIENT", "NO-EVICT", "on")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
		// RESET keeps no-evict but forgets the name and the database.
		c.Do("RESET")
		c.DoMasked(maskClientList, "CLIENT", "INFO")
		c.Do("CLIENT", "NO-EVICT", "OFF")
		c.Error("CLIENT", "NO-EVICT", "maybe")
		c.Error("CLIENT", "INFO", "x")
	})
}

func TestClientList(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CLIENT", "SETNAME", "lister")
		// The list holds every connection; only our own line is comparable.
		redis, cell := c.Replies("CLIENT", "ID")
		rid, cid := replyInt(t, redis), replyInt(t, cell)
		c.DoEachMasked(maskClientList,
			[]string{"CLIENT", "LIST", "ID", rid},
			[]string{"CLIENT", "LIST", "ID", cid})
		c.DoEachMasked(maskClientList,
			[]string{"CLIENT", "LIST", "ID", rid, "999999"},
			[]string{"CLIENT", "LIST", "ID", "999999", cid})
		c.Do("CLIENT", "LIST", "ID", "999999")
		c.Do("CLIENT", "LIST", "ID", "0")
		c.Do("CLIENT", "LIST", "TYPE", "master")
		c.Do("CLIENT", "LIST", "TYPE", "replica")
		c.Do("CLIENT", "LIST", "TYPE", "pubsub")
		c.Error("CLIENT", "LIST", "TYPE", "nosuch")
		c.Error("CLIENT", "LIST", "ID", "abc")
		c.Error("CLIENT", "LIST", "ID")
		c.Error("CLIENT", "LIST", "foo")
		c.Error("CLIENT", "LIST", "TYPE")
		c.Error("CLIENT", "LIST", "TYPE", "normal", "x")
	})
}

func TestClientKill(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("CLIENT", "KILL", "1.2.3.4:5")
		c.Do("CLIENT", "KILL", "ID", "999999")
		c.Do("CLIENT", "KILL", "ADDR", "1.2.3.4:5")
		c.Do("CLIENT", "KILL", "LADDR", "1.2.3.4:5")
		c.Do("CLIENT", "KILL", "TYPE", "master")
		c.Do("CLIENT", "KILL", "USER", "default", "SKIPME", "yes", "ID", "999999")
		c.Error("CLIENT", "KILL", "ID", "abc")
		c.Error("CLIENT", "KILL", "ID", "0")
		c.Error("CLIENT", "KILL", "ID", "-1")
		c.Error("CLIENT", "KILL", "foo", "bar")
		c.Error("CLIENT", "KILL", "TYPE", "foo")
		c.Error("CLIENT", "KILL", "SKIPME", "maybe")
		c.Error("CLIENT", "KILL", "ID", "1", "x")
		c.Error("CLIENT", "KILL", "USER", "nobody")
		c.Error("CLIENT", "KILL")

		// Kill another connection by id: it is closed without a reply.
		other := c.OtherClient()
		redis, cell := other.Replies("CLIENT", "ID")
		c.DoEach([]string{"CLIENT", "KILL", "ID", replyInt(t, redis)}, []string{"CLIENT", "KILL", "ID", replyInt(t, cell)})
		other.ExpectClosed()

		// The old form, by address, replies +OK.
		other = c.OtherClient()
		redis, cell = other.Replies("CLIENT", "INFO")
		c.DoEach([]string{"CLIENT", "KILL", clientField(t, redis, "addr")}, []string{"CLIENT", "KILL", clientField(t, cell, "addr")})
		other.ExpectClosed()

		// SKIPME yes (the default) spares the caller.
		redis, cell = c.Replies("CLIENT", "ID")
		c.DoEach([]string{"CLIENT", "KILL", "ID", replyInt(t, redis)}, []string{"CLIENT", "KILL", "ID", replyInt(t, cell)})
		c.Do("PING")
		// SKIPME no: the caller gets its reply, then the connection closes.
		c.DoEach([]string{"CLIENT", "KILL", "ID", replyInt(t, redis), "SKIPME", "no"}, []string{"CLIENT", "KILL", "ID", replyInt(t, cell), "SKIPME", "no"})
		c.ExpectClosed()
	})
}

func TestClientReply(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("CLIENT", "REPLY", "maybe")
		c.Do("CLIENT", "REPLY", "ON")
		// SKIP and OFF send nothing; the next reply read is ECHO's.
		c.Send("CLIENT", "REPLY", "SKIP")
		c.Send("ECHO", "skipped")
		c.Do("ECHO", "seen")
		c.Send("CLIENT", "REPLY", "OFF")
		c.Send("ECHO", "dropped")
		c.Send("NOSUCHCMD")
		c.Do("CLIENT", "REPLY", "ON")
		c.Do("ECHO", "back")
		// RESET turns replies back on and answers itself.
		c.Send("CLIENT", "REPLY", "OFF")
		c.Do("RESET")
		c.Do("ECHO", "after reset")
	})
}

func TestClientMisc(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("CLIENT", "PAUSE", "10")
		c.Do("CLIENT", "PAUSE", "10", "WRITE")
		c.Do("CLIENT", "PAUSE", "10", "all")
		c.Do("CLIENT", "UNPAUSE")
		c.Error("CLIENT", "PAUSE", "x")
		c.Error("CLIENT", "PAUSE", "-1")
		c.Error("CLIENT", "PAUSE", "10", "x")
		c.Error("CLIENT", "PAUSE")
		c.Error("CLIENT", "UNPAUSE", "x")
		c.Do("CLIENT", "UNBLOCK", "1")
		c.Do("CLIENT", "UNBLOCK", "1", "TIMEOUT")
		c.Do("CLIENT", "UNBLOCK", "1", "error")
		c.Error("CLIENT", "UNBLOCK", "x")
		c.Error("CLIENT", "UNBLOCK", "1", "foo")
		c.Do("CLIENT", "GETREDIR")
		c.Do("CLIENT", "TRACKINGINFO")
		c.Do("CLIENT", "TRACKING", "off")
		c.Do("CLIENT", "TRACKING", "off", "BCAST", "OPTIN", "NOLOOP", "PREFIX", "a")
		c.Error("CLIENT", "TRACKING", "foo")
		c.Error("CLIENT", "TRACKING", "off", "x")
		c.Error("CLIENT", "TRACKING", "off", "PREFIX")
		c.Error("CLIENT", "TRACKING", "off", "REDIRECT", "999999")
		c.Error("CLIENT", "TRACKING", "off", "REDIRECT", "abc")
		c.Error("CLIENT", "PAUSE", "10", "WRITE", "x")
		c.Error("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x")
		c.Error("CLIENT", "CACHING", "yes")
		c.Do("CLIENT", "HELP")
		c.Error("CLIENT", "HELP", "x")
	})
}

// replyInt returns the number in a raw integer reply.
func replyInt(t *testing.T, raw []byte) string {
	t.Helper()
	s := strings.TrimSuffix(string(raw), "\r\n")
	if !strings.HasPrefix(s, ":") {
		t.Fatalf("expected an integer reply, got %q", raw)
	}
	if _, err := strconv.ParseInt(s[1:], 10, 64); err != nil {
		t.Fatalf("expected an integer reply, got %q", raw)
	}
	return s[1:]
}

// clientField returns a field of a raw CLIENT INFO reply.
func clientField(t *testing.T, raw []byte, name string) string {
	t.Helper()
	v, err := parseReply(raw)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := textBody(v)
	if !ok {
		t.Fatalf("not a CLIENT INFO reply: %q", raw)
	}
	for f := range strings.FieldsSeq(body) {
		if k, val, ok := strings.Cut(f, "="); ok && k == name {
			return val
		}
	}
	t.Fatalf("no %s in %q", name, body)
	return ""
}
