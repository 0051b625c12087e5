package integration_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Hashes: HSET, HSETNX, HGET, HMGET, HMSET, HDEL, HGETALL, HEXISTS, HLEN,
// HKEYS, HVALS, HINCRBY, HINCRBYFLOAT, HSTRLEN, HRANDFIELD.

// makeString stores a string under key on both servers. SET lives in
// another part of cellserver and the reference server has no redis-cell
// module, so each server gets its own command: SET on redis-server,
// CL.THROTTLE (which writes a string key) on cellserver.
func makeString(c *pair, key string) {
	c.t.Helper()
	if r, err := c.redis.Do("SET", key, "v"); err != nil || string(r) != "+OK\r\n" {
		c.t.Fatalf("SET %s on redis-server: %q %v", key, r, err)
	}
	cmd := []string{"CL.THROTTLE", key, "1", "1", "1"}
	if selfTest() {
		cmd = []string{"SET", key, "v"}
	}
	if r, err := c.cell.Do(cmd...); err != nil || len(r) == 0 || r[0] == '-' {
		c.t.Fatalf("%s on %s: %q %v", cmd[0], c.srv.cell.name, r, err)
	}
}

// doSortedTop compares replies after sorting the top-level elements of an
// array, aggregates included: for HRANDFIELD ... WITHVALUES in RESP3, an
// array of [field, value] pairs in no particular order, which DoSorted keeps
// in order because its elements are arrays.
func doSortedTop(c *pair, args ...string) {
	c.t.Helper()
	c.compareParsed(args, "top-level sorted", func(v *value) []byte {
		if v.kind == '*' && !v.null {
			slices.SortFunc(v.elems, func(a, b *value) int { return bytes.Compare(a.encode(), b.encode()) })
		}
		return v.encode()
	})
}

// needCommands skips t while cellserver lacks one of the commands named
// (they come from other parts of the server: DEL, TYPE, EXPIRE, TTL, ...).
// Once they exist the test runs in full.
func needCommands(t *testing.T, c *pair, names ...string) {
	t.Helper()
	for _, name := range names {
		_, cell := c.Replies("COMMAND", "INFO", name)
		// A known command is *1 holding its description; an unknown one is
		// *1 holding a null (*-1 or _), or an error if COMMAND is missing.
		if !strings.HasPrefix(string(cell), "*1\r\n*") || strings.HasPrefix(string(cell), "*1\r\n*-1") {
			t.Skipf("cellserver has no %s yet (COMMAND INFO %s replied %q)", name, name, cell)
		}
	}
}

func TestHashSetGet(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "f1", "v1")
		c.Do("HSET", "h", "f1", "v1")           // same value: 0 new
		c.Do("HSET", "h", "f1", "x", "f2", "y") // one new
		c.Do("HSET", "h", "f3", "a", "f3", "b") // the same field twice: 1 new, last wins
		c.Do("HGET", "h", "f1")
		c.Do("HGET", "h", "f3")
		c.Do("HGET", "h", "nosuch")
		c.Do("HGET", "nokey", "f")
		c.Do("HGETALL", "h")
		c.Do("HSETNX", "h", "f1", "z")
		c.Do("HSETNX", "h", "f4", "z")
		c.Do("HSETNX", "newh", "f", "v")
		c.Do("HGETALL", "newh")
		c.Do("HMSET", "h", "f5", "1", "f1", "2")
		c.Do("HMSET", "hm", "a", "1")
		c.Do("HGETALL", "h")
		c.Do("HMGET", "h", "f1", "nosuch", "f5", "f1")
		c.Do("HMGET", "nokey", "a", "b")
		c.Do("HLEN", "h")
		c.Do("HLEN", "nokey")
		c.Do("HEXISTS", "h", "f1")
		c.Do("HEXISTS", "h", "nosuch")
		c.Do("HEXISTS", "nokey", "f")
		c.Do("HSTRLEN", "h", "f1")
		c.Do("HSTRLEN", "h", "nosuch")
		c.Do("HSTRLEN", "nokey", "f")
		c.Do("HKEYS", "h")
		c.Do("HVALS", "h")
		c.Do("HKEYS", "nokey")
		c.Do("HVALS", "nokey")
		c.Do("HGETALL", "nokey")
		c.Do("hset", "H", "F", "V") // any letter case; keys are case-sensitive
		c.Do("HGETALL", "H")
	})
}

