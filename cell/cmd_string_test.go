package cell

import (
	"strings"
	"testing"
)

// step is one command of a scripted session and its exact raw reply.
type step struct {
	args []string
	want string
}

func cmd(args ...string) []string { return args }

// runSteps sends each step on one connection and checks the raw reply.
func runSteps(t *testing.T, c *testConn, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := c.do(s.args...); got != s.want {
			t.Errorf("%q: got %q, want %q", s.args, got, s.want)
		}
	}
}

const (
	wrongType = "-" + ErrWrongType + "\r\n"
	notInt    = "-" + ErrNotInteger + "\r\n"
	notFloat  = "-" + ErrNotFloat + "\r\n"
	syntaxErr = "-" + ErrSyntax + "\r\n"
	nilBulk   = "$-1\r\n"
)

// TestStringWrongType: on a key of another type, each string command
// checks what Redis checks first, and changes nothing.
func TestStringWrongType(t *testing.T) {
	srv := startServer(t, nil)
	putObject(srv, "h", oneFieldHash())
	c := dial(t, srv)
	runSteps(t, c, []step{
		{cmd("GET", "h"), wrongType},
		{cmd("SET", "h", "v", "GET"), wrongType},
		{cmd("SET", "h", "v", "GET", "NX"), wrongType},
		{cmd("SET", "h", "v", "GET", "BAD"), syntaxErr},
		{cmd("SET", "h", "v", "GET", "EX", "0"), "-ERR invalid expire time in 'set' command\r\n"},
		{cmd("TYPE", "h"), "+hash\r\n"},
		{cmd("SETNX", "h", "v"), ":0\r\n"},
		{cmd("GETSET", "h", "v"), wrongType},
		{cmd("GETDEL", "h"), wrongType},
		{cmd("GETEX", "h", "EX", "x"), wrongType},
		{cmd("GETEX", "h", "FOO"), syntaxErr},
		{cmd("MGET", "h", "nope"), "*2\r\n$-1\r\n$-1\r\n"},
		{cmd("INCR", "h"), wrongType},
		{cmd("DECR", "h"), wrongType},
		{cmd("INCRBY", "h", "x"), notInt},
		{cmd("INCRBY", "h", "1"), wrongType},
		{cmd("DECRBY", "h", "1"), wrongType},
		{cmd("INCRBYFLOAT", "h", "x"), wrongType},
		{cmd("APPEND", "h", "x"), wrongType},
		{cmd("STRLEN", "h"), wrongType},
		{cmd("GETRANGE", "h", "x", "1"), notInt},
		{cmd("GETRANGE", "h", "0", "1"), wrongType},
		{cmd("SETRANGE", "h", "-1", "x"), "-" + ErrOffsetRange + "\r\n"},
		{cmd("SETRANGE", "h", "0", ""), wrongType},
		{cmd("TYPE", "h"), "+hash\r\n"},
		{cmd("EXPIRE", "h", "100"), ":1\r\n"},
		{cmd("TTL", "h"), ":100\r\n"},
		{cmd("RENAME", "h", "h2"), "+OK\r\n"},
		{cmd("TYPE", "h2"), "+hash\r\n"},
		{cmd("TTL", "h2"), ":100\r\n"},
		{cmd("PERSIST", "h2"), ":1\r\n"},
		{cmd("EXISTS", "h", "h2"), ":1\r\n"},
		{cmd("SCAN", "0", "TYPE", "hash"), "*2\r\n$1\r\n0\r\n*1\r\n$2\r\nh2\r\n"},
		{cmd("MSET", "h2", "s"), "+OK\r\n"},
		{cmd("TYPE", "h2"), "+string\r\n"},
	})
}

