package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The driver speaks RESP2 by hand: a client library in the hot loop would
// spend more CPU per command than the servers we measure, and on a 2-core
// machine the load generator shares the cores with the server.

// appendArrayHeader appends "*n\r\n".
func appendArrayHeader(dst []byte, n int) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

// appendBulk appends b as a bulk string.
func appendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// appendBulkString is appendBulk for a string, without converting it.
func appendBulkString(dst []byte, s string) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// appendBulkInt appends the decimal text of v as a bulk string.
func appendBulkInt(dst []byte, v int64) []byte {
	var num [20]byte
	return appendBulk(dst, strconv.AppendInt(num[:0], v, 10))
}

// encodeCommand returns the RESP encoding of one command. It is for
// commands built once, outside the measured loop.
func encodeCommand(args ...string) []byte {
	dst := appendArrayHeader(nil, len(args))
	for _, a := range args {
		dst = appendBulkString(dst, a)
	}
	return dst
}

// reply is what the load loop needs to know of one reply: its type, the
// first error anywhere in it (an EXEC array can hold errors), and for the
// set-up code the integer or bulk value at the top level.
type reply struct {
	kind  byte   // '+', '-', ':', '$', '*'
	err   string // first error text found in the reply, "" if none
	int   int64  // value of a top-level integer, or array/bulk length
	bulk  []byte // top-level bulk or simple string, only when the reader keeps values
	elems []reply
}

// errProtocol reports a reply that is not RESP2.
var errProtocol = errors.New("bench: malformed reply")

// replyReader reads replies with one buffer and no allocation per reply,
// except to copy error texts (and values when keepValues is set).
type replyReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	// keepValues makes next return bulk strings and array elements; the
	// set-up and INFO code wants them, the load loop does not.
	keepValues bool
}

func newReplyReader(r io.Reader) *replyReader {
	return &replyReader{r: r, buf: make([]byte, 64<<10)}
}

// fill reads more input, first moving unread bytes to the front.
func (rr *replyReader) fill() error {
	if rr.start > 0 {
		rr.end = copy(rr.buf, rr.buf[rr.start:rr.end])
		rr.start = 0
	}
	if rr.end == len(rr.buf) {
		nb := make([]byte, 2*len(rr.buf))
		copy(nb, rr.buf[:rr.end])
		rr.buf = nb
	}
	n, err := rr.r.Read(rr.buf[rr.end:])
	rr.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the next line without its CRLF. The slice is valid until the
// next call.
func (rr *replyReader) line() ([]byte, error) {
	scanned := 0 // bytes after rr.start known to hold no '\n'
	for {
		if i := bytes.IndexByte(rr.buf[rr.start+scanned:rr.end], '\n'); i >= 0 {
			i += rr.start + scanned
			if i == rr.start || rr.buf[i-1] != '\r' {
				return nil, errProtocol
			}
			l := rr.buf[rr.start : i-1]
			rr.start = i + 1
			return l, nil
		}
		scanned = rr.end - rr.start
		if err := rr.fill(); err != nil {
			return nil, err
		}
	}
}

// take consumes n bytes and returns them (valid until the next call).
func (rr *replyReader) take(n int) ([]byte, error) {
	for rr.end-rr.start < n {
		if err := rr.fill(); err != nil {
			return nil, err
		}
	}
	b := rr.buf[rr.start : rr.start+n]
	rr.start += n
	return b, nil
}

// next reads one whole reply.
func (rr *replyReader) next() (reply, error) {
	var firstErr string
	r, err := rr.value(&firstErr, 0)
	r.err = firstErr
	return r, err
}

func (rr *replyReader) value(firstErr *string, depth int) (reply, error) {
	if depth > 64 {
		return reply{}, errProtocol
	}
	l, err := rr.line()
	if err != nil {
		return reply{}, err
	}
	if len(l) == 0 {
		return reply{}, errProtocol
	}
	r := reply{kind: l[0]}
	switch l[0] {
	case '+':
		if rr.keepValues {
			r.bulk = append([]byte(nil), l[1:]...)
		}
	case '-':
		if *firstErr == "" {
			*firstErr = string(l[1:])
		}
		if rr.keepValues {
			r.bulk = append([]byte(nil), l[1:]...)
		}
	case ':':
		var ok bool
		if r.int, ok = parseInt(l[1:]); !ok {
			return r, errProtocol
		}
	case '$':
		n, ok := parseInt(l[1:])
		if !ok || n < -1 || n > 1<<30 {
			return r, errProtocol
		}
		r.int = n
		if n < 0 {
			break
		}
		b, err := rr.take(int(n) + 2)
		if err != nil {
			return r, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return r, errProtocol
		}
		if rr.keepValues {
			r.bulk = append([]byte(nil), b[:n]...)
		}
	case '*':
		n, ok := parseInt(l[1:])
		if !ok || n < -1 || n > 1<<30 {
			return r, errProtocol
		}
		r.int = n
		for i := int64(0); i < n; i++ {
			e, err := rr.value(firstErr, depth+1)
			if err != nil {
				return r, err
			}
			if rr.keepValues {
				r.elems = append(r.elems, e)
			}
		}
	default:
		return r, fmt.Errorf("%w: type byte %q", errProtocol, l[0])
	}
	return r, nil
}

// parseInt reads a RESP integer: an optional '-' and 1 to 18 digits, which
// covers every length and every integer the workloads see; longer ones go
// through strconv.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		v, err := strconv.ParseInt(string(b), 10, 64)
		return v, err == nil
	}
	var v int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