func TestHashBinarySafe(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "", "")
		c.Do("HSET", "h", "\x00\xff\r\n", "a\x00b\r\n")
		c.Do("HSET", "h", "empty-value", "")
		c.Do("HGET", "h", "")
		c.Do("HGET", "h", "\x00\xff\r\n")
		c.Do("HSTRLEN", "h", "\x00\xff\r\n")
		c.Do("HEXISTS", "h", "")
		c.Do("HGETALL", "h")
		c.Do("HSET", "\x00key\r\n", "f", "v")
		c.Do("HGETALL", "\x00key\r\n")
		c.Do("HDEL", "h", "", "\x00\xff\r\n")
		c.Do("HGETALL", "h")
		big := strings.Repeat("\x00\xfe", 50000)
		c.Do("HSET", "h", big, big)
		c.Do("HGET", "h", big)
		c.Do("HSTRLEN", "h", big)
	})
}

func TestHashDel(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
		c.Do("HDEL", "h", "b")
		c.Do("HGETALL", "h") // order kept in the small encoding
		c.Do("HDEL", "h", "nosuch")
		c.Do("HDEL", "h", "a", "a", "nosuch") // a field named twice counts once
		c.Do("HDEL", "nokey", "a")
		c.Do("HSET", "h", "b", "5") // re-added fields go to the end
		c.Do("HGETALL", "h")
		// Deleting the last field deletes the key.
		c.Do("HDEL", "h", "c", "d", "b", "e")
		c.Do("HLEN", "h")
		c.Do("HGETALL", "h")
		c.Do("DBSIZE")
		c.Do("HSET", "h2", "x", "1")
		c.Do("HDEL", "h2", "x")
		c.Do("DBSIZE")
		// The key is gone, so it can become a list.
		c.Do("RPUSH", "h2", "a")
		c.Do("LRANGE", "h2", "0", "-1")
	})
}

func TestHashArityAndSyntax(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Error("HSET", "h")
		c.Error("HSET", "h", "f")
		c.Error("HSET", "h", "f", "v", "x") // odd pairs: an arity error
		c.Error("HMSET", "h", "f", "v", "x")
		c.Error("HMSET", "h", "f")
		c.Error("HSETNX", "h", "f")
		c.Error("HSETNX", "h", "f", "v", "x")
		c.Error("HGET", "h")
		c.Error("HGET", "h", "f", "g")
		c.Error("HMGET", "h")
		c.Error("HDEL", "h")
		c.Error("HGETALL")
		c.Error("HGETALL", "h", "x")
		c.Error("HKEYS")
		c.Error("HVALS", "a", "b")
		c.Error("HLEN")
		c.Error("HEXISTS", "h")
		c.Error("HSTRLEN", "h")
		c.Error("HINCRBY", "h", "f")
		c.Error("HINCRBYFLOAT", "h", "f", "1", "2")
		c.Error("HRANDFIELD")
		c.Do("DBSIZE") // nothing was created
	})
}

func TestHashWrongType(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		makeString(c, "s")
		c.Do("RPUSH", "l", "a")
		for _, key := range []string{"s", "l"} {
			c.Error("HSET", key, "f", "v")
			c.Error("HMSET", key, "f", "v")
			c.Error("HSETNX", key, "f", "v")
			c.Error("HGET", key, "f")
			c.Error("HMGET", key, "f")
			c.Error("HDEL", key, "f")
			c.Error("HGETALL", key)
			c.Error("HKEYS", key)
			c.Error("HVALS", key)
			c.Error("HEXISTS", key, "f")
			c.Error("HLEN", key)
			c.Error("HSTRLEN", key, "f")
			c.Error("HINCRBY", key, "f", "1")
			c.Error("HINCRBYFLOAT", key, "f", "1")
			c.Error("HRANDFIELD", key)
			c.Error("HRANDFIELD", key, "1")
			c.Error("HRANDFIELD", key, "0") // count 0 still checks the type
			c.Error("HRANDFIELD", key, "-3", "WITHVALUES")
			// Arguments are parsed before the type is checked.
			c.Error("HINCRBY", key, "f", "x")
			c.Error("HINCRBYFLOAT", key, "f", "x")
			c.Error("HINCRBYFLOAT", key, "f", "inf")
			c.Error("HRANDFIELD", key, "x")
			c.Error("HRANDFIELD", key, "1", "nope")
			c.Error("HSET", key, "f", "v", "odd")
		}
		c.Do("LRANGE", "l", "0", "-1") // unchanged
	})
}

