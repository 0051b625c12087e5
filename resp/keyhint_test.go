package resp

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRequestKey: the key and length of whole requests; 0 for anything
// that is not a whole multibulk request at the start.
func TestRequestKey(t *testing.T) {
	for _, tc := range []struct {
		in  string
		key string // "-": nil
		n   int
	}{
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", "key", 22},
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n", "key", 22},
		{"*5\r\n$11\r\nCL.THROTTLE\r\n$4\r\nu:17\r\n$2\r\n15\r\n$2\r\n30\r\n$2\r\n60\r\n", "u:17", 56},
		{"*1\r\n$4\r\nPING\r\n", "-", 14},
		// A script call's key is its first key, after numkeys.
		{"*4\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n", "k", 39},
		{"*5\r\n$10\r\nevalsha_Ro\r\n$2\r\nab\r\n$2\r\n12\r\n$1\r\nk\r\n$1\r\nj\r\n", "k", 51},
		{"*4\r\n$5\r\nFCall\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\nk\r\n", "k", 36},
		{"*4\r\n$4\r\neval\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\na\r\n", "b", 35},     // no keys: the second argument
		{"*4\r\n$4\r\neval\r\n$1\r\nb\r\n$2\r\n01\r\n$1\r\nk\r\n", "b", 36},    // not plain decimal
		{"*3\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n", "ab", 32},           // numkeys past the arguments
		{"*4\r\n$6\r\nEVALSH\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n", "ab", 38}, // another command
		{"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", "", 19},
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r", "-", 0},      // the last CRLF is missing
		{"*2\r\n$3\r\nGET\r\n$3\r\nke", "-", 0},         // short bulk
		{"*2\r\n$3\r\nGET\r\n", "-", 0},                 // an argument is missing
		{"*2\r\n$3\r\nGET\r\n$10000000000\r\n", "-", 0}, // too long a length
		{"*0\r\n", "-", 0},
		{"*-1\r\n", "-", 0},
		{"*\r\n", "-", 0},
		{"*2\n$3\r\nGET\r\n$3\r\nkey\r\n", "-", 0},
		{"*2\r\n+3\r\nGET\r\n$3\r\nkey\r\n", "-", 0},
		{"GET key\r\n", "-", 0}, // the inline form
		{"", "-", 0},
	} {
		key, n := RequestKey([]byte(tc.in))
		if n != tc.n || (tc.key == "-") != (key == nil) || tc.key != "-" && string(key) != tc.key {
			t.Errorf("RequestKey(%q) = %q, %d; want %q, %d", tc.in, key, n, tc.key, tc.n)
		}
	}
}

// scriptCommands are the commands whose key follows a numkeys.
var scriptCommands = map[string]bool{"eval": true, "evalsha": true, "fcall": true, "eval_ro": true, "evalsha_ro": true, "fcall_ro": true}

// FuzzRequestKey: whenever RequestKey reads a whole request, Next reads
// the same one from the same bytes: its key (the second argument, or a
// script call's first key) and its length.
func FuzzRequestKey(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"))
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*5\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\n5\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		key, n := RequestKey(in)
		if n == 0 {
			if key != nil {
				t.Fatalf("key %q with n 0", key)
			}
			return
		}
		if n > len(in) {
			t.Fatalf("n %d past the input's %d bytes", n, len(in))
		}
		rd := NewReader(&chunkReader{data: in, n: len(in)}, Limits{})
		if err := rd.Fill(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rd.Unparsed(), in) {
			t.Fatalf("Unparsed %q, want %q", rd.Unparsed(), in)
		}
		before := rd.Buffered()
		args, ok, err := rd.Next(true)
		if err != nil || !ok {
			return // Next's limits and checks refuse what the hint reads
		}
		if used := before - rd.Buffered(); used != n {
			t.Fatalf("Next used %d bytes, RequestKey %d", used, n)
		}
		if len(args) < 2 {
			if key != nil {
				t.Fatalf("key %q of a %d-argument request", key, len(args))
			}
			return
		}
		want := args[1]
		if len(args) >= 4 && scriptCommands[strings.ToLower(string(args[0]))] {
			if nk, err := strconv.Atoi(string(args[2])); err == nil && nk > 0 && args[2][0] != '+' && args[2][0] != '0' {
				want = args[3]
			}
		}
		if !bytes.Equal(want, key) {
			t.Fatalf("key %q, Next's %q", key, want)
		}
	})
}
