package integration_test

// Tests of the harness itself, on canned bytes. They need no server.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

var wellFormedReplies = []struct {
	name  string
	raw   string
	shape string
}{
	{"simple string", "+OK\r\n", "+"},
	{"empty simple string", "+\r\n", "+"},
	{"error", "-ERR unknown command 'x', with args beginning with: \r\n", "-"},
	{"integer", ":42\r\n", ":"},
	{"negative integer", ":-2\r\n", ":"},
	{"min int64", ":-9223372036854775808\r\n", ":"},
	{"bulk string", "$5\r\nhello\r\n", "$"},
	{"empty bulk string", "$0\r\n\r\n", "$"},
	{"binary bulk string", "$6\r\na\r\nb\x00c\r\n", "$"},
	{"null bulk string", "$-1\r\n", "$null"},
	{"null array", "*-1\r\n", "*null"},
	{"empty array", "*0\r\n", "*0[]"},
	{"array", "*3\r\n:1\r\n$1\r\na\r\n$-1\r\n", "*3[: $ $null]"},
	{"nested arrays", "*2\r\n*2\r\n$1\r\nm\r\n,1.5\r\n*1\r\n*0\r\n", "*2[*2[$ ,] *1[*0[]]]"},
	{"RESP3 null", "_\r\n", "_"},
	{"double", ",1.5\r\n", ","},
	{"double exponent", ",1.0000000000000001e-05\r\n", ","},
	{"double inf", ",-inf\r\n", ","},
	{"boolean", "#t\r\n", "#"},
	{"blob error", "!21\r\nSYNTAX invalid syntax\r\n", "!"},
	{"verbatim string", "=15\r\ntxt:Some string\r\n", "="},
	{"big number", "(3492890328409238509324850943850943825024385\r\n", "("},
	{"negative big number", "(-1\r\n", "("},
	{"map", "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n*0\r\n", "%4[$ : $ *0[]]"},
	{"empty map", "%0\r\n", "%0[]"},
	{"set", "~2\r\n$1\r\nx\r\n$1\r\ny\r\n", "~2[$ $]"},
	{"push", ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n", ">3[$ $ $]"},
	{"attribute before a reply", "|1\r\n+ttl\r\n:3600\r\n*1\r\n:2\r\n", "|2[+ :]*1[:]"},
	{"attribute inside an array", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", "*2[|2[+ +]: :]"},
	{"HELLO 3", "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:40\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n",
		"%14[$ $ $ $ $ : $ : $ $ $ $ $ *0[]]"},
}

func TestReadReply(t *testing.T) {
	const next = "+NEXT\r\n"
	for _, tc := range wellFormedReplies {
		t.Run(tc.name, func(t *testing.T) {
			// One byte at a time, followed by another reply: the reader must
			// take exactly one reply however the bytes arrive.
			r := bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(tc.raw+next)), 16)
			got, err := readReply(r)
			if err != nil {
				t.Fatalf("readReply(%q): %v", tc.raw, err)
			}
			if string(got) != tc.raw {
				t.Fatalf("readReply(%q) = %q", tc.raw, got)
			}
			rest, err := readReply(r)
			if err != nil || string(rest) != next {
				t.Fatalf("after %q the next reply reads as %q, %v", tc.raw, rest, err)
			}

			v, err := parseReply([]byte(tc.raw))
			if err != nil {
				t.Fatalf("parseReply(%q): %v", tc.raw, err)
			}
			if enc := v.encode(); string(enc) != tc.raw {
				t.Errorf("encode(parse(%q)) = %q", tc.raw, enc)
			}
			if s := v.shape(); s != tc.shape {
				t.Errorf("shape(%q) = %q, want %q", tc.raw, s, tc.shape)
			}
		})
	}
}

