package resp

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestAhead: which requests Ahead queues, their keys, and that Next then
// returns them and goes on with what Ahead left.
func TestAhead(t *testing.T) {
	for _, tc := range []struct {
		in     string
		authed bool
		keys   []string // of the queued requests; "-": nil
	}{
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n", true, []string{"key"}},
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*1\r\n", true, []string{"key"}},
		{"*5\r\n$11\r\nCL.THROTTLE\r\n$4\r\nu:17\r\n$2\r\n15\r\n$2\r\n30\r\n$2\r\n60\r\n", true, []string{"u:17"}},
		{"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", true, []string{"-", "k"}},
		// A script call's key is its first key, after numkeys.
		{"*4\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n", true, []string{"k"}},
		{"*5\r\n$10\r\nevalsha_Ro\r\n$2\r\nab\r\n$2\r\n12\r\n$1\r\nk\r\n$1\r\nj\r\n", true, []string{"k"}},
		{"*4\r\n$5\r\nFCall\r\n$1\r\nf\r\n$1\r\n1\r\n$1\r\nk\r\n", true, []string{"k"}},
		{"*4\r\n$4\r\neval\r\n$1\r\nb\r\n$1\r\n0\r\n$1\r\na\r\n", true, []string{"b"}},     // no keys: the second argument
		{"*4\r\n$4\r\neval\r\n$1\r\nb\r\n$2\r\n01\r\n$1\r\nk\r\n", true, []string{"b"}},    // not plain decimal
		{"*3\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n", true, []string{"ab"}},           // numkeys past the arguments
		{"*4\r\n$6\r\nEVALSH\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n", true, []string{"ab"}}, // another command
		{"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", true, []string{""}},
		// Stops at what is not a whole request of plain lengths.
		{"*2\r\n$3\r\nGET\r\n$3\r\nkey\r", true, nil},     // the last CRLF is missing
		{"*2\r\n$3\r\nGET\r\n$3\r\nke", true, nil},        // short bulk
		{"*2\r\n$3\r\nGET\r\n", true, nil},                // an argument is missing
		{"*2\r\n$3\r\nGET\r\n$1000000000\r\n", true, nil}, // too long a length
		{"*2\r\n$3\r\nGET\r\n$03\r\nkey\r\n", true, nil},  // a leading zero: Next's error
		{"*2\r\n$3\r\nGET\r\n$+3\r\nkey\r\n", true, nil},  // a sign
		{"*1\r\n$4\r\nPING\r\n*0\r\n*1\r\n$4\r\nPING\r\n", true, []string{"-"}},
		{"*-1\r\n", true, nil},
		{"*\r\n", true, nil},
		{"*2\n$3\r\nGET\r\n$3\r\nkey\r\n", true, nil},
		{"*2\r\n+3\r\nGET\r\n$3\r\nkey\r\n", true, nil},
		{"GET key\r\n", true, nil}, // the inline form
		{"", true, nil},
		// Before AUTH, Redis's smaller limits.
		{"*11\r\n" + strings.Repeat("$1\r\na\r\n", 11), true, []string{"a"}},
		{"*11\r\n" + strings.Repeat("$1\r\na\r\n", 11), false, nil},
		{"*2\r\n$3\r\nGET\r\n$16385\r\n" + strings.Repeat("k", 16385) + "\r\n", false, nil},
		{"*2\r\n$3\r\nGET\r\n$16384\r\n" + strings.Repeat("k", 16384) + "\r\n", false, []string{strings.Repeat("k", 16384)}},
	} {
		rd := NewReader(&chunkReader{data: []byte(tc.in), n: len(tc.in) + 1}, Limits{})
		for rd.Buffered() < len(tc.in) {
			if err := rd.Fill(); err != nil {
				t.Fatal(err)
			}
		}
		n := rd.Ahead(32, tc.authed)
		var keys []string
		for i := range n {
			k := rd.AheadKey(i)
			if k == nil {
				keys = append(keys, "-")
			} else {
				keys = append(keys, string(k))
			}
		}
		if fmt.Sprint(keys) != fmt.Sprint(tc.keys) {
			t.Errorf("%.60q: keys %.60q, want %.60q", tc.in, keys, tc.keys)
		}
		want, wantErr := readAll(tc.in, len(tc.in)+1, Limits{}, tc.authed)
		got, gotErr := readFrom(rd, tc.authed)
		if strings.Join(got, "\n") != strings.Join(want, "\n") || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%.60q: after Ahead, Next read %.200q %v; without it %.200q %v", tc.in, got, gotErr, want, wantErr)
		}
	}
}

