package integration_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX, LSET,
// LRANGE, LTRIM, LREM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP.

func TestListPushPop(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "a", "b", "c")
		c.Do("LPUSH", "l", "x", "y", "z") // z ends up at the head
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LLEN", "l")
		c.Do("LLEN", "nokey")
		c.Do("LPUSHX", "l", "p")
		c.Do("RPUSHX", "l", "q", "r")
		c.Do("LPUSHX", "nokey", "p")
		c.Do("RPUSHX", "nokey", "p", "q")
		c.Do("LLEN", "nokey")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LPOP", "l")
		c.Do("RPOP", "l")
		c.Do("LPOP", "l", "2")
		c.Do("RPOP", "l", "2") // the tail first
		c.Do("LPOP", "l", "0")
		c.Do("RPOP", "l", "0")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LPOP", "l", "100") // what is there, then the key is gone
		c.Do("LLEN", "l")
		c.Do("LPOP", "l")
		c.Do("RPOP", "l")
		c.Do("LPOP", "l", "1") // a null array: *-1 in RESP2, _ in RESP3
		c.Do("RPOP", "l", "0")
		c.Do("RPOP", "nokey", "5")
		c.Do("RPUSH", "l", "only")
		c.Do("RPOP", "l")
		c.Do("DBSIZE")
		c.Do("RPUSH", "l", "a", "b", "c")
		c.Do("RPOP", "l", "3")
		c.Do("DBSIZE")
		// Count errors, checked before the key.
		for _, bad := range []string{"-1", "abc", "", "1.5", "+1", "01", "-9223372036854775808", "9223372036854775808"} {
			c.Error("LPOP", "l", bad)
			c.Error("RPOP", "nokey", bad)
		}
		c.Error("LPOP", "l", "1", "2")
		c.Error("RPOP", "l", "1", "2", "3")
		c.Error("LPOP")
		c.Error("LPUSH", "l")
		c.Error("RPUSHX", "l")
		c.Do("LPOP", "big", "9223372036854775807")
		c.Do("RPUSH", "big", "1", "2")
		c.Do("LPOP", "big", "9223372036854775807")
	})
}

func TestListBinarySafe(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "", "\x00", "\r\n", "\xff\xfe", "")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LINDEX", "l", "0")
		c.Do("LPOS", "l", "")
		c.Do("LPOS", "l", "", "COUNT", "0")
		c.Do("LREM", "l", "0", "")
		c.Do("LINSERT", "l", "BEFORE", "\r\n", "\x00\x00")
		c.Do("LSET", "l", "-1", "")
		c.Do("LRANGE", "l", "0", "-1")
		big := strings.Repeat("\x00\xee", 40000)
		c.Do("LPUSH", "l", big)
		c.Do("LINDEX", "l", "0")
		c.Do("LPOS", "l", big)
		c.Do("RPUSH", "\x00k\r\n", "v")
		c.Do("LRANGE", "\x00k\r\n", "0", "0")
	})
}

func TestListIndexSet(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "a", "b", "c", "d")
		for _, i := range []string{"0", "1", "3", "4", "100", "-1", "-4", "-5", "-100", "9223372036854775807", "-9223372036854775808"} {
			c.Do("LINDEX", "l", i)
		}
		c.Do("LINDEX", "nokey", "0")
		c.Do("LINDEX", "nokey", "abc") // the key is looked at first
		for _, bad := range []string{"abc", "", "1.0", "+1", "01", "9223372036854775808"} {
			c.Error("LINDEX", "l", bad)
		}
		c.Do("LSET", "l", "0", "A")
		c.Do("LSET", "l", "-1", "D")
		c.Do("LSET", "l", "2", "")
		c.Do("LRANGE", "l", "0", "-1")
		c.Error("LSET", "l", "4", "x")
		c.Error("LSET", "l", "-5", "x")
		c.Error("LSET", "l", "abc", "x")
		c.Error("LSET", "l", "9223372036854775807", "x")
		c.Error("LSET", "nokey", "0", "x")
		c.Error("LSET", "nokey", "abc", "x") // no such key comes first
		c.Do("DBSIZE")
		c.Error("LINDEX", "l")
		c.Error("LSET", "l", "0")
	})
}