func TestReadReplyRejectsMalformed(t *testing.T) {
	for _, raw := range []string{
		"?\r\n",                     // unknown type
		"+OK\n",                     // LF without CR
		"+O\rK\r\n",                 // CR inside a line
		":abc\r\n",                  // not an integer
		":007\r\n",                  // leading zeros
		":-0\r\n",                   // negative zero
		":99999999999999999999\r\n", // over int64
		"$-2\r\n",                   // negative length
		"$05\r\nhello\r\n",          // leading zero in a length
		"$3\r\nabcd\r\n",            // payload longer than announced
		"$3\r\nab\r\n\r\n",          // no CRLF where the length says
		"!-1\r\n",                   // RESP3 types have no -1
		"%-1\r\n",                   // ditto
		"_x\r\n",                    // null with text
		"#x\r\n",                    // not a boolean
		",abc\r\n",                  // not a double
		",0x10\r\n",                 // hex is not how Redis writes doubles
		"(\r\n",                     // empty big number
		"(1.5\r\n",                  // big numbers are integers
		"=3\r\nabc\r\n",             // verbatim without format
		"=5\r\ntxtab\r\n",           // verbatim without ':'
		"|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:1\r\n",         // two attributes
		strings.Repeat("*1\r\n", maxReplyDepth+2) + ":1\r\n", // too deep
	} {
		_, err := parseReply([]byte(raw))
		if !errors.Is(err, errMalformed) {
			t.Errorf("parseReply(%q): err = %v, want a malformed-reply error", raw, err)
		}
	}
}

func TestReadReplyTruncated(t *testing.T) {
	for _, tc := range wellFormedReplies {
		for cut := range len(tc.raw) {
			_, err := readReply(bufio.NewReader(strings.NewReader(tc.raw[:cut])))
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%s cut at %d (%q): err = %v, want EOF", tc.name, cut, tc.raw[:cut], err)
			}
		}
	}
	if _, err := parseReply([]byte("+OK\r\n+OK\r\n")); err == nil {
		t.Errorf("parseReply accepted two replies")
	}
}

func TestEncodeCommand(t *testing.T) {
	got := encodeCommand("SET", "a\r\nb", "")
	want := "*3\r\n$3\r\nSET\r\n$4\r\na\r\nb\r\n$0\r\n\r\n"
	if string(got) != want {
		t.Errorf("encodeCommand = %q, want %q", got, want)
	}
}

func TestSorted(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		// KEYS / SMEMBERS: a flat array.
		{"*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\na\r\n"},
		// SCAN: the member list is sorted, the [cursor, list] order is kept.
		{"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\ny\r\n$1\r\nx\r\n"},
		// RESP3 sets and maps.
		{"~2\r\n:1\r\n:2\r\n", "~2\r\n:2\r\n:1\r\n"},
		{"%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "%2\r\n+b\r\n:2\r\n+a\r\n:1\r\n"},
	} {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		if x, y := a.sorted().encode(), b.sorted().encode(); !bytes.Equal(x, y) {
			t.Errorf("sorted forms differ: %q vs %q", x, y)
		}
	}
	for _, tc := range []struct{ a, b string }{
		// Different members.
		{"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\na\r\n$1\r\nc\r\n"},
		// The map pairing matters.
		{"%2\r\n+a\r\n:1\r\n+b\r\n:2\r\n", "%2\r\n+a\r\n:2\r\n+b\r\n:1\r\n"},
		// An array holding arrays keeps its order.
		{"*2\r\n*0\r\n:1\r\n", "*2\r\n:1\r\n*0\r\n"},
	} {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		if x, y := a.sorted().encode(), b.sorted().encode(); bytes.Equal(x, y) {
			t.Errorf("sorted forms of %q and %q are equal", tc.a, tc.b)
		}
	}
}

