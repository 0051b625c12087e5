package integration_test

import (
	"strings"
	"testing"
)

// commandList reads COMMAND LIST from p.
func commandList(t *testing.T, p *process) map[string]bool {
	t.Helper()
	c := mustDial(t, p)
	r, err := c.Do("COMMAND", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range strings.Split(string(r), "\r\n") {
		if l != "" && l[0] != '*' && l[0] != '$' {
			out[l] = true
		}
	}
	return out
}

// TestCommandTableLikeRedis walks COMMAND LIST on both servers: for every
// command and subcommand both serve, COMMAND INFO and COMMAND DOCS are the
// same bytes (subcommands sorted: Redis's order is its hash table's).
// Containers of which cellserver serves fewer subcommands (FUNCTION, ...)
// are compared without their subcommand lists; each served subcommand is
// compared on its own.
func TestCommandTableLikeRedis(t *testing.T) {
	s := sharedServers(t)
	ours, theirs := commandList(t, s.cell), commandList(t, s.redis)
	partial := map[string]bool{}
	for name := range theirs {
		if parent, _, ok := strings.Cut(name, "|"); ok && !ours[name] && ours[parent] {
			partial[parent] = true
		}
	}
	var both []string
	for name := range ours {
		if theirs[name] {
			both = append(both, name)
		}
	}
	if len(both) < 100 {
		t.Fatalf("only %d commands in common", len(both))
	}
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range both {
			if partial[name] {
				continue
			}
			c.DoMasked(maskCommandOrder, "COMMAND", "INFO", name)
			c.DoMasked(maskDocsOrder, "COMMAND", "DOCS", name)
		}
	})
}

// TestCommandGetKeysAndFlagsLikeRedis: the keys and their key-spec flags
// of command lines of every shape of key spec cellserver serves: one key,
// ranges, keyword searches, key counts, and commands whose flags differ
// per key.
func TestCommandGetKeysAndFlagsLikeRedis(t *testing.T) {
	served := commandList(t, sharedServers(t).cell)
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, line := range [][]string{
			{"SET", "k", "v"}, {"SET", "k", "v", "EX", "10", "GET"}, {"SET", "k", "v", "NX"}, {"GET", "k"}, {"LPUSH", "l", "x"}, {"RPUSH", "l", "x", "y"},
			{"DEL", "a", "b", "c"}, {"UNLINK", "a"}, {"EXISTS", "a", "b"}, {"MSET", "a", "1", "b", "2"},
			{"MGET", "a", "b"}, {"MSETNX", "a", "1"}, {"RENAME", "a", "b"}, {"RENAMENX", "a", "b"},
			{"COPY", "a", "b"}, {"INCR", "n"}, {"GETDEL", "k"}, {"GETEX", "k"}, {"APPEND", "k", "v"},
			{"HSET", "h", "f", "v"}, {"HGET", "h", "f"}, {"HDEL", "h", "f"}, {"HINCRBY", "h", "f", "1"},
			{"ZADD", "z", "1", "m"}, {"ZRANGE", "z", "0", "-1"}, {"ZREM", "z", "m"},
			{"ZREMRANGEBYSCORE", "z", "0", "1"}, {"ZRANGESTORE", "d", "z", "0", "-1"},
			{"LMOVE", "a", "b", "LEFT", "RIGHT"}, {"LPOP", "l"}, {"LRANGE", "l", "0", "-1"},
			{"EXPIRE", "k", "10"}, {"PEXPIREAT", "k", "1"}, {"TTL", "k"}, {"PERSIST", "k"}, {"TYPE", "k"},
			{"EVAL", "return 1", "2", "a", "b", "x"}, {"EVALSHA", "abc", "1", "a"}, {"EVAL_RO", "return 1", "1", "a"},
			{"WATCH", "a", "b"}, {"OBJECT", "ENCODING", "k"}, {"MEMORY", "USAGE", "k"}, {"DUMP", "k"},
			{"RESTORE", "k", "0", "x"}, {"SETRANGE", "k", "0", "v"}, {"GETRANGE", "k", "0", "1"},
			{"SETEX", "k", "10", "v"}, {"PSETEX", "k", "10", "v"}, {"SETNX", "k", "v"}, {"STRLEN", "k"},
			{"HGETALL", "h"}, {"HMGET", "h", "a", "b"}, {"ZINCRBY", "z", "1", "m"}, {"ZSCORE", "z", "m"},
			{"ZCARD", "z"}, {"LSET", "l", "0", "x"}, {"LINSERT", "l", "BEFORE", "a", "b"}, {"LREM", "l", "0", "x"},
			{"SETBIT", "b", "1", "1"}, {"BITOP", "AND", "d", "a", "b"}, {"BITFIELD", "b", "GET", "u8", "0"},
			{"BITFIELD_RO", "b", "GET", "u8", "0"}, {"SORT", "l"}, {"SORT", "l", "STORE", "d"},
			{"SORT", "l", "BY", "store", "LIMIT", "0", "1", "GET", "store", "STORE", "d1", "STORE", "d2"},
			{"SORT", "l", "STORE"}, {"SORT_RO", "l", "STORE", "d"},
		} {
			if !served[strings.ToLower(line[0])] {
				continue
			}
			c.Do(append([]string{"COMMAND", "GETKEYSANDFLAGS"}, line...)...)
			c.Do(append([]string{"COMMAND", "GETKEYS"}, line...)...)
		}
	})
}