// TestKeyTag: the tag of a queued request's key is given back for that
// very key while the request is the last Next returned, and for nothing
// else.
func TestKeyTag(t *testing.T) {
	in := "*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n"
	rd := NewReader(&chunkReader{data: []byte(in + in), n: len(in)}, Limits{})
	if err := rd.Fill(); err != nil {
		t.Fatal(err)
	}
	if n := rd.Ahead(32, true); n != 3 {
		t.Fatalf("Ahead: %d", n)
	}
	rd.SetAheadTag(0, 7) // the second GET is left untagged
	args, _, _ := rd.Next(true)
	if tag, ok := rd.KeyTag(args[1]); !ok || tag != 7 {
		t.Errorf("KeyTag of the first key: %d %v", tag, ok)
	}
	if _, ok := rd.KeyTag([]byte("a")); ok {
		t.Error("KeyTag of a copy of the key")
	}
	if _, ok := rd.KeyTag(args[0][:1]); ok {
		t.Error("KeyTag of another argument")
	}
	args, _, _ = rd.Next(true)
	if _, ok := rd.KeyTag(args[1]); ok {
		t.Error("KeyTag of an untagged request's key")
	}
	rd.Next(true)
	if _, _, err := rd.Next(true); err != nil {
		t.Fatal(err)
	}
	if err := rd.Fill(); err != nil {
		t.Fatal(err)
	}
	// The same bytes at the same place after a Fill: another request.
	if _, ok := rd.KeyTag(args[1]); ok {
		t.Error("KeyTag after a Fill")
	}
}

// FuzzAhead: a reader that parses ahead after every read (at most max
// requests, under the authed of that moment) hands out exactly what one
// that does not hands out, requests and errors alike, when the client
// authenticates at any point; each queued request's key is the key of
// the request Next returns for it, and its tag comes back for it.
func FuzzAhead(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n"), 64, uint8(3), uint16(0))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"), 30, uint8(1), uint16(1))
	f.Add([]byte("*5\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n$1\r\n5\r\n*0\r\nPING\r\n"), 7, uint8(8), uint16(0xfffe))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$5\r\nabcde\r\n*2\r\n$3\r\nGET\r\n$-1\r\n"), 100, uint8(2), uint16(2))
	f.Fuzz(func(t *testing.T, in []byte, chunk int, max uint8, unauthed uint16) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1 + len(in)
		}
		lim := Limits{MaxBulkLen: 1 << 12, MaxQueryBuf: 1 << 20}
		// Request i is read before AUTH while bit i of unauthed is set.
		authed := func(i int) bool { return i >= 16 || unauthed&(1<<i) == 0 }
		plain := NewReader(&chunkReader{data: in, n: chunk}, lim)
		ahead := NewReader(&chunkReader{data: in, n: chunk}, lim)
		plain.bigArg, ahead.bigArg = 5, 5
		var plainOut, aheadOut []string
		var plainErr, aheadErr error
		for i := 0; plainErr == nil; {
			args, ok, err := plain.Next(authed(i))
			switch {
			case err != nil:
				plainErr = err
			case ok:
				plainOut = append(plainOut, fmt.Sprintf("%q", args))
				i++
			default:
				plainErr = plain.Fill()
			}
		}
		var keys []string // the queued requests' keys, in order
		var queuedAuthed bool
		for i := 0; aheadErr == nil; {
			if len(keys) != 0 && authed(i) != queuedAuthed {
				keys = nil // Next parses them again, under its limits
			}
			args, ok, err := ahead.Next(authed(i))
			switch {
			case err != nil:
				aheadErr = err
			case ok:
				aheadOut = append(aheadOut, fmt.Sprintf("%q", args))
				if len(keys) != 0 && keys[0] != "" {
					if tag, ok := ahead.KeyTag(args[requestKeyOf(args)]); !ok || tag != uint64(len(aheadOut)) {
						t.Fatalf("request %d: KeyTag %d %v", len(aheadOut), tag, ok)
					}
				}
				if len(keys) != 0 {
					if want := keyOf(args); keys[0] != want {
						t.Fatalf("request %d %q: queued with key %q, want %q", len(aheadOut), args, keys[0], want)
					}
					keys = keys[1:]
				}
				i++
			default:
				if len(keys) != 0 {
					t.Fatalf("%d queued requests not returned", len(keys))
				}
				if aheadErr = ahead.Fill(); aheadErr != nil {
					break
				}
				queuedAuthed = authed(i)
				n := ahead.Ahead(int(max%40), queuedAuthed)
				for j := range n {
					k := ahead.AheadKey(j)
					if k == nil {
						keys = append(keys, "")
						continue
					}
					keys = append(keys, "="+string(k))
					ahead.SetAheadTag(j, uint64(len(aheadOut)+1+j))
				}
			}
		}
		if strings.Join(plainOut, "\n") != strings.Join(aheadOut, "\n") || plainErr != aheadErr {
			t.Fatalf("without Ahead %q %v\nwith it %q %v", plainOut, plainErr, aheadOut, aheadErr)
		}
	})
}

// keyOf is the key Ahead gives a request Next returned, as FuzzAhead's
// keys spell it: "" for none, else "=" and the key.
func keyOf(args [][]byte) string {
	if len(args) < 2 {
		return ""
	}
	return "=" + string(args[requestKeyOf(args)])
}

// requestKeyOf is the index of args' key, by AheadKey's rule, written
// independently of it.
func requestKeyOf(args [][]byte) int {
	switch strings.ToLower(string(args[0])) {
	case "eval", "evalsha", "fcall", "eval_ro", "evalsha_ro", "fcall_ro":
		if len(args) >= 4 {
			if nk, err := strconv.Atoi(string(args[2])); err == nil && nk > 0 && args[2][0] != '+' && args[2][0] != '0' {
				return 3
			}
		}
	}
	return 1
}
