package cell

// globMatch reports whether s matches the glob pattern as Redis's
// stringmatchlen does (KEYS, SCAN MATCH):
//
//   - '*' any run of bytes, '?' any one byte;
//   - '[abc]', '[^abc]', ranges '[a-z]' (reversed ends are swapped, and the
//     ends compare as C's signed char, so bytes >= 0x80 sort below 'a');
//   - '\' makes the next byte literal, inside brackets too;
//   - an unterminated '[' class ends with the pattern ("[a" matches "a").
//
// Reading past the pattern's end yields 0, the NUL that ends every Redis
// string, which the C code relies on.
func globMatch(pattern, s []byte) bool {
	skip := false
	return globMatchAt(pattern, 0, s, false, &skip)
}

// globMatchFold is globMatch ignoring ASCII case, as CONFIG GET matches
// parameter names.
func globMatchFold(pattern, s []byte) bool {
	skip := false
	return globMatchAt(pattern, 0, s, true, &skip)
}

// globMatchAt matches pat[pi:] against s. skipLonger is set once a '*'
// has failed to match the rest of the pattern at every position: no outer
// '*' can then succeed by matching more, so they give up at once. This only
// saves time (patterns like "*a*a*a*b" on long keys); the result is that of
// the plain backtracking search.
func globMatchAt(pat []byte, pi int, s []byte, fold bool, skipLonger *bool) bool {
	lower := func(c byte) byte {
		if fold && c >= 'A' && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	at := func(i int) byte {
		if i >= 0 && i < len(pat) {
			return lower(pat[i])
		}
		return 0
	}
	plen := func() int { return len(pat) - pi }
	for plen() > 0 && len(s) > 0 {
		switch pat[pi] {
		case '*':
			for plen() > 0 && at(pi+1) == '*' {
				pi++
			}
			if plen() == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchAt(pat, pi+1, s, fold, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			pi++
			not := at(pi) == '^'
			if not {
				pi++
			}
			match := false
			for {
				if at(pi) == '\\' && plen() >= 2 {
					pi++
					if at(pi) == lower(s[0]) {
						match = true
					}
				} else if at(pi) == ']' {
					break
				} else if plen() == 0 {
					pi-- // leave the end for the step after the class
					break
				} else if plen() >= 3 && at(pi+1) == '-' {
					lo, hi, c := int(int8(at(pi))), int(int8(at(pi+2))), int(int8(lower(s[0])))
					if lo > hi {
						lo, hi = hi, lo
					}
					pi += 2
					if c >= lo && c <= hi {
						match = true
					}
				} else if at(pi) == lower(s[0]) {
					match = true
				}
				pi++
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if plen() >= 2 {
				pi++
			}
			fallthrough
		default:
			if at(pi) != lower(s[0]) {
				return false
			}
			s = s[1:]
		}
		pi++
		if len(s) == 0 {
			for at(pi) == '*' && plen() > 0 {
				pi++
			}
			break
		}
	}
	return plen() == 0 && len(s) == 0
}
