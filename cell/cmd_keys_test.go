package cell

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/resp"
)

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", false}, {"*", "abc", true}, {"", "", true}, {"", "a", false}, {"a", "", false},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h*llo", "hllo", true}, {"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false}, {"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h[b-a]llo", "hbllo", true}, {"h[a-b]llo", "hcllo", false},
		{"[a", "a", true}, {"[a", "b", false}, {"[", "a", false}, {"[^", "a", true}, {"[^a", "b", true},
		{"\\[a", "[a", true}, {"a\\*b", "a*b", true}, {"a\\*b", "axb", false}, {"[\\]]", "]", true},
		{"[]]", "]", false}, {"[a-]", "-", false}, {"[a-]", "a", true}, {"\\", "\\", true}, {"a\\", "a\\", true},
		{"**", "x", true}, {"***a", "bba", true}, {"*[", "a[", false}, {"*e*e*e*e*o", "heeeello", true},
		{"*a*a*a*a*b", strings.Repeat("a", 60), false},
		// Range ends are signed chars: 0x80..0xff sort below ASCII.
		{"[\x80-\xff]", "\x90", true}, {"[a-\xff]", "b", false}, {"[a-\xff]", "\x00", true}, {"[\xff-a]", "`", true},
		{"a\x00b", "a\x00b", true}, {"*\x00*", "x\x00y", true}, {"?", "\xff", true},
	} {
		if got := globMatch([]byte(tc.pat), []byte(tc.s)); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

func TestParseCursor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"", 0, true}, {"123", 123, true}, {"007", 7, true}, {"+5", 5, true},
		{"-1", math.MaxUint64, true}, {"18446744073709551615", math.MaxUint64, true},
		{"18446744073709551616", 0, false}, {"-", 0, false}, {"+", 0, false}, {" 1", 0, false},
		{"1 ", 0, false}, {"1x", 0, false}, {"5\x00x", 5, true}, {"\t1", 0, false}, {"0x1", 0, false},
	} {
		got, ok := parseCursor([]byte(tc.in))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseCursor(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// scanKeys runs a whole SCAN on c, calling between after each call with
// the number of keys it returned.
func scanKeys(t *testing.T, c *testConn, count string, between func(call, n int)) map[string]int {
	t.Helper()
	seen := map[string]int{}
	cursor := "0"
	for call := 0; ; call++ {
		reply := c.do("SCAN", cursor, "COUNT", count)
		// *2 $n cursor *m $k key ...
		lines := strings.Split(reply, "\r\n")
		cursor = lines[2]
		if v, err := strconv.ParseUint(cursor, 10, 64); err != nil || v >= 1<<53 {
			t.Fatalf("cursor %q: not below 2^53", cursor)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(lines[3], "*"))
		for i := 0; i < n; i++ {
			seen[lines[5+2*i]]++
		}
		if between != nil {
			between(call, n)
		}
		if cursor == "0" {
			return seen
		}
		if call > 1_000_000 {
			t.Fatal("SCAN does not end")
		}
	}
}

// TestScanGuarantee: every key present for the whole scan is returned
// exactly once, while other keys come and go between the calls.
func TestScanGuarantee(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	other := dial(t, srv)
	for i := range 500 {
		c.do("SET", fmt.Sprintf("stay:%d", i), "v")
	}
	for _, count := range []string{"1", "3", "10", "100000"} {
		seen := scanKeys(t, c, count, func(call, _ int) {
			for j := range 20 {
				other.do("SET", fmt.Sprintf("tmp:%d:%d", call, j), "v")
				other.do("DEL", fmt.Sprintf("tmp:%d:%d", call-1, j))
			}
		})
		for i := range 500 {
			if n := seen[fmt.Sprintf("stay:%d", i)]; n != 1 {
				t.Fatalf("COUNT %s: stay:%d returned %d times", count, i, n)
			}
		}
	}
}

// TestScanAcrossGrowth: every key present for the whole scan is returned
// exactly once while the shards' indexes grow many times over between the
// calls, then shrink when those keys are deleted again.
func TestScanAcrossGrowth(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Shards = 2 })
	c := dial(t, srv)
	other := dial(t, srv)
	for i := range 300 {
		c.do("SET", fmt.Sprintf("stay:%d", i), "v")
	}
	added := 0
	seen := scanKeys(t, c, "5", func(call, _ int) {
		switch {
		case call < 20: // grow: 300 keys to about 40,000
			args := []string{"MSET"}
			for range 2000 {
				args = append(args, fmt.Sprintf("grow:%d", added), "v")
				added++
			}
			other.do(args...)
		case call == 20: // shrink: delete them all, compact every index
			for i := 0; i < added; i += 1000 {
				args := []string{"DEL"}
				for j := i; j < min(i+1000, added); j++ {
					args = append(args, fmt.Sprintf("grow:%d", j))
				}
				other.do(args...)
			}
			srv.ks.Compact(0)
		}
	})
	for i := range 300 {
		if n := seen[fmt.Sprintf("stay:%d", i)]; n != 1 {
			t.Fatalf("stay:%d returned %d times", i, n)
		}
	}
	if added < 40000 {
		t.Fatalf("the scan ended after %d added keys: no growth tested", added)
	}
}

