package integration_test

import (
	"strings"
	"testing"
)

func TestPing(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("PING")
		c.Do("PING", "hello")
		c.Do("PING", "")
		c.Do("PING", "a\r\nb\x00c")
		c.Error("PING", "a", "b")
		c.Do("pInG")
		c.Do("ping", "x")
	})
}

func TestEcho(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ECHO", "hello")
		c.Do("ECHO", "")
		c.Do("ECHO", "\x00\xff\r\n")
		c.Do("echo", strings.Repeat("x", 100000))
		c.Error("ECHO")
		c.Error("ECHO", "a", "b")
	})
}

func TestUnknownCommand(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("NOSUCHCMD")
		c.Error("nosuchcmd", "x")
		c.Error("nosuchcmd", "a", "b", "c")
		c.Error("")
		// The echoed arguments stop at 128 characters in all.
		c.Error("nosuchcmd", strings.Repeat("a", 200))
		c.Error("nosuchcmd", strings.Repeat("a", 50), strings.Repeat("b", 50), strings.Repeat("c", 50))
		// The name is cut at 128 characters too.
		c.Error(strings.Repeat("x", 200), "y")
		// CR and LF in the echoed text become spaces.
		c.Error("nosuchcmd", "a\r\nb")
		// The name is a C string: it ends at the first NUL.
		c.Error("GET\x00")
		// The connection still works afterwards.
		c.Do("PING")
	})
}

func TestSelect(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SELECT", "1")
		c.Do("SET", "select-key", "in-db-1")
		c.Do("GET", "select-key")
		c.Do("DBSIZE")
		c.Do("SELECT", "0")
		c.Do("GET", "select-key")
		c.Do("DBSIZE")
		c.Do("SELECT", "15")
		c.Error("SELECT", "16")
		c.Error("SELECT", "-1")
		c.Error("SELECT", "abc")
		c.Error("SELECT", "")
		c.Error("SELECT", "01")
		c.Error("SELECT", "1.0")
		c.Error("SELECT")
		c.Error("SELECT", "1", "2")
		c.Do("SELECT", "1")
		c.Do("GET", "select-key")
	})
}

func TestDbsizeAndFlushall(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("DBSIZE")
		c.Do("SET", "a", "1")
		c.Do("SET", "b", "2")
		c.Do("SET", "c", "3")
		c.Do("SET", "a", "4")
		c.Do("DBSIZE")
		c.Error("DBSIZE", "x")
		c.Do("FLUSHALL")
		c.Do("DBSIZE")
		c.Do("GET", "a")

		c.Do("SET", "a", "1")
		c.Do("FLUSHALL", "ASYNC")
		c.Do("DBSIZE")
		c.Do("SET", "a", "1")
		c.Do("FLUSHALL", "sync")
		c.Do("DBSIZE")
		c.Do("FLUSHALL", "async")

		// Every database goes.
		c.Do("SELECT", "3")
		c.Do("SET", "x", "1")
		c.Do("FLUSHALL")
		c.Do("DBSIZE")

		c.Error("FLUSHALL", "x")
		c.Error("FLUSHALL", "ASYNC", "SYNC")
		c.Error("FLUSHALL", "ASYNC", "ASYNC")
	})
}

func TestTime(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.DoMasked(maskTime, "TIME")
		c.DoMasked(maskTime, "time")
		c.Error("TIME", "x")
	})
}

func TestHello(t *testing.T) {
	c := newPair(t)
	c.DoMasked(maskHello, "HELLO")
	c.Do("GET", "missing")
	c.DoMasked(maskHello, "HELLO", "3")
	c.Do("GET", "missing")
	c.DoMasked(maskHello, "HELLO")
	c.DoMasked(maskHello, "HELLO", "2")
	c.Do("GET", "missing")
	c.Error("HELLO", "4")
	c.Error("HELLO", "1")
	c.Error("HELLO", "-1")
	c.Error("HELLO", "abc")
	c.Error("HELLO", "")
	c.Error("HELLO", "3", "x")
	c.Error("HELLO", "3", "SETNAME")
	c.Error("HELLO", "3", "SETNAME", "a b")
	c.Error("HELLO", "3", "AUTH", "default")
	// A failed HELLO leaves the protocol as it was.
	c.Do("GET", "missing")
	c.DoMasked(maskHello, "hello", "3")
	c.Error("HELLO", "4")
	c.Do("GET", "missing")
	// SETNAME takes effect as it is read: a later bad option or password
	// fails HELLO with the name already set.
	c.Error("HELLO", "2", "setname", "x", "extra")
	c.Do("CLIENT", "GETNAME")
	c.DoMasked(maskHello, "HELLO", "2", "SETNAME", "y", "AUTH", "default", "any") // no password set
	c.Do("CLIENT", "GETNAME")
	c.Error("HELLO", "2", "SETNAME", "z", "SETNAME", "a b")
	c.Do("CLIENT", "GETNAME")
}

func TestQuit(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "quit-key", "v")
		c.Do("QUIT")
		c.ExpectClosed()
	})
	t.Run("with arguments", func(t *testing.T) {
		c := newPair(t)
		c.Do("QUIT", "x")
		c.ExpectClosed()
	})
}
