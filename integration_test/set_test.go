package integration_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// Sets: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SRANDMEMBER,
// SPOP, SMOVE, SINTER/SUNION/SDIFF (+STORE), SINTERCARD, SSCAN, OBJECT
// ENCODING. An intset's order is Redis's (ascending) and compared byte for
// byte; a hashtable's order is Redis's hash order, compared sorted; random
// picks are compared by shape, and by membership on cellserver.

func TestSetBasics(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SADD", "s", "3", "1", "2", "1")
		c.Do("SMEMBERS", "s") // intset: ascending
		c.Do("OBJECT", "ENCODING", "s")
		c.Do("SADD", "s", "-5", "9223372036854775807", "-9223372036854775808")
		c.Do("SMEMBERS", "s")
		c.Do("SADD", "s", "007") // not canonical: converts
		c.Do("OBJECT", "ENCODING", "s")
		c.DoSorted("SMEMBERS", "s")
		c.Do("SCARD", "s")
		c.Do("SCARD", "nokey")
		c.Do("SISMEMBER", "s", "007")
		c.Do("SISMEMBER", "s", "7")
		c.Do("SISMEMBER", "nokey", "7")
		c.Do("SMISMEMBER", "s", "1", "x", "007")
		c.Do("SMISMEMBER", "nokey", "1", "x")
		c.Do("SMEMBERS", "nokey")
		c.Do("SREM", "s", "1", "1", "x", "007")
		c.DoSorted("SMEMBERS", "s")
		c.Do("SREM", "nokey", "a")
		c.Do("SADD", "t", "a")
		c.Do("OBJECT", "ENCODING", "t")
		c.Do("SREM", "t", "a", "b")
		c.Do("EXISTS", "t")
		c.Do("SADD", "u", "1", "2")
		c.Do("SREM", "u", "1", "2", "3")
		c.Do("EXISTS", "u")
		c.Do("SADD", "x", "+1", "1", " 1", "1.0", "-0", "0")
		c.DoSorted("SMEMBERS", "x")
		c.Do("SADD", "e", "")
		c.Do("SISMEMBER", "e", "")
		c.Do("TYPE", "e")
		// Arity.
		c.Error("SADD", "s")
		c.Error("SREM", "s")
		c.Error("SCARD")
		c.Error("SISMEMBER", "s")
		c.Error("SMISMEMBER", "s")
		c.Error("SMEMBERS")
	})
}

func TestSetWrongType(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		makeString(c, "str")
		c.Do("SADD", "s", "a")
		c.Do("HSET", "h", "f", "v")
		for _, cmd := range [][]string{
			{"SADD", "str", "a"}, {"SREM", "str", "a"}, {"SCARD", "str"}, {"SISMEMBER", "str", "a"},
			{"SMISMEMBER", "str", "a"}, {"SMEMBERS", "str"}, {"SRANDMEMBER", "str"}, {"SRANDMEMBER", "str", "2"},
			{"SPOP", "str"}, {"SPOP", "str", "2"}, {"SMOVE", "str", "s", "a"}, {"SMOVE", "s", "str", "a"},
			{"SMOVE", "s", "h", "zz"}, {"SINTER", "s", "str"}, {"SINTER", "nokey", "str"}, {"SUNION", "s", "h"},
			{"SDIFF", "str", "s"}, {"SDIFF", "nokey", "str"}, {"SINTERSTORE", "d", "s", "str"},
			{"SUNIONSTORE", "d", "h"}, {"SDIFFSTORE", "d", "s", "h"}, {"SINTERCARD", "2", "s", "str"},
			{"SINTERCARD", "2", "nokey", "h"}, {"SSCAN", "str", "0"},
		} {
			c.Do(cmd...)
		}
		c.Do("EXISTS", "d")
		// The wrong-type destination of a STORE is replaced.
		c.Do("SADD", "s2", "a", "b")
		c.Do("SINTERSTORE", "h", "s", "s2")
		c.Do("TYPE", "h")
		c.Do("SMEMBERS", "h")
		// A missing source answers 0 before the destination's type counts.
		c.Do("SMOVE", "nokey", "str", "a")
	})
}

func TestSetMove(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SADD", "a", "1", "2", "x")
		c.Do("SMOVE", "a", "b", "1")
		c.Do("SMEMBERS", "b")
		c.Do("OBJECT", "ENCODING", "b")
		c.Do("SMOVE", "a", "b", "nosuch")
		c.Do("SMOVE", "a", "a", "2")
		c.Do("SMOVE", "a", "a", "nosuch")
		c.Do("SMOVE", "a", "b", "x")
		c.Do("OBJECT", "ENCODING", "b")
		c.Do("SMOVE", "a", "b", "2")
		c.Do("EXISTS", "a")
		c.DoSorted("SMEMBERS", "b")
		c.Do("SADD", "c", "2")
		c.Do("SMOVE", "b", "c", "2") // already in the destination
		c.DoSorted("SMEMBERS", "b")
		c.Do("SMEMBERS", "c")
		c.Do("SET", "ttl", "x")
		c.Do("SADD", "v", "m")
		c.Do("EXPIRE", "v", "100")
		c.Do("SMOVE", "b", "v", "x")
		c.Do("TTL", "v")
		c.Error("SMOVE", "a", "b")
		c.Error("SMOVE", "a", "b", "c", "d")
	})
}

func TestSetOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SADD", "i1", "1", "2", "3", "4")
		c.Do("SADD", "i2", "3", "4", "5")
		c.Do("SADD", "s1", "a", "b", "c", "3")
		c.Do("SADD", "s2", "c", "d", "3")
		c.Do("SINTER", "i1", "i2")
		c.Do("SUNION", "i1", "i2")
		c.Do("SDIFF", "i1", "i2")
		c.Do("SDIFF", "i1", "i1")
		c.Do("SINTER", "i1")
		c.DoSorted("SINTER", "s1", "s2")
		c.DoSorted("SINTER", "s1", "i1")
		c.DoSorted("SUNION", "s1", "s2", "i1", "nokey")
		c.DoSorted("SDIFF", "s1", "s2")
		c.DoSorted("SDIFF", "s1", "nokey")
		c.Do("SDIFF", "nokey", "s1")
		c.Do("SINTER", "s1", "nokey")
		c.Do("SUNION", "nokey", "nokey2")
		c.Do("SINTERSTORE", "d", "i1", "i2")
		c.Do("SMEMBERS", "d")
		c.Do("OBJECT", "ENCODING", "d")
		c.Do("EXPIRE", "d", "100")
		c.Do("SUNIONSTORE", "d", "s1", "s2")
		c.Do("TTL", "d")
		c.DoSorted("SMEMBERS", "d")
		c.Do("SDIFFSTORE", "d", "i1", "i2")
		c.Do("SMEMBERS", "d")
		c.Do("SINTERSTORE", "d", "i1", "nokey")
		c.Do("EXISTS", "d")
		c.Do("SUNIONSTORE", "d", "i1")
		c.Do("SDIFFSTORE", "d", "i1", "i1")
		c.Do("EXISTS", "d")
		c.Do("SUNIONSTORE", "i1", "i1", "i2") // the destination is a source
		c.Do("SMEMBERS", "i1")
		c.Do("SINTERCARD", "2", "i1", "i2")
		c.Do("SINTERCARD", "2", "i1", "i2", "LIMIT", "1")
		c.Do("SINTERCARD", "2", "i1", "i2", "limit", "0")
		c.Do("SINTERCARD", "1", "s1", "LIMIT", "2", "LIMIT", "100")
		c.Do("SINTERCARD", "2", "s1", "nokey")
		c.Error("SINTERCARD", "0", "i1")
		c.Error("SINTERCARD", "x", "i1")
		c.Error("SINTERCARD", "-1", "i1")
		c.Error("SINTERCARD", "3", "i1", "i2")
		c.Error("SINTERCARD", "1", "i1", "LIMIT")
		c.Error("SINTERCARD", "1", "i1", "LIMIT", "-1")
		c.Error("SINTERCARD", "1", "i1", "LIMIT", "x")
		c.Error("SINTERCARD", "1", "i1", "i2")
		c.Error("SINTERCARD", "1")
		c.Error("SINTER")
		c.Error("SINTERSTORE", "d")
	})
}