func TestHashIncrBy(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HINCRBY", "h", "n", "5")
		c.Do("HINCRBY", "h", "n", "-12")
		c.Do("HINCRBY", "h", "n", "0")
		c.Do("HGET", "h", "n")
		c.Do("HINCRBY", "new", "n", "-9223372036854775808")
		c.Error("HINCRBY", "new", "n", "-1")
		c.Do("HINCRBY", "new", "m", "9223372036854775807")
		c.Error("HINCRBY", "new", "m", "1")
		c.Do("HINCRBY", "new", "m", "-9223372036854775807")
		c.Do("HGETALL", "new")
		for _, bad := range []string{"", "x", "1.5", "+1", "01", "-0", " 1", "1 ", "9223372036854775808", "1e3"} {
			c.Error("HINCRBY", "h", "n", bad)
		}
		c.Error("HINCRBY", "nokey", "n", "x") // nothing is created
		c.Do("HEXISTS", "nokey", "n")
		for _, stored := range []string{"abc", "", "1.5", "007", "-0", " 1", "99999999999999999999", "1e3"} {
			c.Do("HSET", "h", "s", stored)
			c.Error("HINCRBY", "h", "s", "1")
		}
		for _, stored := range []string{"0", "-5", "9223372036854775806", "-9223372036854775808"} {
			c.Do("HSET", "h", "s", stored)
			c.Do("HINCRBY", "h", "s", "1")
		}
	})
}

func TestHashIncrByFloat(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "f", "10.5")
		c.Do("HINCRBYFLOAT", "h", "f", "0.1")
		c.Do("HINCRBYFLOAT", "h", "f", "-5")
		c.Do("HGET", "h", "f")
		// Long double sums and %.17Lf printing.
		for _, incr := range []string{"0.1", "0.1", "0.1", "5.0e3", "1e20", "-1e20", "1.5e-20", "-0.3", "3.0000000000000001"} {
			c.Do("HINCRBYFLOAT", "h", "g", incr)
		}
		for i, incr := range []string{
			"1", "-1", "0", "-0", "-0.0", "1.", ".5", "1e300", "-1e300", "1e400", "1e4000", "-1e4931",
			"1e-300", "1e-17", "5e-18", "1e-4940", "0x10", "0x1p-3", "0X1.8P1", "3.14159265358979323846",
			"123456789012345678901234567890", "1.7976931348623157e308", "4.9e-324", "12345.6789e-3",
			"+7", "+.5e+1", "99999999999999999.5",
		} {
			field := "x" + strconv.Itoa(i)
			c.Do("HINCRBYFLOAT", "fresh", field, incr)
			c.Do("HINCRBYFLOAT", "fresh", field, "10.6")
			c.Do("HSTRLEN", "fresh", field)
		}
		// Stored values of every shape.
		for _, stored := range []string{"5", "-5", "0x10", "1e3", "inf", "1e4000", "0.1", "  1", "1 ", "abc", "", "nan", "1e5000"} {
			c.Do("HSET", "h", "s", stored)
			c.Do("HINCRBYFLOAT", "h", "s", "1.5")
			c.Do("HGET", "h", "s")
		}
		// Bad increments.
		for _, bad := range []string{"", "x", " 1", "1 ", "1e", "nan", "NaN", "-nan", "1_000", "1e5000", "-1e5000", "1e-5000", "0x", "."} {
			c.Error("HINCRBYFLOAT", "h", "f", bad)
		}
		for _, inf := range []string{"inf", "-inf", "+inf", "INF", "infinity", "-Infinity"} {
			c.Error("HINCRBYFLOAT", "h", "f", inf)
		}
		// A NUL anywhere is refused: strtold must consume every byte.
		c.Error("HINCRBYFLOAT", "h", "f", "\x001")
		c.Error("HINCRBYFLOAT", "h", "f", "1\x00x")
		c.Error("HINCRBYFLOAT", "h", "f", "\x00")
		c.Do("HSET", "h", "nul", "2\x00abc")
		c.Error("HINCRBYFLOAT", "h", "nul", "1")
		c.Error("HINCRBY", "h", "nul", "1")
		c.Error("HINCRBY", "h", "f", "1\x00")
		c.Error("HINCRBYFLOAT", "nokey", "f", "x")
		c.Error("HINCRBYFLOAT", "nokey", "f", "inf")
		c.Do("HEXISTS", "nokey", "f")
		// Overflow of the sum.
		c.Do("HINCRBYFLOAT", "o", "f", "1e4932")
		c.Error("HINCRBYFLOAT", "o", "f", "1e4932")
		c.Do("HGET", "o", "f")
		// A very long increment is refused before it is parsed.
		c.Error("HINCRBYFLOAT", "h", "f", "1"+strings.Repeat("0", 5200))
		c.Do("HINCRBYFLOAT", "h", "long", "0."+strings.Repeat("0", 5000)+"1")
		c.Do("HINCRBYFLOAT", "h", "long2", "1"+strings.Repeat("0", 4000))
		// HINCRBY on a float result and back.
		c.Do("HINCRBYFLOAT", "h", "i", "3")
		c.Do("HINCRBY", "h", "i", "1")
		c.Do("HINCRBYFLOAT", "h", "i", "0.5")
		c.Error("HINCRBY", "h", "i", "1")
	})
}

