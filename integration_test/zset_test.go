package integration_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Sorted sets: ZADD, ZINCRBY, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZSCORE,
// ZMSCORE, ZRANK, ZREVRANK, ZRANGE (all forms), ZRANGEBYSCORE,
// ZREVRANGEBYSCORE, ZREVRANGE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZRANGESTORE,
// ZREMRANGEBYSCORE/RANK/LEX, ZPOPMIN, ZPOPMAX, ZRANDMEMBER.

// zsetCommands are the commands whose COMMAND INFO and DOCS must match.
var zsetCommands = []string{
	"zadd", "zincrby", "zrem", "zcard", "zcount", "zlexcount", "zscore", "zmscore",
	"zrank", "zrevrank", "zrange", "zrangebyscore", "zrevrangebyscore", "zrevrange",
	"zrangebylex", "zrevrangebylex", "zrangestore", "zremrangebyscore",
	"zremrangebyrank", "zremrangebylex", "zpopmin", "zpopmax", "zrandmember",
	"zunionstore", "zinterstore", "zdiffstore", "zunion", "zinter", "zdiff", "zintercard", "zmpop", "zscan",
}

func TestZsetCommandInfo(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, name := range zsetCommands {
			c.Do("COMMAND", "INFO", name)
			c.DoMasked(maskDocs, "COMMAND", "DOCS", name)
		}
		c.Do("COMMAND", "GETKEYS", "ZRANGESTORE", "dst", "src", "0", "-1")
		c.Do("COMMAND", "GETKEYS", "ZADD", "k", "1", "m")
		c.Do("COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2")
		c.Do("COMMAND", "GETKEYS", "ZINTERCARD", "3", "a", "b", "c", "LIMIT", "1")
	})
}

func TestZaddOptions(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a")
		c.Do("ZADD", "z", "1", "a") // same score: 0
		c.Do("ZADD", "z", "2", "a", "3", "b", "0", "")
		c.Do("ZADD", "z", "CH", "2", "a", "5", "b", "7", "c")
		c.Do("ZADD", "z", "ch", "1", "a", "1", "a", "2", "a") // the same member twice
		c.Do("ZADD", "z", "NX", "100", "a", "4", "d")
		c.Do("ZADD", "z", "XX", "100", "a", "4", "e")
		c.Do("ZADD", "z", "XX", "CH", "101", "a", "4", "e")
		c.Do("ZADD", "z", "GT", "CH", "50", "a", "200", "b", "1", "new")
		c.Do("ZADD", "z", "LT", "CH", "50", "a", "300", "b")
		c.Do("ZADD", "z", "XX", "GT", "60", "a", "1", "zz")
		c.Do("ZADD", "z", "xx", "lt", "ch", "55", "a")
		c.Do("ZADD", "z", "Nx", "cH", "9", "f")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Do("ZADD", "z", "INCR", "5", "a")
		c.Do("ZADD", "z", "INCR", "NX", "5", "a")
		c.Do("ZADD", "z", "INCR", "XX", "5", "nosuch")
		c.Do("ZADD", "z", "INCR", "GT", "-5", "a")
		c.Do("ZADD", "z", "INCR", "LT", "-5", "a")
		c.Do("ZADD", "z", "INCR", "LT", "0", "a") // unchanged: the score
		c.Do("ZADD", "z", "INCR", "1.5", "inc")
		c.Do("ZADD", "nokey", "XX", "1", "a")
		c.Do("ZADD", "nokey", "XX", "INCR", "1", "a")
		c.Do("EXISTS", "nokey")
		c.Do("ZADD", "z", "INCR", "+inf", "a")
		c.Error("ZADD", "z", "INCR", "-inf", "a")
		c.Do("ZSCORE", "z", "a")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Do("ZADD", "z", "INCR", "ch", "1", "x")
		// Error order: pairs, NX+XX, GT/LT+NX, INCR pairs, floats, type.
		c.Error("ZADD", "z", "1", "a", "2")
		c.Error("ZADD", "z", "NX", "XX", "GT", "1")
		c.Error("ZADD", "z", "NX", "XX", "1", "a")
		c.Error("ZADD", "z", "NX", "XX", "GT", "LT", "abc", "a")
		c.Error("ZADD", "z", "GT", "LT", "1", "a")
		c.Error("ZADD", "z", "GT", "NX", "abc", "a")
		c.Error("ZADD", "z", "LT", "NX", "1", "a")
		c.Error("ZADD", "z", "INCR", "1", "a", "2", "b")
		c.Error("ZADD", "z", "INCR", "GT", "LT", "1", "a", "2", "b")
		c.Error("ZADD", "z", "1", "a", "nan", "b")
		c.Error("ZADD", "z", "1", "a", "", "b")
		c.Error("ZADD", "z", "1", "a", " 1", "b")
		c.Error("ZADD", "z", "1e400", "b")
		c.Error("ZADD", "z", "1", "a", "2", "b", "x")
		c.Error("ZADD", "z", "CH")
		c.Error("ZADD", "z", "NX", "1")
		c.Error("ZADD", "z", "1")
		c.Error("ZADD", "z")
		c.Error("ZADD", "z", "XX", "NX")
		c.Do("ZCARD", "z") // nothing changed by the errors
		c.Do("ZADD", "z", "0x10", "hex", "1e3", "exp", ".5", "dot", "-Infinity", "ninf", "5.", "five")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		// Options are C strings: "nx\x00junk" is NX.
		c.Do("ZADD", "z", "nx\x00junk", "1", "a")
		c.Do("ZSCORE", "z", "a")
	})
}

func TestZincrby(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZINCRBY", "z", "1", "a")
		c.Do("ZINCRBY", "z", "2.5", "a")
		c.Do("ZINCRBY", "z", "-0.1", "a")
		c.Do("ZINCRBY", "z", "-0", "b") // replies -0, stores 0
		c.Do("ZSCORE", "z", "b")
		c.Do("ZINCRBY", "z", "1e308", "big")
		c.Do("ZINCRBY", "z", "1e308", "big") // inf
		c.Error("ZINCRBY", "z", "-inf", "big")
		c.Do("ZSCORE", "z", "big")
		c.Error("ZINCRBY", "z", "abc", "a")
		c.Error("ZINCRBY", "z", "nx", "a")
		c.Error("ZINCRBY", "z", "incr", "a")
		c.Error("ZINCRBY", "z", "1")
		c.Error("ZINCRBY", "z", "1", "a", "b")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
	})
}