// TestScanConcurrentWriters: SCAN (COUNT below, at and above a step of
// the walk) and KEYS return every key present throughout exactly once
// while other connections insert and delete keys at the same time, growing
// the shards' indexes many times over and shrinking them again. SCAN and
// KEYS unlock a shard between steps, so the writers run inside them.
func TestScanConcurrentWriters(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Shards = 2 })
	c := dial(t, srv)
	const stay = 3000
	args := []string{"MSET"}
	for i := range stay {
		args = append(args, "stay:"+strconv.Itoa(i), "v")
	}
	c.do(args...)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wc := dial(t, srv)
		wg.Go(func() {
			for round := 0; ; round++ {
				// Grow by 20,000 keys in steps, then delete them and
				// compact: every index doubles and shrinks again.
				for b := 0; b < 20000; b += 500 {
					args := []string{"MSET"}
					for i := b; i < b+500; i++ {
						args = append(args, fmt.Sprintf("tmp:%d:%d:%d", w, round, i), "v")
					}
					wc.do(args...)
					select {
					case <-stop:
						return
					default:
					}
				}
				for b := 0; b < 20000; b += 500 {
					args := []string{"DEL"}
					for i := b; i < b+500; i++ {
						args = append(args, fmt.Sprintf("tmp:%d:%d:%d", w, round, i))
					}
					wc.do(args...)
				}
				srv.ks.Compact(0)
			}
		})
	}
	check := func(what string, seen map[string]int) {
		t.Helper()
		for i := range stay {
			if n := seen["stay:"+strconv.Itoa(i)]; n != 1 {
				t.Errorf("%s: stay:%d returned %d times", what, i, n)
				return
			}
		}
	}
	for _, count := range []string{"1", "100", "5000"} {
		check("SCAN COUNT "+count, scanKeys(t, c, count, nil))
		reply := c.do("KEYS", "*")
		seen := map[string]int{}
		lines := strings.Split(reply, "\r\n")
		for i := 2; i < len(lines); i += 2 {
			seen[lines[i]]++
		}
		check("KEYS", seen)
	}
	close(stop)
	wg.Wait()
}

// TestScanCount: a call returns about COUNT keys, never fewer unless the
// scan ends, whatever the size of the shards.
func TestScanCount(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Shards = 2 })
	c := dial(t, srv)
	args := []string{"MSET"}
	for i := range 20000 {
		args = append(args, "k"+strconv.Itoa(i), "v")
	}
	c.do(args...)
	for _, count := range []int{1, 10, 100, 3000} {
		var calls []int
		seen := scanKeys(t, c, strconv.Itoa(count), func(_, n int) { calls = append(calls, n) })
		if len(seen) != 20000 {
			t.Fatalf("COUNT %d: saw %d keys", count, len(seen))
		}
		for i, n := range calls[:len(calls)-1] {
			if n < count {
				t.Fatalf("COUNT %d: call %d returned %d keys before the end", count, i, n)
			}
		}
		if avg := 20000 / float64(len(calls)); avg > 2*float64(count)+8 {
			t.Errorf("COUNT %d: %.1f keys a call over %d calls", count, avg, len(calls))
		}
		t.Logf("COUNT %d: %d calls, %.1f keys a call", count, len(calls), 20000/float64(len(calls)))
	}
}

