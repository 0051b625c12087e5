package integration_test

import (
	"testing"
)

// serverTreeCommands are the commands whose COMMAND INFO must match Redis
// 7.0.15's entry byte for byte (after sorting subcommands).
var serverTreeCommands = []string{
	"ping", "echo", "quit", "reset", "select", "auth", "hello",
	"multi", "exec", "discard", "watch", "unwatch",
	"dbsize", "flushdb", "flushall", "time", "info",
	"client", "config", "command",
}

func TestCommandInfo(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range serverTreeCommands {
			c.DoMasked(maskCommandOrder, "COMMAND", "INFO", name)
		}
		for _, name := range []string{
			"function|flush", "function|list", "function|stats", "function|help",
			"config|get", "CONFIG|SET", "client|list", "command|getkeys",
		} {
			c.DoMasked(maskCommandOrder, "COMMAND", "INFO", name)
		}
		c.DoMasked(maskCommandOrder, "COMMAND", "INFO", "PING", "nosuchcmd", "Echo", "client|nosuch", "ping|x")
		c.Do("COMMAND", "INFO", "nosuchcmd")
		c.Error("COMMAND", "COUNT", "x")
		c.Error("COMMAND", "nosuch")
		c.Do("COMMAND", "HELP")
		c.Error("COMMAND", "HELP", "x")
	})
}

func TestCommandGetKeys(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("COMMAND", "GETKEYS", "watch", "a", "b", "c")
		c.Do("COMMAND", "GETKEYS", "WATCH", "a")
		c.Do("COMMAND", "GETKEYSANDFLAGS", "watch", "a", "b")
		c.Error("COMMAND", "GETKEYS")
		c.Error("COMMAND", "GETKEYS", "ping")
		c.Error("COMMAND", "GETKEYS", "nosuch", "a")
		c.Error("COMMAND", "GETKEYS", "ping", "a")
		c.Error("COMMAND", "GETKEYS", "config", "get", "x")
		c.Error("COMMAND", "GETKEYS", "config", "nosuch")
		c.Error("COMMAND", "GETKEYS", "client", "id")
		c.Error("COMMAND", "GETKEYS", "select", "1", "2")
		c.Error("COMMAND", "GETKEYS", "dbsize", "x")
	})
}

func TestCommandList(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.DoSorted("COMMAND", "LIST", "FILTERBY", "PATTERN", "client*")
		c.DoSorted("COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|*")
		c.DoSorted("COMMAND", "LIST", "FILTERBY", "pattern", "p?ng")
		c.DoSorted("COMMAND", "LIST", "FILTERBY", "ACLCAT", "transaction")
		c.Do("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch")
		c.Do("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch")
		c.Error("COMMAND", "LIST", "foo")
		c.Error("COMMAND", "LIST", "FILTERBY", "PATTERN")
		c.Error("COMMAND", "LIST", "FILTERBY", "foo", "x")
		c.Error("COMMAND", "LIST", "FILTERBY", "PATTERN", "x", "y")
	})
}

func TestCommandDocs(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range serverTreeCommands {
			c.DoMasked(maskDocs, "COMMAND", "DOCS", name)
		}
		c.DoMasked(maskDocs, "COMMAND", "DOCS", "ping", "nosuch", "config|get")
		c.Do("COMMAND", "DOCS", "nosuch")
	})
}
