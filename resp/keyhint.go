package resp

import "bytes"

// RequestKey reads the request at the start of b, in the multibulk form,
// without the checks and limits of Next: it returns the request's key and
// the request's length in bytes. The key is the second argument (nil when
// there are fewer than two), which is the key of most commands, but for a
// script call (EVAL, EVALSHA, FCALL and their _RO forms) whose numkeys is
// at least 1 it is the first of its keys, the fourth argument: the second
// is the script's body, SHA1 or function name. n is 0 when b does not
// start with a whole multibulk request. It is for hints about requests
// that Next will parse for real (the server asks the CPU for the key's
// index lines before the pipeline's first request runs), so a request it
// reads differently from Next costs a useless hint, never a wrong reply.
func RequestKey(b []byte) (key []byte, n int) {
	count, p, ok := hintHeader(b, 0, '*')
	if !ok || count < 1 {
		return nil, 0
	}
	var name, numkeys []byte
	for i := 0; i < count; i++ {
		size, q, ok := hintHeader(b, p, '$')
		if !ok || size > len(b)-q-2 {
			return nil, 0
		}
		arg := b[q : q+size : q+size]
		switch i {
		case 0:
			name = arg
		case 1:
			key = arg
		case 2:
			numkeys = arg
		case 3:
			if scriptCall(name) && positive(numkeys) {
				key = arg
			}
		}
		p = q + size + 2
	}
	return key, p
}

// scriptCalls are the commands whose keys follow a numkeys.
var scriptCalls = [...]string{"evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro"}

// scriptCall reports whether name is EVAL, EVALSHA, FCALL or one of their
// _RO forms, in any case.
func scriptCall(name []byte) bool {
	for _, c := range scriptCalls {
		if len(name) == len(c) && bytes.EqualFold(name, []byte(c)) {
			return true
		}
	}
	return false
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

// hintHeader reads "<kind><digits>\r\n" at b[p:], a number of at most 9
// digits, and returns it and the position after the line.
func hintHeader(b []byte, p int, kind byte) (n, next int, ok bool) {
	if p >= len(b) || b[p] != kind {
		return 0, 0, false
	}
	p++
	digits := 0
	for ; p < len(b) && b[p] >= '0' && b[p] <= '9'; p++ {
		if digits == 9 {
			return 0, 0, false
		}
		n = n*10 + int(b[p]-'0')
		digits++
	}
	if digits == 0 || p+1 >= len(b) || b[p] != '\r' {
		return 0, 0, false
	}
	return n, p + 2, true
}