func TestListRange(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
		idx := []string{"0", "1", "5", "9", "10", "100", "-1", "-2", "-10", "-11", "-100", "9223372036854775807", "-9223372036854775808"}
		for _, start := range idx {
			for _, stop := range idx {
				c.Do("LRANGE", "l", start, stop)
			}
		}
		c.Do("LRANGE", "nokey", "0", "-1")
		// The indexes are parsed before the key is looked at.
		c.Error("LRANGE", "nokey", "abc", "1")
		c.Error("LRANGE", "l", "0", "x")
		c.Error("LRANGE", "l", "1.5", "2")
		c.Error("LRANGE", "l", "0")
	})
}

func TestListTrim(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		cases := [][2]string{
			{"0", "-1"}, {"1", "-2"}, {"2", "4"}, {"-3", "-1"}, {"5", "100"}, {"-100", "2"},
			{"3", "1"}, {"10", "20"}, {"0", "0"}, {"-1", "-1"}, {"-9223372036854775808", "9223372036854775807"},
		}
		for i, tc := range cases {
			key := "l" + strconv.Itoa(i)
			c.Do("RPUSH", key, "a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
			c.Do("LTRIM", key, tc[0], tc[1])
			c.Do("LRANGE", key, "0", "-1")
			c.Do("LLEN", key)
		}
		c.Do("DBSIZE") // the trims to nothing deleted their keys
		c.Do("LTRIM", "nokey", "0", "1")
		c.Error("LTRIM", "nokey", "x", "1")
		c.Error("LTRIM", "l0", "0", "1e3")
		c.Error("LTRIM", "l0", "0")
		// Trimming then pushing reuses the list.
		c.Do("LTRIM", "l0", "8", "9")
		c.Do("LPUSH", "l0", "new")
		c.Do("RPUSH", "l0", "tail")
		c.Do("LRANGE", "l0", "0", "-1")
	})
}

func TestListRem(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for i, count := range []string{"0", "1", "2", "-1", "-2", "100", "-100", "9223372036854775807", "-9223372036854775808"} {
			key := "l" + strconv.Itoa(i)
			c.Do("RPUSH", key, "a", "b", "a", "c", "a", "b", "a")
			c.Do("LREM", key, count, "a")
			c.Do("LRANGE", key, "0", "-1")
			c.Do("LREM", key, count, "nosuch")
		}
		c.Do("RPUSH", "all", "x", "x", "x")
		c.Do("LREM", "all", "0", "x")
		c.Do("LLEN", "all")
		c.Do("DBSIZE")
		c.Do("LREM", "nokey", "0", "x")
		c.Error("LREM", "nokey", "x", "x") // the count is parsed first
		c.Error("LREM", "l0", "1.0", "a")
		c.Error("LREM", "l0", "1")
	})
}

func TestListInsert(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "a", "b", "c", "b")
		c.Do("LINSERT", "l", "BEFORE", "b", "x") // the first b
		c.Do("LINSERT", "l", "after", "b", "y")
		c.Do("LINSERT", "l", "Before", "a", "head")
		c.Do("LINSERT", "l", "AFTER", "b", "z")
		c.Do("LINSERT", "l", "AFTER", "c", "w")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LINSERT", "l", "AFTER", "nosuch", "v")
		c.Do("LINSERT", "nokey", "BEFORE", "a", "v")
		c.Do("LLEN", "nokey")
		c.Error("LINSERT", "l", "MIDDLE", "a", "v")
		c.Error("LINSERT", "nokey", "middle", "a", "v") // syntax before the key
		c.Error("LINSERT", "l", "BEFORE", "a")
		// Inserting at the tail end of the list and near both ends of a
		// longer one.
		c.Do("LINSERT", "l", "AFTER", "w", "end")
		for i := range 50 {
			c.Do("RPUSH", "long", strconv.Itoa(i))
		}
		c.Do("LPUSH", "long", "h1", "h2")
		c.Do("LINSERT", "long", "BEFORE", "3", "near-head")
		c.Do("LINSERT", "long", "AFTER", "45", "near-tail")
		c.Do("LRANGE", "long", "0", "-1")
	})
}

