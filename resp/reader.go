package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
)

// Limits bound what one client can make the server buffer. Zero values mean
// Redis's defaults.
type Limits struct {
	MaxBulkLen  int64 // proto-max-bulk-len: the largest bulk argument
	MaxQueryBuf int   // client-query-buffer-limit: unparsed bytes per client
}

// Redis's defaults and its fixed protocol limits (networking.c).
const (
	DefaultMaxBulkLen  = 512 << 20
	DefaultMaxQueryBuf = 1 << 30
	inlineMax          = 64 << 10 // PROTO_INLINE_MAX_SIZE
	unauthMultibulkMax = 10       // before AUTH, as Redis 7.0
	unauthBulkMax      = 16384
	minReadSpace       = 16 << 10
	bigArgDefault      = 32 << 10 // PROTO_MBULK_BIG_ARG
)

// ProtocolError is a malformed request. The server replies
// "-ERR Protocol error: <text>" and closes the connection.
type ProtocolError string

func (e ProtocolError) Error() string { return "ERR Protocol error: " + string(e) }

// The protocol errors, worded as Redis 7.0 words them.
const (
	errMultibulkLen       = ProtocolError("invalid multibulk length")
	errBulkLen            = ProtocolError("invalid bulk length")
	errUnauthMultibulkLen = ProtocolError("unauthenticated multibulk length")
	errUnauthBulkLen      = ProtocolError("unauthenticated bulk length")
	errBigMultibulkCount  = ProtocolError("too big mbulk count string")
	errBigBulkCount       = ProtocolError("too big bulk count string")
	errBigInline          = ProtocolError("too big inline request")
	errUnbalancedQuotes   = ProtocolError("unbalanced quotes in request")
)

// ErrQueryBufferLimit means the client sent more unparsed bytes than
// client-query-buffer-limit allows. Redis closes such a client without a reply.
var ErrQueryBufferLimit = errors.New("client query buffer limit reached")

// Reader parses client requests (multibulk and inline) from a stream.
//
// A multibulk request that is only partly buffered keeps its parse state
// (offsets relative to the request start), so a large request is scanned
// once, not once per read.
type Reader struct {
	src  io.Reader
	lim  Limits
	buf  []byte
	r, w int // unparsed bytes are buf[r:w]

	args [][]byte // the last command returned by Next
	want int      // arguments announced by the current '*' header; 0: none
	pos  int      // parse position, relative to r
	offs []int    // start/end pairs of parsed arguments, relative to r; -1, i: bigs[i]

	// A bulk of bigArg bytes or more that is not in the buffer yet is read
	// into a buffer of its own, of exactly its size, announced by its
	// header (as Redis does past PROTO_MBULK_BIG_ARG), and its bytes never
	// enter buf. Growing buf by doubling instead would hold up to twice
	// the argument, plus the copy at each step. Such a buffer is the
	// command's alone: the reader never reads into it again, so a caller
	// may keep the argument without copying it (Take).
	bigArg  int
	big     []byte   // the big bulk being read, with its CRLF; nil: none
	bigGot  int      // bytes of big read so far
	bigs    [][]byte // the current command's big bulks, read in full
	bigLen  int      // bytes of big and bigs: part of the pending request
	hadBigs bool     // args holds big bulks: drop them at the next Fill

	ahead aheadState // requests parsed ahead (keyhint.go)
}

// NewReader reads requests from src within lim.
func NewReader(src io.Reader, lim Limits) *Reader {
	if lim.MaxBulkLen <= 0 {
		lim.MaxBulkLen = DefaultMaxBulkLen
	}
	if lim.MaxQueryBuf <= 0 {
		lim.MaxQueryBuf = DefaultMaxQueryBuf
	}
	return &Reader{src: src, lim: lim, buf: make([]byte, minReadSpace), bigArg: bigArgDefault}
}

// SetLimits changes the limits for the requests still to come (CONFIG SET).
func (rd *Reader) SetLimits(lim Limits) {
	rd.ahead.reset() // parsed under the old limits
	if lim.MaxBulkLen > 0 {
		rd.lim.MaxBulkLen = lim.MaxBulkLen
	}
	if lim.MaxQueryBuf > 0 {
		rd.lim.MaxQueryBuf = lim.MaxQueryBuf
	}
}

// Buffered is the number of bytes read but not yet parsed.
func (rd *Reader) Buffered() int { return rd.w - rd.r + rd.bigGot + rd.bigLen - len(rd.big) }

