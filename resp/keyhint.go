package resp

import "unsafe"

// Requests parsed ahead: once a read has brought a pipeline's requests,
// the server wants their keys before the first one runs (to ask the CPU
// for the keys' lines, cell/keyhint.go), and Next wants them parsed. Ahead
// parses the whole requests in the buffer once, for both: it notes each
// one's arguments, which Next then hands out without parsing them again,
// and its key, which AheadKey gives.
//
// Ahead takes only what Next would return as it is: a whole multibulk
// request of plain lengths (digits, no sign, no leading zero, at most 9)
// within the limits. It stops, without an error, at the first request
// that is anything else (incomplete, inline, empty, too big, malformed),
// which Next parses as before, with its errors.

// aheadReq is a request Ahead parsed.
type aheadReq struct {
	first, n int    // its arguments: args[first:first+n]
	end      int    // where it ends in buf
	key      int    // the argument that is its key; -1: none
	tag      uint64 // the caller's (SetAheadTag); valid when tagged
	tagged   bool
}

// aheadState is the Reader's queue of requests parsed ahead.
type aheadState struct {
	reqs []aheadReq
	at   int // the next of reqs that Next returns
	// The queued requests' arguments, in buf: Next hands out each
	// request's part as it is.
	args   [][]byte
	authed bool // the limits Ahead applied
	// The key and tag of the request Next returned last, if it came
	// from the queue tagged (KeyTag).
	lastKey []byte
	lastTag uint64
}

// Ahead parses the whole requests in the buffer after the ones already
// queued, until max are queued, and returns how many are. Next returns
// them in order without parsing them again, as long as it is called
// with the same authed (else they are parsed again, under its limits);
// Fill and SetLimits drop them.
func (rd *Reader) Ahead(max int, authed bool) int {
	q := &rd.ahead
	if len(q.reqs) == q.at {
		q.reset()
		q.authed = authed
	}
	if q.authed != authed || rd.want != 0 || rd.big != nil {
		return len(q.reqs) - q.at
	}
	p := rd.r
	if n := len(q.reqs); n != 0 {
		p = q.reqs[n-1].end
	}
	b := rd.buf[:rd.w]
	for len(q.reqs)-q.at < max && p < len(b) && b[p] == '*' {
		count, next, ok := aheadLength(b, p+1)
		if !ok || count == 0 || count > unauthMultibulkMax && !authed {
			break
		}
		first := len(q.args)
		for range count {
			if next >= len(b) || b[next] != '$' {
				ok = false
				break
			}
			var size int
			size, next, ok = aheadLength(b, next+1)
			if !ok || int64(size) > rd.lim.MaxBulkLen || size > unauthBulkMax && !authed || size+2 > len(b)-next {
				ok = false
				break
			}
			q.args = append(q.args, b[next:next+size:next+size])
			next += size + 2 // Next does not check the CRLF either
		}
		if !ok {
			q.args = q.args[:first]
			break
		}
		q.reqs = append(q.reqs, aheadReq{first: first, n: count, end: next, key: requestKey(q.args[first:])})
		p = next
	}
	return len(q.reqs) - q.at
}

// AheadKey is the key of queued request i (0 is the one Next returns
// next): the second argument, which is the key of most commands, or for
// a script call (EVAL, EVALSHA, FCALL and their _RO forms) whose numkeys
// is at least 1 the first of its keys, the fourth argument. nil when the
// request has no such argument. Valid until the next Fill.
func (rd *Reader) AheadKey(i int) []byte {
	r := &rd.ahead.reqs[rd.ahead.at+i]
	if r.key < 0 {
		return nil
	}
	return rd.ahead.args[r.first+r.key]
}

// SetAheadTag attaches tag, which the caller computed from AheadKey(i)
// (its hash), to queued request i: KeyTag gives it back while that
// request runs.
func (rd *Reader) SetAheadTag(i int, tag uint64) {
	r := &rd.ahead.reqs[rd.ahead.at+i]
	r.tag, r.tagged = tag, true
}

// KeyTag is the tag attached to key (SetAheadTag) when key is the key of
// the request Next returned last, the very bytes in the buffer: ok is
// false for any other slice, and after the next Fill.
func (rd *Reader) KeyTag(key []byte) (tag uint64, ok bool) {
	k := rd.ahead.lastKey
	if k == nil || len(key) != len(k) || unsafe.SliceData(key) != unsafe.SliceData(k) {
		return 0, false
	}
	return rd.ahead.lastTag, true
}

// nextAhead is Next for a queued request: its part of the queue's
// arguments, which stays as it is until the next Fill.
func (rd *Reader) nextAhead() [][]byte {
	q := &rd.ahead
	r := &q.reqs[q.at]
	q.at++
	args := q.args[r.first : r.first+r.n : r.first+r.n]
	q.lastKey = nil
	if r.tagged && r.key >= 0 {
		q.lastKey, q.lastTag = args[r.key], r.tag
	}
	rd.r = r.end
	return args
}

// reset empties the queue.
func (q *aheadState) reset() {
	q.reqs, q.args, q.at, q.lastKey = q.reqs[:0], q.args[:0], 0, nil
}

// forget drops the queue's hold on a buffer the reader let go of.
func (q *aheadState) forget() { clear(q.args[:cap(q.args)]) }

// requestKey is the index of the key among a request's arguments (see
// AheadKey); -1: none.
func requestKey(args [][]byte) int {
	if len(args) < 2 {
		return -1
	}
	if len(args) >= 4 && scriptCall(args[0]) && positive(args[2]) {
		return 3
	}
	return 1
}

// scriptCall reports whether name is EVAL, EVALSHA, FCALL or one of their
// _RO forms, in any case: by its length first, as most names are not.
func scriptCall(name []byte) bool {
	switch len(name) {
	case 4:
		return lowerIs(name, "eval")
	case 5:
		return lowerIs(name, "fcall")
	case 7:
		return lowerIs(name, "evalsha") || lowerIs(name, "eval_ro")
	case 8:
		return lowerIs(name, "fcall_ro")
	case 10:
		return lowerIs(name, "evalsha_ro")
	}
	return false
}

// lowerIs reports whether b is lower, a lower-case name of the same
// length, in any case.
func lowerIs(b []byte, lower string) bool {
	for i := range len(lower) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// positive reports whether b is the decimal text of a number above 0
// without sign or leading zero.
func positive(b []byte) bool {
	if len(b) == 0 || b[0] == '0' {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// aheadLength reads the digits of a length at b[p:], and the '\r' and
// the byte after it that end its line (Next checks only the '\r'): a
// number of 1 to 9 digits without a leading zero, which Next reads as
// the same number. It returns the number and the position after the
// line.
func aheadLength(b []byte, p int) (n, next int, ok bool) {
	start := p
	for ; p < len(b) && b[p] >= '0' && b[p] <= '9'; p++ {
		n = n*10 + int(b[p]-'0')
	}
	digits := p - start
	if digits == 0 || digits > 9 || digits > 1 && b[start] == '0' || p+1 >= len(b) || b[p] != '\r' {
		return 0, 0, false
	}
	return n, p + 2, true
}
