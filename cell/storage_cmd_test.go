package cell

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// TestKeyedEntries: keys and values of every size around the shapes'
// edges keep their bytes when the value is rewritten in place, grows past
// its room, or the entry changes type; the key strings the map holds stay
// the keys.
func TestKeyedEntries(t *testing.T) {
	srv := New(fuzzConfig())
	do, done := dispatcher(srv)
	defer done()
	var keys []string
	for _, kl := range []int{1, 7, 8, 9, 16, 24, 40, 72, 73, 200} {
		for _, vl := range []int{0, 1, 8, 19, 30, 64, 100} {
			key := strconv.Itoa(len(keys)) + ":" + strings.Repeat("k", kl)
			val := strings.Repeat("v", vl)
			keys = append(keys, key)
			steps := []struct {
				args []string
				want string
			}{
				{[]string{"set", key, val}, "+OK\r\n"},
				{[]string{"get", key}, bulk(val)},
				{[]string{"set", key, strings.Repeat("w", vl)}, "+OK\r\n"}, // in place
				{[]string{"append", key, "xyz"}, ":" + strconv.Itoa(vl+3) + "\r\n"},
				{[]string{"get", key}, bulk(strings.Repeat("w", vl) + "xyz")},
				{[]string{"incr", key + ":n"}, ":1\r\n"},
				{[]string{"incr", key + ":n"}, ":2\r\n"},
			}
			for _, s := range steps {
				if got := do(s.args...); got != s.want {
					t.Fatalf("%.60q: got %q, want %q", s.args, got, s.want)
				}
			}
		}
	}
	// A key that held a string now holds a list, then a string again.
	if got := do("del", keys[0]); got != ":1\r\n" {
		t.Fatalf("del: %q", got)
	}
	if got := do("rpush", keys[0], "a"); got != ":1\r\n" {
		t.Fatalf("rpush: %q", got)
	}
	if got := do("set", keys[0], "s"); got != "+OK\r\n" {
		t.Fatalf("set over a list: %q", got)
	}
	// Every key is still found under its own name.
	for _, k := range keys {
		if got := do("exists", k, k+":n"); got != ":2\r\n" {
			t.Errorf("exists %.40q: %q", k, got)
		}
	}
	if got := do("dbsize"); got != ":"+strconv.Itoa(2*len(keys))+"\r\n" {
		t.Errorf("dbsize: %q, want %d", got, 2*len(keys))
	}
}

// TestStringValues: every value reads back as the bytes written, whether
// it is kept as an int (only canonical int64s) or as bytes, and commands
// that change a value in place turn an int back into bytes first.
func TestStringValues(t *testing.T) {
	srv := New(fuzzConfig())
	do, done := dispatcher(srv)
	defer done()
	for _, tc := range []struct {
		val   string
		asInt bool
	}{
		{"0", true}, {"1", true}, {"-1", true}, {"1234567890123456789", true},
		{"9223372036854775807", true}, {"-9223372036854775808", true},
		{"9223372036854775808", false}, {"-9223372036854775809", false},
		{"-0", false}, {"01", false}, {"+1", false}, {" 1", false}, {"1 ", false},
		{"", false}, {"-", false}, {"1e3", false}, {"18446744073709551615", false},
	} {
		if got := do("set", "k", tc.val); got != "+OK\r\n" {
			t.Fatalf("set %q: %q", tc.val, got)
		}
		e := srv.ks.Peek(0, []byte("k"))
		if _, isInt := e.IntVal(); isInt != tc.asInt {
			t.Errorf("%q: stored as int %v, want %v", tc.val, !tc.asInt, tc.asInt)
		}
		for _, step := range []struct{ args, want []string }{
			{[]string{"get", "k"}, []string{bulk(tc.val)}},
			{[]string{"strlen", "k"}, []string{":" + strconv.Itoa(len(tc.val)) + "\r\n"}},
			{[]string{"getrange", "k", "0", "-1"}, []string{bulk(tc.val)}},
			{[]string{"append", "k", "x"}, []string{":" + strconv.Itoa(len(tc.val)+1) + "\r\n"}},
			{[]string{"get", "k"}, []string{bulk(tc.val + "x")}},
			{[]string{"setrange", "k", "0", "y"}, []string{":" + strconv.Itoa(len(tc.val)+1) + "\r\n"}},
			{[]string{"get", "k"}, []string{bulk("y" + (tc.val + "x")[1:])}},
		} {
			if got := do(step.args...); got != step.want[0] {
				t.Errorf("%q: %v = %q, want %q", tc.val, step.args, got, step.want[0])
			}
		}
	}
	// INCR keeps an int; SETRANGE over it gives bytes that INCR reads.
	for _, s := range [][2]string{
		{"set n 41", "+OK\r\n"}, {"incr n", ":42\r\n"}, {"setrange n 1 3", ":2\r\n"},
		{"incr n", ":44\r\n"}, {"append n 5", ":3\r\n"}, {"incrby n -446", ":-1\r\n"},
		{"get n", bulk("-1")}, {"object encoding n", bulk("int")},
	} {
		if got := do(strings.Fields(s[0])...); got != s[1] {
			t.Errorf("%s = %q, want %q", s[0], got, s[1])
		}
	}
}

