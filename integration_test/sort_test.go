package integration_test

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// SORT and SORT_RO on lists, sets and sorted sets: numeric and ALPHA
// order, BY and GET patterns (strings, hash fields, "#", nosort), LIMIT,
// DESC, STORE, and their errors, against redis-server.

func TestSortBasics(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "3", "1", "2", "10", "-5", "1.5", "0x10", " 7", "1e2")
		c.Do("SADD", "s", "5", "3", "9", "1")
		c.Do("SADD", "sw", "b", "a", "c", "aa", "B")
		c.Do("ZADD", "z", "1", "30", "2", "10", "3", "20", "4", "5")
		c.Do("RPUSH", "w", "b", "a", "c", "aa", "B", "a\x00z", "a\x00b", "")
		for _, k := range []string{"l", "s", "z", "missing"} {
			c.Do("SORT", k)
			c.Do("SORT", k, "DESC")
			c.Do("SORT_RO", k, "desc", "asc")
			c.Do("SORT", k, "LIMIT", "1", "2")
			c.Do("SORT", k, "LIMIT", "-1", "2", "DESC")
			c.Do("SORT", k, "LIMIT", "2", "-1")
			c.Do("SORT", k, "LIMIT", "0", "0")
			c.Do("SORT", k, "LIMIT", "100", "10")
			c.Do("SORT", k, "LIMIT", "3", "100")
			c.Do("SORT", k, "LIMIT", "2", "9223372036854775807")
			c.Do("SORT", k, "BY", "nosort", "LIMIT", "2", "9223372036854775807")
			c.Do("SORT", k, "LIMIT", "9223372036854775807", "9223372036854775807")
			c.Do("SORT", k, "LIMIT", "-9223372036854775808", "1")
			c.Do("SORT", k, "ALPHA")
			c.Do("SORT", k, "ALPHA", "DESC", "LIMIT", "1", "3")
		}
		for _, k := range []string{"l", "z", "w", "missing"} {
			c.Do("SORT", k, "BY", "nosort")
			c.Do("SORT", k, "BY", "nosort", "DESC")
			c.Do("SORT", k, "BY", "nosort", "LIMIT", "1", "2")
			c.Do("SORT", k, "BY", "nosort", "DESC", "LIMIT", "1", "2")
			c.Do("SORT", k, "BY", "nosort", "LIMIT", "-3", "20", "DESC")
			c.Do("SORT", k, "BY", "no\x00*sort", "LIMIT", "5", "20")
		}
		c.DoSorted("SORT", "sw", "BY", "nosort")
		c.Do("SORT", "sw", "ALPHA")
		c.Do("SORT", "w", "ALPHA")
		c.Do("SORT", "w", "ALPHA", "DESC")
		c.Error("SORT", "w")
		c.Error("SORT", "sw")
		c.Do("RPUSH", "bad", "1", "nan")
		c.Error("SORT", "bad")
		// No "1e400": redis-server checks a strtod's ERANGE in an errno it
		// does not clear, so its later SORTs fail too until a system call
		// changes errno.
		c.Do("RPUSH", "bad3", "2", "1\x00x", "", "  ", "inf", "-inf")
		c.Error("SORT", "bad3")
		c.Do("LREM", "bad3", "0", "  ")
		c.Do("SORT", "bad3")
		c.Error("SORT", "l", "LIMIT", "1")
		c.Error("SORT", "l", "LIMIT", "a", "1")
		c.Error("SORT", "l", "LIMIT", "1", "b")
		c.Error("SORT", "l", "FOO")
		c.Error("SORT", "l", "BY")
		c.Error("SORT", "l", "GET")
		c.Error("SORT", "l", "STORE")
		c.Error("SORT_RO", "l", "STORE", "dst")
		c.Error("SORT", "l", "LIMIT", "x", "1", "FOO") // the first bad option answers
		c.Error("SORT")
		c.Error("SORT_RO")
		c.Do("SET", "str", "x")
		c.Error("SORT", "str")
		c.Error("SORT_RO", "str", "BY", "nosort")
		c.Error("SORT", "str", "FOO") // options first
		c.Do("HSET", "hash", "a", "1")
		c.Error("SORT", "hash")
	})
}