func TestSetPopRandom(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SPOP", "nokey")
		c.Do("SPOP", "nokey", "3")
		c.Do("SPOP", "nokey", "0")
		c.Do("SRANDMEMBER", "nokey")
		c.Do("SRANDMEMBER", "nokey", "3")
		c.Do("SRANDMEMBER", "nokey", "-3")
		c.Do("SADD", "one", "m")
		c.Do("SRANDMEMBER", "one")
		c.Do("SRANDMEMBER", "one", "-3")
		c.Do("SRANDMEMBER", "one", "1")
		c.Do("SRANDMEMBER", "one", "0")
		c.Do("SPOP", "one", "0")
		c.Do("SPOP", "one")
		c.Do("EXISTS", "one")
		c.Do("SADD", "i", "1", "2", "3", "4", "5")
		c.Do("SRANDMEMBER", "i", "5")
		c.Do("SRANDMEMBER", "i", "50")
		c.DoLoosely("SRANDMEMBER", "i")
		c.DoLoosely("SRANDMEMBER", "i", "2")
		c.DoLoosely("SRANDMEMBER", "i", "-20")
		c.DoLoosely("SPOP", "i")
		c.DoLoosely("SPOP", "i", "2")
		c.Do("SCARD", "i")
		c.DoLoosely("SPOP", "i", "10")
		c.Do("EXISTS", "i")
		c.Do("SADD", "s", "a", "b", "c", "d")
		c.DoSorted("SRANDMEMBER", "s", "4")
		c.DoSorted("SPOP", "s", "4")
		c.Do("EXISTS", "s")
		// Popping most of a hashtable of integers: the members that stay
		// are built into a new set, an intset (count >= 5 x what stays);
		// popping fewer leaves the hashtable.
		for _, count := range []string{"590", "500", "499"} {
			args := []string{"SADD", "h" + count}
			for i := range 600 {
				args = append(args, strconv.Itoa(i))
			}
			c.Do(args...)
			c.Do("OBJECT", "ENCODING", "h"+count)
			c.DoLoosely("SPOP", "h"+count, count)
			c.Do("OBJECT", "ENCODING", "h"+count)
			c.Do("SCARD", "h"+count)
		}
		c.Do("SADD", "s", "a")
		c.Error("SPOP", "s", "-1")
		c.Error("SPOP", "s", "x")
		c.Error("SPOP", "nokey", "-1")
		c.Error("SPOP", "s", "1", "2")
		c.Error("SRANDMEMBER", "s", "x")
		c.Error("SRANDMEMBER", "s", "1", "2")
		c.Error("SRANDMEMBER", "s", "-9223372036854775808")
		c.Error("SRANDMEMBER", "nokey", "-9223372036854775808")
		c.Error("SPOP")
	})
}

// TestSetRandomMembers checks that random picks are members and, for a
// positive count, distinct, on cellserver alone; and that SPOP removes
// what it returns.
func TestSetRandomMembers(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for _, key := range []string{"ints", "strs"} {
			args := []string{"SADD", key}
			for i := range 300 {
				m := strconv.Itoa(i)
				if key == "strs" {
					m = "m" + m
				}
				args = append(args, m)
			}
			c.Do(args...)
			for _, count := range []string{"5", "150", "299", "-400"} {
				_, cell := c.Replies("SRANDMEMBER", key, count)
				v, err := parseReply(cell)
				if err != nil || v.kind != '*' {
					t.Fatalf("SRANDMEMBER %s %s: %q", key, count, cell)
				}
				n, _ := strconv.Atoi(count)
				if len(v.elems) != max(n, -n) {
					t.Errorf("SRANDMEMBER %s %s: %d members", key, count, len(v.elems))
				}
				seen := map[string]bool{}
				for _, e := range v.elems {
					_, cell := c.Replies("SISMEMBER", key, e.text)
					if string(cell) != ":1\r\n" {
						t.Errorf("SRANDMEMBER %s %s: %q is not a member", key, count, e.text)
					}
					if seen[e.text] && n > 0 {
						t.Errorf("SRANDMEMBER %s %s: %q twice", key, count, e.text)
					}
					seen[e.text] = true
				}
			}
			_, cell := c.Replies("SPOP", key, "100")
			v, err := parseReply(cell)
			if err != nil || len(v.elems) != 100 {
				t.Fatalf("SPOP %s 100: %q", key, cell)
			}
			for _, e := range v.elems {
				if _, cell := c.Replies("SISMEMBER", key, e.text); string(cell) != ":0\r\n" {
					t.Errorf("SPOP %s: %q still a member", key, e.text)
				}
			}
			c.Do("SCARD", key)
		}
	})
}

func TestSetEncodingAndScan(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		args := []string{"SADD", "big"}
		for i := range 512 {
			args = append(args, strconv.Itoa(i*3))
		}
		c.Do(args...)
		c.Do("OBJECT", "ENCODING", "big")
		c.Do("SADD", "big", "5000")
		c.Do("OBJECT", "ENCODING", "big")
		c.Do("SCARD", "big")
		c.Do("CONFIG", "SET", "set-max-intset-entries", "2")
		c.Do("CONFIG", "GET", "set-max-intset-entries")
		c.Do("SADD", "small", "1", "2")
		c.Do("OBJECT", "ENCODING", "small")
		c.Do("SADD", "small", "3")
		c.Do("OBJECT", "ENCODING", "small")
		c.Do("CONFIG", "SET", "set-max-intset-entries", "512")
		c.Do("SADD", "sc", "1", "2", "10", "11")
		c.Do("SSCAN", "sc", "0")
		c.Do("SSCAN", "sc", "0", "MATCH", "1*")
		c.Do("SSCAN", "sc", "0", "COUNT", "1")
		c.Do("SSCAN", "nokey", "0")
		c.Do("SSCAN", "nokey", "0", "COUNT", "0")
		c.Error("SSCAN", "sc", "x")
		c.Error("SSCAN", "sc", "0", "COUNT", "0")
		c.Error("SSCAN", "sc", "0", "COUNT", "x")
		c.Error("SSCAN", "sc", "0", "MATCH")
		c.Error("SSCAN", "sc")
	})
}