// Take reports whether arg, an argument of the command Next returned
// last, has a buffer of its own that the reader will not reuse, and hands
// it to the caller, who may keep it instead of copying it. It is true at
// most once per argument, so that two owners never share one buffer.
func (rd *Reader) Take(arg []byte) bool {
	if !rd.hadBigs || len(arg) == 0 {
		return false
	}
	for i, b := range rd.bigs {
		if len(b) == len(arg) && &b[0] == &arg[0] {
			rd.bigs[i] = nil
			return true
		}
	}
	return false
}

// Release drops the reader's buffers, for a connection that has ended,
// and returns how many bytes they held. The reader must not be used
// after it.
func (rd *Reader) Release() int {
	n := cap(rd.buf) + rd.bigLen
	*rd = Reader{}
	return n
}

// Next returns the next complete command in the buffer. ok is false when
// more input is needed: call Fill. The returned slice is reused by the next
// call, and the argument bytes stay valid until the next Fill. authed
// selects the smaller limits Redis applies before authentication.
func (rd *Reader) Next(authed bool) (args [][]byte, ok bool, err error) {
	rd.dropBigs()
	if q := &rd.ahead; q.at < len(q.reqs) {
		if q.authed == authed {
			return rd.nextAhead(), true, nil
		}
		q.reset() // parsed under other limits: again, under these
	}
	rd.ahead.lastKey = nil
	for {
		if rd.want == 0 {
			if rd.r == rd.w {
				return nil, false, nil
			}
			if rd.buf[rd.r] != '*' {
				args, ok, err = rd.inline()
				if ok && len(args) == 0 {
					continue // an empty line is skipped
				}
				return args, ok, err
			}
			n, size, ok, err := rd.header(rd.r, errBigMultibulkCount)
			if !ok || err != nil {
				return nil, false, err
			}
			if n > math.MaxInt32 {
				return nil, false, errMultibulkLen
			}
			if n > unauthMultibulkMax && !authed {
				return nil, false, errUnauthMultibulkLen
			}
			if n <= 0 { // "*0" and "*-1" are empty requests
				rd.r += size
				continue
			}
			rd.want, rd.pos, rd.offs = int(n), size, rd.offs[:0]
		}
		for len(rd.offs) < 2*rd.want {
			if rd.big != nil {
				if rd.bigGot < len(rd.big) {
					return nil, false, nil
				}
				n := len(rd.big) - 2 // Redis does not check the CRLF
				rd.offs = append(rd.offs, -1, len(rd.bigs))
				rd.bigs = append(rd.bigs, rd.big[:n:n])
				rd.big, rd.bigGot = nil, 0
				continue
			}
			p := rd.r + rd.pos
			if p >= rd.w {
				return nil, false, nil
			}
			if rd.buf[p] != '$' {
				return nil, false, ProtocolError("expected '$', got '" + string(rd.buf[p:p+1]) + "'")
			}
			n, size, ok, err := rd.header(p, errBigBulkCount)
			if !ok || err != nil {
				if err == errMultibulkLen {
					err = errBulkLen
				}
				return nil, false, err
			}
			if n < 0 || n > rd.lim.MaxBulkLen {
				return nil, false, errBulkLen
			}
			if n > unauthBulkMax && !authed {
				return nil, false, errUnauthBulkLen
			}
			start := p + size
			// Redis does not check the two bytes after the payload.
			if int64(rd.w-start) < n+2 {
				// A bulk that could not fit the query-buffer limit is
				// left to the buffer, which refuses it on the way.
				if n >= int64(rd.bigArg) && n+2 <= int64(rd.lim.MaxQueryBuf) {
					rd.detach(start, int(n)+2)
					continue
				}
				return nil, false, nil
			}
			rd.offs = append(rd.offs, start-rd.r, start-rd.r+int(n))
			rd.pos = start - rd.r + int(n) + 2
		}
		rd.args = rd.args[:0]
		for i := 0; i < len(rd.offs); i += 2 {
			if rd.offs[i] < 0 {
				rd.args = append(rd.args, rd.bigs[rd.offs[i+1]])
				continue
			}
			a := rd.buf[rd.r+rd.offs[i] : rd.r+rd.offs[i+1]]
			rd.args = append(rd.args, a[:len(a):len(a)])
		}
		rd.hadBigs, rd.bigLen = len(rd.bigs) > 0, 0
		rd.r += rd.pos
		rd.want, rd.pos = 0, 0
		return rd.args, true, nil
	}
}