func TestMasks(t *testing.T) {
	now := time.Now().Unix()
	secs := func(d int64) string { return strconv.FormatInt(now+d, 10) }
	timeReply := func(s, us string) string {
		return "*2\r\n$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n$" + strconv.Itoa(len(us)) + "\r\n" + us + "\r\n"
	}
	helloReply := func(id, version string) string {
		return "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$" + strconv.Itoa(len(version)) + "\r\n" + version +
			"\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:" + id + "\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
	}
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	verbatim := func(s string) string { return "=" + strconv.Itoa(len(s)+4) + "\r\ntxt:" + s + "\r\n" }
	info := "# Server\r\nredis_version:7.0.15\r\nprocess_id:1\r\n\r\n# Clients\r\nconnected_clients:1\r\n"

	for _, tc := range []struct {
		name  string
		m     mask
		a, b  string
		equal bool
	}{
		{"time", maskTime, timeReply(secs(0), "5"), timeReply(secs(1), "999999"), true},
		{"time far off", maskTime, timeReply(secs(0), "5"), timeReply(secs(3600), "5"), false},
		{"time padded micros", maskTime, timeReply(secs(0), "5"), timeReply(secs(0), "000005"), false},
		{"time as integers", maskTime, timeReply(secs(0), "5"), "*2\r\n:" + secs(0) + "\r\n:5\r\n", false},
		{"hello id and version", maskHello, helloReply("40", "7.0.15"), helloReply("7", "1.2.3"), true},
		{"hello other field", maskHello, helloReply("40", "7.0.15"), strings.Replace(helloReply("40", "7.0.15"), "master", "slave!", 1), false},
		{"hello bad version", maskHello, helloReply("40", "7.0.15"), helloReply("40", "7.0"), false},
		{"hello negative id", maskHello, helloReply("40", "7.0.15"), helloReply("-1", "7.0.15"), false},
		{"client id", maskInt, ":5\r\n", ":123\r\n", true},
		{"client id not integer", maskInt, ":5\r\n", "$1\r\n5\r\n", false},
		{"client list",
			maskClientList,
			bulk("id=7 addr=127.0.0.1:1 laddr=127.0.0.1:2 fd=8 name= age=0 idle=0 flags=N db=0 tot-mem=9 cmd=client|list resp=2\n"),
			bulk("id=9 addr=127.0.0.1:3 laddr=127.0.0.1:4 fd=9 name= age=3 idle=1 flags=N db=0 tot-mem=1 cmd=client|list resp=2\n"),
			true},
		{"client list name differs",
			maskClientList,
			bulk("id=7 name=a db=0\n"), bulk("id=7 name=b db=0\n"), false},
		{"client info verbatim",
			maskClientList,
			verbatim("id=7 db=0 resp=3\n"), verbatim("id=8 db=0 resp=3\n"), true},
		{"info keeps named fields", maskInfo("redis_version"), bulk(info),
			bulk(strings.Replace(info, "process_id:1", "process_id:2", 1)), true},
		{"info named field differs", maskInfo("redis_version"), bulk(info),
			bulk(strings.Replace(info, "7.0.15", "7.2.0", 1)), false},
		{"info section missing", maskInfo(), bulk(info),
			bulk(strings.Replace(info, "# Clients", "# Other", 1)), false},
		{"info verbatim", maskInfo("redis_version"), verbatim(info),
			verbatim(strings.Replace(info, "connected_clients:1", "connected_clients:5", 1)), true},
	} {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		tc.m(a)
		tc.m(b)
		if got := bytes.Equal(a.encode(), b.encode()); got != tc.equal {
			t.Errorf("%s: masked replies equal = %v, want %v\n  %q\n  %q", tc.name, got, tc.equal, a.encode(), b.encode())
		}
	}
}

func TestDescribeDiff(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 5000)
	other := bytes.Clone(long)
	other[2500] = 'y'
	msg := describeDiff("a", long, "b", other)
	if len(msg) > 1200 || !strings.Contains(msg, "y") {
		t.Errorf("describeDiff of long replies: %d bytes, %q...", len(msg), msg[:min(len(msg), 200)])
	}
}

func mustParse(t *testing.T, raw string) *value {
	t.Helper()
	v, err := parseReply([]byte(raw))
	if err != nil {
		t.Fatalf("parseReply(%q): %v", raw, err)
	}
	return v
}
