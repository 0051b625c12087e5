package resp

import "strconv"

// Writer appends replies to an in-memory buffer in RESP2 or RESP3.
type Writer struct {
	buf   []byte
	proto int
	// oneEnd is where the reply Int wrote at the start of buf ends, and
	// oneInt its number (OneInt); 0: none.
	oneEnd int
	oneInt int64
}

// NewWriter returns a RESP2 writer.
func NewWriter() *Writer { return &Writer{proto: 2, buf: make([]byte, 0, 4096)} }

// SetProto switches between RESP2 and RESP3 (HELLO).
func (w *Writer) SetProto(p int) { w.proto = p }

// Proto is the protocol version replies are written in.
func (w *Writer) Proto() int { return w.proto }

// Bytes returns the buffered replies.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of buffered bytes.
func (w *Writer) Len() int { return len(w.buf) }

// Truncate drops everything written after the first n bytes.
func (w *Writer) Truncate(n int) {
	w.buf = w.buf[:n]
	if n < w.oneEnd {
		w.oneEnd = 0
	}
}

// Reset empties the buffer, keeping its capacity unless it grew very large.
func (w *Writer) Reset() {
	w.oneEnd = 0
	if cap(w.buf) > 1<<20 {
		w.buf = make([]byte, 0, 4096)
		return
	}
	w.buf = w.buf[:0]
}

// Raw appends bytes that are already RESP.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// Status writes +s, with CR and LF replaced by spaces.
func (w *Writer) Status(s string) {
	w.buf = append(w.buf, '+')
	w.buf = appendLine(w.buf, s)
}

// OK writes +OK.
func (w *Writer) OK() { w.buf = append(w.buf, "+OK\r\n"...) }

// Error writes -s. s carries its own code ("ERR ...", "WRONGTYPE ...");
// CR and LF become spaces.
func (w *Writer) Error(s string) {
	w.buf = append(w.buf, '-')
	w.buf = appendLine(w.buf, s)
}

func appendLine(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

// Int writes :n.
func (w *Writer) Int(n int64) {
	first := len(w.buf) == 0
	w.header(':', n)
	if first {
		w.oneEnd, w.oneInt = len(w.buf), n
	}
}

// OneInt reports whether the buffer holds exactly one reply, an integer
// that Int wrote, and returns it: a caller that reads a command's reply
// (a native script's redis.call) has the number without parsing its
// text back.
func (w *Writer) OneInt() (int64, bool) {
	return w.oneInt, w.oneEnd != 0 && w.oneEnd == len(w.buf)
}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(b)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.buf = append(w.buf, b...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(s)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkInt writes n as a bulk string (TIME, CONFIG GET values).
func (w *Writer) BulkInt(n int64) {
	var tmp [20]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes the null of the protocol: $-1 or _.
func (w *Writer) Null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "$-1\r\n"...)
}

// NullArray writes *-1 (RESP2) or _ (RESP3): an aborted EXEC.
func (w *Writer) NullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

// Array writes the header of an array of n elements.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Push writes the header of a push of n elements, out-of-band data such as
// pub/sub messages: '>' in RESP3, an array in RESP2.
func (w *Writer) Push(n int) {
	if w.proto == 3 {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Map writes the header of a map of n pairs; RESP2 gets a flat array.
func (w *Writer) Map(n int) {
	if w.proto == 3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', int64(2*n))
}

// Set writes the header of a set of n elements; RESP2 gets an array.
func (w *Writer) Set(n int) {
	if w.proto == 3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// header writes kind, n and CRLF: integers and aggregate headers.
//
// Single digits, most array lengths and many integer replies (CL.THROTTLE's
// limited flag, its zero counts), take one append of four bytes instead of
// three appends and a call to strconv.
//
// Other numbers below 10^8 (counts, TTLs in ms, lengths) are formatted
// two digits at a time into one line appended at once, without strconv's
// call and its three appends.
func (w *Writer) header(kind byte, n int64) {
	if uint64(n) < 10 {
		w.buf = append(w.buf, kind, '0'+byte(n), '\r', '\n')
		return
	}
	if uint64(n) < 1e8 {
		u := uint32(n)
		d := 2 // digits
		for p := uint32(100); d < 8 && u >= p; p *= 10 {
			d++
		}
		// Written in place: digits stored a byte at a time into a
		// scratch line and copied stall the copy's wide loads.
		l := len(w.buf)
		if cap(w.buf)-l < d+3 {
			w.buf = append(w.buf, make([]byte, d+3)...)
		}
		b := w.buf[l : l+d+3]
		b[0], b[d+1], b[d+2] = kind, '\r', '\n'
		for i := d - 1; i > 0; i -= 2 {
			q := u / 100
			r := 2 * (u - 100*q)
			b[i], b[i+1] = digitPairs[r], digitPairs[r+1]
			u = q
		}
		if d&1 == 1 {
			b[1] = '0' + byte(u)
		}
		w.buf = w.buf[:l+d+3]
		return
	}
	w.buf = append(w.buf, kind)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.buf = append(w.buf, '\r', '\n')
}

// digitPairs are the two-digit numbers 00 to 99, for header.
const digitPairs = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// Double writes a score as Redis 7.0 does: %.17g text, a bulk string in
// RESP2 and a double in RESP3.
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	txt := AppendDouble(tmp[:0], f)
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = append(w.buf, txt...)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.Bulk(txt)
}

// Bool writes #t/#f in RESP3 and :1/:0 in RESP2.
func (w *Writer) Bool(v bool) {
	switch {
	case w.proto == 3 && v:
		w.buf = append(w.buf, "#t\r\n"...)
	case w.proto == 3:
		w.buf = append(w.buf, "#f\r\n"...)
	case v:
		w.buf = append(w.buf, ":1\r\n"...)
	default:
		w.buf = append(w.buf, ":0\r\n"...)
	}
}

// Verbatim writes a verbatim text string (INFO, CLIENT INFO): =len txt:...
// in RESP3, a bulk string in RESP2.
func (w *Writer) Verbatim(s string) {
	if w.proto != 3 {
		w.BulkString(s)
		return
	}
	w.buf = append(w.buf, '=')
	w.buf = strconv.AppendInt(w.buf, int64(len(s)+4), 10)
	w.buf = append(w.buf, "\r\ntxt:"...)
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}