func TestHashRandField(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HRANDFIELD", "nokey")
		c.Do("HRANDFIELD", "nokey", "5")
		c.Do("HRANDFIELD", "nokey", "-5")
		c.Do("HRANDFIELD", "nokey", "0")
		c.Do("HRANDFIELD", "nokey", "5", "WITHVALUES")
		c.Do("HSET", "one", "f", "v")
		// One field: every answer is the same.
		c.Do("HRANDFIELD", "one")
		c.Do("HRANDFIELD", "one", "1")
		c.Do("HRANDFIELD", "one", "-4")
		c.Do("HRANDFIELD", "one", "-4", "withvalues")
		c.Do("HRANDFIELD", "one", "3", "WITHVALUES")
		c.Do("HRANDFIELD", "one", "0", "WITHVALUES")
		c.Do("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
		// A count of the size or more: the whole hash, in its order.
		c.Do("HRANDFIELD", "h", "5")
		c.Do("HRANDFIELD", "h", "100", "WITHVALUES")
		c.Do("HRANDFIELD", "h", "0")
		// Random picks: compare the shape.
		c.DoLoosely("HRANDFIELD", "h")
		c.DoLoosely("HRANDFIELD", "h", "1")
		c.DoLoosely("HRANDFIELD", "h", "1", "WITHVALUES")
		c.DoLoosely("HRANDFIELD", "h", "3")
		c.DoLoosely("HRANDFIELD", "h", "4", "WITHVALUES")
		c.DoLoosely("HRANDFIELD", "h", "-10")
		c.DoLoosely("HRANDFIELD", "h", "-10", "WITHVALUES")
		c.DoLoosely("HRANDFIELD", "h", "-1")
		// Errors, checked before the key.
		c.Error("HRANDFIELD", "h", "x")
		c.Error("HRANDFIELD", "h", "1.5")
		c.Error("HRANDFIELD", "h", "1", "WITHVALUE")
		c.Error("HRANDFIELD", "h", "1", "WITHVALUES", "x")
		c.Error("HRANDFIELD", "nokey", "1", "x")
		c.Error("HRANDFIELD", "h", "-9223372036854775808")
		c.Error("HRANDFIELD", "nokey", "-9223372036854775808", "WITHVALUES")
		c.Error("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES")
		c.Error("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES")
		c.Error("HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES")
		c.Do("HRANDFIELD", "h", "4611686018427387903", "WITHVALUES")
		c.Do("HRANDFIELD", "h", "9223372036854775807")
	})
}

