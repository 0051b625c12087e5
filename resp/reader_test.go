package resp

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"slices"
	"strconv"
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
	return readAllBig(input, chunk, lim, authed, 0)
}

// readAllBig is readAll with bulks of bigArg bytes or more read into
// buffers of their own (0: the default threshold).
func readAllBig(input string, chunk int, lim Limits, authed bool, bigArg int) ([]string, error) {
	rd := NewReader(&chunkReader{data: []byte(input), n: chunk}, lim)
	if bigArg > 0 {
		rd.bigArg = bigArg
	}
	return readFrom(rd, authed)
}

// readFrom is readAll's loop on rd: every command, until the input ends.
func readFrom(rd *Reader, authed bool) ([]string, error) {
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
		{"big bulks among others", "*4\r\n$4\r\nMSET\r\n$100000\r\n" + big + "\r\n$1\r\nk\r\n$100000\r\n" + big + "\r\n*1\r\n$4\r\nPING\r\n",
			[]string{"MSET|" + big + "|k|" + big, "PING"}, ""},
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
		// bigArg 1: every bulk not read whole with its header gets a
		// buffer of its own; the commands read must not change.
		for _, bigArg := range []int{0, 1} {
			for _, chunk := range []int{1, 7, 1 << 20} {
				got, err := readAllBig(tc.input, chunk, Limits{}, true, bigArg)
				if tc.err != "" {
					var pe ProtocolError
					if !errors.As(err, &pe) || pe.Error() != tc.err {
						t.Errorf("%s (chunk %d, bigArg %d): err %v, want %q", tc.name, chunk, bigArg, err, tc.err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s (chunk %d, bigArg %d): %v", tc.name, chunk, bigArg, err)
					continue
				}
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("%s (chunk %d, bigArg %d): got %q, want %q", tc.name, chunk, bigArg, got, tc.want)
				}
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
		// Chunked reads also move bulks of 3 bytes or more that are not
		// buffered whole to buffers of their own.
		whole, errWhole := readAll(string(data), len(data)+1, Limits{MaxBulkLen: 1 << 16, MaxQueryBuf: 1 << 20}, true)
		parts, errParts := readAllBig(string(data), chunk, Limits{MaxBulkLen: 1 << 16, MaxQueryBuf: 1 << 20}, true, 3)
		if strings.Join(whole, "\n") != strings.Join(parts, "\n") || (errWhole == nil) != (errParts == nil) {
			t.Fatalf("chunk %d: %q %v vs %q %v", chunk, whole, errWhole, parts, errParts)
		}
	})
}

// TestReaderBigArg: a big bulk is read into one buffer of exactly its
// size, straight from the source, so reading it allocates about its size
// once (growing the shared buffer by doubling allocated twice that and
// copied it at each step); the command may keep it (Take) and the
// reader lets go of it afterwards.
func TestReaderBigArg(t *testing.T) {
	const size = 16 << 20
	in := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(size) + "\r\n")
	in = append(in, bytes.Repeat([]byte("v"), size)...)
	in = append(in, "\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"...)
	rd := NewReader(&chunkReader{data: in, n: 64 << 10}, Limits{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var args [][]byte
	for {
		a, ok, err := rd.Next(true)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			args = a
			break
		}
		if err := rd.Fill(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/10 {
		t.Errorf("reading a %d-byte bulk allocated %d bytes", size, got)
	}
	if len(args) != 3 || len(args[2]) != size || args[2][0] != 'v' || args[2][size-1] != 'v' {
		t.Fatalf("args: %d, last %d bytes", len(args), len(args[len(args)-1]))
	}
	if rd.Take(args[1]) || rd.Take(args[2][:1]) || !rd.Take(args[2]) || rd.Take(args[2]) {
		t.Error("Take: not true exactly once, for the big bulk only")
	}
	next, ok, err := rd.Next(true)
	if err == nil && !ok {
		err = rd.Fill() // the big bulk was read to its end, not past it
		next, ok, _ = rd.Next(true)
	}
	if err != nil || !ok || len(next) != 2 || string(next[1]) != "k" {
		t.Fatalf("the command after: %q %v %v", next, ok, err)
	}
	if slices.ContainsFunc(rd.args[:cap(rd.args)], func(a []byte) bool { return len(a) == size }) || len(rd.bigs) != 0 {
		t.Error("the reader still holds the big bulk of the command before")
	}
	if n := rd.Release(); n < minReadSpace {
		t.Errorf("Release: %d bytes", n)
	}
}