func TestListPos(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "a", "b", "c", "a", "b", "c", "a", "x")
		opts := [][]string{
			{}, {"RANK", "1"}, {"RANK", "2"}, {"RANK", "3"}, {"RANK", "4"}, {"RANK", "-1"}, {"RANK", "-3"}, {"RANK", "-4"},
			{"COUNT", "0"}, {"COUNT", "1"}, {"COUNT", "2"}, {"COUNT", "10"},
			{"RANK", "2", "COUNT", "0"}, {"RANK", "-2", "COUNT", "2"}, {"RANK", "5", "COUNT", "0"},
			{"MAXLEN", "1"}, {"MAXLEN", "3"}, {"MAXLEN", "4"}, {"MAXLEN", "0"},
			{"COUNT", "0", "MAXLEN", "5"}, {"RANK", "-1", "MAXLEN", "2"}, {"RANK", "-1", "MAXLEN", "3"},
			{"rank", "1", "count", "1", "maxlen", "100"}, {"RANK", "1", "RANK", "2"}, {"COUNT", "2", "COUNT", "0"},
			{"RANK", "9223372036854775807"}, {"RANK", "-9223372036854775807"}, {"RANK", "-9223372036854775808"},
			{"RANK", "-9223372036854775808", "COUNT", "2"}, {"MAXLEN", "9223372036854775807"},
		}
		for _, elem := range []string{"a", "b", "x", "nosuch"} {
			for _, o := range opts {
				c.Do(append([]string{"LPOS", "l", elem}, o...)...)
			}
		}
		c.Do("LPOS", "nokey", "a")
		c.Do("LPOS", "nokey", "a", "COUNT", "0")
		c.Do("LPOS", "nokey", "a", "RANK", "-1")
		// Option errors come before the key.
		for _, o := range [][]string{
			{"RANK", "0"}, {"RANK", "abc"}, {"RANK", ""}, {"RANK", "9223372036854775808"},
			{"COUNT", "-1"}, {"COUNT", "abc"}, {"COUNT", "1.5"}, {"MAXLEN", "-1"}, {"MAXLEN", "x"},
			{"RANK"}, {"COUNT"}, {"MAXLEN"}, {"FOO", "1"}, {"RANK", "1", "COUNT"}, {"RANK", "0", "COUNT", "-1"},
			{"COUNT", "-1", "RANK", "0"},
		} {
			c.Error(append([]string{"LPOS", "l", "a"}, o...)...)
			c.Error(append([]string{"LPOS", "nokey", "a"}, o...)...)
		}
		c.Error("LPOS", "l")
	})
}

func TestListWrongType(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		makeString(c, "s")
		c.Do("HSET", "h", "f", "v")
		for _, key := range []string{"s", "h"} {
			c.Error("LPUSH", key, "a")
			c.Error("RPUSH", key, "a")
			c.Error("LPUSHX", key, "a")
			c.Error("RPUSHX", key, "a")
			c.Error("LPOP", key)
			c.Error("RPOP", key)
			c.Error("LPOP", key, "0")
			c.Error("RPOP", key, "2")
			c.Error("LLEN", key)
			c.Error("LINDEX", key, "0")
			c.Error("LINDEX", key, "abc") // the type is checked first
			c.Error("LSET", key, "0", "x")
			c.Error("LSET", key, "abc", "x")
			c.Error("LRANGE", key, "0", "-1")
			c.Error("LTRIM", key, "0", "-1")
			c.Error("LREM", key, "0", "a")
			c.Error("LINSERT", key, "BEFORE", "a", "b")
			c.Error("LPOS", key, "a")
			c.Error("LPOS", key, "a", "COUNT", "0")
			// Arguments are parsed before the type is checked.
			c.Error("LPOP", key, "-1")
			c.Error("LRANGE", key, "x", "1")
			c.Error("LTRIM", key, "0", "x")
			c.Error("LREM", key, "x", "a")
			c.Error("LINSERT", key, "MIDDLE", "a", "b")
			c.Error("LPOS", key, "a", "RANK", "0")
		}
		c.Do("HGETALL", "h") // unchanged
	})
}

