package main

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEncodeCommand(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "*1\r\n$4\r\nPING\r\n"},
		{[]string{"SET", "k", "v"}, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"},
		{[]string{"SET", "", "a b"}, "*3\r\n$3\r\nSET\r\n$0\r\n\r\n$3\r\na b\r\n"},
	}
	for _, tt := range tests {
		if got := string(encodeCommand(tt.args...)); got != tt.want {
			t.Errorf("encodeCommand(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
	if got := string(appendBulkInt(nil, -60000)); got != "$6\r\n-60000\r\n" {
		t.Errorf("appendBulkInt = %q", got)
	}
}

func TestReplyReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		kind byte
		err  string
		int  int64
		bulk string
	}{
		{"simple", "+PONG\r\n", '+', "", 0, "PONG"},
		{"error", "-ERR unknown command 'zadd', with args beginning with: \r\n", '-', "ERR unknown command 'zadd', with args beginning with: ", 0, "ERR unknown command 'zadd', with args beginning with: "},
		{"integer", ":-42\r\n", ':', "", -42, ""},
		{"bulk", "$5\r\nhe\r\nl\r\n", '$', "", 5, "he\r\nl"},
		{"empty bulk", "$0\r\n\r\n", '$', "", 0, ""},
		{"null bulk", "$-1\r\n", '$', "", -1, ""},
		{"null array", "*-1\r\n", '*', "", -1, ""},
		{"throttle reply", "*5\r\n:0\r\n:16\r\n:15\r\n:-1\r\n:2\r\n", '*', "", 5, ""},
		{"EXEC with an error inside", "*4\r\n:1\r\n-WRONGTYPE Operation against a key\r\n:3\r\n*2\r\n$1\r\na\r\n-ERR second\r\n", '*', "WRONGTYPE Operation against a key", 4, ""},
		{"EXECABORT", "-EXECABORT Transaction discarded because of previous errors.\r\n", '-', "EXECABORT Transaction discarded because of previous errors.", 0, "EXECABORT Transaction discarded because of previous errors."},
	}
	for _, tt := range tests {
		for _, chunked := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in + "+NEXT\r\n")
			if chunked {
				r = iotest.OneByteReader(r)
			}
			rr := newReplyReader(r)
			rr.keepValues = true
			got, err := rr.next()
			if err != nil {
				t.Errorf("%s (chunked %v): %v", tt.name, chunked, err)
				continue
			}
			if got.kind != tt.kind || got.err != tt.err || got.int != tt.int || string(got.bulk) != tt.bulk {
				t.Errorf("%s (chunked %v): got kind %q err %q int %d bulk %q", tt.name, chunked, got.kind, got.err, got.int, got.bulk)
			}
			// The reader stops exactly at the end of the reply.
			if next, err := rr.next(); err != nil || string(next.bulk) != "NEXT" {
				t.Errorf("%s (chunked %v): the following reply reads %+v, %v", tt.name, chunked, next, err)
			}
		}
	}
}

func TestReplyReaderKeepsNoValuesInTheLoadLoop(t *testing.T) {
	rr := newReplyReader(strings.NewReader("*2\r\n$3\r\nabc\r\n+OK\r\n"))
	got, err := rr.next()
	if err != nil || got.bulk != nil || got.elems != nil || got.int != 2 {
		t.Errorf("got %+v, %v; want an array of 2 with no values kept", got, err)
	}
}

func TestReplyReaderBadInput(t *testing.T) {
	for _, in := range []string{
		"?what\r\n",
		"$abc\r\n",
		"$3\r\nabcd\r\n",
		":12x\r\n",
		"+no crlf\n",
		"*99999999999\r\n",
		"\r\n",
	} {
		_, err := newReplyReader(strings.NewReader(in)).next()
		if !errors.Is(err, errProtocol) {
			t.Errorf("%q: err %v, want errProtocol", in, err)
		}
	}
	// A reply cut short is an I/O error, not a hang or a panic.
	for _, in := range []string{"+PON", "$5\r\nab", "*2\r\n:1\r\n"} {
		if _, err := newReplyReader(strings.NewReader(in)).next(); err != io.EOF {
			t.Errorf("%q: err %v, want EOF", in, err)
		}
	}
}

func TestReplyReaderGrowsForLargeBulks(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 200<<10)
	rr := newReplyReader(bytes.NewReader(appendBulk(nil, big)))
	rr.keepValues = true
	got, err := rr.next()
	if err != nil || !bytes.Equal(got.bulk, big) {
		t.Fatalf("large bulk: %v, %d bytes", err, len(got.bulk))
	}
}

// TestGenerators checks that every workload writes well-formed commands,
// as many as the replies it expects, and that random keys stay in range.
func TestGenerators(t *testing.T) {
	for _, w := range workloads {
		n := w.keys
		if n < 0 {
			n = 50
		}
		prefix, suffix := keyPrefix(w)
		keys := newKeyTable(prefix, suffix, n)
		g := &genState{rng: newRand(7), nowMs: 1700000000123}
		var buf []byte
		for range 3 {
			buf = w.newGen(keys, strings.Repeat("a", 40))(g, buf)
		}
		rr := newReplyReader(bytes.NewReader(buf))
		rr.keepValues = true
		for i := range 3 * w.replies {
			cmd, err := rr.next()
			if err != nil {
				t.Fatalf("%s: command %d: %v in %q", w.name, i, err, buf)
			}
			if cmd.kind != '*' || len(cmd.elems) == 0 {
				t.Fatalf("%s: command %d is not an array of bulks", w.name, i)
			}
		}
		if _, err := rr.next(); err != io.EOF {
			t.Errorf("%s: more commands than %d replies per operation", w.name, w.replies)
		}
	}
}

func TestKeyTable(t *testing.T) {
	k := newKeyTable("user:", ":reply", 3)
	if k.len() != 3 || k.name(0) != "user:0:reply" || k.name(2) != "user:2:reply" {
		t.Errorf("keys: %d %q %q", k.len(), k.name(0), k.name(2))
	}
	hot := newKeyTable("user:", ":reply", 1)
	if got := string(hot.random(newRand(1))); got != "$14\r\nuser:hot:reply\r\n" {
		t.Errorf("hot key: %q", got)
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "-1": -1, "42": 42, "9223372036854775807": 9223372036854775807, "-9223372036854775808": -9223372036854775808, "123456789012345678": 123456789012345678} {
		if got, ok := parseInt([]byte(in)); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-", "1x", "+1", "9223372036854775808", " 1"} {
		if _, ok := parseInt([]byte(in)); ok {
			t.Errorf("parseInt(%q) accepted", in)
		}
	}
}
