package resp

// SplitArgs splits an inline request line as Redis's sdssplitargs does:
// whitespace separates words; "double quotes" understand \n \r \t \b \a and
// \xHH; 'single quotes' understand \'; a closing quote must be followed by
// whitespace or the end; a NUL ends the line (Redis works on C strings).
// It appends to dst and reports false for unbalanced quotes.
func SplitArgs(line []byte, dst [][]byte) ([][]byte, bool) {
	p := 0
	at := func(i int) byte { // the C string view: NUL past the end
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if at(p) == 0 {
			return dst, true
		}
		var cur []byte
		inq, insq, done := false, false, false
		for !done {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					cur = append(cur, unhex(at(p+2))<<4|unhex(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					cur = append(cur, unescape(line[p]))
				case c == '"':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return dst, false
					}
					done = true
				case c == 0:
					return dst, false
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					cur = append(cur, '\'')
				case c == '\'':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return dst, false
					}
					done = true
				case c == 0:
					return dst, false
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if at(p) != 0 {
				p++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		dst = append(dst, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