// TestHashCommands runs the hash commands in-process, table-driven, for
// the replies and errors that matter most.
func TestHashCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"hset h a 1 b 2", ":2\r\n"},
		{"hset h a 1 c 3", ":1\r\n"},
		{"hset h a", "-ERR wrong number of arguments for 'hset' command\r\n"},
		{"hset h a 1 b", "-ERR wrong number of arguments for 'hset' command\r\n"},
		{"hmset h a 1 b", "-ERR wrong number of arguments for 'hmset' command\r\n"},
		{"hgetall h", "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"},
		{"hget h b", "$1\r\n2\r\n"},
		{"hget h z", "$-1\r\n"},
		{"hmget h a z", "*2\r\n$1\r\n1\r\n$-1\r\n"},
		{"hsetnx h a 9", ":0\r\n"},
		{"hsetnx h d 4", ":1\r\n"},
		{"hlen h", ":4\r\n"},
		{"hstrlen h d", ":1\r\n"},
		{"hexists h d", ":1\r\n"},
		{"hincrby h a 10", ":11\r\n"},
		{"hincrby h a x", "-ERR value is not an integer or out of range\r\n"},
		{"hincrby h a 9223372036854775807", "-ERR increment or decrement would overflow\r\n"},
		{"hincrbyfloat h a 0.5", "$4\r\n11.5\r\n"},
		{"hincrby h a 1", "-ERR hash value is not an integer\r\n"},
		{"hset h s abc", ":1\r\n"},
		{"hincrbyfloat h s 1", "-ERR hash value is not a float\r\n"},
		{"hincrbyfloat h s inf", "-ERR value is NaN or Infinity\r\n"},
		{"hincrbyfloat h n 1e-3", "$5\r\n0.001\r\n"},
		{"hdel h a b c d s n", ":6\r\n"},
		{"hlen h", ":0\r\n"},
		{"dbsize", ":0\r\n"},
		{"hrandfield h", "$-1\r\n"},
		{"hrandfield h 3", "*0\r\n"},
		{"hrandfield h -9223372036854775808", "-" + ErrCountRange + "\r\n"},
		{"hrandfield h 1 withvalue", "-ERR syntax error\r\n"},
		{"hrandfield h 4611686018427387904 withvalues", "-ERR value is out of range\r\n"},
		{"hset one f v", ":1\r\n"},
		{"hrandfield one -2 WITHVALUES", "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\nf\r\n$1\r\nv\r\n"},
		{"hrandfield one -100000000", "-" + ErrReplyTooLarge + "\r\n"},
		{"rpush l a", ":1\r\n"},
		{"hget l a", "-" + ErrWrongType + "\r\n"},
		{"hincrby l a x", "-ERR value is not an integer or out of range\r\n"},
	}
	for _, s := range steps {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

// TestHashKeepsTTL checks that in-place changes keep the key's expiry and
// that a new hash has none.
func TestHashKeepsTTL(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("hset", "h", "a", "1", "b", "2")
	entry := func() *keyspace.Entry { return srv.ks.Peek(0, []byte("h")) }
	exp := int64(1) << 50
	c.do("pexpireat", "h", strconv.FormatInt(exp, 10))
	for _, cmd := range [][]string{
		{"hset", "h", "c", "3"}, {"hdel", "h", "a"}, {"hincrby", "h", "b", "1"},
		{"hincrbyfloat", "h", "b", "1.5"}, {"hsetnx", "h", "d", "4"}, {"hmset", "h", "e", "5"},
	} {
		c.do(cmd...)
		if e := entry(); e == nil || e.Exp != exp {
			t.Fatalf("after %v: entry %+v", cmd, e)
		}
	}
	c.do("hdel", "h", "b", "c", "d", "e")
	if e := entry(); e != nil {
		t.Fatalf("empty hash still stored: %+v", e)
	}
	c.do("hset", "h", "a", "1")
	if e := entry(); e == nil || e.Exp != 0 {
		t.Fatalf("new hash: %+v", e)
	}
}

// TestListCommands runs the list commands in-process for the replies and
// errors that matter most, in both protocols' null forms.
func TestListCommands(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	steps := []struct{ args, want string }{
		{"rpush l a b c", ":3\r\n"},
		{"lpush l z", ":4\r\n"},
		{"lpushx nokey a", ":0\r\n"},
		{"lrange l 0 -1", "*4\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"},
		{"lpop l 0", "*0\r\n"},
		{"lpop l -1", "-ERR value is out of range, must be positive\r\n"},
		{"lpop l x", "-ERR value is out of range, must be positive\r\n"},
		{"lpop l 1 2", "-ERR wrong number of arguments for 'lpop' command\r\n"},
		{"rpop l 2", "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"},
		{"lpop nokey 2", "*-1\r\n"},
		{"lpop nokey", "$-1\r\n"},
		{"lindex nokey x", "$-1\r\n"},
		{"lindex l x", "-ERR value is not an integer or out of range\r\n"},
		{"lindex l -1", "$1\r\na\r\n"},
		{"lset nokey x v", "-ERR no such key\r\n"},
		{"lset l 5 v", "-ERR index out of range\r\n"},
		{"lrange nokey x 1", "-ERR value is not an integer or out of range\r\n"},
		{"linsert l middle a b", "-ERR syntax error\r\n"},
		{"linsert l before nosuch b", ":-1\r\n"},
		{"linsert l after a b", ":3\r\n"},
		{"lpos l b", ":2\r\n"},
		{"lpos l b count 0", "*1\r\n:2\r\n"},
		{"lpos l q", "$-1\r\n"},
		{"lpos l a rank 0", "-" + ErrLposRankZero + "\r\n"},
		{"lpos l a count x", "-ERR COUNT can't be negative\r\n"},
		{"lpos l a maxlen -1", "-ERR MAXLEN can't be negative\r\n"},
		{"lpos l a rank", "-ERR syntax error\r\n"},
		{"lrem l 0 a", ":1\r\n"},
		{"ltrim l 5 10", "+OK\r\n"},
		{"llen l", ":0\r\n"},
		{"dbsize", ":0\r\n"},
		{"hset h f v", ":1\r\n"},
		{"lindex h x", "-" + ErrWrongType + "\r\n"},
		{"lrange h x 1", "-ERR value is not an integer or out of range\r\n"},
		{"hello 3", ""},
		{"lpop nokey 2", "_\r\n"},
		{"lpop nokey", "_\r\n"},
		{"lindex nokey 0", "_\r\n"},
	}
	for _, s := range steps {
		got := c.do(strings.Fields(s.args)...)
		if s.want != "" && got != s.want {
			t.Errorf("%s: got %q, want %q", s.args, got, s.want)
		}
	}
}

// TestListKeepsTTL checks that in-place changes keep the key's expiry.
func TestListKeepsTTL(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	c.do("rpush", "l", "a", "b", "c", "d")
	entry := func() *keyspace.Entry { return srv.ks.Peek(0, []byte("l")) }
	exp := int64(1) << 50
	c.do("pexpireat", "l", strconv.FormatInt(exp, 10))
	for _, cmd := range []string{
		"rpush l e", "lpush l z", "lpushx l y", "rpushx l x", "lpop l", "rpop l 2",
		"lset l 0 q", "linsert l after q w", "lrem l 1 w", "ltrim l 0 -1",
	} {
		c.do(strings.Fields(cmd)...)
		if e := entry(); e == nil || e.Exp != exp {
			t.Fatalf("after %s: entry %+v", cmd, e)
		}
	}
	c.do("ltrim", "l", "1", "0")
	if e := entry(); e != nil {
		t.Fatalf("empty list still stored: %+v", e)
	}
}

// dispatcher runs commands on a client of srv straight through dispatch
// and returns each reply; done closes the client's pipe.
func dispatcher(srv *Server) (do func(args ...string) string, done func()) {
	c, peer := pipeClient(srv)
	return func(args ...string) string {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		c.w.Reset()
		c.dispatch(b)
		return string(c.w.Bytes())
	}, func() { peer.Close() }
}

// bulk is s as a bulk string reply.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