func TestKeysReplies(t *testing.T) {
	srv := startServer(t, nil)
	c := dial(t, srv)
	runSteps(t, c, []step{
		{cmd("MSET", "a", "1", "b", "2"), "+OK\r\n"},
		{cmd("DEL", "a", "a", "nope"), ":1\r\n"},
		{cmd("EXISTS", "b", "b", "a"), ":2\r\n"},
		{cmd("TYPE", "b"), "+string\r\n"},
		{cmd("TYPE", "a"), "+none\r\n"},
		{cmd("RENAME", "a", "a"), "-" + ErrNoSuchKey + "\r\n"},
		{cmd("RENAME", "b", "b"), "+OK\r\n"},
		{cmd("RENAMENX", "b", "b"), ":0\r\n"},
		{cmd("EXPIRE", "b", "100", "NX", "XX"), "-" + ErrExpireNXCompat + "\r\n"},
		{cmd("EXPIRE", "b", "100", "GT", "LT"), "-" + ErrExpireGTLT + "\r\n"},
		{cmd("EXPIRE", "b", "100", "xx\x00", "foo\x00bar"), "-ERR Unsupported option foo\r\n"},
		{cmd("EXPIRE", "b", "9223372036854775"), "-ERR invalid expire time in 'expire' command\r\n"},
		{cmd("PEXPIREAT", "b", "9223372036854775807"), ":1\r\n"},
		{cmd("PEXPIRETIME", "b"), ":9223372036854775807\r\n"},
		{cmd("EXPIRETIME", "b"), ":9223372036854776\r\n"},
		{cmd("PEXPIRE", "b", "1800"), ":1\r\n"},
		{cmd("TTL", "b"), ":2\r\n"},
		{cmd("EXPIRE", "b", "100", "GT"), ":1\r\n"},
		{cmd("EXPIRE", "b", "50", "GT"), ":0\r\n"},
		{cmd("PERSIST", "b"), ":1\r\n"},
		{cmd("EXPIRE", "b", "50", "GT"), ":0\r\n"},
		{cmd("EXPIRE", "b", "50", "LT"), ":1\r\n"},
		{cmd("EXPIRE", "b", "0"), ":1\r\n"},
		{cmd("EXISTS", "b"), ":0\r\n"},
		{cmd("SCAN", "x"), "-" + ErrInvalidCursor + "\r\n"},
		{cmd("SCAN", "0", "COUNT", "0"), syntaxErr},
		{cmd("SCAN", "0", "COUNT", "x"), notInt},
		{cmd("SCAN", "0", "MATCH"), syntaxErr},
		{cmd("RANDOMKEY"), nilBulk},
		{cmd("OBJECT", "ENCODING", "nope"), nilBulk},
		{cmd("OBJECT", "FOO"), "-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n"},
		{cmd("OBJECT", "ENCODING"), "-ERR wrong number of arguments for 'object|encoding' command\r\n"},
		{cmd("SET", "s", "123"), "+OK\r\n"},
		{cmd("OBJECT", "REFCOUNT", "s"), ":2147483647\r\n"},
		{cmd("OBJECT", "FREQ", "s"), "-" + ErrNoLFU + "\r\n"},
		{cmd("RANDOMKEY"), "$1\r\ns\r\n"},
	})
}

