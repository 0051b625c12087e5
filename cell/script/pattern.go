package script

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 patterns, for string.find, match, gmatch and gsub.
//
// gopher-lua translates patterns into its own matcher, which collects
// every match of a string before the first is used (tens of bytes each)
// and whose gsub rebuilds the result once per match: a gsub over 128 MB
// went past 4 GB, and 1e5 characters took seconds. This matcher follows
// lstrlib's semantics (a backtracking matcher over the pattern text, the
// pattern ending at its first NUL byte as in 5.1, at most 32 captures)
// and finds one match at a time, so the callers stream: memory is the
// result's, and time per match is Lua's.
//
// A match can still take exponential time on a hostile pattern, as in
// Lua; the matcher counts its steps and asks the run whether it must stop
// (SCRIPT KILL, the memory limit) every patternCheckSteps of them.

const (
	maxCaptures = 32 // LUA_MAXCAPTURES

	capUnfinished = -1
	capPosition   = -2

	// maxPatternDepth bounds the matcher's recursion, which grows with the
	// items of the pattern: Go cannot recover from a goroutine whose stack
	// passes its limit, and C Lua would crash long before this depth.
	maxPatternDepth = 10000

	patternCheckSteps = 1 << 16
)

// specials are the characters that make a pattern more than plain text
// (string.find searches plain text without the matcher).
const specials = "^$*+?.([%-"

// Lua 5.1's pattern error messages.
const (
	msgPatternEndsEsc   = "malformed pattern (ends with '%')"
	msgPatternNoBracket = "malformed pattern (missing ']')"
	msgPatternFrontier  = "missing '[' after '%f' in pattern"
	msgPatternBalance   = "unbalanced pattern"
	msgCaptureIndex     = "invalid capture index"
	msgPatternCapture   = "invalid pattern capture"
	msgCaptureUnclosed  = "unfinished capture"
	msgTooManyCaptures  = "too many captures"
	msgPatternComplex   = "pattern too complex"
)

type capture struct {
	start, len int
}

// matcher is lstrlib's MatchState: the subject, the pattern (cut at its
// first NUL), and the captures of the match being tried.
type matcher struct {
	st    *state
	L     *lua.LState
	src   string
	pat   string
	level int
	depth int
	steps int
	caps  [maxCaptures]capture
}

func newMatcher(st *state, L *lua.LState, src, pat string) *matcher {
	for i := 0; i < len(pat); i++ {
		if pat[i] == 0 {
			pat = pat[:i]
			break
		}
	}
	return &matcher{st: st, L: L, src: src, pat: pat}
}

// step counts work and checks, now and then, whether the run must stop.
func (m *matcher) step() {
	m.steps++
	if m.steps >= patternCheckSteps {
		m.steps = 0
		m.st.checkStop(m.L)
	}
}

// find tries the pattern from p at every position of the subject from
// init on (only at init when anchored). It returns the match's bounds, or
// start -1.
func (m *matcher) find(init, p int, anchored bool) (start, end int) {
	for s := init; ; s++ {
		m.level = 0
		if e := m.match(s, p); e >= 0 {
			return s, e
		}
		if anchored || s >= len(m.src) {
			return -1, -1
		}
	}
}

// match matches the pattern from p against the subject from s, returning
// the end of the match or -1.
func (m *matcher) match(s, p int) int {
	m.depth++
	if m.depth > maxPatternDepth {
		m.L.RaiseError("%s", msgPatternComplex)
	}
	defer func() { m.depth-- }()
	pat := m.pat
	for {
		m.step()
		if p == len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return m.startCapture(s, p+2, capPosition)
			}
			return m.startCapture(s, p+1, capUnfinished)
		case ')':
			return m.endCapture(s, p+1)
		case '%':
			if p+1 < len(pat) {
				switch c := pat[p+1]; {
				case c == 'b':
					s = m.matchBalance(s, p+2)
					if s < 0 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						m.L.RaiseError("%s", msgPatternFrontier)
					}
					ep := m.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = m.src[s-1]
					}
					if s < len(m.src) {
						cur = m.src[s]
					}
					if m.matchBracket(prev, p, ep-1) || !m.matchBracket(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case isDigit(c):
					s = m.matchBackref(s, c)
					if s < 0 {
						return -1
					}
					p += 2
					continue
				}
			}
		case '$':
			if p+1 == len(pat) {
				if s == len(m.src) {
					return s
				}
				return -1
			}
		}
		// A single character class, perhaps repeated.
		ep := m.classEnd(p)
		ok := s < len(m.src) && m.single(m.src[s], p, ep)
		var q byte
		if ep < len(pat) {
			q = pat[ep]
		}
		switch q {
		case '?':
			if ok {
				if e := m.match(s+1, ep+1); e >= 0 {
					return e
				}
			}
			p = ep + 1
		case '*':
			return m.maxExpand(s, p, ep)
		case '+':
			if !ok {
				return -1
			}
			return m.maxExpand(s+1, p, ep)
		case '-':
			return m.minExpand(s, p, ep)
		default:
			if !ok {
				return -1
			}
			s++
			p = ep
		}
	}
}

// maxExpand is a greedy repetition: the longest run first, then shorter.
func (m *matcher) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(m.src) && m.single(m.src[s+i], p, ep) {
		i++
		m.step()
	}
	for ; i >= 0; i-- {
		if e := m.match(s+i, ep+1); e >= 0 {
			return e
		}
	}
	return -1
}

