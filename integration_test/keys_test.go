package integration_test

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestKeysDelExistsType(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MSET", "a", "1", "b", "2", binKey, binVal)
		c.Do("EXISTS", "a")
		c.Do("EXISTS", "a", "a", "a", "missing", "b")
		c.Do("EXISTS", binKey)
		c.Do("TYPE", "a")
		c.Do("TYPE", "missing")
		c.Do("TYPE", binKey)
		c.Do("DEL", "a", "b", "c", "a")
		c.Do("DEL", "a")
		c.Do("EXISTS", "a", "b")
		c.Do("SET", "u", "1")
		c.Do("UNLINK", "u", "u", "x")
		c.Do("DEL", binKey)
		c.Error("DEL")
		c.Error("UNLINK")
		c.Error("EXISTS")
		c.Error("TYPE")
		c.Error("TYPE", "a", "b")
		if c.makeList("list") {
			c.Do("TYPE", "list")
			c.Do("EXISTS", "list")
			c.Do("DEL", "list")
		}
	})
}

func TestKeysKeysPattern(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.DoSorted("KEYS", "*")
		names := []string{"hello", "hallo", "hxllo", "hllo", "heeeello", "a", "ab", "abc", "b", "[a", "a*b", "a?b", "a\\b",
			"x-y", "-", "]", "^", "A", "Z", "\x00", "a\x00b", "\xff", "\x80", "caf\xc3\xa9", "", "*", "?", "[", "\\"}
		args := []string{"MSET"}
		for _, n := range names {
			args = append(args, n, "v")
		}
		c.Do(args...)
		for _, p := range []string{
			"*", "h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h[b-a]llo", "a*", "*b", "*a*", "?", "??", "???",
			"[a", "[a-", "[", "[^", "[^a", "\\[a", "a\\*b", "a\\?b", "a\\\\b", "a[\\*]b", "[\\]]", "[]]", "[]", "[^]a]",
			"x[-]y", "[a-]", "[-a]", "[!a]", "[A-Z]", "[a-z]", "[z-a]", "[\x00-\x01]", "a\x00b", "a?b", "*\x00*",
			"[\x80-\xff]", "[a-\xff]", "[\xff-a]", "\\", "a\\", "**", "***a", "*[", "h*l*o", "*e*e*e*e*o", "",
			"caf?", "caf??", "caf\xc3*", "[[]", "[\\", "^", "[\\^]",
		} {
			c.DoSorted("KEYS", p)
		}
		c.Error("KEYS")
		c.Error("KEYS", "*", "x")
		// Expired keys are not listed.
		c.Do("SET", "gone", "v", "PXAT", "1")
		c.DoSorted("KEYS", "g*")
	})
}