// TestRenameAcrossShards moves keys between every pair of shards and keeps
// the shards' TTL counts right.
func TestRenameAcrossShards(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.Shards = 4 })
	c := dial(t, srv)
	for i := range 40 {
		src, dst := "src"+strconv.Itoa(i), "dst"+strconv.Itoa(i)
		c.do("SET", src, "v", "EX", "100")
		c.do("SET", dst, "old", "EX", "50")
		if got := c.do("RENAME", src, dst); got != "+OK\r\n" {
			t.Fatalf("RENAME: %q", got)
		}
		if got := c.do("TTL", dst); got != ":100\r\n" {
			t.Fatalf("TTL after RENAME: %q", got)
		}
	}
	withTTL := srv.ks.Counts(0, true).Expires
	if withTTL != 40 {
		t.Errorf("withTTL = %d, want 40", withTTL)
	}
}

func TestEncodingOf(t *testing.T) {
	for _, tc := range []struct {
		val  string
		enc  keyspace.StrEnc
		want string
	}{
		{"1", keyspace.EncAuto, "int"}, {"-9223372036854775808", keyspace.EncAuto, "int"}, {"9223372036854775808", keyspace.EncAuto, "embstr"},
		{"01", keyspace.EncAuto, "embstr"}, {strings.Repeat("a", 44), keyspace.EncAuto, "embstr"}, {strings.Repeat("a", 45), keyspace.EncAuto, "raw"},
		{"1", keyspace.EncRaw, "raw"}, {"1", keyspace.EncNoInt, "embstr"}, {strings.Repeat("1", 45), keyspace.EncNoInt, "raw"},
	} {
		// The same bytes as bytes, and as an int where they are one: the
		// storage changes nothing.
		e := &keyspace.Entry{}
		e.SetStr([]byte(tc.val))
		e.SetStrEnc(tc.enc)
		if got := encodingOf(e); got != tc.want {
			t.Errorf("encodingOf(%q, %d) = %s, want %s", tc.val, tc.enc, got, tc.want)
		}
		if v, ok := resp.ParseInt([]byte(tc.val)); ok {
			e.SetInt(v)
			if got := encodingOf(e); got != tc.want {
				t.Errorf("encodingOf(int %q, %d) = %s, want %s", tc.val, tc.enc, got, tc.want)
			}
		}
	}
}

// TestScanKeysLocking: SCAN and KEYS lock shard by shard themselves, so a
// script holding a shard past busy-reply-threshold makes them answer BUSY
// (counted as rejected, as dispatch's own refusals are); inside MULTI,
// where EXEC holds the whole database, they run as usual.
func TestScanKeysLocking(t *testing.T) {
	srv := startServer(t, func(c *Config) { c.BusyReplyThreshold = 50 * time.Millisecond })
	a, _ := keysOnShards(srv)
	c, runner := dial(t, srv), dial(t, srv)
	runSteps(t, c, []step{
		{cmd("SET", a, "1"), "+OK\r\n"},
		{cmd("CONFIG", "RESETSTAT"), "+OK\r\n"}, // commandstats are the process's
		{cmd("MULTI"), "+OK\r\n"},
		{cmd("SCAN", "0", "COUNT", "100"), "+QUEUED\r\n"},
		{cmd("KEYS", "*"), "+QUEUED\r\n"},
		{cmd("EXEC"), "*2\r\n*2\r\n$1\r\n0\r\n*1\r\n$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n*1\r\n$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n"},
	})
	runner.nc.Write(encode("EVAL", "while true do end", "1", a))
	time.Sleep(100 * time.Millisecond)
	for _, args := range [][]string{{"SCAN", "0", "COUNT", "1000"}, {"KEYS", "*"}} {
		if got := c.do(args...); got != "-"+ErrBusy+"\r\n" {
			t.Errorf("%s while a script holds a shard: %q", args[0], got)
		}
	}
	if got := c.do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Fatalf("SCRIPT KILL: %q", got)
	}
	runner.read()
	stats := c.do("INFO", "commandstats")
	for _, name := range []string{"scan", "keys"} {
		// One call, the one in EXEC; one rejected, the BUSY one.
		_, line, _ := strings.Cut(stats, "cmdstat_"+name+":")
		line, _, _ = strings.Cut(line, "\r\n")
		if !strings.HasPrefix(line, "calls=1,") || !strings.Contains(line, ",rejected_calls=1,") {
			t.Errorf("commandstats of %s: %q", name, line)
		}
	}
}