// minExpand is a lazy repetition: the shortest run first, then longer.
func (m *matcher) minExpand(s, p, ep int) int {
	for {
		if e := m.match(s, ep+1); e >= 0 {
			return e
		}
		if s < len(m.src) && m.single(m.src[s], p, ep) {
			s++
			continue
		}
		return -1
	}
}

func (m *matcher) startCapture(s, p, what int) int {
	if m.level >= maxCaptures {
		m.L.RaiseError("%s", msgTooManyCaptures)
	}
	m.caps[m.level] = capture{start: s, len: what}
	m.level++
	e := m.match(s, p)
	if e < 0 {
		m.level--
	}
	return e
}

func (m *matcher) endCapture(s, p int) int {
	l := -1
	for i := m.level - 1; i >= 0; i-- {
		if m.caps[i].len == capUnfinished {
			l = i
			break
		}
	}
	if l < 0 {
		m.L.RaiseError("%s", msgPatternCapture)
	}
	m.caps[l].len = s - m.caps[l].start
	e := m.match(s, p)
	if e < 0 {
		m.caps[l].len = capUnfinished
	}
	return e
}

// matchBackref is %1..%9: the text of a closed capture again.
func (m *matcher) matchBackref(s int, digit byte) int {
	l := int(digit) - '1'
	if l < 0 || l >= m.level || m.caps[l].len == capUnfinished {
		m.L.RaiseError("%s", msgCaptureIndex)
	}
	c := m.caps[l]
	if c.len < 0 { // a position capture matches nothing, as in C
		return -1
	}
	if len(m.src)-s >= c.len && m.src[c.start:c.start+c.len] == m.src[s:s+c.len] {
		return s + c.len
	}
	return -1
}

// matchBalance is %bxy: from an x to its balancing y.
func (m *matcher) matchBalance(s, p int) int {
	if p+1 >= len(m.pat) {
		m.L.RaiseError("%s", msgPatternBalance)
	}
	if s >= len(m.src) || m.src[s] != m.pat[p] {
		return -1
	}
	open, close := m.pat[p], m.pat[p+1]
	depth := 1
	for s++; s < len(m.src); s++ {
		m.step()
		switch m.src[s] {
		case close:
			depth--
			if depth == 0 {
				return s + 1
			}
		case open:
			depth++
		}
	}
	return -1
}

// classEnd is the end of the single character class at p.
func (m *matcher) classEnd(p int) int {
	pat := m.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			m.L.RaiseError("%s", msgPatternEndsEsc)
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		// The first character is part of the set even if it is ']'.
		for {
			if p >= len(pat) {
				m.L.RaiseError("%s", msgPatternNoBracket)
			}
			c := pat[p]
			p++
			if c == '%' && p < len(pat) {
				p++
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// single reports whether c matches the class from p to ep.
func (m *matcher) single(c byte, p, ep int) bool {
	switch m.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, m.pat[p+1])
	case '[':
		return m.matchBracket(c, p, ep-1)
	}
	return m.pat[p] == c
}

// matchBracket matches c against the set from '[' at p to ']' at end.
func (m *matcher) matchBracket(c byte, p, end int) bool {
	pat := m.pat
	in := true
	p++
	if pat[p] == '^' {
		in = false
		p++
	}
	for ; p < end; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return in
			}
		case pat[p+1] == '-' && p+2 < end:
			if pat[p] <= c && c <= pat[p+2] {
				return in
			}
			p += 2
		case pat[p] == c:
			return in
		}
	}
	return !in
}

// matchClass is %x for class letter cl (C locale); an upper-case letter
// is the complement, and any other character stands for itself.
func matchClass(c, cl byte) bool {
	lower := cl
	if cl >= 'A' && cl <= 'Z' {
		lower = cl + ('a' - 'A')
	}
	var res bool
	switch lower {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 32 || c == 127
	case 'd':
		res = isDigit(c)
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = isPunct(c)
	case 's':
		res = c == ' ' || (c >= '\t' && c <= '\r')
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || isDigit(c)
	case 'x':
		res = isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl != lower {
		return !res
	}
	return res
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isPunct(c byte) bool {
	return c > ' ' && c < 127 && !isAlpha(c) && !isDigit(c)
}

// captureText is capture i of the match [s, e): the whole match when the
// pattern has none and i is 0; pos is set for a position capture.
func (m *matcher) captureText(i, s, e int) (text string, pos int, isPos bool) {
	if i >= m.level {
		if i != 0 {
			m.L.RaiseError("%s", msgCaptureIndex)
		}
		return m.src[s:e], 0, false
	}
	c := m.caps[i]
	switch c.len {
	case capUnfinished:
		m.L.RaiseError("%s", msgCaptureUnclosed)
	case capPosition:
		return "", c.start + 1, true
	}
	return m.src[c.start : c.start+c.len], 0, false
}

// capture is captureText as a Lua value.
func (m *matcher) capture(i, s, e int) lua.LValue {
	text, pos, isPos := m.captureText(i, s, e)
	if isPos {
		return smallNumber(pos)
	}
	return m.st.box.str(text)
}

// pushCaptures pushes the captures of the match [s, e) (the whole match
// when there are none and wholeIfNone) and returns how many.
func (m *matcher) pushCaptures(s, e int, wholeIfNone bool) int {
	n := m.level
	if n == 0 && wholeIfNone {
		n = 1
	}
	for i := 0; i < n; i++ {
		m.L.Push(m.capture(i, s, e))
	}
	return n
}
