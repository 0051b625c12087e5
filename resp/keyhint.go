package resp

// RequestKey reads the request at the start of b, in the multibulk form,
// without the checks and limits of Next: it returns the request's second
// argument (nil when it has fewer than two), which is the key of most
// commands, and the request's length in bytes. n is 0 when b does not
// start with a whole multibulk request. It is for hints about requests
// that Next will parse for real (the server asks the CPU for the key's
// index lines before the pipeline's first request runs), so a request it
// reads differently from Next costs a useless hint, never a wrong reply.
func RequestKey(b []byte) (key []byte, n int) {
	count, p, ok := hintHeader(b, 0, '*')
	if !ok || count < 1 {
		return nil, 0
	}
	for i := 0; i < count; i++ {
		size, q, ok := hintHeader(b, p, '$')
		if !ok || size > len(b)-q-2 {
			return nil, 0
		}
		if i == 1 {
			key = b[q : q+size : q+size]
		}
		p = q + size + 2
	}
	return key, p
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
