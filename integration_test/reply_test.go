package integration_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits that keep a broken server from making the reader allocate without
// bound or recurse forever. Redis never comes near them: its bulk strings stop
// at 512 MB and its deepest replies come from nested Lua tables.
const (
	maxReplyLine  = 64 << 20
	maxReplyBlob  = 1 << 30
	maxReplyCount = 1 << 24
	maxReplyDepth = 1000
)

// A value is one parsed RESP2 or RESP3 reply. Parsing is strict enough that
// encode(parse(raw)) gives back raw byte for byte (see TestReplyRoundTrip), so
// comparing values is as exact as comparing the wire bytes.
type value struct {
	kind  byte     // the type byte: + - : $ * _ , # ! = ( % ~ > |
	null  bool     // the RESP2 nulls $-1 and *-1
	text  string   // simple types: the line after the type byte; blobs: the payload
	elems []*value // aggregates; for % and | keys and values alternate
	attrs *value   // a | attribute sent just before this value, or nil
}

// isAggregate reports whether kind is followed by a count of elements.
func isAggregate(kind byte) bool {
	return strings.IndexByte("*%~>|", kind) >= 0
}

// isBlob reports whether kind is followed by a length and a payload.
func isBlob(kind byte) bool {
	return kind == '$' || kind == '!' || kind == '='
}

// encode writes v in wire form.
func (v *value) encode() []byte {
	var b bytes.Buffer
	v.encodeTo(&b)
	return b.Bytes()
}

func (v *value) encodeTo(b *bytes.Buffer) {
	if v.attrs != nil {
		v.attrs.encodeTo(b)
	}
	b.WriteByte(v.kind)
	switch {
	case v.null:
		b.WriteString("-1\r\n")
	case isBlob(v.kind):
		fmt.Fprintf(b, "%d\r\n%s\r\n", len(v.text), v.text)
	case isAggregate(v.kind):
		n := len(v.elems)
		if v.kind == '%' || v.kind == '|' {
			n /= 2
		}
		fmt.Fprintf(b, "%d\r\n", n)
		for _, e := range v.elems {
			e.encodeTo(b)
		}
	default:
		b.WriteString(v.text)
		b.WriteString("\r\n")
	}
}

// isError reports whether v is an error reply (simple or blob).
func (v *value) isError() bool {
	return v.kind == '-' || v.kind == '!'
}

// shape describes v without its contents: type bytes, nulls and element
// counts, recursively. DoLoosely compares shapes.
func (v *value) shape() string {
	var b strings.Builder
	v.shapeTo(&b)
	return b.String()
}

func (v *value) shapeTo(b *strings.Builder) {
	if v.attrs != nil {
		v.attrs.shapeTo(b)
	}
	b.WriteByte(v.kind)
	switch {
	case v.null:
		b.WriteString("null")
	case isAggregate(v.kind):
		fmt.Fprintf(b, "%d[", len(v.elems))
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(' ')
			}
			e.shapeTo(b)
		}
		b.WriteByte(']')
	}
}

// sorted returns a copy of v in which the order of unordered things no longer
// matters: the elements of every set, the pairs of every map and attribute,
// and the elements of every array or push whose elements are all scalars
// (KEYS, SMEMBERS, the member list inside a SCAN reply). Arrays that contain
// aggregates keep their order, so a SCAN reply stays [cursor, members].
func (v *value) sorted() *value {
	out := *v
	if v.attrs != nil {
		out.attrs = v.attrs.sorted()
	}
	if !isAggregate(v.kind) || v.null {
		return &out
	}
	out.elems = make([]*value, len(v.elems))
	flat := true
	for i, e := range v.elems {
		out.elems[i] = e.sorted()
		if isAggregate(e.kind) && !e.null {
			flat = false
		}
	}
	switch v.kind {
	case '%', '|':
		type entry struct{ k, v *value }
		entries := make([]entry, 0, len(out.elems)/2)
		for i := 0; i+1 < len(out.elems); i += 2 {
			entries = append(entries, entry{out.elems[i], out.elems[i+1]})
		}
		slices.SortStableFunc(entries, func(a, b entry) int {
			if c := bytes.Compare(a.k.encode(), b.k.encode()); c != 0 {
				return c
			}
			return bytes.Compare(a.v.encode(), b.v.encode())
		})
		for i, e := range entries {
			out.elems[2*i], out.elems[2*i+1] = e.k, e.v
		}
	case '~':
		sortValues(out.elems)
	default:
		if flat {
			sortValues(out.elems)
		}
	}
	return &out
}

func sortValues(vs []*value) {
	slices.SortStableFunc(vs, func(a, b *value) int {
		return bytes.Compare(a.encode(), b.encode())
	})
}

// readReply reads exactly one complete reply from r and returns its bytes as
// they came off the wire. On error it returns what it read so far.
func readReply(r *bufio.Reader) ([]byte, error) {
	rr := replyReader{r: r}
	_, err := rr.read(0)
	return rr.raw, err
}