func TestZsetReads(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "C", "-1.5", "neg", "0.1", "tenth", "1e20", "huge", "-inf", "lo", "+inf", "hi")
		c.Do("ZCARD", "z")
		c.Do("ZCARD", "nokey")
		for _, m := range []string{"a", "tenth", "huge", "lo", "hi", "nosuch", "C"} {
			c.Do("ZSCORE", "z", m)
			c.Do("ZRANK", "z", m)
			c.Do("ZREVRANK", "z", m)
		}
		c.Do("ZSCORE", "nokey", "a")
		c.Do("ZRANK", "nokey", "a")
		c.Do("ZREVRANK", "nokey", "a")
		c.Error("ZRANK", "z", "a", "WITHSCORE") // 7.2 only
		c.Do("ZMSCORE", "z", "a", "nosuch", "hi", "lo", "tenth")
		c.Do("ZMSCORE", "nokey", "a", "b")
		c.Error("ZMSCORE", "z")
		for _, r := range [][2]string{
			{"-inf", "+inf"}, {"1", "3"}, {"(1", "3"}, {"1", "(3"}, {"(1", "(3"}, {"3", "1"},
			{"", "3"}, {"(", "3"}, {" 1", "3"}, {"(-inf", "(+inf"}, {"inf", "inf"}, {"1e400", "+inf"},
		} {
			c.Do("ZCOUNT", "z", r[0], r[1])
		}
		for _, bad := range [][2]string{{"[1", "2"}, {"abc", "2"}, {"1", "(abc"}, {"nan", "1"}, {"1 ", "2"}} {
			c.Error("ZCOUNT", "z", bad[0], bad[1])
			c.Error("ZCOUNT", "nokey", bad[0], bad[1])
		}
		c.Do("ZCOUNT", "nokey", "0", "1")
	})
}

func TestZsetLex(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "", "0", "B", "0", "aa", "0", "\x00", "0", "\xff")
		ranges := [][2]string{
			{"-", "+"}, {"[a", "[c"}, {"(a", "(c"}, {"[aa", "+"}, {"-", "(b"}, {"(", "+"}, {"[", "[a"},
			{"+", "-"}, {"-", "-"}, {"+", "+"}, {"[c", "[a"}, {"[\x00", "[\xff"}, {"+\x00x", "-"},
		}
		for _, r := range ranges {
			c.Do("ZLEXCOUNT", "l", r[0], r[1])
			c.Do("ZRANGEBYLEX", "l", r[0], r[1])
			c.Do("ZREVRANGEBYLEX", "l", r[1], r[0])
			c.Do("ZRANGE", "l", r[0], r[1], "BYLEX")
			c.Do("ZRANGE", "l", r[1], r[0], "BYLEX", "REV")
			c.Do("ZRANGEBYLEX", "l", r[0], r[1], "LIMIT", "1", "2")
			c.Do("ZREVRANGEBYLEX", "l", r[1], r[0], "LIMIT", "1", "2")
		}
		for _, bad := range [][2]string{{"a", "+"}, {"-", "c"}, {"", "+"}, {"-x", "+"}, {"[a", "++"}} {
			c.Error("ZLEXCOUNT", "l", bad[0], bad[1])
			c.Error("ZRANGEBYLEX", "l", bad[0], bad[1])
			c.Error("ZREMRANGEBYLEX", "l", bad[0], bad[1])
			c.Error("ZLEXCOUNT", "nokey", bad[0], bad[1])
		}
		c.Error("ZRANGEBYLEX", "l", "-", "+", "WITHSCORES")
		c.Error("ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES")
		c.Error("ZRANGEBYLEX", "l", "-", "+", "LIMIT", "1")
		c.Error("ZRANGEBYLEX", "l", "-", "+", "BYLEX")
		c.Do("ZLEXCOUNT", "nokey", "-", "+")
		c.Do("ZRANGEBYLEX", "nokey", "-", "+")
		c.Do("ZREMRANGEBYLEX", "l", "[b", "(d")
		c.Do("ZRANGEBYLEX", "l", "-", "+")
		c.Do("ZREMRANGEBYLEX", "l", "-", "+")
		c.Do("EXISTS", "l")
		c.Do("ZREMRANGEBYLEX", "nokey", "-", "+")
	})
}

func TestZrangeForms(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "5", "f", "-0", "zero", "inf", "top")
		for _, r := range [][2]string{
			{"0", "-1"}, {"0", "0"}, {"-2", "-1"}, {"2", "1"}, {"-100", "100"}, {"5", "100"}, {"100", "200"},
			{"-9223372036854775808", "9223372036854775807"}, {"-1", "-100"},
		} {
			c.Do("ZRANGE", "z", r[0], r[1])
			c.Do("ZRANGE", "z", r[0], r[1], "WITHSCORES")
			c.Do("ZRANGE", "z", r[0], r[1], "REV", "WITHSCORES")
			c.Do("ZREVRANGE", "z", r[0], r[1])
			c.Do("ZREVRANGE", "z", r[0], r[1], "withscores")
		}
		for _, r := range [][2]string{{"-inf", "+inf"}, {"2", "5"}, {"(2", "(5"}, {"5", "2"}, {"0", "0"}, {"-0", "0"}, {"(-inf", "(inf"}} {
			c.Do("ZRANGEBYSCORE", "z", r[0], r[1])
			c.Do("ZRANGEBYSCORE", "z", r[0], r[1], "WITHSCORES")
			c.Do("ZREVRANGEBYSCORE", "z", r[1], r[0], "WITHSCORES")
			c.Do("ZRANGE", "z", r[0], r[1], "BYSCORE", "WITHSCORES")
			c.Do("ZRANGE", "z", r[1], r[0], "BYSCORE", "REV", "WITHSCORES")
			for _, lim := range [][2]string{{"0", "1"}, {"1", "2"}, {"0", "-1"}, {"0", "-5"}, {"-1", "2"}, {"3", "0"}, {"7", "1"}, {"100", "1"}, {"2", "9223372036854775807"}} {
				c.Do("ZRANGEBYSCORE", "z", r[0], r[1], "WITHSCORES", "LIMIT", lim[0], lim[1])
				c.Do("ZREVRANGEBYSCORE", "z", r[1], r[0], "LIMIT", lim[0], lim[1], "WITHSCORES")
				c.Do("ZRANGE", "z", r[1], r[0], "REV", "LIMIT", lim[0], lim[1], "BYSCORE")
			}
		}
		// Option words: any case, repeated WITHSCORES, C strings.
		c.Do("ZRANGE", "z", "0", "-1", "withscores", "WITHSCORES")
		c.Do("ZRANGE", "z", "(1", "5", "byscore", "rev")
		c.Do("ZRANGE", "z", "5", "(1", "byscore", "rev", "limit", "0", "2", "withscores", "limit", "1", "1")
		c.Do("ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1") // the quirk: count -1 is "no LIMIT"
		c.Do("ZRANGE", "z", "0", "-1", "LIMIT", "5", "-1")
		// Errors, in their order.
		c.Error("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1")
		c.Error("ZREVRANGE", "z", "0", "-1", "LIMIT", "0", "1")
		c.Error("ZRANGE", "z", "0", "-1", "REV", "REV")
		c.Error("ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX")
		c.Error("ZRANGE", "z", "0", "-1", "BYSCORE", "BYSCORE")
		c.Error("ZRANGEBYSCORE", "z", "0", "1", "BYSCORE")
		c.Error("ZRANGEBYSCORE", "z", "0", "1", "REV")
		c.Error("ZREVRANGEBYSCORE", "z", "0", "1", "REV")
		c.Error("ZREVRANGE", "z", "0", "1", "REV")
		c.Error("ZRANGE", "z", "0", "-1", "LIMIT")
		c.Error("ZRANGE", "z", "0", "-1", "BYSCORE", "LIMIT", "1")
		c.Error("ZRANGE", "z", "0", "-1", "BYSCORE", "LIMIT", "x", "1")
		c.Error("ZRANGE", "z", "0", "-1", "BYSCORE", "LIMIT", "1", "1.5")
		c.Error("ZRANGE", "z", "0", "-1", "LIMIT", "x", "1", "FOO") // integer error first
		c.Error("ZRANGE", "z", "0", "-1", "FOO", "LIMIT", "x", "1")
		c.Error("ZRANGE", "z", "0", "1.5")
		c.Error("ZRANGE", "z", "a", "1")
		c.Error("ZRANGE", "nokey", "a", "1")
		c.Error("ZRANGE", "z", "a", "1", "BYSCORE")
		c.Error("ZRANGEBYSCORE", "nokey", "[1", "2")
		c.Error("ZRANGE", "z", "0", "1", "BYLEX")
		c.Error("ZRANGE", "z", "0", "-1", "WITHSCORES", "BYLEX")
		c.Error("ZRANGE", "z", "0")
		c.Do("ZRANGE", "nokey", "0", "-1", "WITHSCORES")
		c.Do("ZRANGEBYSCORE", "nokey", "-inf", "+inf")
		c.Do("ZRANGE", "z", "0", "-1", "with\x00scores")
	})
}