// detach moves the bulk of size bytes (CRLF included) that starts at
// start, of which only part is buffered, to a buffer of its own; its
// bytes leave buf, so the parse goes on at start once it is read.
func (rd *Reader) detach(start, size int) {
	b := make([]byte, size)
	rd.bigGot = copy(b, rd.buf[start:rd.w])
	rd.big, rd.bigLen = b, rd.bigLen+size
	rd.w = start
	rd.pos = start - rd.r
}

// dropBigs forgets the big bulks of the command returned before, so that
// the reader does not keep them alive: the caller has them, or not.
func (rd *Reader) dropBigs() {
	if rd.hadBigs {
		clear(rd.args[:cap(rd.args)])
		clear(rd.bigs[:cap(rd.bigs)])
		rd.bigs, rd.hadBigs = rd.bigs[:0], false
	}
}

// header parses "<kind><int>\r" at p. It returns the number, the size of the
// line including "\r\n", and ok=false if the line is not complete yet. Redis
// looks for '\r' and does not check the byte after it.
func (rd *Reader) header(p int, tooBig error) (n int64, size int, ok bool, err error) {
	i := bytes.IndexByte(rd.buf[p:rd.w], '\r')
	if i < 0 {
		if rd.w-p > inlineMax {
			return 0, 0, false, tooBig
		}
		return 0, 0, false, nil
	}
	if p+i+1 >= rd.w {
		return 0, 0, false, nil
	}
	n, ok = ParseInt(rd.buf[p+1 : p+i])
	if !ok {
		return 0, 0, false, errMultibulkLen
	}
	return n, i + 2, true, nil
}

// inline parses a request in the inline (telnet) form.
func (rd *Reader) inline() ([][]byte, bool, error) {
	i := bytes.IndexByte(rd.buf[rd.r:rd.w], '\n')
	if i < 0 {
		if rd.w-rd.r > inlineMax {
			return nil, false, errBigInline
		}
		return nil, false, nil
	}
	line := rd.buf[rd.r : rd.r+i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	rd.r += i + 1
	args, ok := SplitArgs(line, rd.args[:0])
	if !ok {
		return nil, false, errUnbalancedQuotes
	}
	rd.args = args
	return args, true, nil
}

// Fill reads more input. It keeps the unparsed bytes, compacting or growing
// the buffer as needed, and fails with ErrQueryBufferLimit when the client
// has sent more than client-query-buffer-limit bytes it cannot complete.
func (rd *Reader) Fill() error {
	rd.dropBigs()
	rd.ahead.reset() // its offsets are about to move
	if rd.big != nil && rd.bigGot < len(rd.big) {
		// Straight into the big bulk's own buffer, never past its end.
		n, err := rd.src.Read(rd.big[rd.bigGot:])
		rd.bigGot += n
		if n > 0 {
			err = nil
		}
		if rd.Buffered() > rd.lim.MaxQueryBuf {
			return ErrQueryBufferLimit
		}
		return err
	}
	if rd.r == rd.w && rd.want == 0 {
		rd.r, rd.w = 0, 0
		if len(rd.buf) > 1<<20 { // give back what a big request needed
			rd.buf = make([]byte, minReadSpace)
			rd.ahead.forget()
		}
	}
	if len(rd.buf)-rd.w < minReadSpace {
		pending := rd.w - rd.r
		if pending+rd.bigLen >= rd.lim.MaxQueryBuf {
			return ErrQueryBufferLimit
		}
		if rd.r > 0 && pending <= len(rd.buf)/2 {
			copy(rd.buf, rd.buf[rd.r:rd.w])
		} else {
			size := 2 * len(rd.buf)
			if size > rd.lim.MaxQueryBuf+minReadSpace {
				size = rd.lim.MaxQueryBuf + minReadSpace
			}
			nb := make([]byte, size)
			copy(nb, rd.buf[rd.r:rd.w])
			rd.buf = nb
			rd.ahead.forget()
		}
		rd.r, rd.w = 0, pending
	}
	n, err := rd.src.Read(rd.buf[rd.w:])
	rd.w += n
	if n > 0 {
		err = nil
	}
	if rd.Buffered() > rd.lim.MaxQueryBuf {
		return ErrQueryBufferLimit
	}
	return err
}