// parseReply parses raw, which must hold exactly one reply.
func parseReply(raw []byte) (*value, error) {
	br := bufio.NewReader(bytes.NewReader(raw))
	rr := replyReader{r: br}
	v, err := rr.read(0)
	if err != nil {
		return nil, err
	}
	if br.Buffered() > 0 {
		return nil, fmt.Errorf("%d bytes after the reply", br.Buffered())
	}
	return v, nil
}

// replyReader reads replies, keeping every byte it consumes in raw.
type replyReader struct {
	r   *bufio.Reader
	raw []byte
}

var errMalformed = errors.New("malformed reply")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// line reads up to CRLF and returns the text before it.
func (rr *replyReader) line() (string, error) {
	var buf []byte
	for {
		chunk, err := rr.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == bufio.ErrBufferFull {
			if len(buf) > maxReplyLine {
				rr.raw = append(rr.raw, buf...)
				return "", malformed("line longer than %d bytes", maxReplyLine)
			}
			continue
		}
		rr.raw = append(rr.raw, buf...)
		if err != nil {
			return "", err
		}
		break
	}
	n := len(buf)
	if n < 2 || buf[n-2] != '\r' {
		return "", malformed("line %q does not end in CRLF", buf)
	}
	text := buf[:n-2]
	if bytes.IndexByte(text, '\r') >= 0 {
		return "", malformed("CR inside line %q", buf)
	}
	return string(text), nil
}

// read reads one value, including any attribute that precedes it.
func (rr *replyReader) read(depth int) (*value, error) {
	if depth > maxReplyDepth {
		return nil, malformed("nested deeper than %d", maxReplyDepth)
	}
	kind, err := rr.r.ReadByte()
	if err != nil {
		return nil, err
	}
	rr.raw = append(rr.raw, kind)
	head, err := rr.line()
	if err != nil {
		return nil, err
	}
	v := &value{kind: kind}
	switch kind {
	case '+', '-':
		v.text = head
	case ':':
		if !isCanonicalInt(head) {
			return nil, malformed("integer %q", head)
		}
		v.text = head
	case '(':
		digits := strings.TrimPrefix(head, "-")
		if digits == "" || strings.Trim(digits, "0123456789") != "" {
			return nil, malformed("big number %q", head)
		}
		v.text = head
	case ',':
		if !isDouble(head) {
			return nil, malformed("double %q", head)
		}
		v.text = head
	case '#':
		if head != "t" && head != "f" {
			return nil, malformed("boolean %q", head)
		}
		v.text = head
	case '_':
		if head != "" {
			return nil, malformed("null with text %q", head)
		}
	case '$', '!', '=':
		n, err := rr.length(kind, head, maxReplyBlob)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			v.null = true
			break
		}
		buf := make([]byte, n+2)
		got, err := io.ReadFull(rr.r, buf)
		rr.raw = append(rr.raw, buf[:got]...)
		if err != nil {
			return nil, err
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return nil, malformed("%d-byte payload not followed by CRLF", n)
		}
		v.text = string(buf[:n])
		if kind == '=' && (n < 4 || v.text[3] != ':') {
			return nil, malformed("verbatim string without a format: %q", v.text)
		}
	case '*', '%', '~', '>', '|':
		n, err := rr.length(kind, head, maxReplyCount)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			v.null = true
			break
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		v.elems = make([]*value, 0, min(n, 1024))
		for range n {
			e, err := rr.read(depth + 1)
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, e)
		}
		if kind == '|' {
			// An attribute decorates the reply that follows it; together
			// they are one reply.
			next, err := rr.read(depth + 1)
			if err != nil {
				return nil, err
			}
			if next.attrs != nil {
				return nil, malformed("two attributes before one reply")
			}
			next.attrs = v
			return next, nil
		}
	default:
		return nil, malformed("unknown type byte %q", kind)
	}
	return v, nil
}

// length parses the length or count after a blob or aggregate type byte.
// Only $ and * may be -1 (the RESP2 nulls).
func (rr *replyReader) length(kind byte, head string, limit int) (int, error) {
	if head == "-1" && (kind == '$' || kind == '*') {
		return -1, nil
	}
	if !isCanonicalInt(head) || head[0] == '-' {
		return 0, malformed("length %q after %q", head, kind)
	}
	n, err := strconv.Atoi(head)
	if err != nil || n > limit {
		return 0, malformed("length %q after %q is over %d", head, kind, limit)
	}
	return n, nil
}

// isCanonicalInt reports whether s is an int64 written the way Redis writes
// one: an optional minus and digits without leading zeros; "-0" is not one.
func isCanonicalInt(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && strconv.FormatInt(n, 10) == s
}

// isDouble reports whether s is a RESP3 double.
func isDouble(s string) bool {
	switch s {
	case "inf", "-inf", "nan":
		return true
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && s != "" &&
		strings.IndexAny(s, " _xXpPiInN") < 0
}