func TestZrangestore(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "src", "1", "a", "2", "b", "3", "c", "4", "d")
		c.Do("ZRANGESTORE", "dst", "src", "0", "1")
		c.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
		c.Do("ZRANGESTORE", "dst", "src", "(1", "+inf", "BYSCORE", "LIMIT", "1", "5")
		c.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
		c.Do("ZRANGESTORE", "dst", "src", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "2")
		c.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
		c.Do("ZRANGESTORE", "dst", "src", "[b", "[c", "BYLEX")
		c.Do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
		c.Do("SET", "str", "v")
		c.Do("EXPIRE", "str", "100")
		c.Do("ZRANGESTORE", "str", "src", "0", "0") // overwrites another type, drops the TTL
		c.Do("TYPE", "str")
		c.Do("TTL", "str")
		c.Do("ZRANGESTORE", "dst", "src", "10", "20") // empty: deletes dst
		c.Do("EXISTS", "dst")
		c.Do("ZRANGESTORE", "dst", "nokey", "0", "-1")
		c.Do("ZRANGESTORE", "src", "src", "1", "2") // in place
		c.Do("ZRANGE", "src", "0", "-1", "WITHSCORES")
		c.Error("ZRANGESTORE", "dst", "src", "0", "-1", "WITHSCORES")
		c.Error("ZRANGESTORE", "dst", "src", "0", "-1", "LIMIT", "0", "1")
		c.Error("ZRANGESTORE", "dst", "src", "0", "-1", "BYLEX")
		c.Do("SET", "str2", "v")
		c.Error("ZRANGESTORE", "dst", "str2", "0", "-1")
		c.Error("ZRANGESTORE", "dst", "src", "0")
	})
}

// TestZsetStoreNegativeZero: a stored result keeps a -0 score where Redis
// builds it as a skiplist (a union, intersection or difference past the
// listpack thresholds; a rank range of ZRANGESTORE longer than 128) and
// loses it where Redis starts or ends with a listpack.
func TestZsetStoreNegativeZero(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		args := []string{"ZADD", "src"}
		for i := 1; i <= 200; i++ {
			args = append(args, strconv.Itoa(i), "m"+strconv.Itoa(i))
		}
		c.Do(args...)
		c.Do("ZADD", "src", "-0", "0") // a skiplist by now: it keeps -0
		c.Do("ZADD", "small", "5", "0", "1", "m1")
		for _, cmd := range [][]string{
			{"ZUNIONSTORE", "d", "1", "src"},
			{"ZUNIONSTORE", "d", "1", "src", "WEIGHTS", "-1"},
			{"ZINTERSTORE", "d", "2", "src", "src"},
			{"ZINTERSTORE", "d", "2", "src", "small", "WEIGHTS", "1", "0"},
			{"ZDIFFSTORE", "d", "2", "src", "small"},
			{"ZRANGESTORE", "d", "src", "0", "199"},
			{"ZRANGESTORE", "d", "src", "0", "128"},
			{"ZRANGESTORE", "d", "src", "0", "127"},
			{"ZRANGESTORE", "d", "src", "-1", "300", "BYSCORE"},
			{"ZRANGESTORE", "d", "src", "-", "+", "BYLEX"},
		} {
			c.Do(cmd...)
			c.Do("ZSCORE", "d", "0")
			c.Do("OBJECT", "ENCODING", "d")
		}
	})
}

func TestZremAndRemRange(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
		c.Do("ZREM", "z", "a", "nosuch", "a")
		c.Do("ZREM", "z", "nosuch")
		c.Do("ZREM", "nokey", "a")
		c.Do("ZREMRANGEBYSCORE", "z", "(2", "3")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Do("ZREMRANGEBYSCORE", "z", "10", "1")
		c.Do("ZREMRANGEBYSCORE", "nokey", "0", "1")
		c.Do("ZREMRANGEBYRANK", "z", "-1", "-1")
		c.Do("ZREMRANGEBYRANK", "z", "5", "10")
		c.Do("ZREMRANGEBYRANK", "z", "1", "0")
		c.Do("ZREMRANGEBYRANK", "nokey", "0", "-1")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Error("ZREMRANGEBYRANK", "z", "a", "1")
		c.Error("ZREMRANGEBYRANK", "z", "0", "1.0")
		c.Error("ZREMRANGEBYRANK", "nokey", "0", "x")
		c.Error("ZREMRANGEBYSCORE", "z", "x", "1")
		c.Error("ZREMRANGEBYSCORE", "nokey", "1", "x")
		c.Error("ZREMRANGEBYSCORE", "z", "1")
		c.Do("ZREM", "z", "b", "d")
		c.Do("EXISTS", "z")
		c.Do("ZADD", "z", "1", "a", "2", "b")
		c.Do("ZREMRANGEBYRANK", "z", "0", "-1")
		c.Do("EXISTS", "z")
		c.Do("ZADD", "z", "1", "a", "2", "b")
		c.Do("ZREMRANGEBYSCORE", "z", "-inf", "+inf")
		c.Do("EXISTS", "z")
		c.Error("ZREM", "z")
	})
}