func TestSortPatterns(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "1", "2", "3", "4", "5")
		c.Do("SADD", "s", "1", "2", "3", "4", "5")
		c.Do("ZADD", "z", "5", "1", "4", "2", "3", "3", "2", "4", "1", "5")
		c.Do("MSET", "w_1", "50", "w_2", "30", "w_3", "40", "w_5", "-1")
		c.Do("MSET", "n_1", "one", "n_2", "two", "n_3", "three", "n_4", "four")
		c.Do("HSET", "h_1", "f", "x", "g", "10")
		c.Do("HSET", "h_2", "f", "y", "g", "5")
		c.Do("HSET", "h_3", "f", "a")
		c.Do("RPUSH", "n_5", "a list")
		for _, k := range []string{"l", "s", "z"} {
			c.Do("SORT", k, "BY", "w_*")
			c.Do("SORT", k, "BY", "w_*", "DESC")
			c.Do("SORT", k, "BY", "h_*->g")
			// Elements without a BY value tie: their order is the set's
			// own, which only a list shares with Redis.
			tie := c.Do
			if k != "l" {
				tie = c.DoSorted
			}
			tie("SORT", k, "BY", "h_*->f", "ALPHA")
			tie("SORT", k, "BY", "n_*", "ALPHA", "DESC")
			c.Do("SORT", k, "BY", "w_*", "GET", "#", "GET", "n_*", "GET", "h_*->f", "GET", "missing_*")
			c.Do("SORT", k, "BY", "nosort", "GET", "n_*")
			c.Do("SORT", k, "GET", "n_*", "LIMIT", "1", "2")
			c.Do("SORT", k, "GET", "#\x00x", "GET", "n_*->")
			c.Do("SORT", k, "GET", "fixed")
			c.Do("SORT", k, "GET", "h_*->f->g")
			c.Do("SORT", k, "GET", "*")
			c.Do("SORT", k, "GET", "w_*", "BY", "w_*", "ALPHA")
			c.Error("SORT", k, "BY", "n_*")
		}
		c.Do("MSET", "x_a", "3", "x_b", "1", "x_c", "2")
		c.Do("RPUSH", "letters", "a", "b", "c")
		c.Do("SORT", "letters", "BY", "x_*")
		c.Do("SORT", "letters", "BY", "x_*", "GET", "x_*")
		c.Do("SORT", "letters", "BY", "x_*->f")
	})
}

func TestSortStore(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RPUSH", "l", "3", "1", "2")
		c.Do("SADD", "s", "b", "c", "a")
		c.Do("MSET", "n_1", "one", "n_2", "two")
		c.Do("SORT", "l", "STORE", "dst")
		c.Do("LRANGE", "dst", "0", "-1")
		c.Do("OBJECT", "ENCODING", "dst")
		c.Do("SET", "dst2", "x", "EX", "100")
		c.Do("SORT", "l", "DESC", "GET", "n_*", "GET", "#", "STORE", "dst2")
		c.Do("LRANGE", "dst2", "0", "-1")
		c.Do("TTL", "dst2")
		c.Do("SORT", "s", "BY", "nosort", "STORE", "dst3") // a set stored sorts
		c.Do("LRANGE", "dst3", "0", "-1")
		c.Do("SORT", "s", "ALPHA", "STORE", "first", "STORE", "last")
		c.Do("EXISTS", "first")
		c.Do("LRANGE", "last", "0", "-1")
		c.Do("SORT", "missing", "STORE", "dst")
		c.Do("EXISTS", "dst")
		c.Do("SORT", "l", "LIMIT", "5", "5", "STORE", "dst2")
		c.Do("EXISTS", "dst2")
		c.Do("SORT", "l", "STORE", "l")
		c.Do("LRANGE", "l", "0", "-1")
		c.Do("SET", "str", "x")
		c.Do("SORT", "l", "STORE", "str")
		c.Do("TYPE", "str")
		c.Do("RPUSH", "w", "a", "b")
		c.Error("SORT", "w", "STORE", "dst4")
		c.Do("EXISTS", "dst4")
		c.Do("RPUSH", "wa", "b\x00x", "b\x00a", "a")
		c.Do("SORT", "wa", "ALPHA", "STORE", "dst5")
		c.Do("LRANGE", "dst5", "0", "-1")
		c.Do("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "s")
		c.Do("EVAL", "return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'DESC')", "1", "s")
	})
}

// TestSortRandom sorts random lists, numerically and with ALPHA, with
// random LIMITs and BY weights.
func TestSortRandom(t *testing.T) {
	c := newPair(t)
	r := rand.New(rand.NewPCG(32, 2))
	for round := range 30 {
		k := "r" + strconv.Itoa(round)
		args := []string{"RPUSH", k}
		for i := range 1 + r.IntN(40) {
			args = append(args, strconv.Itoa(r.IntN(100)-20)+"."+strconv.Itoa(i))
			c.Do("SET", "wt_"+args[len(args)-1], strconv.Itoa(r.IntN(1000)))
		}
		c.Do(args...)
		lim := []string{"LIMIT", strconv.Itoa(r.IntN(50) - 5), strconv.Itoa(r.IntN(50) - 5)}
		c.Do(append([]string{"SORT", k}, lim...)...)
		c.Do(append([]string{"SORT", k, "ALPHA", "DESC"}, lim...)...)
		c.Do("SORT", k, "BY", "wt_*", "GET", "#", "GET", "wt_*")
		c.Do(append([]string{"SORT", k, "BY", "nosort", "DESC"}, lim...)...)
	}
}