// scanAll runs a whole SCAN iteration on one connection and returns the
// keys it saw (sorted, duplicates kept) and how many calls it took.
func scanAll(t *testing.T, conn *respConn, extra ...string) ([]string, int) {
	t.Helper()
	var keys []string
	cursor := "0"
	for calls := 1; ; calls++ {
		raw, err := conn.Do(append([]string{"SCAN", cursor}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseReply(raw)
		if err != nil || v.kind != '*' || len(v.elems) != 2 || v.elems[0].kind != '$' || v.elems[1].kind != '*' {
			t.Fatalf("SCAN %s: malformed reply %q", cursor, raw)
		}
		for _, k := range v.elems[1].elems {
			keys = append(keys, k.text)
		}
		cursor = v.elems[0].text
		if cursor == "0" {
			slices.Sort(keys)
			return keys, calls
		}
		if calls > 100000 {
			t.Fatal("SCAN does not end")
		}
	}
}

// compareScan checks that a full SCAN with the given options returns the
// same set of keys from both servers, each exactly once (no key changes
// during these scans).
func compareScan(t *testing.T, c *pair, extra ...string) {
	t.Helper()
	rk, _ := scanAll(t, c.redis, extra...)
	ck, _ := scanAll(t, c.cell, extra...)
	if !slices.Equal(rk, ck) {
		t.Errorf("SCAN %q: redis-server saw %d keys, cellserver %d\n  redis: %q\n  cell:  %q", extra, len(rk), len(ck), trim(rk), trim(ck))
	}
	if len(slices.Compact(slices.Clone(ck))) != len(ck) {
		t.Errorf("SCAN %q: cellserver returned a key twice", extra)
	}
}

func trim(s []string) []string {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}

func TestKeysScan(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SCAN", "0")
		args := []string{"MSET"}
		for i := range 300 {
			args = append(args, fmt.Sprintf("key:%d", i), strconv.Itoa(i))
		}
		args = append(args, binKey, binVal, "other", "x")
		c.Do(args...)
		compareScan(t, c)
		compareScan(t, c, "COUNT", "1")
		compareScan(t, c, "COUNT", "7")
		compareScan(t, c, "COUNT", "1000")
		compareScan(t, c, "MATCH", "key:1*")
		compareScan(t, c, "MATCH", "key:1*", "COUNT", "3")
		compareScan(t, c, "match", "*", "count", "50")
		compareScan(t, c, "MATCH", "nothing*")
		compareScan(t, c, "MATCH", "")
		compareScan(t, c, "TYPE", "")
		compareScan(t, c, "MATCH", "*", "MATCH", "key:5")
		compareScan(t, c, "TYPE", "string")
		compareScan(t, c, "TYPE", "STRING", "MATCH", "o*")
		compareScan(t, c, "TYPE", "list")
		compareScan(t, c, "TYPE", "nosuchtype")
		compareScan(t, c, "COUNT", "5", "COUNT", "10", "MATCH", "x", "MATCH", "key:2?")
		if c.makeList("list") {
			compareScan(t, c, "TYPE", "list")
			compareScan(t, c, "TYPE", "string", "MATCH", "l*")
		}
		// A full scan with COUNT 1000 fits in one reply on both.
		c.DoSorted("SCAN", "0", "COUNT", "1000", "MATCH", "key:2?")

		for _, bad := range []string{"abc", " 1", "1 ", "1.5", "18446744073709551616", "-18446744073709551616", "+", "-", "0x10", "\t0"} {
			c.Error("SCAN", bad)
		}
		c.Error("SCAN", "0", "COUNT", "0")
		c.Error("SCAN", "0", "COUNT", "-1")
		c.Error("SCAN", "0", "COUNT", "abc")
		c.Error("SCAN", "0", "COUNT")
		c.Error("SCAN", "0", "MATCH")
		c.Error("SCAN", "0", "TYPE")
		c.Error("SCAN", "0", "FOO", "bar")
		c.Error("SCAN", "abc", "COUNT", "0")
		c.Error("SCAN")
		// strtoul's leniency: these are cursors too.
		c.DoSorted("SCAN", "", "COUNT", "1000", "MATCH", "o*")
		c.DoSorted("SCAN", "+0", "COUNT", "1000", "MATCH", "o*")
		c.DoSorted("SCAN", "000", "COUNT", "1000", "MATCH", "o*")
		c.DoSorted("SCAN", "-0", "COUNT", "1000", "MATCH", "o*")
	})
}

// TestKeysScanWhileWriting: keys present for the whole scan are returned,
// whatever is added and deleted in between.
func TestKeysScanWhileWriting(t *testing.T) {
	c := newPair(t)
	args := []string{"MSET"}
	for i := range 200 {
		args = append(args, fmt.Sprintf("stay:%d", i), "v")
	}
	c.Do(args...)
	seen := map[string]int{}
	cursor := "0"
	for i := 0; ; i++ {
		raw, err := c.cell.Do("SCAN", cursor, "COUNT", "5")
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseReply(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range v.elems[1].elems {
			seen[k.text]++
		}
		for j := range 10 {
			c.cell.Do("SET", fmt.Sprintf("new:%d:%d", i, j), "v")
			c.cell.Do("DEL", fmt.Sprintf("new:%d:%d", i-1, j))
		}
		if cursor = v.elems[0].text; cursor == "0" {
			break
		}
	}
	for i := range 200 {
		if n := seen[fmt.Sprintf("stay:%d", i)]; n != 1 {
			t.Errorf("stay:%d seen %d times", i, n)
		}
	}
}

func TestKeysRandomkey(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("RANDOMKEY")
		c.Do("SET", "only", "v")
		c.Do("RANDOMKEY")
		c.Do("MSET", "a", "1", "b", "2")
		for range 5 {
			c.DoLoosely("RANDOMKEY")
		}
		c.Error("RANDOMKEY", "x")
		c.Do("FLUSHALL")
		c.Do("SET", "gone", "v", "PXAT", "1")
		c.Do("SET", "live", "v")
		c.Do("RANDOMKEY")
		c.Do("RANDOMKEY")
	})
}