func TestZpop(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f")
		c.Do("ZPOPMIN", "z")
		c.Do("ZPOPMAX", "z")
		c.Do("ZPOPMIN", "z", "1")
		c.Do("ZPOPMAX", "z", "2")
		c.Do("ZPOPMIN", "z", "0")
		c.Do("ZPOPMAX", "z", "100")
		c.Do("EXISTS", "z")
		c.Do("ZPOPMIN", "z")
		c.Do("ZPOPMIN", "nokey", "3")
		c.Do("ZPOPMAX", "nokey", "0")
		c.Error("ZPOPMIN", "z", "-1")
		c.Error("ZPOPMIN", "z", "abc")
		c.Error("ZPOPMIN", "z", "-0")
		c.Error("ZPOPMAX", "z", "1", "2")
		c.Error("ZPOPMAX", "nokey", "1.5")
		c.Do("SET", "s", "v")
		c.Error("ZPOPMIN", "s", "0") // WRONGTYPE before the zero count
		c.Error("ZPOPMIN", "s")
		c.Error("ZPOPMIN", "s", "-1")
		c.Do("ZADD", "z", "1", "a", "1", "b")
		c.Do("ZPOPMAX", "z", "9223372036854775807")
	})
}

func TestZrandmember(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c")
		// Deterministic cases: the whole set, in order, or one member.
		c.Do("ZRANDMEMBER", "z", "3")
		c.Do("ZRANDMEMBER", "z", "10", "WITHSCORES")
		c.Do("ZRANDMEMBER", "z", "9223372036854775807")
		c.Do("ZRANDMEMBER", "z", "0")
		c.Do("ZRANDMEMBER", "nokey")
		c.Do("ZRANDMEMBER", "nokey", "5")
		c.Do("ZRANDMEMBER", "nokey", "-5", "WITHSCORES")
		c.DoLoosely("ZRANDMEMBER", "z")
		c.DoLoosely("ZRANDMEMBER", "z", "2")
		c.DoLoosely("ZRANDMEMBER", "z", "2", "withscores")
		c.DoLoosely("ZRANDMEMBER", "z", "-7")
		c.DoLoosely("ZRANDMEMBER", "z", "-7", "WITHSCORES")
		c.DoLoosely("ZRANDMEMBER", "z", "1", "WITHSCORES")
		c.Error("ZRANDMEMBER", "z", "-9223372036854775808")
		c.Error("ZRANDMEMBER", "z", "9223372036854775807", "WITHSCORES")
		c.Error("ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES")
		c.Do("ZRANDMEMBER", "z", "4611686018427387903", "WITHSCORES")
		c.Error("ZRANDMEMBER", "z", "1", "foo")
		c.Error("ZRANDMEMBER", "z", "1", "WITHSCORES", "x")
		c.Error("ZRANDMEMBER", "z", "x")
		c.Error("ZRANDMEMBER", "nokey", "x", "WITHSCORES")
		c.Do("SET", "s", "v")
		c.Error("ZRANDMEMBER", "s")
		c.Error("ZRANDMEMBER", "s", "0")
	})
}

// TestZrandmemberHugeCount: Redis would build a reply of billions of
// members; cellserver refuses, with its own error, before writing anything.
func TestZrandmemberHugeCount(t *testing.T) {
	c := newPair(t)
	// Only cellserver is asked: redis-server would take the machine down.
	if _, err := c.cell.Do("ZADD", "z", "1", "a"); err != nil {
		t.Fatal(err)
	}
	cell, err := c.cell.Do("ZRANDMEMBER", "z", "-9223372036854775807")
	if err != nil {
		t.Fatal(err)
	}
	if string(cell) != "-ERR value is out of range, the reply would be too large\r\n" {
		t.Errorf("ZRANDMEMBER z -9223372036854775807: %q", cell)
	}
}

func TestZsetWrongType(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "s", "v")
		c.Do("RPUSH", "l", "x")
		for _, k := range []string{"s", "l"} {
			c.Error("ZADD", k, "1", "a")
			c.Error("ZADD", k, "abc", "a") // the float first
			c.Error("ZADD", k, "XX", "1", "a")
			c.Error("ZINCRBY", k, "1", "a")
			c.Error("ZINCRBY", k, "x", "a")
			c.Error("ZREM", k, "a")
			c.Error("ZCARD", k)
			c.Error("ZCOUNT", k, "0", "1")
			c.Error("ZCOUNT", k, "x", "1") // the range first
			c.Error("ZLEXCOUNT", k, "-", "+")
			c.Error("ZSCORE", k, "a")
			c.Error("ZMSCORE", k, "a")
			c.Error("ZRANK", k, "a")
			c.Error("ZREVRANK", k, "a")
			c.Error("ZRANGE", k, "0", "-1")
			c.Error("ZRANGE", k, "x", "-1")
			c.Error("ZRANGEBYSCORE", k, "0", "1")
			c.Error("ZREVRANGEBYSCORE", k, "1", "0")
			c.Error("ZREVRANGE", k, "0", "1")
			c.Error("ZRANGEBYLEX", k, "-", "+")
			c.Error("ZREVRANGEBYLEX", k, "+", "-")
			c.Error("ZREMRANGEBYSCORE", k, "0", "1")
			c.Error("ZREMRANGEBYRANK", k, "0", "1")
			c.Error("ZREMRANGEBYLEX", k, "-", "+")
			c.Error("ZPOPMIN", k)
			c.Error("ZPOPMAX", k, "2")
			c.Error("ZRANDMEMBER", k)
			c.Error("ZRANDMEMBER", k, "2")
		}
		c.Do("GET", "s")
		c.Do("ZADD", "z", "1", "a")
		c.Error("GET", "z")
		c.Error("HSET", "z", "f", "v")
		c.Error("RPUSH", "z", "x")
		c.Do("TYPE", "z")
		c.Do("OBJECT", "ENCODING", "z")
	})
}

func TestZsetArity(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, cmd := range [][]string{
			{"ZADD", "z", "1"}, {"ZINCRBY", "z", "1"}, {"ZREM", "z"}, {"ZCARD"}, {"ZCARD", "z", "x"},
			{"ZCOUNT", "z", "1"}, {"ZLEXCOUNT", "z", "-"}, {"ZSCORE", "z"}, {"ZMSCORE", "z"}, {"ZRANK", "z"},
			{"ZREVRANK", "z", "a", "b"}, {"ZRANGE", "z", "0"}, {"ZRANGEBYSCORE", "z", "0"}, {"ZREVRANGE", "z"},
			{"ZRANGEBYLEX", "z", "-"}, {"ZREVRANGEBYLEX", "z"}, {"ZREVRANGEBYSCORE", "z", "1"},
			{"ZRANGESTORE", "d", "s", "0"}, {"ZREMRANGEBYSCORE", "z", "0"}, {"ZREMRANGEBYRANK", "z", "0", "1", "2"},
			{"ZREMRANGEBYLEX", "z"}, {"ZPOPMIN"}, {"ZPOPMAX"}, {"ZRANDMEMBER"},
		} {
			c.Error(cmd...)
		}
	})
}

