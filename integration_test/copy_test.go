package integration_test

import (
	"strconv"
	"testing"
)

// COPY, MOVE and TOUCH.

func TestCopy(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "s", "v\x00")
		c.Do("SET", "n", "12345")
		c.Do("RPUSH", "l", "a", "b", "c")
		c.Do("HSET", "h", "f", "1", "g", "2")
		c.Do("ZADD", "z", "1", "a", "2.5", "b")
		c.Do("PEXPIRE", "l", "100000")
		for _, k := range []string{"s", "n", "l", "h", "z"} {
			c.Do("COPY", k, k+"2")
			c.Do("TYPE", k+"2")
		}
		c.Do("LRANGE", "l2", "0", "-1")
		c.Do("HGETALL", "h2")
		c.Do("ZRANGE", "z2", "0", "-1", "WITHSCORES")
		c.Do("GET", "s2")
		c.Do("OBJECT", "ENCODING", "n2")
		c.DoLoosely("PTTL", "l2")
		c.Do("PEXPIRETIME", "s2")
		// The copy is independent of its source.
		c.Do("RPUSH", "l2", "d")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("COPY", "s", "l")            // destination exists: 0
		c.Do("COPY", "s", "l", "REPLACE") // replaced
		c.Do("TYPE", "l")
		c.Do("PTTL", "l")
		c.Do("COPY", "nokey", "x")
		c.Do("COPY", "nokey", "s", "REPLACE")
		c.Do("EXISTS", "x")
		c.Error("COPY", "s", "s")
		c.Do("COPY", "s", "s", "DB", "1") // another database: fine
		c.Do("COPY", "s", "s", "DB", "1")
		c.Do("COPY", "h", "s", "DB", "1", "REPLACE")
		c.Do("COPY", "z", "zz", "replace", "db", "1", "REPLACE")
		c.Do("SELECT", "1")
		c.Do("TYPE", "s")
		c.Do("HGETALL", "s")
		c.Do("ZRANGE", "zz", "0", "-1")
		c.Error("COPY", "s", "s", "DB", "1")
		c.Do("COPY", "s", "s", "DB", "0", "REPLACE")
		c.Do("SELECT", "0")
		c.Do("TYPE", "s")
		c.Error("COPY", "s", "t", "DB")
		c.Error("COPY", "s", "t", "DB", "16")
		c.Error("COPY", "s", "t", "DB", "-1")
		c.Error("COPY", "s", "t", "DB", "x")
		c.Error("COPY", "s", "t", "DB", "4294967296")
		c.Error("COPY", "s", "t", "REPLACEX")
		c.Error("COPY", "nokey", "t", "DB", "99") // options before the key
		c.Error("COPY", "s")
		c.Do("DBSIZE")
	})
}

func TestMove(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "s", "v")
		c.Do("RPUSH", "l", "a", "b")
		c.Do("ZADD", "z", "1", "m")
		c.Do("PEXPIRE", "l", "100000")
		c.Do("MOVE", "s", "1")
		c.Do("MOVE", "l", "1")
		c.Do("EXISTS", "s", "l")
		c.Do("MOVE", "nokey", "1")
		c.Error("MOVE", "z", "0")
		c.Error("MOVE", "nokey", "0")
		c.Error("MOVE", "z", "16")
		c.Error("MOVE", "z", "-1")
		c.Error("MOVE", "z", "x")
		c.Error("MOVE", "z", "2147483648")
		c.Error("MOVE", "z", "9223372036854775808")
		c.Error("MOVE", "z")
		c.Do("SELECT", "1")
		c.Do("GET", "s")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("PEXPIRETIME", "s")
		c.DoLoosely("PTTL", "l")
		c.Do("SET", "z", "here")
		c.Do("SELECT", "0")
		c.Do("MOVE", "z", "1") // taken in db 1: 0, nothing moves
		c.Do("TYPE", "z")
		c.Do("DBSIZE")
		c.Do("SELECT", "1")
		c.Do("GET", "z")
		c.Do("DBSIZE")
		// In a transaction and a script, which hold other databases too.
		c.Do("MULTI")
		c.Do("COPY", "z", "z", "DB", "2")
		c.Do("MOVE", "l", "3")
		c.Do("EXEC")
		c.Do("EVAL", "return {redis.call('MOVE', KEYS[1], '4'), redis.call('COPY', KEYS[1], 'k', 'DB', '5')}", "1", "s")
		c.Do("EVAL", "redis.call('SELECT', '4'); return redis.call('MOVE', KEYS[1], '6')", "1", "s")
		c.Do("SELECT", "6")
		c.Do("GET", "s")
		c.Do("SELECT", "2")
		c.Do("GET", "z")
	})
}

func TestTouch(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "a", "1")
		c.Do("RPUSH", "b", "x")
		c.Do("TOUCH", "a")
		c.Do("TOUCH", "a", "b", "nokey", "a")
		c.Do("TOUCH", "nokey")
		c.Error("TOUCH")
	})
}