// TestHashRandFieldMembers checks that random picks come from the hash and,
// for a positive count, are distinct: replies are compared sorted where the
// selection is forced (count >= size), and checked on cellserver alone
// otherwise.
func TestHashRandFieldMembers(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		for i := range 40 {
			c.Do("HSET", "h", "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
		}
		for i := range 600 {
			c.Do("HSET", "big", "f"+strconv.Itoa(i), "v"+strconv.Itoa(i))
		}
		c.DoSorted("HRANDFIELD", "big", "600")
		doSortedTop(c, "HRANDFIELD", "big", "1000", "WITHVALUES")
		for _, key := range []string{"h", "big"} {
			for _, count := range []string{"5", "20", "39", "-50"} {
				_, cell := c.Replies("HRANDFIELD", key, count)
				v, err := parseReply(cell)
				if err != nil || v.kind != '*' {
					t.Fatalf("HRANDFIELD %s %s: %q", key, count, cell)
				}
				seen := map[string]bool{}
				for _, e := range v.elems {
					if !strings.HasPrefix(e.text, "f") {
						t.Errorf("HRANDFIELD %s %s: %q is not a field", key, count, e.text)
					}
					if seen[e.text] && count[0] != '-' {
						t.Errorf("HRANDFIELD %s %s: %q twice", key, count, e.text)
					}
					seen[e.text] = true
				}
				if n, _ := strconv.Atoi(strings.TrimPrefix(count, "-")); len(v.elems) != n {
					t.Errorf("HRANDFIELD %s %s: %d fields", key, count, len(v.elems))
				}
			}
		}
	})
}

// TestHashEncodingThresholds crosses hash-max-listpack-entries (512) and
// hash-max-listpack-value (64): below them HGETALL follows insertion order
// exactly; above them the order is the server's own, so replies are compared
// sorted, and HMGET checks every value in a fixed order.
func TestHashEncodingThresholds(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		// Exactly 512 fields: still in insertion order (listpack).
		args := []string{"HSET", "h512"}
		var fields []string
		for i := range 512 {
			f := fmt.Sprintf("field:%d", (i*7919)%1000)
			fields = append(fields, f)
			args = append(args, f, strconv.Itoa(i))
		}
		c.Do(args...)
		c.Do("HGETALL", "h512")
		c.Do("HKEYS", "h512")
		c.Do("HDEL", "h512", fields[3], fields[100])
		c.Do("HGETALL", "h512")
		c.Do("HSET", "h512", "again", "1", "more", "2") // back to 512
		c.Do("HGETALL", "h512")
		// One more makes it a hash table.
		c.Do("HSET", "h512", "extra", "x")
		c.Do("HLEN", "h512")
		c.DoSorted("HGETALL", "h512")
		c.DoSorted("HKEYS", "h512")
		c.DoSorted("HVALS", "h512")
		c.Do(append([]string{"HMGET", "h512", "extra", "nosuch"}, fields...)...)
		// Deleting back below the threshold does not convert back.
		c.Do(append([]string{"HDEL", "h512"}, fields[10:]...)...)
		c.Do("HLEN", "h512")
		c.DoSorted("HGETALL", "h512")
		c.Do(append([]string{"HDEL", "h512", "extra", "again", "more"}, fields...)...)
		c.Do("HLEN", "h512")

		// Values: 64 bytes stay small, 65 convert.
		v64, v65 := strings.Repeat("v", 64), strings.Repeat("w", 65)
		c.Do("HSET", "hv", "a", "1", "b", v64, "c", "3")
		c.Do("HGETALL", "hv")
		c.Do("HSET", "hv", "d", v65)
		c.DoSorted("HGETALL", "hv")
		c.Do("HMGET", "hv", "a", "b", "c", "d")
		// Field names count too.
		c.Do("HSET", "hf", "a", "1", strings.Repeat("f", 64), "2")
		c.Do("HGETALL", "hf")
		c.Do("HSETNX", "hf", strings.Repeat("g", 65), "3")
		c.DoSorted("HGETALL", "hf")
		// HINCRBYFLOAT writing a long value converts as well.
		c.Do("HSET", "hi", "a", "1", "b", "2")
		c.Do("HINCRBYFLOAT", "hi", "b", "1e70")
		c.DoSorted("HGETALL", "hi")
		c.Do("HMGET", "hi", "a", "b")

		// A big hash through every command.
		for i := range 1000 {
			c.Do("HSET", "big", "k"+strconv.Itoa(i), strings.Repeat("x", i%100))
		}
		c.Do("HLEN", "big")
		c.Do("HGET", "big", "k999")
		c.Do("HSTRLEN", "big", "k99")
		c.Do("HEXISTS", "big", "k500")
		c.Do("HINCRBY", "big", "counter", "7")
		c.Do("HINCRBYFLOAT", "big", "counter", "0.25")
		c.Do("HSETNX", "big", "k1", "no")
		c.Do("HDEL", "big", "k1", "k2", "k3")
		c.DoSorted("HKEYS", "big")
		c.DoSorted("HVALS", "big")
		c.DoSorted("HGETALL", "big")
	})
}