// TestZsetScores checks score printing and storage at the edges: -0 (0 in
// a listpack, -0 in a skiplist), infinities, tiny and huge values, and
// numbers whose %.17g shows the binary expansion.
func TestZsetScores(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scores := []string{"-0", "0", "0.1", "1e-5", "1e20", "123456789012345678", "1700000000000", "3.14", "-1e-320",
			"+inf", "-inf", "2.5", "1.5", "0.30000000000000004", "9007199254740993", "-1.7976931348623157e308", "4.9e-324"}
		for i, s := range scores {
			c.Do("ZADD", "small", s, "m"+strconv.Itoa(i))
			c.Do("ZSCORE", "small", "m"+strconv.Itoa(i))
		}
		c.Do("ZRANGE", "small", "0", "-1", "WITHSCORES")
		c.Do("ZADD", "big", "0", strings.Repeat("x", 65)) // a skiplist from the start
		for i, s := range scores {
			c.Do("ZADD", "big", s, "m"+strconv.Itoa(i))
			c.Do("ZSCORE", "big", "m"+strconv.Itoa(i))
		}
		c.Do("OBJECT", "ENCODING", "big")
		c.Do("ZRANGE", "big", "0", "-1", "WITHSCORES")
		c.Do("ZRANGEBYSCORE", "big", "-0", "0", "WITHSCORES")
		c.Do("ZINCRBY", "small", "-0", "m0")
		c.Do("ZINCRBY", "big", "-0", "m0")
		c.Do("ZPOPMIN", "small", "3")
		c.Do("ZPOPMAX", "big", "3")
		c.Do("ZMSCORE", "big", "m0", "m1", "m9")
	})
}

func TestZsetBinaryMembers(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		members := []string{"", "\x00", "\x00\x01", "a\r\nb", "\xff\xfe", "A", "a", "12", "012", "-5", "9223372036854775808", "1.5", " 1"}
		args := []string{"ZADD", "b"}
		for _, m := range members {
			args = append(args, "7", m)
		}
		c.Do(args...)
		c.Do("ZRANGE", "b", "0", "-1", "WITHSCORES")
		c.Do("ZRANGEBYLEX", "b", "-", "+")
		for _, m := range members {
			c.Do("ZSCORE", "b", m)
			c.Do("ZRANK", "b", m)
		}
		c.Do("ZREM", "b", "\x00", "a\r\nb")
		c.Do("ZRANGE", "b", "0", "-1")
		c.Do("ZADD", "\x00key\xff", "1", "\x00")
		c.Do("ZRANGE", "\x00key\xff", "0", "-1", "WITHSCORES")
	})
}

// TestZsetEncoding crosses zset-max-listpack-entries (128) and -value (64)
// and changes both with CONFIG SET: OBJECT ENCODING must follow Redis's
// conversions, which happen at inserts only and never go back.
func TestZsetEncoding(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		defer c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64")
		args := []string{"ZADD", "z"}
		for i := range 128 {
			args = append(args, strconv.Itoa(i), "m"+strconv.Itoa(i))
		}
		c.Do(args...)
		c.Do("OBJECT", "ENCODING", "z")
		c.Do("ZADD", "z", "5", "m5") // an update does not convert
		c.Do("OBJECT", "ENCODING", "z")
		c.Do("ZADD", "z", "1000", "extra")
		c.Do("OBJECT", "ENCODING", "z")
		c.Do("ZREMRANGEBYRANK", "z", "0", "-3")
		c.Do("OBJECT", "ENCODING", "z")
		c.Do("ZRANGE", "z", "0", "-1", "WITHSCORES")
		c.Do("ZADD", "v", "1", strings.Repeat("x", 64))
		c.Do("OBJECT", "ENCODING", "v")
		c.Do("ZADD", "v", "2", strings.Repeat("y", 65))
		c.Do("OBJECT", "ENCODING", "v")
		c.Do("ZADD", "v2", "1", strings.Repeat("y", 65))
		c.Do("OBJECT", "ENCODING", "v2")
		c.Do("ZINCRBY", "v3", "1", strings.Repeat("y", 65))
		c.Do("OBJECT", "ENCODING", "v3")
		// CONFIG SET applies to existing sets at their next insert.
		c.Do("ZADD", "c", "1", "a", "2", "b", "3", "c")
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "3")
		c.Do("CONFIG", "GET", "zset-max-listpack-entries")
		c.Do("CONFIG", "GET", "zset-max-ziplist-entries")
		c.Do("OBJECT", "ENCODING", "c")
		c.Do("ZADD", "c", "4", "d")
		c.Do("OBJECT", "ENCODING", "c")
		c.Do("ZADD", "d", "1", "a", "2", "b", "3", "c")
		c.Do("OBJECT", "ENCODING", "d")
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "0")
		c.Do("ZADD", "e", "1", "a")
		c.Do("OBJECT", "ENCODING", "e")
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "2")
		c.Do("ZADD", "f", "1", "ab")
		c.Do("OBJECT", "ENCODING", "f")
		c.Do("ZADD", "f", "1", "abc")
		c.Do("OBJECT", "ENCODING", "f")
		c.Do("ZRANGESTORE", "g", "f", "0", "0")
		c.Do("OBJECT", "ENCODING", "g")
		c.Do("ZRANGESTORE", "g", "f", "0", "-1")
		c.Do("OBJECT", "ENCODING", "g")
		c.Do("CONFIG", "SET", "zset-max-ziplist-value", "64")
		c.Do("CONFIG", "GET", "zset-max-listpack-value")
		// A big set through every command.
		for i := range 300 {
			c.Do("ZADD", "big", strconv.Itoa(i%37), fmt.Sprintf("member:%03d", (i*7)%300))
		}
		c.Do("OBJECT", "ENCODING", "big")
		c.Do("ZCARD", "big")
		c.Do("ZRANGE", "big", "0", "-1", "WITHSCORES")
		c.Do("ZREVRANGE", "big", "10", "40", "WITHSCORES")
		c.Do("ZRANGEBYSCORE", "big", "(3", "10", "WITHSCORES", "LIMIT", "5", "20")
		c.Do("ZREVRANGEBYSCORE", "big", "+inf", "30", "LIMIT", "2", "3")
		c.Do("ZCOUNT", "big", "5", "(20")
		c.Do("ZRANK", "big", "member:150")
		c.Do("ZREVRANK", "big", "member:150")
		c.Do("ZINCRBY", "big", "100", "member:150")
		c.Do("ZREMRANGEBYSCORE", "big", "-inf", "(5")
		c.Do("ZREMRANGEBYRANK", "big", "-10", "-1")
		c.Do("ZPOPMIN", "big", "3")
		c.Do("ZPOPMAX", "big", "3")
		c.Do("ZRANDMEMBER", "big", "1000", "WITHSCORES")
		c.Do("ZRANGESTORE", "bigcopy", "big", "0", "-1")
		c.Do("OBJECT", "ENCODING", "bigcopy")
		c.Do("ZRANGE", "bigcopy", "0", "-1", "WITHSCORES")
		// Lex on a big set of equal scores.
		args = []string{"ZADD", "lex"}
		for i := range 200 {
			args = append(args, "0", fmt.Sprintf("w%03d", (i*13)%200))
		}
		c.Do(args...)
		c.Do("ZRANGEBYLEX", "lex", "[w050", "(w070")
		c.Do("ZREVRANGEBYLEX", "lex", "(w070", "[w050", "LIMIT", "3", "4")
		c.Do("ZLEXCOUNT", "lex", "(w100", "+")
		c.Do("ZREMRANGEBYLEX", "lex", "-", "[w100")
		c.Do("ZCARD", "lex")
	})
}