func TestKeysRename(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "a", "1")
		c.Do("RENAME", "a", "b")
		c.Do("GET", "a")
		c.Do("GET", "b")
		c.Error("RENAME", "a", "b")
		c.Error("RENAME", "a", "a")
		c.Error("RENAMENX", "a", "b")
		c.Do("RENAME", "b", "b")
		c.Do("RENAMENX", "b", "b")
		c.Do("SET", "c", "3", "EX", "100")
		c.Do("RENAME", "c", "d")
		c.Do("TTL", "d")
		c.Do("RENAME", "b", "d")
		c.Do("TTL", "d")
		c.Do("GET", "d")
		c.Do("SET", "e", "5")
		c.Do("RENAMENX", "d", "e")
		c.Do("RENAMENX", "d", "f")
		c.Do("MGET", "d", "e", "f")
		c.Do("SET", "g", "7", "PX", "100000")
		c.Do("SET", "h", "8", "EX", "100")
		c.Do("RENAME", "f", "h")
		c.Do("TTL", "h")
		c.Do("RENAME", "g", binKey)
		c.Do("TTL", binKey)
		c.Do("GET", binKey)
		c.Error("RENAME", "a")
		c.Error("RENAMENX", "a", "b", "c")
		if c.makeList("list") {
			c.Do("RENAME", "list", "list2")
			c.Do("TYPE", "list2")
		}
		// An expired destination is just replaced; an expired source is missing.
		c.Do("SET", "old", "v", "PXAT", "1")
		c.Do("RENAMENX", "h", "old")
		c.Do("SET", "old2", "v", "PXAT", "1")
		c.Error("RENAME", "old2", "x")
	})
}