// TestSetInScriptsAndMulti: set replies as scripts see them (RESP2 tables,
// RESP3 sets under redis.setresp(3)) and set commands queued in MULTI.
func TestSetInScriptsAndMulti(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SADD", "{k}i", "5", "1", "3")
		c.Do("SADD", "{k}j", "3", "4")
		c.Do("EVAL", "return redis.call('SMEMBERS', KEYS[1])", "1", "{k}i")
		c.Do("EVAL", "redis.setresp(3); return redis.call('SINTER', KEYS[1], KEYS[2])", "2", "{k}i", "{k}j")
		c.Do("EVAL", "return redis.call('SPOP', KEYS[1], 0)", "1", "{k}i")
		c.Do("EVAL", "return redis.call('SMISMEMBER', KEYS[1], '1', '2')", "1", "{k}i")
		c.Do("EVAL", "return redis.pcall('SADD', KEYS[1])", "1", "{k}i")
		c.Do("MULTI")
		c.Do("SADD", "{k}i", "7")
		c.Do("SMOVE", "{k}i", "{k}j", "1")
		c.Do("SUNIONSTORE", "{k}u", "{k}i", "{k}j")
		c.Do("SINTERCARD", "2", "{k}i", "{k}j")
		c.Do("EXEC")
		c.Do("SMEMBERS", "{k}u")
	})
}

// TestSetRandomOps runs random set writes and reads on both servers, with
// a low set-max-intset-entries so that sets cross from intset to
// hashtable often: members, cardinalities, encodings, the STOREs'
// results and their empty-key removal, WRONGTYPE on a string. A
// hashtable's order is Redis's hash order, so unordered replies are
// compared sorted; an intset's are compared as they are.
func TestSetRandomOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		t.Cleanup(func() { c.Do("CONFIG", "SET", "set-max-intset-entries", "512") })
		c.Do("CONFIG", "SET", "set-max-intset-entries", "8")
		r := rand.New(rand.NewPCG(32, uint64(c.proto)))
		key := func() string { return "s" + strconv.Itoa(r.IntN(4)) }
		member := func() string {
			if r.IntN(6) == 0 {
				return []string{"x", "y", "007", "-0", "1.0", ""}[r.IntN(6)]
			}
			return strconv.Itoa(r.IntN(24) - 4)
		}
		// unordered compares exactly when every key read is an intset.
		unordered := func(keys []string, args ...string) {
			t.Helper()
			for _, k := range keys {
				if _, cell := c.Replies("OBJECT", "ENCODING", k); string(cell) == "$9\r\nhashtable\r\n" {
					c.DoSorted(args...)
					return
				}
			}
			c.Do(args...)
		}
		c.Do("SET", "str", "v")
		for range 1500 {
			k, k2 := key(), key()
			switch r.IntN(14) {
			case 0, 1, 2:
				c.Do("SADD", k, member(), member(), member())
			case 3, 4:
				c.Do("SREM", k, member(), member())
			case 5:
				c.Do("SMOVE", k, k2, member())
			case 6:
				c.Do("SISMEMBER", k, member())
				c.Do("SMISMEMBER", k, member(), member())
			case 7:
				c.Do("SCARD", k)
				c.Do("OBJECT", "ENCODING", k)
			case 8:
				unordered([]string{k}, "SMEMBERS", k)
			case 9:
				// SINTER lists its smallest set in its order; SUNION and
				// SDIFF build a set, a hashtable past the intset limit.
				unordered([]string{k, k2}, "SINTER", k, k2)
				c.DoSorted([]string{"SUNION", "SDIFF"}[r.IntN(2)], k, k2)
				c.Do("SINTERCARD", "2", k, k2, "LIMIT", strconv.Itoa(r.IntN(4)))
			case 10:
				op := []string{"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[r.IntN(3)]
				dst := "d" + strconv.Itoa(r.IntN(2))
				c.Do(op, dst, k, k2)
				c.Do("EXISTS", dst)
				c.Do("OBJECT", "ENCODING", dst)
				unordered([]string{dst}, "SMEMBERS", dst)
			case 11:
				unordered([]string{k}, "SPOP", k, "100") // all of it: the same on both
				c.Do("EXISTS", k)
			case 12:
				c.Do("SADD", "str", member())
				c.Do("SUNION", k, "str")
				c.Do("SMOVE", k, "str", member())
			case 13:
				unordered([]string{k}, "SRANDMEMBER", k, "100") // all of it
			}
		}
		c.Do("DBSIZE")
	})
}