// TestZsetKeyCommands: TTLs survive in-place changes, an emptied set
// leaves no key, and the generic key commands see sorted sets.
func TestZsetKeyCommands(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "z", "1", "a", "2", "b", "3", "c")
		c.Do("EXPIRE", "z", "100")
		c.Do("ZADD", "z", "4", "d")
		c.Do("ZINCRBY", "z", "1", "a")
		c.Do("ZREM", "z", "b")
		c.Do("ZREMRANGEBYSCORE", "z", "4", "4")
		c.Do("ZPOPMIN", "z")
		c.Do("TTL", "z")
		c.Do("ZPOPMIN", "z", "5")
		c.Do("EXISTS", "z")
		c.Do("TTL", "z")
		c.Do("ZADD", "z", "1", "a")
		c.Do("TTL", "z") // a new set has no TTL
		c.Do("TYPE", "z")
		c.Do("RENAME", "z", "y")
		c.Do("ZRANGE", "y", "0", "-1", "WITHSCORES")
		c.Do("DEL", "y")
		c.Do("ZCARD", "y")
		c.Do("ZADD", "k1", "1", "a")
		c.Do("ZADD", "k2", "1", "a")
		c.DoSorted("KEYS", "k*")
		c.DoSorted("SCAN", "0", "TYPE", "zset", "COUNT", "1000")
	})
}

// TestZsetTransaction: W1 as clients send it, a pipelined MULTI of ZADD,
// ZREMRANGEBYSCORE, ZCARD and EXPIRE; errors inside EXEC; and WATCH,
// which only a real change breaks.
func TestZsetTransaction(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		const base = 1700000000000
		for i, now := range []int64{base, base + 10, base + 10, base + 500, base + 1200, base + 1201, base + 2500} {
			member := strconv.FormatInt(now, 10)
			if i%2 == 1 {
				member = fmt.Sprintf("6f1c1a3e-8d1b-4c57-9a2e-%012d", i) // UUID members
			}
			c.DoPipeline(
				[]string{"MULTI"},
				[]string{"ZADD", "limit:u:a", strconv.FormatInt(now, 10), member},
				[]string{"ZREMRANGEBYSCORE", "limit:u:a", "0", strconv.FormatInt(now-1000, 10)},
				[]string{"ZCARD", "limit:u:a"},
				[]string{"EXPIRE", "limit:u:a", "2"},
				[]string{"EXEC"},
			)
		}
		c.Do("ZRANGE", "limit:u:a", "0", "-1", "WITHSCORES")
		c.Do("TTL", "limit:u:a")

		c.Do("MULTI")
		c.Do("ZADD", "t", "1", "a")
		c.Do("ZADD", "t", "NX", "XX", "1", "a") // fails in EXEC only
		c.Do("ZINCRBY", "t", "x", "a")
		c.Do("ZRANGE", "t", "0", "-1", "WITHSCORES")
		c.Do("EXEC")
		c.Do("MULTI")
		c.Error("ZADD", "t", "1") // arity: the transaction is discarded
		c.Error("EXEC")

		other := c.OtherClient()
		check := func(change ...string) {
			c.t.Helper()
			c.Do("WATCH", "w")
			other.Do(change...)
			c.Do("MULTI")
			c.Do("ZCARD", "w")
			c.Do("EXEC")
		}
		check("ZADD", "w", "1", "a")                  // created: breaks
		check("ZADD", "w", "1", "a")                  // same score: holds
		check("ZADD", "w", "CH", "1", "a")            // same score with CH: holds
		check("ZADD", "w", "NX", "5", "a")            // refused: holds
		check("ZADD", "w", "XX", "5", "zzz")          // refused: holds
		check("ZADD", "w", "GT", "0", "a")            // refused: holds
		check("ZADD", "w", "INCR", "0", "a")          // no change: holds
		check("ZADD", "w", "2", "a")                  // changed: breaks
		check("ZINCRBY", "w", "1", "a")               // breaks
		check("ZREM", "w", "nosuch")                  // holds
		check("ZREMRANGEBYSCORE", "w", "100", "200")  // holds
		check("ZREMRANGEBYRANK", "w", "5", "9")       // holds
		check("ZPOPMIN", "w", "0")                    // holds
		check("ZADD", "w", "1", "b", "2", "c")        // breaks
		check("ZPOPMAX", "w")                         // breaks
		check("ZRANGESTORE", "w", "nokey", "0", "-1") // deletes w: breaks
		check("ZRANGESTORE", "w", "nokey", "0", "-1") // w already gone: holds
		check("ZRANGE", "w", "0", "-1")               // a read: holds
	})
}