func TestKeysExpire(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("EXPIRE", "missing", "100")
		c.Do("SET", "k", "v")
		c.Do("TTL", "k")
		c.Do("PTTL", "k")
		c.Do("EXPIRETIME", "k")
		c.Do("PEXPIRETIME", "k")
		c.Do("TTL", "missing")
		c.Do("PTTL", "missing")
		c.Do("EXPIRETIME", "missing")
		c.Do("PEXPIRETIME", "missing")
		c.Do("EXPIRE", "k", "100")
		c.Do("TTL", "k")
		c.Do("PEXPIRE", "k", "1800")
		c.Do("TTL", "k")
		c.Do("PEXPIRE", "k", "200000")
		c.Do("TTL", "k")
		c.Do("EXPIREAT", "k", "4102444800")
		c.Do("EXPIRETIME", "k")
		c.Do("PEXPIRETIME", "k")
		c.Do("PEXPIREAT", "k", "4102444800123")
		c.Do("PEXPIRETIME", "k")
		c.Do("EXPIRETIME", "k")
		c.Do("PERSIST", "k")
		c.Do("PERSIST", "k")
		c.Do("PERSIST", "missing")
		c.Do("TTL", "k")

		// NX, XX, GT, LT.
		c.Do("EXPIRE", "k", "100", "XX")
		c.Do("EXPIRE", "k", "100", "GT")
		c.Do("EXPIRE", "k", "100", "LT")
		c.Do("TTL", "k")
		c.Do("EXPIRE", "k", "200", "NX")
		c.Do("EXPIRE", "k", "300", "nx")
		c.Do("TTL", "k")
		c.Do("EXPIRE", "k", "300", "XX")
		c.Do("EXPIRE", "k", "200", "GT")
		c.Do("EXPIRE", "k", "400", "gt")
		c.Do("EXPIRE", "k", "399", "GT")
		c.Do("TTL", "k")
		c.Do("EXPIRE", "k", "500", "LT")
		c.Do("EXPIRE", "k", "400", "Lt")
		c.Do("EXPIRE", "k", "350", "LT", "XX")
		c.Do("EXPIRE", "k", "360", "XX", "GT")
		c.Do("TTL", "k")
		c.Do("EXPIRE", "k", "100", "LT", "LT")
		c.Do("TTL", "k")
		c.Do("PEXPIRE", "k", "100000", "NX")
		c.Do("EXPIREAT", "k", "4102444800", "GT")
		c.Do("PEXPIREAT", "k", "4102444800000", "LT")
		c.Do("EXPIRETIME", "k")
		c.Error("EXPIRE", "k", "100", "NX", "XX")
		c.Error("EXPIRE", "k", "100", "NX", "GT")
		c.Error("EXPIRE", "k", "100", "LT", "NX")
		c.Error("EXPIRE", "k", "100", "GT", "LT")
		c.Error("EXPIRE", "k", "100", "FOO")
		c.Error("EXPIRE", "k", "100", "NX", "bar\x00baz")
		c.Error("EXPIRE", "k", "100", "a\r\nb")
		c.Error("EXPIRE", "k", "abc", "FOO")
		c.Error("EXPIRE", "k", "abc", "NX", "XX")
		c.Error("EXPIRE", "k", "abc")
		c.Error("EXPIRE", "k", "1.5")
		c.Error("EXPIRE", "k", "")
		c.Error("EXPIRE", "missing", "abc")
		c.Error("PEXPIRE", "k", "+1")
		c.Error("EXPIRE", "k", "9223372036854775")
		c.Error("EXPIRE", "k", "-9223372036854776")
		c.Do("EXPIRE", "k", "9223372036854")
		c.Do("TTL", "k")
		c.Error("PEXPIRE", "k", "9223372036854775807")
		c.Error("EXPIREAT", "k", "9223372036854776")
		c.Do("EXPIREAT", "k", "9223372036854775")
		c.Do("PEXPIRETIME", "k")
		c.Do("PEXPIREAT", "k", "9223372036854775807")
		c.Do("PEXPIRETIME", "k")
		c.Do("EXPIRETIME", "k")
		c.Error("EXPIREAT", "missing", "9223372036854776")
		c.Error("EXPIRE", "k")
		c.Error("TTL")
		c.Error("TTL", "a", "b")
		c.Error("PERSIST")

		// A time at or before now deletes the key and replies 1.
		for _, del := range [][]string{
			{"EXPIRE", "d", "0"}, {"EXPIRE", "d", "-5"}, {"PEXPIRE", "d", "0"}, {"PEXPIRE", "d", "-1"},
			{"EXPIREAT", "d", "1"}, {"PEXPIREAT", "d", "0"}, {"EXPIREAT", "d", "-9223372036854775"},
			{"EXPIRE", "d", "-100", "LT"}, {"PEXPIREAT", "d", "1", "XX"}, {"EXPIRE", "d", "-1", "GT"},
			{"EXPIRE", "d", "0", "NX"},
		} {
			c.Do("SET", "d", "v", "EX", "1000")
			c.Do(del...)
			c.Do("EXISTS", "d")
		}
		c.Do("SET", binKey, "v")
		c.Do("PEXPIRE", binKey, "100000")
		c.Do("TTL", binKey)
		if c.makeList("list") {
			c.Do("EXPIRE", "list", "100")
			c.Do("TTL", "list")
			c.Do("PERSIST", "list")
		}
	})
}

func TestKeysExpiryBehaviour(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("SET", "a", "1", "PX", "30")
		c.Do("SET", "b", "1")
		c.Do("PEXPIRE", "b", "30")
		c.Do("MSET", "c", "1", "d", "1", "e", "1", "f", "1")
		c.Do("PEXPIRE", "c", "30")
		c.Do("PEXPIRE", "d", "30")
		c.Do("PEXPIRE", "e", "30")
		c.Do("PEXPIRE", "f", "30")
		c.Do("SET", "stay", "1")
		c.Do("PEXPIRE", "stay", "100000")
		c.Sleep(60 * time.Millisecond)
		c.Do("TTL", "a")
		c.Do("PTTL", "b")
		c.Do("EXISTS", "a", "b", "stay")
		c.Do("TYPE", "c")
		c.Do("PERSIST", "d")
		c.Do("EXPIRE", "e", "100")
		c.Error("RENAME", "f", "g")
		c.DoSorted("KEYS", "*")
		compareScan(t, c)
		c.Do("RANDOMKEY")
	})
}

