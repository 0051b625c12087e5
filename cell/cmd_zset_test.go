package cell

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestZsetReplies pins the exact bytes of the sorted-set commands in RESP2,
// including the check order of their errors. The integration suite
// compares the same against redis-server; this runs without it.
func TestZsetReplies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("SET", "s", "v")
	runSteps(t, c, []step{
		{cmd("ZADD", "z", "1", "a", "2", "b", "2", "c"), ":3\r\n"},
		{cmd("ZADD", "z", "1", "a"), ":0\r\n"},
		{cmd("ZADD", "z", "CH", "5", "a", "2", "b"), ":1\r\n"},
		{cmd("ZADD", "z", "NX", "9", "a", "0", "n"), ":1\r\n"},
		{cmd("ZADD", "z", "XX", "9", "x"), ":0\r\n"},
		{cmd("ZADD", "z", "GT", "CH", "1", "a", "6", "b"), ":1\r\n"},
		{cmd("ZADD", "z", "INCR", "0.5", "a"), "$3\r\n5.5\r\n"},
		{cmd("ZADD", "z", "INCR", "NX", "1", "a"), nilBulk},
		{cmd("ZADD", "nokey", "XX", "1", "a"), ":0\r\n"},
		{cmd("EXISTS", "nokey"), ":0\r\n"},
		{cmd("ZINCRBY", "z", "+inf", "a"), "$3\r\ninf\r\n"},
		{cmd("ZINCRBY", "z", "-inf", "a"), "-" + ErrZsetNaN + "\r\n"},
		{cmd("ZINCRBY", "z", "0.1", "t"), "$19\r\n0.10000000000000001\r\n"},
		{cmd("ZADD", "z", "1", "a", "2"), syntaxErr},
		{cmd("ZADD", "z", "NX", "XX", "GT", "1", "a"), "-" + ErrZaddXXNX + "\r\n"},
		{cmd("ZADD", "z", "GT", "LT", "x", "a"), "-" + ErrZaddGTLTNX + "\r\n"},
		{cmd("ZADD", "z", "INCR", "1", "a", "x", "b"), "-" + ErrZaddIncrPair + "\r\n"},
		{cmd("ZADD", "s", "nan", "a"), notFloat},
		{cmd("ZADD", "s", "1", "a"), wrongType},
		{cmd("ZCARD", "z"), ":5\r\n"},
		{cmd("ZCARD", "nokey"), ":0\r\n"},
		{cmd("ZSCORE", "z", "b"), "$1\r\n6\r\n"},
		{cmd("ZSCORE", "z", "nosuch"), nilBulk},
		{cmd("ZMSCORE", "z", "b", "nosuch"), "*2\r\n$1\r\n6\r\n$-1\r\n"},
		{cmd("ZRANK", "z", "b"), ":3\r\n"},
		{cmd("ZREVRANK", "z", "b"), ":1\r\n"},
		{cmd("ZRANK", "z", "nosuch"), nilBulk},
		{cmd("ZRANGE", "z", "0", "1", "WITHSCORES"), "*4\r\n$1\r\nn\r\n$1\r\n0\r\n$1\r\nt\r\n$19\r\n0.10000000000000001\r\n"},
		{cmd("ZRANGE", "z", "+inf", "(0", "BYSCORE", "REV", "LIMIT", "1", "2"), "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{cmd("ZRANGEBYSCORE", "z", "2", "6"), "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"},
		{cmd("ZREVRANGEBYSCORE", "z", "6", "2", "LIMIT", "0", "1"), "*1\r\n$1\r\nb\r\n"},
		{cmd("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"), "-" + ErrLimitNeedsBy + "\r\n"},
		{cmd("ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"), "-" + ErrWithScoresLex + "\r\n"},
		{cmd("ZRANGE", "z", "0", "-1", "REV", "REV"), syntaxErr},
		{cmd("ZRANGE", "s", "x", "1"), notInt},
		{cmd("ZRANGEBYSCORE", "s", "[1", "2"), "-" + ErrMinMaxNotFloat + "\r\n"},
		{cmd("ZRANGEBYLEX", "s", "a", "+"), "-" + ErrMinMaxNotLex + "\r\n"},
		{cmd("ZRANGE", "s", "0", "1"), wrongType},
		{cmd("ZCOUNT", "z", "(2", "+inf"), ":2\r\n"},
		{cmd("ZPOPMIN", "z"), "*2\r\n$1\r\nn\r\n$1\r\n0\r\n"},
		{cmd("ZPOPMAX", "z", "1"), "*2\r\n$1\r\na\r\n$3\r\ninf\r\n"},
		{cmd("ZPOPMIN", "z", "-1"), "-" + ErrMustBePositive + "\r\n"},
		{cmd("ZPOPMIN", "s", "0"), wrongType},
		{cmd("ZPOPMIN", "nokey", "0"), "*0\r\n"},
		{cmd("ZRANDMEMBER", "z", "5"), "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nt\r\n"},
		{cmd("ZRANDMEMBER", "z", "-9223372036854775808"), "-" + ErrCountRange + "\r\n"},
		{cmd("ZRANDMEMBER", "z", "-9223372036854775807"), "-" + ErrReplyTooLarge + "\r\n"},
		{cmd("ZRANDMEMBER", "nokey"), nilBulk},
		{cmd("ZREMRANGEBYSCORE", "z", "-inf", "(6"), ":2\r\n"},
		{cmd("ZREM", "z", "b", "b"), ":1\r\n"},
		{cmd("EXISTS", "z"), ":0\r\n"},
		{cmd("ZADD", "l", "0", "a", "0", "b", "0", "c"), ":3\r\n"},
		{cmd("ZLEXCOUNT", "l", "(a", "+"), ":2\r\n"},
		{cmd("ZREVRANGEBYLEX", "l", "+", "[b"), "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"},
		{cmd("ZREMRANGEBYLEX", "l", "-", "(c"), ":2\r\n"},
		{cmd("ZREMRANGEBYRANK", "l", "0", "-1"), ":1\r\n"},
		{cmd("EXISTS", "l"), ":0\r\n"},
		{cmd("ZADD", "src", "1", "a", "2", "b"), ":2\r\n"},
		{cmd("ZRANGESTORE", "s", "src", "1", "-1"), ":1\r\n"},
		{cmd("TYPE", "s"), "+zset\r\n"},
		{cmd("ZRANGESTORE", "s", "src", "5", "9"), ":0\r\n"},
		{cmd("ZADD", "src", "0.5", "c", "-0", "d"), ":2\r\n"},
		{cmd("ZSCAN", "src", "0", "MATCH", "[a-c]", "COUNT", "1"), "*2\r\n$1\r\n0\r\n*6\r\n$1\r\nc\r\n$3\r\n0.5\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{cmd("ZSCAN", "src", "x"), "-" + ErrInvalidCursor + "\r\n"},
		{cmd("ZSCAN", "nokey", "0", "COUNT", "0"), "*2\r\n$1\r\n0\r\n*0\r\n"},
		{cmd("EXISTS", "s"), ":0\r\n"},
	})
}

// TestZsetRESP3 pins the shapes that differ in RESP3: doubles, nulls, and
// WITHSCORES pairs (and ZPOP* with a count) as nested arrays.
func TestZsetRESP3(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("HELLO", "3")
	runSteps(t, c, []step{
		{cmd("ZADD", "z", "1.5", "a", "-inf", "b", "2", "c"), ":3\r\n"},
		{cmd("ZSCORE", "z", "a"), ",1.5\r\n"},
		{cmd("ZSCORE", "z", "x"), "_\r\n"},
		{cmd("ZADD", "z", "XX", "INCR", "1", "x"), "_\r\n"},
		{cmd("ZRANGE", "z", "0", "1", "WITHSCORES"), "*2\r\n*2\r\n$1\r\nb\r\n,-inf\r\n*2\r\n$1\r\na\r\n,1.5\r\n"},
		{cmd("ZMSCORE", "z", "c", "x"), "*2\r\n,2\r\n_\r\n"},
		{cmd("ZPOPMIN", "z"), "*2\r\n$1\r\nb\r\n,-inf\r\n"},
		{cmd("ZPOPMAX", "z", "1"), "*1\r\n*2\r\n$1\r\nc\r\n,2\r\n"},
		{cmd("ZRANDMEMBER", "z", "3", "WITHSCORES"), "*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"},
		{cmd("ZRANK", "z", "x"), "_\r\n"},
	})
}

// TestZsetKeepsTTLAndWatch: in-place changes keep the TTL, and a WATCH
// breaks only when a command really changed the set.
func TestZsetKeepsTTLAndWatch(t *testing.T) {
	srv := startServer(t, nil)
	c, other := dial(t, srv), dial(t, srv)
	c.do("ZADD", "z", "1", "a", "2", "b")
	c.do("EXPIRE", "z", "100")
	c.do("ZADD", "z", "3", "c")
	c.do("ZREM", "z", "a")
	if got := c.do("TTL", "z"); got != ":100\r\n" {
		t.Errorf("TTL after in-place changes: %q", got)
	}
	tests := []struct {
		change []string
		breaks bool
	}{
		{cmd("ZADD", "z", "2", "b"), false},
		{cmd("ZADD", "z", "CH", "NX", "5", "b"), false},
		{cmd("ZINCRBY", "z", "0", "b"), false},
		{cmd("ZREM", "z", "nosuch"), false},
		{cmd("ZREMRANGEBYSCORE", "z", "50", "60"), false},
		{cmd("ZPOPMIN", "z", "0"), false},
		{cmd("ZRANGE", "z", "0", "-1"), false},
		{cmd("ZADD", "z", "7", "b"), true},
		{cmd("ZINCRBY", "z", "1", "b"), true},
		{cmd("ZREMRANGEBYRANK", "z", "0", "0"), true},
		{cmd("ZADD", "z", "1", "x"), true},
		{cmd("ZPOPMAX", "z"), true},
	}
	for _, tt := range tests {
		c.do("WATCH", "z")
		other.do(tt.change...)
		c.do("MULTI")
		c.do("ZCARD", "z")
		got := c.do("EXEC")
		if broke := got == "*-1\r\n"; broke != tt.breaks {
			t.Errorf("%q: EXEC %q, want broken=%v", tt.change, got, tt.breaks)
		}
	}
}

// TestZsetConfigThresholds: CONFIG SET of the listpack limits changes where
// sets convert, existing ones included, at their next insert.
func TestZsetConfigThresholds(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	runSteps(t, c, []step{
		{cmd("ZADD", "z", "1", "a", "2", "b"), ":2\r\n"},
		{cmd("CONFIG", "SET", "zset-max-listpack-entries", "2"), "+OK\r\n"},
		{cmd("CONFIG", "GET", "zset-max-ziplist-entries"), "*2\r\n$24\r\nzset-max-ziplist-entries\r\n$1\r\n2\r\n"},
		{cmd("OBJECT", "ENCODING", "z"), "$8\r\nlistpack\r\n"},
		{cmd("ZADD", "z", "3", "c"), ":1\r\n"},
		{cmd("OBJECT", "ENCODING", "z"), "$8\r\nskiplist\r\n"},
		{cmd("CONFIG", "SET", "zset-max-listpack-value", "3"), "+OK\r\n"},
		{cmd("ZADD", "v", "1", "abcd"), ":1\r\n"},
		{cmd("OBJECT", "ENCODING", "v"), "$8\r\nskiplist\r\n"},
		{cmd("ZADD", "w", "1", "abc"), ":1\r\n"},
		{cmd("OBJECT", "ENCODING", "w"), "$8\r\nlistpack\r\n"},
	})
}

// TestZrangeAllocations: a range reply costs a constant number of
// allocations, however many members it carries, because members go from
// the set's storage straight into the reply buffer.
func TestZrangeAllocations(t *testing.T) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	run := func(line ...string) {
		args := make([][]byte, len(line))
		for i, a := range line {
			args[i] = []byte(a)
		}
		c.dispatch(args)
		c.w.Reset()
	}
	for _, n := range []int{100, 5000} {
		key := "z" + strconv.Itoa(n)
		for i := range n {
			m := strconv.Itoa(1700000000000 + i)
			run("ZADD", key, m, m)
			if i%7 == 0 {
				run("ZADD", key, m, "u-"+strings.Repeat("x", i%20)+m)
			}
		}
		for _, cmdline := range [][]string{
			{"ZRANGE", key, "0", "-1", "WITHSCORES"},
			{"ZRANGEBYSCORE", key, "-inf", "+inf", "WITHSCORES"},
			{"ZREVRANGE", key, "0", "-1"},
		} {
			args := make([][]byte, len(cmdline))
			for i, a := range cmdline {
				args[i] = []byte(a)
			}
			c.dispatch(args) // grows the reply buffer once
			c.w.Reset()
			allocs := testing.AllocsPerRun(20, func() {
				c.dispatch(args)
				c.w.Reset()
			})
			if allocs > 8 {
				t.Errorf("%q on %d members: %.0f allocations per call", cmdline, n, allocs)
			}
		}
	}
}