func TestStringReplies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	runSteps(t, c, []step{
		{cmd("SET", "k", "v", "NX", "XX"), syntaxErr},
		{cmd("SET", "k", "v", "EX", "1", "PX", "1"), syntaxErr},
		{cmd("SET", "k", "v", "EX"), syntaxErr},
		{cmd("SET", "k", "v", "nx\x00junk"), "+OK\r\n"},
		{cmd("SET", "k", "v", "EX", "9223372036854775"), "-ERR invalid expire time in 'set' command\r\n"},
		{cmd("SETEX", "k", "0", "v"), "-ERR invalid expire time in 'setex' command\r\n"},
		{cmd("PSETEX", "k", "-1", "v"), "-ERR invalid expire time in 'psetex' command\r\n"},
		{cmd("GETEX", "k", "PX", "0"), "-ERR invalid expire time in 'getex' command\r\n"},
		{cmd("SET", "k", "v", "GET"), "$1\r\nv\r\n"},
		{cmd("SET", "k", "w", "XX", "GET"), "$1\r\nv\r\n"},
		{cmd("SET", "n", "1", "XX", "GET"), nilBulk},
		{cmd("SET", "k", "x", "NX"), nilBulk},
		{cmd("MSET", "a", "1", "b"), "-ERR wrong number of arguments for 'mset' command\r\n"},
		{cmd("MSETNX", "a", "1", "b"), "-ERR wrong number of arguments for 'msetnx' command\r\n"},
		{cmd("SET", "max", "9223372036854775807"), "+OK\r\n"},
		{cmd("INCR", "max"), "-" + ErrOverflow + "\r\n"},
		{cmd("DECRBY", "max", "-9223372036854775808"), "-" + ErrDecrOverflow + "\r\n"},
		{cmd("SET", "f", "10.6"), "+OK\r\n"},
		{cmd("INCRBYFLOAT", "f", "5.0e3"), "$22\r\n5010.60000000000000009\r\n"},
		{cmd("INCRBYFLOAT", "f", "inf"), "-" + ErrIncrFloatNaN + "\r\n"},
		{cmd("INCRBYFLOAT", "f", "1e5000"), notFloat},
		{cmd("APPEND", "ap", "12"), ":2\r\n"},
		{cmd("OBJECT", "ENCODING", "ap"), "$3\r\nint\r\n"},
		{cmd("APPEND", "ap", "3"), ":3\r\n"},
		{cmd("OBJECT", "ENCODING", "ap"), "$3\r\nraw\r\n"},
		{cmd("INCRBYFLOAT", "fl", "2"), "$1\r\n2\r\n"},
		{cmd("OBJECT", "ENCODING", "fl"), "$6\r\nembstr\r\n"},
		{cmd("SET", "long", strings.Repeat("x", 45)), "+OK\r\n"},
		{cmd("OBJECT", "ENCODING", "long"), "$3\r\nraw\r\n"},
		{cmd("SETRANGE", "sr", "2", "ab"), ":4\r\n"},
		{cmd("GET", "sr"), "$4\r\n\x00\x00ab\r\n"},
		{cmd("SETRANGE", "sr", "536870911", "xy"), "-" + ErrStringTooLong + "\r\n"},
		{cmd("GETRANGE", "sr", "-2", "-1"), "$2\r\nab\r\n"},
		{cmd("GETRANGE", "sr", "-1", "-2"), "$0\r\n\r\n"},
		{cmd("GETRANGE", "none", "0", "-1"), "$0\r\n\r\n"},
	})
	c.do("HELLO", "3")
	runSteps(t, c, []step{
		{cmd("GET", "none"), "_\r\n"},
		{cmd("SET", "k", "x", "NX"), "_\r\n"},
		{cmd("MGET", "none"), "*1\r\n_\r\n"},
	})
}

// TestStringPersistsTTL: what keeps and what clears a TTL.
func TestStringPersistsTTL(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	for _, tc := range []struct {
		change []string
		ttl    string
	}{
		{cmd("INCR", "k"), ":100\r\n"},
		{cmd("INCRBYFLOAT", "k", "1.5"), ":100\r\n"},
		{cmd("APPEND", "k", "0"), ":100\r\n"},
		{cmd("SETRANGE", "k", "0", "2"), ":100\r\n"},
		{cmd("SET", "k", "2", "KEEPTTL"), ":100\r\n"},
		{cmd("GETEX", "k"), ":100\r\n"},
		{cmd("SET", "k", "2"), ":-1\r\n"},
		{cmd("GETSET", "k", "2"), ":-1\r\n"},
		{cmd("MSET", "k", "2"), ":-1\r\n"},
		{cmd("GETEX", "k", "PERSIST"), ":-1\r\n"},
		{cmd("GETEX", "k", "EX", "50"), ":50\r\n"},
	} {
		c.do("SET", "k", "1", "EX", "100")
		c.do(tc.change...)
		if got := c.do("TTL", "k"); got != tc.ttl {
			t.Errorf("%q: TTL %q, want %q", tc.change, got, tc.ttl)
		}
	}
}

func TestOptIs(t *testing.T) {
	for _, tc := range []struct {
		arg, word string
		want      bool
	}{
		{"NX", "nx", true}, {"nX", "nx", true}, {"nx\x00x", "nx", true}, {"nxx", "nx", false},
		{"n", "nx", false}, {"", "nx", false}, {"KeepTTL", "keepttl", true}, {"n\x18", "nx", false},
	} {
		if got := optIs([]byte(tc.arg), tc.word); got != tc.want {
			t.Errorf("optIs(%q, %q) = %v", tc.arg, tc.word, got)
		}
	}
}