func TestKeysWatch(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		other := c.OtherClient()
		for _, write := range [][]string{
			{"DEL", "w"}, {"UNLINK", "w"}, {"EXPIRE", "w", "100"}, {"PEXPIRE", "w", "0"}, {"RENAME", "w", "w2"},
			{"RENAME", "x", "w"}, {"RENAMENX", "x", "w2"}, {"EXPIRE", "w", "100", "NX"}, {"PERSIST", "t"},
		} {
			c.Do("FLUSHALL")
			c.Do("MSET", "w", "1", "x", "2")
			c.Do("SET", "t", "1", "EX", "100")
			c.Do("WATCH", "w", "t")
			other.Do(write...)
			c.Do("MULTI")
			c.Do("GET", "w")
			c.Do("EXEC")
		}
		for _, noop := range [][]string{
			{"DEL", "nope"}, {"EXISTS", "w"}, {"TTL", "w"}, {"PERSIST", "w"}, {"EXPIRE", "w", "100", "XX"},
			{"EXPIRE", "nope", "100"}, {"RENAME", "w", "w"}, {"TYPE", "w"}, {"OBJECT", "ENCODING", "w"},
			{"KEYS", "*"}, {"SCAN", "0"}, {"RANDOMKEY"},
		} {
			c.Do("FLUSHALL")
			c.Do("SET", "w", "1")
			c.Do("WATCH", "w")
			other.DoSorted(noop...)
			c.Do("MULTI")
			c.Do("GET", "w")
			c.Do("EXEC")
		}
		// Expiry between WATCH and EXEC aborts.
		c.Do("SET", "w", "1", "PX", "150")
		c.Do("WATCH", "w")
		c.Sleep(200 * time.Millisecond)
		c.Do("MULTI")
		c.Do("GET", "w")
		c.Do("EXEC")
	})
}

func TestKeysObject(t *testing.T) {
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("OBJECT", "HELP")
		c.Do("object", "help")
		c.Do("OBJECT", "ENCODING", "missing")
		c.Do("OBJECT", "REFCOUNT", "missing")
		c.Do("OBJECT", "FREQ", "missing")
		c.Do("OBJECT", "IDLETIME", "missing")
		c.Do("SET", "k", "v")
		c.Error("OBJECT", "FREQ", "k")
		c.Do("OBJECT", "IDLETIME", "k")
		c.Do("OBJECT", "REFCOUNT", "k")
		c.Do("OBJECT", "encoding", "k")
		c.Error("OBJECT")
		c.Error("OBJECT", "FOO")
		c.Error("OBJECT", "foo", "k")
		c.Error("OBJECT", "ENCODING")
		c.Error("OBJECT", "ENCODING", "a", "b")
		c.Error("OBJECT", "HELP", "x")
		c.Error("OBJECT", strings.Repeat("x", 10))
	})
}

// TestKeysObjectPolicies: OBJECT FREQ and IDLETIME of a key just made,
// under each maxmemory policy: LFU policies answer FREQ and refuse
// IDLETIME, the others the other way round.
func TestKeysObjectPolicies(t *testing.T) {
	c := newPair(t)
	t.Cleanup(func() { c.Do("CONFIG", "SET", "maxmemory-policy", "noeviction") })
	for _, p := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
		"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"} {
		c.Do("CONFIG", "SET", "maxmemory-policy", p)
		c.Do("SET", "k"+p, "v")
		c.Do("RPUSH", "l"+p, "v")
		for _, k := range []string{"k" + p, "l" + p, "missing"} {
			c.Do("OBJECT", "FREQ", k)
			c.Do("OBJECT", "IDLETIME", k)
		}
	}
}

// TestKeysMigrateUnreachable: MIGRATE to a port nobody listens on fails
// the write, as Redis's non-blocking connect only fails for a name it
// cannot resolve (go-redis's suite checks this text).
func TestKeysMigrateUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	forBothProtocols(t, func(t *testing.T, c *pair) {
		c.Do("MIGRATE", "localhost", port, "key", "0", "0") // no key: NOKEY
		c.Do("SET", "key", "hello")
		c.Error("MIGRATE", "localhost", port, "key", "0", "0")
		c.Error("MIGRATE", "127.0.0.1", port, "", "0", "100", "KEYS", "key")
		c.Error("MIGRATE", "no-such-host.invalid", port, "key", "0", "100")
		c.Do("GET", "key")
	})
}