// BenchmarkZsetWindow is W1's commands on one key, as the hot path runs
// them: ZADD at the tail, ZREMRANGEBYSCORE of a prefix, ZCARD.
func BenchmarkZsetWindow(b *testing.B) {
	srv := New(fuzzConfig())
	c, peer := pipeClient(srv)
	defer peer.Close()
	defer c.close()
	zadd := [][]byte{[]byte("ZADD"), []byte("limit:u:a"), nil, nil}
	rem := [][]byte{[]byte("ZREMRANGEBYSCORE"), []byte("limit:u:a"), []byte("0"), nil}
	card := [][]byte{[]byte("ZCARD"), []byte("limit:u:a")}
	now := int64(1700000000000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		now++
		ts := strconv.AppendInt(nil, now, 10)
		zadd[2], zadd[3] = ts, ts
		rem[3] = strconv.AppendInt(nil, now-100, 10)
		c.dispatch(zadd)
		c.dispatch(rem)
		c.dispatch(card)
		c.w.Reset()
	}
}

// TestNumkeysKeys: dispatch locks exactly the keys a numkeys command may
// read, and never more arguments than there are.
func TestNumkeysKeys(t *testing.T) {
	tests := []struct {
		args     []string
		at       int
		withDest bool
		want     []int
	}{
		{cmd("ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"), 2, true, []int{1, 3, 4}},
		{cmd("ZUNIONSTORE", "d", "5", "a"), 2, true, []int{1, 3}},
		{cmd("ZUNIONSTORE", "d", "x", "a"), 2, true, []int{1}},
		{cmd("ZUNIONSTORE", "d", "0", "a"), 2, true, []int{1}},
		{cmd("ZINTERCARD", "3", "a", "b", "c", "LIMIT", "1"), 1, false, []int{2, 3, 4}},
		{cmd("ZMPOP", "9223372036854775807", "a", "MIN"), 1, false, []int{2, 3}},
		{cmd("ZUNION", "-1", "a"), 1, false, nil},
	}
	for _, tt := range tests {
		args := make([][]byte, len(tt.args))
		for i, a := range tt.args {
			args[i] = []byte(a)
		}
		if got := numkeysKeys(tt.at, tt.withDest)(args); !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v, want %v", tt.args, got, tt.want)
		}
	}
}