// TestHashOrderAfterUpdates checks the small encoding's order through
// updates, deletes and re-inserts, which a listpack keeps in place.
func TestHashOrderAfterUpdates(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "z", "1", "y", "2", "x", "3")
		c.Do("HSET", "h", "y", "updated")
		c.Do("HINCRBY", "h", "z", "10")
		c.Do("HINCRBYFLOAT", "h", "x", "0.5")
		c.Do("HSETNX", "h", "w", "4")
		c.Do("HGETALL", "h")
		c.Do("HDEL", "h", "z")
		c.Do("HSET", "h", "z", "back")
		c.Do("HKEYS", "h")
		c.Do("HVALS", "h")
		c.Do("HRANDFIELD", "h", "10", "WITHVALUES")
	})
}

// TestHashTransaction checks that hash writes are queued and run in EXEC,
// and that they invalidate a WATCH on the key.
func TestHashTransaction(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MULTI")
		c.Do("HSET", "h", "a", "1")
		c.Do("HINCRBY", "h", "a", "2")
		c.Do("HINCRBY", "h", "a", "x")
		c.Do("HSET", "h", "b", "1", "c") // odd pairs: queued, fails in EXEC
		c.Do("HGETALL", "h")
		c.Do("EXEC")
		c.Do("MULTI")
		c.Error("HSET", "h", "b") // arity: the transaction is discarded
		c.Error("EXEC")

		other := c.OtherClient()
		c.Do("WATCH", "h")
		other.Do("HSET", "h", "a", "1") // same value: still a write
		c.Do("MULTI")
		c.Do("HGET", "h", "a")
		c.Do("EXEC")

		c.Do("WATCH", "h")
		other.Do("HSETNX", "h", "a", "2") // no change: the WATCH holds
		other.Do("HDEL", "h", "nosuch")
		c.Do("MULTI")
		c.Do("HGET", "h", "a")
		c.Do("EXEC")

		c.Do("WATCH", "h")
		other.Do("HDEL", "h", "a") // deletes the key
		c.Do("MULTI")
		c.Do("HGET", "h", "a")
		c.Do("EXEC")
	})
}

// TestHashWithKeyCommands needs DEL, EXISTS, TYPE, EXPIRE, TTL and OBJECT,
// which come from the strings/keys part of the server: it skips until they
// are there.
func TestHashWithKeyCommands(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		needCommands(t, c, "DEL", "EXISTS", "TYPE", "EXPIRE", "TTL", "OBJECT", "SET")
		c.Do("HSET", "h", "a", "1", "b", "2")
		c.Do("TYPE", "h")
		c.Do("OBJECT", "ENCODING", "h")
		c.Do("EXPIRE", "h", "100")
		c.Do("HSET", "h", "c", "3")
		c.Do("HDEL", "h", "a")
		c.Do("HINCRBY", "h", "b", "1")
		c.Do("HINCRBYFLOAT", "h", "b", "1.5")
		c.Do("TTL", "h") // in-place changes keep the TTL
		c.Do("HDEL", "h", "b", "c")
		c.Do("EXISTS", "h")
		c.Do("TTL", "h")
		c.Do("HSET", "h", "a", "1")
		c.Do("TTL", "h") // a new hash has no TTL
		c.Do("SET", "s", "v")
		c.Error("HSET", "s", "f", "v")
		c.Do("DEL", "h")
		c.Do("HGETALL", "h")
		for i := range 513 {
			c.Do("HSET", "big", "f"+strconv.Itoa(i), "v")
		}
		c.Do("OBJECT", "ENCODING", "big")
		c.Do("HSET", "long", "f", strings.Repeat("x", 65))
		c.Do("OBJECT", "ENCODING", "long")
	})
}