// TestListLong pushes and pops many elements at both ends, so the deque
// wraps around and grows and shrinks, checking contents on the way.
func TestListLong(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for i := range 300 {
			v := strconv.Itoa(i)
			if i%3 == 0 {
				c.Do("LPUSH", "l", v, v+"x")
			} else {
				c.Do("RPUSH", "l", v)
			}
			if i%7 == 0 {
				c.Do("LPOP", "l")
			}
			if i%11 == 0 {
				c.Do("RPOP", "l", "2")
			}
		}
		c.Do("LLEN", "l")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LRANGE", "l", "-50", "-40")
		c.Do("LINDEX", "l", "150")
		c.Do("LPOS", "l", "150", "RANK", "-1")
		c.Do("LREM", "l", "0", "99")
		c.Do("LTRIM", "l", "20", "-20")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("LPOP", "l", "200")
		c.Do("RPOP", "l", "10")
		c.Do("LRANGE", "l", "0", "-1")
		big := make([]string, 0, 10002)
		big = append(big, "RPUSH", "big")
		for i := range 10000 {
			big = append(big, strconv.Itoa(i))
		}
		c.Do(big...)
		c.Do("LINDEX", "big", "5000")
		c.Do("LPOS", "big", "9999", "MAXLEN", "9999")
		c.Do("LPOS", "big", "9999", "MAXLEN", "10000")
		c.Do("LPOP", "big", "9990")
		c.Do("LRANGE", "big", "0", "-1")
	})
}

// TestListTransaction checks queuing in MULTI and which list commands
// invalidate a WATCH: the ones that change the list (and LTRIM, always).
func TestListTransaction(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MULTI")
		c.Do("RPUSH", "l", "a", "b")
		c.Do("LPOP", "l", "x")
		c.Do("LPOP", "l", "1", "2") // the command's own arity check: fails in EXEC
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("EXEC")
		other := c.OtherClient()
		for _, step := range [][]string{
			{"LREM", "l", "0", "nosuch"},              // no change
			{"LINSERT", "l", "BEFORE", "nosuch", "x"}, // no change
			{"LPOP", "l", "0"},                        // no change
			{"LPUSHX", "nokey", "x"},                  // another key
			{"LTRIM", "l", "0", "-1"},                 // signalled even unchanged
			{"LSET", "l", "0", "a"},
			{"RPUSH", "l", "c"},
			{"LREM", "l", "1", "c"},
		} {
			c.Do("WATCH", "l")
			other.Do(step...)
			c.Do("MULTI")
			c.Do("LLEN", "l")
			c.Do("EXEC")
		}
	})
}

