package rdb

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Error is a malformed or truncated input, with the offset where reading
// stopped, so a log line can name the place.
type Error struct {
	Offset int64
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s at offset %d", e.Msg, e.Offset) }

// src is the input: a buffer over an io.Reader (or over a whole payload in
// memory), the CRC of everything consumed, and the offset. The CRC runs over
// consumed bytes in large pieces (when the buffer is refilled), not per read.
type src struct {
	r      io.Reader // nil: buf holds the whole input
	buf    []byte
	pos    int
	end    int
	crcPos int // buf[:crcPos] is already in crc
	crc    uint64
	base   int64 // the input offset of buf[0]
	remain int64 // bytes r can still give when known, else -1
	rerr   error
	// borrow (Reader.Borrow, while a key's value is read) makes the value
	// reuse the buffers below, valid until the next record: its strings
	// and integer texts go into arena, its element list is elems, its
	// scores scores, a sorted set's integer members (Value.Ints) ints. A load of a million small aggregates otherwise
	// allocates (and, with the collector paused, touches fresh pages for)
	// several times the memory it keeps.
	borrow bool
	arena  []byte
	elems  [][]byte
	scores []float64
	ints   []int64
}

const bufSize = 64 << 10

func newSrc(r io.Reader, size int64) *src {
	return &src{r: r, buf: make([]byte, bufSize), remain: size}
}

func newMemSrc(p []byte) *src { return &src{buf: p, end: len(p)} }

func (s *src) offset() int64 { return s.base + int64(s.pos) }

func (s *src) fail(msg string) error { return &Error{Offset: s.offset(), Msg: msg} }

// left is how many bytes the input can still give, or -1 when unknown.
func (s *src) left() int64 {
	if s.r == nil {
		return int64(s.end - s.pos)
	}
	if s.remain < 0 {
		return -1
	}
	return int64(s.end-s.pos) + s.remain
}

// fits reports whether n more bytes can exist; a length above it is forged
// or truncated, and nothing is allocated for it.
func (s *src) fits(n uint64) bool {
	l := s.left()
	return l < 0 || n <= uint64(l)
}

func (s *src) syncCRC() {
	s.crc = CRC64(s.crc, s.buf[s.crcPos:s.pos])
	s.crcPos = s.pos
}

func (s *src) truncated() error {
	if s.rerr != nil && !errors.Is(s.rerr, io.EOF) {
		return &Error{Offset: s.offset(), Msg: "read error: " + s.rerr.Error()}
	}
	return s.fail("unexpected end of input")
}

// need makes n (at most bufSize) bytes readable at buf[pos:].
func (s *src) need(n int) error {
	if s.end-s.pos >= n {
		return nil
	}
	if s.r == nil || s.rerr != nil {
		return s.truncated()
	}
	s.syncCRC()
	copy(s.buf, s.buf[s.pos:s.end])
	s.base += int64(s.pos)
	s.end -= s.pos
	s.pos, s.crcPos = 0, 0
	for s.end < n {
		m, err := s.r.Read(s.buf[s.end:])
		s.end += m
		if s.remain >= 0 {
			s.remain -= int64(m)
		}
		if err != nil {
			s.rerr = err
			if s.end < n {
				return s.truncated()
			}
		}
	}
	return nil
}

// take returns the next n bytes (n <= bufSize), valid until the next read.
func (s *src) take(n int) ([]byte, error) {
	if err := s.need(n); err != nil {
		return nil, err
	}
	b := s.buf[s.pos : s.pos+n]
	s.pos += n
	return b, nil
}

func (s *src) readByte() (byte, error) {
	if s.pos < s.end {
		b := s.buf[s.pos]
		s.pos++
		return b, nil
	}
	if err := s.need(1); err != nil {
		return 0, err
	}
	b := s.buf[s.pos]
	s.pos++
	return b, nil
}

// bytes returns a copy of the next n bytes. A length beyond what the input
// holds fails before allocating; with an input of unknown size a long one
// is read in pieces, so memory grows only with bytes actually present.
func (s *src) bytes(n uint64) ([]byte, error) {
	if !s.fits(n) {
		return nil, s.fail(fmt.Sprintf("length %d beyond the end of input", n))
	}
	if s.r == nil || n <= bufSize {
		b, err := s.take(int(n))
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), b...), nil
	}
	s.syncCRC()
	dst := make([]byte, 0, min(n, 1<<20))
	if s.remain >= 0 {
		dst = make([]byte, 0, n) // known to be there
	}
	k := min(uint64(s.end-s.pos), n)
	dst = append(dst, s.buf[s.pos:s.pos+int(k)]...)
	s.pos += int(k)
	s.syncCRC()
	copy(s.buf, s.buf[s.pos:s.end])
	s.base += int64(s.pos)
	s.end -= s.pos
	s.pos, s.crcPos = 0, 0
	for uint64(len(dst)) < n {
		if s.rerr != nil {
			return nil, s.truncated()
		}
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		want := min(uint64(cap(dst)), n)
		m, err := s.r.Read(dst[len(dst):want])
		s.crc = CRC64(s.crc, dst[len(dst):len(dst)+m])
		dst = dst[:len(dst)+m]
		s.base += int64(m)
		if s.remain >= 0 {
			s.remain -= int64(m)
		}
		if err != nil {
			s.rerr = err
		}
	}
	return dst, nil
}