// TestHashIncrByFloatRandom sums seeded random decimals of up to 25 digits
// and wide exponents, where any difference in long double rounding or in
// %.17Lf printing shows.
func TestHashIncrByFloatRandom(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		r := rand.New(rand.NewPCG(7, uint64(c.proto)))
		number := func() string {
			var b strings.Builder
			if r.IntN(3) == 0 {
				b.WriteByte('-')
			}
			digits := 1 + r.IntN(25)
			dot := r.IntN(digits + 1)
			for i := range digits {
				if i == dot {
					b.WriteByte('.')
				}
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "e%d", r.IntN(61)-30)
			case 1:
				fmt.Fprintf(&b, "e%d", r.IntN(9000)-4500)
			}
			return b.String()
		}
		for i := range 300 {
			field := "f" + strconv.Itoa(i%40)
			c.Do("HINCRBYFLOAT", "r", field, number())
		}
		c.DoSorted("HGETALL", "r") // long values made it a hash table
	})
}

// TestHashRandomOps sends the same seeded random sequence of hash commands
// to both servers and compares every reply. The fields are few and short,
// so each hash stays small and its order is defined.
func TestHashRandomOps(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		r := rand.New(rand.NewPCG(11, uint64(c.proto)))
		pick := func(prefix string, n int) string { return prefix + strconv.Itoa(r.IntN(n)) }
		for range 1500 {
			key, f := pick("h", 3), pick("f", 12)
			switch r.IntN(12) {
			case 0, 1:
				c.Do("HSET", key, f, pick("v", 50), pick("f", 12), "")
			case 2:
				c.Do("HSETNX", key, f, pick("n", 5))
			case 3:
				c.Do("HDEL", key, f, pick("f", 12))
			case 4:
				c.Do("HINCRBY", key, f, strconv.Itoa(r.IntN(200)-100))
			case 5:
				c.Do("HINCRBYFLOAT", key, f, strconv.FormatFloat(r.Float64()*10-5, 'g', -1, 64))
			case 6:
				c.Do("HGETALL", key)
			case 7:
				c.Do("HMGET", key, f, pick("f", 12), pick("f", 12))
			case 8:
				c.Do("HKEYS", key)
				c.Do("HVALS", key)
			case 9:
				c.Do("HLEN", key)
				c.Do("HSTRLEN", key, f)
				c.Do("HEXISTS", key, f)
			case 10:
				c.Do("HRANDFIELD", key, "12", "WITHVALUES")
			case 11:
				c.Do("RPUSH", pick("h", 4), "x") // WRONGTYPE on a hash, or a list
			}
		}
		c.Do("DBSIZE")
	})
}

// HSCAN on small hashes, whose whole content Redis returns in one step in
// insertion order, as cellserver does for every hash.
func TestHashScan(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("HSET", "h", "f1", "1", "g2", "", "f3", "v\x00", "x", "9")
		c.Do("HSCAN", "h", "0")
		c.Do("HSCAN", "h", "0", "COUNT", "1")
		c.Do("HSCAN", "h", "0", "MATCH", "f*")
		c.Do("HSCAN", "h", "0", "match", "*", "count", "100")
		c.Do("HSCAN", "h", "0", "MATCH", "nomatch*")
		c.Do("HSCAN", "h", "", "MATCH", "f?")
		c.Do("HSCAN", "nokey", "0")
		c.Do("HSCAN", "nokey", "0", "BADOPT") // the key before the options
		c.Error("HSCAN", "h", "x")
		c.Error("HSCAN", "h", "-")
		c.Error("HSCAN", "nokey", "18446744073709551616")
		c.Error("HSCAN", "h", "0", "COUNT", "0")
		c.Error("HSCAN", "h", "0", "COUNT", "x")
		c.Error("HSCAN", "h", "0", "MATCH")
		c.Error("HSCAN", "h", "0", "FOO", "bar")
		c.Do("SET", "s", "v")
		c.Error("HSCAN", "s", "0")
		c.Error("HSCAN", "h")
	})
}