// TestListWithKeyCommands needs DEL, EXISTS, TYPE, EXPIRE, TTL and OBJECT
// from the strings/keys part of the server: it skips until they are there.
func TestListWithKeyCommands(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		needCommands(t, c, "DEL", "EXISTS", "TYPE", "EXPIRE", "TTL", "OBJECT", "SET")
		c.Do("RPUSH", "l", "a", "b", "c")
		c.Do("TYPE", "l")
		c.Do("OBJECT", "ENCODING", "l")
		c.Do("EXPIRE", "l", "100")
		c.Do("LPUSH", "l", "z")
		c.Do("LPOP", "l")
		c.Do("LSET", "l", "0", "A")
		c.Do("LINSERT", "l", "AFTER", "A", "B")
		c.Do("LREM", "l", "1", "B")
		c.Do("LTRIM", "l", "0", "1")
		c.Do("TTL", "l") // in-place changes keep the TTL
		c.Do("RPOP", "l", "5")
		c.Do("EXISTS", "l")
		c.Do("RPUSH", "l", "x")
		c.Do("TTL", "l")
		c.Do("SET", "s", "v")
		c.Error("RPUSH", "s", "x")
		c.Do("DEL", "l")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("RPUSH", "long", strings.Repeat("x", 10000))
		c.Do("OBJECT", "ENCODING", "long")
	})
}

// TestListRandomOps sends the same seeded random sequence of list commands
// to both servers and compares every reply.
func TestListRandomOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		r := rand.New(rand.NewPCG(13, uint64(c.proto)))
		pick := func(prefix string, n int) string { return prefix + strconv.Itoa(r.IntN(n)) }
		idx := func() string { return strconv.Itoa(r.IntN(30) - 15) }
		for range 3000 {
			key, v := pick("l", 3), pick("v", 6)
			switch r.IntN(16) {
			case 0, 1:
				c.Do("RPUSH", key, v, pick("v", 6))
			case 2, 3:
				c.Do("LPUSH", key, v)
			case 4:
				c.Do("LPUSHX", key, v)
				c.Do("RPUSHX", key, v)
			case 5:
				c.Do("LPOP", key)
			case 6:
				c.Do("RPOP", key, strconv.Itoa(r.IntN(4)))
			case 7:
				c.Do("LRANGE", key, idx(), idx())
			case 8:
				c.Do("LTRIM", key, idx(), strconv.Itoa(r.IntN(20)))
			case 9:
				c.Do("LREM", key, strconv.Itoa(r.IntN(5)-2), v)
			case 10:
				c.Do("LINSERT", key, []string{"BEFORE", "AFTER"}[r.IntN(2)], v, pick("w", 3))
			case 11:
				c.Do("LINDEX", key, idx())
			case 12:
				c.Do("LSET", key, idx(), pick("s", 3))
			case 13:
				c.Do("LPOS", key, v, "RANK", []string{"1", "2", "-1", "-2"}[r.IntN(4)], "COUNT", strconv.Itoa(r.IntN(3)), "MAXLEN", strconv.Itoa(r.IntN(12)))
			case 14:
				c.Do("LLEN", key)
				c.Do("LRANGE", key, "0", "-1")
			case 15:
				c.Do("HSET", pick("l", 4), "f", "v") // WRONGTYPE on a list, or a hash
			}
		}
		c.Do("DBSIZE")
	})
}