// length reads a length; enc is true (and n the encoding) for a string
// stored as an integer or compressed.
func (s *src) length() (n uint64, enc bool, err error) {
	b, err := s.readByte()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case len6bit:
		return uint64(b & 0x3f), false, nil
	case len14bit:
		b2, err := s.readByte()
		return uint64(b&0x3f)<<8 | uint64(b2), false, err
	case lenEnc:
		return uint64(b & 0x3f), true, nil
	}
	switch b {
	case len32bit:
		p, err := s.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(p[0])<<24 | uint64(p[1])<<16 | uint64(p[2])<<8 | uint64(p[3]), false, nil
	case len64bit:
		p, err := s.take(8)
		if err != nil {
			return 0, false, err
		}
		var v uint64
		for _, c := range p {
			v = v<<8 | uint64(c)
		}
		return v, false, nil
	}
	return 0, false, s.fail(fmt.Sprintf("unknown length encoding %#x", b))
}

// plainLen reads a length that may not be a string encoding.
func (s *src) plainLen() (uint64, error) {
	n, enc, err := s.length()
	if err == nil && enc {
		err = s.fail("string encoding where a length belongs")
	}
	return n, err
}

// count reads an element count; each element takes at least one byte, so
// a count beyond the input left is refused.
func (s *src) count() (int, error) {
	n, err := s.plainLen()
	if err != nil {
		return 0, err
	}
	if !s.fits(n) || n > 1<<40 {
		return 0, s.fail(fmt.Sprintf("count %d beyond the end of input", n))
	}
	return int(n), nil
}

// prealloc bounds an initial capacity from a count: the reader's slices
// grow by append past it, so a forged count costs nothing up front.
func prealloc(n int) int { return min(n, 1<<16) }

// str reads a string in any of its encodings, into a new slice, or while
// borrowing into the arena.
func (s *src) str() ([]byte, error) {
	if !s.borrow {
		return s.strInto(nil)
	}
	at := len(s.arena)
	b, err := s.strInto(s.arena)
	if err != nil {
		return nil, err
	}
	s.arena = b
	return b[at:len(b):len(b)], nil
}

// elemsBuf is where a value of about n elements collects them.
func (s *src) elemsBuf(n int) [][]byte {
	if s.borrow {
		return s.elems[:0]
	}
	return make([][]byte, 0, prealloc(n))
}

// scoresBuf is where a sorted set of n members collects its scores.
func (s *src) scoresBuf(n int) []float64 {
	if s.borrow {
		return s.scores[:0]
	}
	return make([]float64, 0, prealloc(n))
}

// intText is where a blob's integer entries put their text (newInts):
// the arena while borrowing.
func (s *src) intText() *[]byte {
	if s.borrow {
		return &s.arena
	}
	return nil
}

// keep takes back a borrowed value's element and score slices, to reuse
// their arrays (grown to the largest value so far) for the next.
func (s *src) keep(v *Value) {
	if cap(v.Elems) > cap(s.elems) {
		s.elems = v.Elems[:0]
	}
	if cap(v.Scores) > cap(s.scores) {
		s.scores = v.Scores[:0]
	}
}

// view returns the next n bytes, only to be read before the next read of
// s: without a copy when they fit the buffer.
func (s *src) view(n uint64) ([]byte, error) {
	if s.r != nil && n > bufSize {
		return s.bytes(n)
	}
	if !s.fits(n) {
		return nil, s.fail(fmt.Sprintf("length %d beyond the end of input", n))
	}
	return s.take(int(n))
}

// strInto reads a string in any of its encodings, appending it to dst.
func (s *src) strInto(dst []byte) ([]byte, error) {
	n, enc, err := s.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		if s.r == nil || n <= bufSize {
			if !s.fits(n) {
				return nil, s.fail(fmt.Sprintf("length %d beyond the end of input", n))
			}
			b, err := s.take(int(n))
			if err != nil {
				return nil, err
			}
			return append(dst, b...), nil
		}
		b, err := s.bytes(n)
		if err != nil || dst == nil {
			return b, err
		}
		return append(dst, b...), nil
	}
	switch n {
	case encInt8:
		b, err := s.take(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(dst, int64(int8(b[0])), 10), nil
	case encInt16:
		b, err := s.take(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(dst, int64(int16(uint16(b[0])|uint16(b[1])<<8)), 10), nil
	case encInt32:
		b, err := s.take(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(dst, int64(int32(uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)), 10), nil
	case encLZF:
		clen, err := s.plainLen()
		if err != nil {
			return nil, err
		}
		ulen, err := s.plainLen()
		if err != nil {
			return nil, err
		}
		at := s.offset()
		c, err := s.view(clen)
		if err != nil {
			return nil, err
		}
		if ulen > clen*lzfMaxRatio {
			return nil, &Error{Offset: at, Msg: "corrupt LZF data"}
		}
		out, err := lzfDecompress(dst, c, int(ulen))
		if err != nil {
			return nil, &Error{Offset: at, Msg: err.Error()}
		}
		return out, nil
	}
	return nil, s.fail(fmt.Sprintf("unknown string encoding %d", n))
}

func itoa(v int64) []byte { return strconv.AppendInt(nil, v, 10) }