// TestCopyEncodings: COPY and MOVE keep a value's encoding (Redis's
// setTypeDup copies an intset as it is and a hashtable member by member,
// hashTypeDup and zsetDup likewise; MOVE moves the object), even past
// today's thresholds; RESTORE makes what the thresholds of now allow, as
// Redis's loader does. A bitmap is a raw string and copies as one.
func TestCopyEncodings(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		t.Cleanup(func() {
			c.Do("CONFIG", "SET", "set-max-intset-entries", "512")
			c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128")
		})
		c.Do("SADD", "i", "3", "1", "2")
		c.Do("SADD", "w", "a", "b")
		c.Do("SETBIT", "b", "9", "1")
		c.Do("EXPIRE", "w", "100")
		for _, k := range []string{"i", "w", "b"} {
			c.Do("COPY", k, k+"2")
			c.Do("TYPE", k+"2")
			c.Do("OBJECT", "ENCODING", k+"2")
		}
		c.Do("SMEMBERS", "i2")
		c.DoSorted("SMEMBERS", "w2")
		c.Do("TTL", "w2")
		c.Do("GET", "b2")
		c.Do("SADD", "i2", "x") // the copy is its own
		c.Do("SMEMBERS", "i")
		c.Do("SETBIT", "b2", "0", "1")
		c.Do("GET", "b")
		// A hashtable left with integers only stays a hashtable.
		add, rem := []string{"SADD", "ht"}, []string{"SREM", "ht"}
		for i := range 600 {
			add = append(add, strconv.Itoa(i))
			if i >= 5 {
				rem = append(rem, strconv.Itoa(i))
			}
		}
		c.Do(add...)
		c.Do(rem...)
		c.Do("OBJECT", "ENCODING", "ht")
		c.Do("COPY", "ht", "ht2")
		c.Do("OBJECT", "ENCODING", "ht2")
		c.DoSorted("SMEMBERS", "ht2")
		c.Do("COPY", "ht", "ht", "DB", "1")
		c.Do("MOVE", "ht2", "2")
		// An intset past a lowered limit stays an intset.
		c.Do("CONFIG", "SET", "set-max-intset-entries", "2")
		c.Do("COPY", "i", "i3")
		c.Do("OBJECT", "ENCODING", "i3")
		c.Do("SMEMBERS", "i3")
		c.Do("COPY", "i", "i", "DB", "1")
		c.Do("MOVE", "i3", "2")
		// DUMP and RESTORE: the limit of now decides.
		restore := "redis.call('RESTORE', KEYS[2], 0, redis.call('DUMP', KEYS[1])); return redis.call('OBJECT', 'ENCODING', KEYS[2])"
		c.Do("EVAL", restore, "2", "i", "ri")
		c.Do("EVAL", restore, "2", "ht", "rht")
		c.Do("CONFIG", "SET", "set-max-intset-entries", "512")
		c.Do("EVAL", restore, "2", "i", "ri2")
		c.Do("EVAL", restore, "2", "ht", "rht2")
		c.Do("SMEMBERS", "rht2")
		for _, db := range []string{"1", "2"} {
			c.Do("SELECT", db)
			c.Do("OBJECT", "ENCODING", "ht")
			c.Do("OBJECT", "ENCODING", "ht2")
			c.Do("OBJECT", "ENCODING", "i")
			c.Do("OBJECT", "ENCODING", "i3")
			c.Do("SMEMBERS", "i")
		}
		c.Do("SELECT", "0")
		// A hash and a sorted set made large, then emptied down to a few.
		hset, hdel := []string{"HSET", "h"}, []string{"HDEL", "h"}
		zadd := []string{"ZADD", "z"}
		for i := range 600 {
			f := "f" + strconv.Itoa(i)
			hset = append(hset, f, "v")
			if i >= 5 {
				hdel = append(hdel, f)
			}
			if i < 200 {
				zadd = append(zadd, strconv.Itoa(i), "m"+strconv.Itoa(i))
			}
		}
		c.Do(hset...)
		c.Do(hdel...)
		c.Do(zadd...)
		c.Do("ZREMRANGEBYRANK", "z", "0", "194")
		for _, k := range []string{"h", "z"} {
			c.Do("OBJECT", "ENCODING", k)
			c.Do("COPY", k, k+"2")
			c.Do("OBJECT", "ENCODING", k+"2")
			c.Do("COPY", k, k, "DB", "3")
		}
		c.DoSorted("HGETALL", "h2")
		c.Do("ZRANGE", "z2", "0", "-1", "WITHSCORES")
		// A listpack past a lowered zset-max-listpack-entries stays one;
		// the next insert into the copy converts it.
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "300")
		c.Do(append([]string{"ZADD", "zl"}, zadd[2:]...)...)
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128")
		c.Do("COPY", "zl", "zl2")
		c.Do("OBJECT", "ENCODING", "zl2")
		c.Do("MOVE", "zl", "3")
		c.Do("ZADD", "zl2", "1000", "new")
		c.Do("OBJECT", "ENCODING", "zl2")
		c.Do("SELECT", "3")
		for _, k := range []string{"h", "z", "zl"} {
			c.Do("OBJECT", "ENCODING", k)
		}
		c.Do("SELECT", "0")
	})
}