// LMOVE, RPOPLPUSH, LMPOP: the list moves of Redis 7.0.
func TestListMove(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "src", "a", "b", "c", "d")
		c.Do("LMOVE", "src", "dst", "LEFT", "RIGHT") // creates dst
		c.Do("LMOVE", "src", "dst", "right", "left")
		c.Do("LMOVE", "src", "dst", "Left", "Left")
		c.Do("LMOVE", "src", "dst", "RIGHT", "RIGHT") // src's last: src goes
		c.Do("EXISTS", "src")
		c.Do("LRANGE", "dst", "0", "-1")
		c.Do("LMOVE", "src", "dst", "LEFT", "RIGHT") // missing source: null
		c.Do("LMOVE", "dst", "dst", "LEFT", "RIGHT") // rotation
		c.Do("LMOVE", "dst", "dst", "RIGHT", "LEFT")
		c.Do("LMOVE", "dst", "dst", "LEFT", "LEFT")
		c.Do("LRANGE", "dst", "0", "-1")
		c.Do("RPUSH", "one", "x")
		c.Do("LMOVE", "one", "one", "LEFT", "RIGHT") // stays
		c.Do("LRANGE", "one", "0", "-1")
		c.Do("RPOPLPUSH", "one", "one")
		c.Do("RPOPLPUSH", "dst", "other")
		c.Do("RPOPLPUSH", "dst", "other")
		c.Do("LRANGE", "other", "0", "-1")
		c.Do("RPOPLPUSH", "nokey", "other")
		c.Do("EXPIRE", "dst", "100")
		c.Do("LMOVE", "dst", "other", "LEFT", "LEFT")
		c.Do("TTL", "dst")
		c.Do("SET", "str", "v")
		c.Error("LMOVE", "str", "dst", "LEFT", "LEFT")
		c.Error("LMOVE", "dst", "str", "LEFT", "LEFT")
		c.Error("RPOPLPUSH", "str", "dst")
		c.Error("RPOPLPUSH", "dst", "str")
		c.Do("LMOVE", "nokey", "str", "LEFT", "LEFT") // missing source first
		c.Do("RPOPLPUSH", "nokey", "str")
		c.Do("LRANGE", "dst", "0", "-1")
		c.Error("LMOVE", "dst", "str", "UP", "LEFT") // syntax before the keys
		c.Error("LMOVE", "str", "dst", "LEFT", "DOWN")
		c.Error("LMOVE", "nokey", "dst", "LEFT", "LEFTX")
		c.Error("LMOVE", "dst", "other", "LEFT")
		c.Error("RPOPLPUSH", "dst")
		c.Error("RPOPLPUSH", "dst", "other", "x")
		c.Do("LLEN", "dst")
		c.Do("LLEN", "other")
		c.Do("DBSIZE")
	})
}

func TestListMpop(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "a", "1", "2", "3", "4", "5")
		c.Do("RPUSH", "b", "x", "y")
		c.Do("LMPOP", "2", "nokey", "a", "LEFT")
		c.Do("LMPOP", "2", "nokey", "a", "RIGHT", "COUNT", "2") // tail first
		c.Do("LMPOP", "1", "a", "left", "count", "10")          // a goes
		c.Do("EXISTS", "a")
		c.Do("LMPOP", "3", "a", "nokey", "b", "RIGHT")
		c.Do("LMPOP", "2", "a", "nokey", "LEFT") // null array
		c.Do("LMPOP", "1", "b", "LEFT", "COUNT", "9223372036854775807")
		c.Do("DBSIZE")
		c.Do("SET", "s", "v")
		c.Do("RPUSH", "l", "e")
		c.Error("LMPOP", "2", "s", "l", "LEFT")
		c.Do("LMPOP", "2", "nokey", "l", "LEFT") // before s: not reached
		c.Do("RPUSH", "l", "e")
		c.Do("LMPOP", "2", "l", "s", "LEFT") // the first list wins
		c.Error("LMPOP", "2", "nokey", "s", "LEFT")
		for _, bad := range []string{"0", "-1", "x", "", "1.5", "9223372036854775808"} {
			c.Error("LMPOP", bad, "l", "LEFT")
		}
		c.Error("LMPOP", "2", "l", "LEFT")      // where is missing
		c.Error("LMPOP", "3", "l", "x", "LEFT") // ditto
		c.Error("LMPOP", "1", "l", "UP")        // bad where
		c.Error("LMPOP", "1", "l", "LEFT", "COUNT")
		c.Error("LMPOP", "1", "l", "LEFT", "COUNT", "1", "COUNT", "1")
		c.Error("LMPOP", "1", "l", "LEFT", "FOO")
		for _, bad := range []string{"0", "-1", "x", "", "9223372036854775808"} {
			c.Error("LMPOP", "1", "l", "LEFT", "COUNT", bad)
			c.Error("LMPOP", "1", "s", "LEFT", "COUNT", bad) // options before the keys
		}
		c.Error("LMPOP", "1", "l")
		c.Error("LMPOP", "1")
	})
}
