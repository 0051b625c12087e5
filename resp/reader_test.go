package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// chunkReader hands out its input n bytes at a time, to exercise requests
// split across reads.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// readAll parses every command in input, reading chunk bytes at a time.
func readAll(input string, chunk int, lim Limits, authed bool) ([]string, error) {
	rd := NewReader(&chunkReader{data: []byte(input), n: chunk}, lim)
	var got []string
	for {
		args, ok, err := rd.Next(authed)
		if err != nil {
			return got, err
		}
		if ok {
			var parts []string
			for _, a := range args {
				parts = append(parts, string(a))
			}
			got = append(got, strings.Join(parts, "|"))
			continue
		}
		if err := rd.Fill(); err != nil {
			if err == io.EOF {
				return got, nil
			}
			return got, err
		}
	}
}

func TestReaderRequests(t *testing.T) {
	big := strings.Repeat("x", 100000)
	tests := []struct {
		name  string
		input string
		want  []string
		err   string // the reply text of the protocol error, if any
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET|k"}, ""},
		{"pipeline", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"PING", "ECHO|"}, ""},
		{"binary", "*2\r\n$3\r\nGET\r\n$4\r\na\x00\r\n\r\n", []string{"GET|a\x00\r\n"}, ""},
		{"big bulk", "*2\r\n$3\r\nSET\r\n$100000\r\n" + big + "\r\n", []string{"SET|" + big}, ""},
		{"empty multibulk skipped", "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", []string{"PING"}, ""},
		{"crlf after payload unchecked", "*1\r\n$4\r\nPINGxx", []string{"PING"}, ""},
		{"inline", "PING\r\nECHO hi\n", []string{"PING", "ECHO|hi"}, ""},
		{"inline empty line skipped", "\r\n  \r\nPING\r\n", []string{"PING"}, ""},
		{"inline quotes", "SET \"a b\" 'c\\'d' \"\\x41\\n\"\r\n", []string{"SET|a b|c'd|A\n"}, ""},
		{"bad multibulk", "*abc\r\n", nil, "ERR Protocol error: invalid multibulk length"},
		{"multibulk leading zero", "*01\r\n", nil, "ERR Protocol error: invalid multibulk length"},
		{"huge multibulk", "*2147483648\r\n", nil, "ERR Protocol error: invalid multibulk length"},
		{"negative bulk", "*1\r\n$-5\r\n", nil, "ERR Protocol error: invalid bulk length"},
		{"bad bulk", "*1\r\n$x\r\n", nil, "ERR Protocol error: invalid bulk length"},
		{"bulk over limit", "*1\r\n$600000000\r\n", nil, "ERR Protocol error: invalid bulk length"},
		{"expected dollar", "*1\r\nxx\r\n", nil, "ERR Protocol error: expected '$', got 'x'"},
		{"unbalanced", "SET \"a b\r\n", nil, "ERR Protocol error: unbalanced quotes in request"},
		{"closing quote glued", "SET \"a\"b\r\n", nil, "ERR Protocol error: unbalanced quotes in request"},
		{"too big inline", strings.Repeat("a", 70000), nil, "ERR Protocol error: too big inline request"},
		{"too big mbulk count", "*" + strings.Repeat("1", 70000), nil, "ERR Protocol error: too big mbulk count string"},
		{"too big bulk count", "*1\r\n$" + strings.Repeat("1", 70000), nil, "ERR Protocol error: too big bulk count string"},
	}
	for _, tc := range tests {
		for _, chunk := range []int{1, 7, 1 << 20} {
			got, err := readAll(tc.input, chunk, Limits{}, true)
			if tc.err != "" {
				var pe ProtocolError
				if !errors.As(err, &pe) || pe.Error() != tc.err {
					t.Errorf("%s (chunk %d): err %v, want %q", tc.name, chunk, err, tc.err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s (chunk %d): %v", tc.name, chunk, err)
				continue
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s (chunk %d): got %q, want %q", tc.name, chunk, got, tc.want)
			}
		}
	}
}

func TestReaderUnauthenticatedLimits(t *testing.T) {
	many := "*11\r\n" + strings.Repeat("$1\r\na\r\n", 11)
	if _, err := readAll(many, 1<<20, Limits{}, false); err == nil || err.Error() != "ERR Protocol error: unauthenticated multibulk length" {
		t.Errorf("11 args before AUTH: %v", err)
	}
	if got, err := readAll(many, 1<<20, Limits{}, true); err != nil || len(got) != 1 {
		t.Errorf("11 args after AUTH: %v %v", got, err)
	}
	bulk := "*1\r\n$16385\r\n"
	if _, err := readAll(bulk, 1<<20, Limits{}, false); err == nil || err.Error() != "ERR Protocol error: unauthenticated bulk length" {
		t.Errorf("big bulk before AUTH: %v", err)
	}
}

func TestReaderBulkLimit(t *testing.T) {
	in := "*1\r\n$11\r\nhello world\r\n"
	if _, err := readAll(in, 3, Limits{MaxBulkLen: 10}, true); err == nil || err.Error() != "ERR Protocol error: invalid bulk length" {
		t.Errorf("bulk over proto-max-bulk-len: %v", err)
	}
	if got, err := readAll(in, 3, Limits{MaxBulkLen: 11}, true); err != nil || len(got) != 1 {
		t.Errorf("bulk at the limit: %v %v", got, err)
	}
}

// TestReaderQueryBufferLimit: a client that keeps sending one unfinished
// request is cut off once it passes the limit, without the reader growing
// its buffer much past that.
func TestReaderQueryBufferLimit(t *testing.T) {
	const limit = 1 << 20
	in := "*1\r\n$500000000\r\n" + strings.Repeat("z", 3*limit)
	rd := NewReader(&chunkReader{data: []byte(in), n: 64 << 10}, Limits{MaxQueryBuf: limit})
	for {
		_, ok, err := rd.Next(true)
		if err != nil || ok {
			t.Fatalf("Next: ok=%v err=%v", ok, err)
		}
		if err := rd.Fill(); err != nil {
			if !errors.Is(err, ErrQueryBufferLimit) {
				t.Fatalf("Fill: %v, want ErrQueryBufferLimit", err)
			}
			break
		}
	}
	if len(rd.buf) > 2*limit {
		t.Errorf("buffer grew to %d bytes for a %d limit", len(rd.buf), limit)
	}
}

func TestReaderNoAllocs(t *testing.T) {
	req := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
	src := &bytes.Reader{}
	rd := NewReader(src, Limits{})
	allocs := testing.AllocsPerRun(1000, func() {
		src.Reset(req)
		rd.r, rd.w = 0, 0
		if err := rd.Fill(); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := rd.Next(true); !ok || err != nil {
			t.Fatal("no command")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per command, want 0", allocs)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), 3)
	f.Add([]byte("SET \"a\\x41\" 'b'\r\n"), 1)
	f.Add([]byte("*1\r\n$-1\r\n"), 2)
	f.Add([]byte("*3\r\n$1\r\na\r\n$0\r\n\r\n$2\r\nbc\r\n*0\r\n"), 5)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		if chunk <= 0 || chunk > 1<<16 {
			chunk = 1 + len(data)
		}
		// Whole and chunked reads must agree: the parse state survives reads.
		whole, errWhole := readAll(string(data), len(data)+1, Limits{MaxBulkLen: 1 << 16, MaxQueryBuf: 1 << 20}, true)
		parts, errParts := readAll(string(data), chunk, Limits{MaxBulkLen: 1 << 16, MaxQueryBuf: 1 << 20}, true)
		if strings.Join(whole, "\n") != strings.Join(parts, "\n") || (errWhole == nil) != (errParts == nil) {
			t.Fatalf("chunk %d: %q %v vs %q %v", chunk, whole, errWhole, parts, errParts)
		}
	})
}