// TestZsetRandomOps sends the same seeded random sequence of sorted-set
// commands to both servers and compares every reply. Keys and members are
// few so that sets grow, shrink, empty and convert; scores come from a
// small set with ties, infinities and -0.
func TestZsetRandomOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		defer c.Do("CONFIG", "SET", "zset-max-listpack-entries", "128")
		c.Do("CONFIG", "SET", "zset-max-listpack-entries", "16")
		r := rand.New(rand.NewPCG(23, uint64(c.proto)))
		pick := func(prefix string, n int) string { return prefix + strconv.Itoa(r.IntN(n)) }
		scoreTexts := []string{"0", "-0", "1", "2", "2.5", "-3", "1e3", "+inf", "-inf", "0.1", "7", "(1", "abc"}
		score := func() string {
			s := scoreTexts[r.IntN(len(scoreTexts)-2)]
			if r.IntN(4) == 0 {
				s = strconv.Itoa(r.IntN(50))
			}
			return s
		}
		bound := func() string { return scoreTexts[r.IntN(len(scoreTexts))] }
		lexBound := func() string {
			switch r.IntN(4) {
			case 0:
				return "-"
			case 1:
				return "+"
			case 2:
				return "(" + pick("m", 30)
			}
			return "[" + pick("m", 30)
		}
		member := func() string {
			if r.IntN(20) == 0 {
				return strings.Repeat("L", 60+r.IntN(10)) // sometimes past 64 bytes
			}
			return pick("m", 30)
		}
		idx := func() string { return strconv.Itoa(r.IntN(40) - 20) }
		opts := []string{"NX", "XX", "GT", "LT", "CH", "INCR"}
		for range 3000 {
			key := pick("z", 4)
			switch r.IntN(22) {
			case 0, 1, 2:
				args := []string{"ZADD", key}
				for range r.IntN(3) {
					args = append(args, opts[r.IntN(len(opts))])
				}
				for range 1 + r.IntN(3) {
					args = append(args, score(), member())
				}
				c.Do(args...)
			case 3:
				c.Do("ZINCRBY", key, score(), member())
			case 4:
				c.Do("ZREM", key, member(), member())
			case 5:
				c.Do("ZCARD", key)
				c.Do("ZSCORE", key, member())
			case 6:
				c.Do("ZMSCORE", key, member(), member(), member())
			case 7:
				c.Do("ZRANK", key, member())
				c.Do("ZREVRANK", key, member())
			case 8:
				c.Do("ZRANGE", key, idx(), idx(), "WITHSCORES")
			case 9:
				c.Do("ZREVRANGE", key, idx(), idx())
			case 10:
				c.Do("ZRANGEBYSCORE", key, bound(), bound(), "WITHSCORES", "LIMIT", idx(), idx())
			case 11:
				c.Do("ZREVRANGEBYSCORE", key, bound(), bound())
			case 12:
				c.Do("ZCOUNT", key, bound(), bound())
			case 13:
				// Lex ranges mean something only when all scores are
				// equal (Redis's answer otherwise depends on its
				// encoding), so they get keys of their own.
				lkey := pick("lex", 2)
				c.Do("ZADD", lkey, "0", member(), "0", member())
				c.Do("ZRANGEBYLEX", lkey, lexBound(), lexBound())
				c.Do("ZREVRANGEBYLEX", lkey, lexBound(), lexBound(), "LIMIT", idx(), idx())
				c.Do("ZLEXCOUNT", lkey, lexBound(), lexBound())
				c.Do("ZREM", lkey, member())
			case 14:
				c.Do("ZREMRANGEBYSCORE", key, bound(), bound())
			case 15:
				c.Do("ZREMRANGEBYRANK", key, idx(), idx())
			case 16:
				c.Do("ZREMRANGEBYLEX", pick("lex", 2), lexBound(), lexBound())
			case 17:
				c.Do("ZPOPMIN", key, strconv.Itoa(r.IntN(3)))
			case 18:
				c.Do("ZPOPMAX", key)
			case 19:
				c.Do("ZRANGE", key, bound(), bound(), "BYSCORE", "REV", "LIMIT", "0", idx())
			case 20:
				c.Do("ZRANGESTORE", pick("z", 4), key, idx(), idx())
			case 21:
				c.Do("OBJECT", "ENCODING", key)
				c.Do("ZRANDMEMBER", key, "100", "WITHSCORES")
			}
		}
		for _, k := range []string{"z0", "z1", "z2", "z3", "lex0", "lex1"} {
			c.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
		}
		c.Do("DBSIZE")
	})
}

func TestZsetStoreOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "a", "1", "x", "2", "y", "-inf", "n", "+inf", "p")
		c.Do("ZADD", "b", "10", "y", "20", "z", "+inf", "n", "-inf", "p")
		c.Do("ZADD", "c", "0.1", "y", "0.2", "x", "5", "w")
		for _, cmd := range [][]string{
			{"ZUNIONSTORE", "d", "2", "a", "b"},
			{"ZUNIONSTORE", "d", "3", "a", "b", "c", "WEIGHTS", "2", "3", "-1"},
			{"ZUNIONSTORE", "d", "2", "a", "b", "AGGREGATE", "MIN"},
			{"ZUNIONSTORE", "d", "2", "a", "b", "aggregate", "max", "weights", "0", "1"},
			{"ZUNIONSTORE", "d", "2", "a", "nokey", "WEIGHTS", "inf", "0"},
			{"ZUNIONSTORE", "d", "1", "a", "WEIGHTS", "-0"},
			{"ZINTERSTORE", "d", "2", "a", "b"},
			{"ZINTERSTORE", "d", "3", "a", "b", "c", "AGGREGATE", "MAX"},
			{"ZINTERSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "0", "AGGREGATE", "MIN"},
			{"ZINTERSTORE", "d", "2", "a", "c", "WEIGHTS", "0", "1", "AGGREGATE", "SUM"},
			{"ZDIFFSTORE", "d", "2", "a", "b"},
			{"ZDIFFSTORE", "d", "2", "a", "c"},
			{"ZDIFFSTORE", "d", "3", "c", "a", "nokey"},
			{"ZUNIONSTORE", "a", "2", "a", "c"}, // the destination is a source
		} {
			c.Do(cmd...)
			c.Do("ZRANGE", "d", "0", "-1", "WITHSCORES")
			c.Do("OBJECT", "ENCODING", "d")
		}
		c.Do("ZRANGE", "a", "0", "-1", "WITHSCORES")
		c.Do("SET", "s", "v")
		c.Do("EXPIRE", "d", "100")
		c.Do("ZINTERSTORE", "d", "2", "a", "nokey") // empty: deletes d
		c.Do("EXISTS", "d")
		c.Do("ZDIFFSTORE", "d", "1", "nokey")
		c.Do("ZUNIONSTORE", "s", "1", "c") // replaces a string
		c.Do("TYPE", "s")
		c.Error("ZUNIONSTORE", "d", "0", "a")
		c.Error("ZINTERSTORE", "d", "-1", "a")
		c.Error("ZDIFFSTORE", "d", "0", "a")
		c.Error("ZUNIONSTORE", "d", "3", "a", "b")
		c.Error("ZUNIONSTORE", "d", "x", "a")
		c.Do("SET", "str", "v")
		c.Error("ZUNIONSTORE", "d", "1", "str", "WEIGHTS", "x")
		c.Error("ZUNIONSTORE", "d", "1", "a", "WEIGHTS", "x")
		c.Error("ZUNIONSTORE", "d", "1", "a", "WEIGHTS")
		c.Error("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1")
		c.Error("ZUNIONSTORE", "d", "1", "a", "AGGREGATE", "foo")
		c.Error("ZUNIONSTORE", "d", "1", "a", "AGGREGATE")
		c.Error("ZUNIONSTORE", "d", "1", "a", "WITHSCORES")
		c.Error("ZDIFFSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2")
		c.Error("ZDIFFSTORE", "d", "1", "a", "AGGREGATE", "SUM")
		c.Error("ZINTERSTORE", "d", "1")
		// Past the listpack limits.
		args := []string{"ZADD", "big"}
		for i := range 200 {
			args = append(args, strconv.Itoa(i%17), "m"+strconv.Itoa(i))
		}
		c.Do(args...)
		c.Do("ZUNIONSTORE", "u", "2", "big", "a", "WEIGHTS", "0.5", "2")
		c.Do("OBJECT", "ENCODING", "u")
		c.Do("ZRANGE", "u", "0", "-1", "WITHSCORES")
		c.Do("ZINTERSTORE", "i", "2", "big", "big")
		c.Do("OBJECT", "ENCODING", "i")
		c.Do("ZDIFFSTORE", "df", "2", "big", "c")
		c.Do("ZRANGE", "df", "100", "120", "WITHSCORES")
		c.Do("ZREMRANGEBYRANK", "df", "0", "-3")
		c.Do("ZDIFFSTORE", "df2", "1", "df")
		c.Do("OBJECT", "ENCODING", "df2")
	})
}

func TestZsetSetOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "a", "1", "x", "2", "y", "-inf", "n", "+inf", "p", "3", "q")
		c.Do("ZADD", "b", "10", "y", "20", "z", "+inf", "n", "-inf", "p", "1", "q")
		c.Do("ZADD", "c", "0.1", "y", "0.2", "x", "5", "w", "7", "q")
		for _, cmd := range [][]string{
			{"ZUNION", "2", "a", "b", "WITHSCORES"},
			{"ZUNION", "3", "a", "b", "c", "WEIGHTS", "2", "3", "-1", "withscores"},
			{"ZUNION", "2", "a", "b", "AGGREGATE", "MIN", "WITHSCORES"},
			{"ZUNION", "1", "a", "WEIGHTS", "-0", "WITHSCORES"},
			{"ZUNION", "2", "a", "nokey"},
			{"ZUNION", "1", "nokey", "WITHSCORES"},
			{"ZINTER", "2", "a", "b", "WITHSCORES"},
			{"ZINTER", "3", "a", "b", "c", "AGGREGATE", "MAX", "WITHSCORES", "WITHSCORES"},
			{"ZINTER", "2", "a", "c", "WEIGHTS", "0", "1", "WITHSCORES"},
			{"ZINTER", "2", "a", "nokey", "WITHSCORES"},
			{"ZDIFF", "2", "a", "b", "WITHSCORES"},
			{"ZDIFF", "3", "c", "a", "nokey"},
			{"ZDIFF", "1", "nokey"},
			{"ZINTERCARD", "2", "a", "b"},
			{"ZINTERCARD", "3", "a", "b", "c"},
			{"ZINTERCARD", "2", "a", "b", "LIMIT", "0"},
			{"ZINTERCARD", "2", "a", "b", "LIMIT", "2"},
			{"ZINTERCARD", "2", "a", "b", "limit", "100"},
			{"ZINTERCARD", "2", "a", "nokey"},
		} {
			c.Do(cmd...)
		}
		c.Do("SET", "s", "v")
		for _, cmd := range [][]string{
			{"ZUNION", "0", "a"}, {"ZINTER", "-1", "a"}, {"ZDIFF", "0", "a"}, {"ZINTERCARD", "0", "a"},
			{"ZUNION", "3", "a", "b"}, {"ZINTERCARD", "x", "a"}, {"ZUNION", "1", "s", "WEIGHTS", "x"},
			{"ZINTERCARD", "2", "a", "s"}, {"ZUNION", "1", "a", "WEIGHTS", "x"}, {"ZDIFF", "1", "a", "WEIGHTS", "1"},
			{"ZINTERCARD", "1", "a", "WITHSCORES"}, {"ZINTERCARD", "1", "a", "LIMIT", "-1"},
			{"ZINTERCARD", "1", "a", "LIMIT", "x"}, {"ZINTERCARD", "1", "a", "LIMIT"},
			{"ZINTERCARD", "1", "a", "WEIGHTS", "1"}, {"ZUNION", "1", "a", "LIMIT", "1"},
			{"ZUNION", "1"}, {"ZINTER", "1", "a", "AGGREGATE", "AVG"},
		} {
			c.Error(cmd...)
		}
	})
}

func TestZmpop(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("ZADD", "a", "1", "x", "2", "y", "3", "z", "-0", "zero")
		c.Do("ZMPOP", "2", "nokey", "a", "MIN")
		c.Do("ZMPOP", "1", "a", "max", "COUNT", "2")
		c.Do("ZMPOP", "1", "a", "mIn", "count", "9223372036854775807")
		c.Do("EXISTS", "a")
		c.Do("ZMPOP", "1", "a", "MIN")
		c.Do("ZMPOP", "2", "nokey", "a", "MAX", "COUNT", "3")
		c.Do("SET", "s", "v")
		c.Do("ZADD", "b", "5", "m")
		for _, cmd := range [][]string{
			{"ZMPOP", "0", "a", "MIN"}, {"ZMPOP", "-1", "a", "MIN"}, {"ZMPOP", "x", "a", "MIN"},
			{"ZMPOP", "2", "a", "MIN"}, {"ZMPOP", "9223372036854775807", "a", "MIN"}, {"ZMPOP", "1", "a", "foo"},
			{"ZMPOP", "1", "a", "MIN", "COUNT", "0"}, {"ZMPOP", "1", "a", "MIN", "COUNT", "-1"},
			{"ZMPOP", "1", "a", "MIN", "COUNT", "x"}, {"ZMPOP", "1", "a", "MIN", "COUNT"},
			{"ZMPOP", "1", "a", "MIN", "COUNT", "1", "COUNT", "2"}, {"ZMPOP", "1", "a", "MIN", "foo"},
			{"ZMPOP", "2", "s", "b", "MIN"}, {"ZMPOP", "2", "nokey", "s", "MAX"}, {"ZMPOP", "1", "s", "x"},
		} {
			c.Error(cmd...)
		}
		c.Do("ZMPOP", "2", "b", "s", "MIN") // b comes first: no WRONGTYPE
		c.Do("EXISTS", "b")
	})
}

// TestZscan: a small (listpack) set comes back whole in one call, in
// order, with scores as the listpack holds them; a large one is compared
// as a multiset of members and scores, as Redis's order is its hash
// table's.
func TestZscan(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		scores := []string{"-0", "0.1", "1e20", "1e15", "4503599627370496", "123456789012345678", "-inf", "1.5", "1e-5",
			"4503599627370495", "-4503599627370495", "012", "3.0", "9007199254740993", "-9.2233720368547758e18", "inf",
			"4611686018427387904", "-4611686018427387904", "4.6116860184273889e18", "-4.6116860184273889e18"}
		args := []string{"ZADD", "z"}
		for i, s := range scores {
			args = append(args, s, "m"+strconv.Itoa(i))
		}
		c.Do(args...)
		c.Do("ZSCAN", "z", "0")
		c.Do("ZSCAN", "z", "0", "MATCH", "m1*", "COUNT", "1")
		c.Do("ZSCAN", "z", "18446744073709551615", "match", "*")
		c.Do("ZSCAN", "z", "-1", "MATCH", "nothing")
		c.Do("ZSCAN", "nokey", "0")
		c.Do("ZSCAN", "nokey", "0", "COUNT", "0") // the key first: no error
		c.Do("SET", "s", "v")
		for _, cmd := range [][]string{
			{"ZSCAN", "z", "x"}, {"ZSCAN", "z", "18446744073709551616"}, {"ZSCAN", "nokey", "x"},
			{"ZSCAN", "s", "0"}, {"ZSCAN", "s", "x"}, {"ZSCAN", "z", "0", "TYPE", "zset"},
			{"ZSCAN", "z", "0", "COUNT", "0"}, {"ZSCAN", "z", "0", "COUNT", "x"}, {"ZSCAN", "z", "0", "MATCH"},
			{"ZSCAN", "z"},
		} {
			c.Error(cmd...)
		}
		args[1] = "big"
		c.Do(append(args, "7", strings.Repeat("x", 65))...)
		c.DoSorted("ZSCAN", "big", "0", "COUNT", "1000")
		c.DoSorted("ZSCAN", "big", "0", "COUNT", "1000", "MATCH", "m?")
	})
}
