package script

import (
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// cjson as Redis bundles it (lua-cjson 2.1.0 with its default settings):
// numbers printed with "%.14g", '/' escaped, JSON null as the cjson.null
// light userdata, sparse arrays padded with null up to a ratio, and
// decode errors that name the token found and its 1-based position.

const (
	cjsonMaxDepth    = 1000
	cjsonSparseRatio = 2
	cjsonSparseSafe  = 10
)

func (st *state) cjsonLib() *lua.LTable {
	L := st.L
	st.null = L.NewUserData()
	t := L.CreateTable(0, 16)
	t.RawSetString("encode", L.NewFunction(st.cjsonEncode))
	t.RawSetString("decode", L.NewFunction(st.cjsonDecode))
	t.RawSetString("null", st.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	// The configuration functions are accepted and report the defaults;
	// the settings themselves are fixed.
	for name, vals := range map[string][]lua.LValue{
		"encode_sparse_array":     {lua.LFalse, lua.LNumber(cjsonSparseRatio), lua.LNumber(cjsonSparseSafe)},
		"encode_max_depth":        {lua.LNumber(cjsonMaxDepth)},
		"decode_max_depth":        {lua.LNumber(cjsonMaxDepth)},
		"encode_number_precision": {lua.LNumber(14)},
		"encode_keep_buffer":      {lua.LTrue},
		"encode_invalid_numbers":  {lua.LFalse},
		"decode_invalid_numbers":  {lua.LTrue},
	} {
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			for _, v := range vals {
				L.Push(v)
			}
			return len(vals)
		}))
	}
	// cjson.new returns a separate instance: here a copy of the module.
	t.RawSetString("new", L.NewFunction(func(L *lua.LState) int {
		c := L.NewTable()
		t.ForEach(func(k, v lua.LValue) { c.RawSet(k, v) })
		L.Push(c)
		return 1
	}))
	return t
}

func (st *state) cjsonEncode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	var b strings.Builder
	st.jsonValue(L, &b, L.Get(1), 0)
	L.Push(lua.LString(b.String()))
	return 1
}

func encodeError(L *lua.LState, v lua.LValue, reason string) {
	L.RaiseError("Cannot serialise %s: %s", v.Type().String(), reason)
}

func (st *state) jsonValue(L *lua.LState, b *strings.Builder, v lua.LValue, depth int) {
	if b.Len() > maxStringLen {
		L.RaiseError("resulting string too large")
	}
	switch x := v.(type) {
	case lua.LString:
		jsonString(b, string(x))
	case lua.LNumber:
		jsonNumber(L, b, x)
	case lua.LBool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *lua.LNilType:
		b.WriteString("null")
	case *lua.LUserData:
		if x == st.null {
			b.WriteString("null")
			return
		}
		encodeError(L, v, "type not supported")
	case *lua.LTable:
		depth++
		if depth > cjsonMaxDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		n := arrayLength(L, x)
		if n > 0 {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				st.jsonValue(L, b, x.RawGetInt(i), depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		if keys, ok := st.luaKeyOrder(x); ok {
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				jsonString(b, string(k.(lua.LString)))
				b.WriteByte(':')
				st.jsonValue(L, b, x.RawGet(k), depth)
			}
			b.WriteByte('}')
			return
		}
		first := true
		k, val := x.Next(lua.LNil)
		for k != lua.LNil {
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch kk := k.(type) {
			case lua.LNumber:
				b.WriteByte('"')
				jsonNumber(L, b, kk)
				b.WriteString("\":")
			case lua.LString:
				jsonString(b, string(kk))
				b.WriteByte(':')
			default:
				encodeError(L, k, "table key must be a number or string")
			}
			st.jsonValue(L, b, val, depth)
			k, val = x.Next(k)
		}
		b.WriteByte('}')
	default:
		encodeError(L, v, "type not supported")
	}
}

// arrayLength is lua-cjson's array test: a table whose keys are all
// positive integers is an array of its largest key, unless excessively
// sparse; any other key makes it an object (-1). An empty table is 0,
// encoded as an object.
func arrayLength(L *lua.LState, t *lua.LTable) int {
	max, items := 0, 0
	k, _ := t.Next(lua.LNil)
	for k != lua.LNil {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || float64(n) != float64(int64(n)) {
			return -1
		}
		if int(n) > max {
			max = int(n)
		}
		items++
		k, _ = t.Next(k)
	}
	if max > items*cjsonSparseRatio && max > cjsonSparseSafe {
		encodeError(L, t, "excessively sparse array")
	}
	return max
}

func jsonNumber(L *lua.LState, b *strings.Builder, n lua.LNumber) {
	f := float64(n)
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		encodeError(L, n, "must not be NaN or Inf")
	}
	b.WriteString(fmt14(f))
}

func jsonString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// Decoding.

type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenNames = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN"}

type jsonToken struct {
	typ   jsonTokenType
	index int
	str   string
	num   float64
	b     bool
	err   string
}

type jsonDecoder struct {
	st    *state
	L     *lua.LState
	data  string
	pos   int
	depth int
}

func (st *state) cjsonDecode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	data := L.CheckString(1)
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	d := &jsonDecoder{st: st, L: L, data: data}
	tok := d.next()
	v := d.value(tok)
	if tok = d.next(); tok.typ != tEnd {
		d.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.err
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) peek() byte {
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

func (d *jsonDecoder) next() jsonToken {
	for {
		c := d.peek()
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.pos++
	}
	tok := jsonToken{index: d.pos}
	c := d.peek()
	single := map[byte]jsonTokenType{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ':': tColon, ',': tComma}
	if t, ok := single[c]; ok {
		tok.typ = t
		d.pos++
		return tok
	}
	rest := d.data[d.pos:]
	switch {
	case c == 0:
		tok.typ = tEnd
	case c == '"':
		d.stringToken(&tok)
	case c == '-' || (c >= '0' && c <= '9'):
		d.numberToken(&tok)
	case strings.HasPrefix(rest, "true"):
		tok.typ, tok.b = tBoolean, true
		d.pos += 4
	case strings.HasPrefix(rest, "false"):
		tok.typ = tBoolean
		d.pos += 5
	case strings.HasPrefix(rest, "null"):
		tok.typ = tNull
		d.pos += 4
	default:
		tok.typ, tok.err = tError, "invalid token"
	}
	return tok
}

func (d *jsonDecoder) numberToken(tok *jsonToken) {
	i := d.pos
	s := d.data
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits > 0 && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	if digits == 0 {
		tok.typ, tok.err = tError, "invalid number"
		return
	}
	f, err := strconv.ParseFloat(s[d.pos:i], 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			tok.typ, tok.err = tError, "invalid number"
			return
		}
	}
	tok.typ, tok.num = tNumber, f
	d.pos = i
}

func (d *jsonDecoder) stringToken(tok *jsonToken) {
	d.pos++
	var b []byte
	for {
		c := d.peek()
		if c == '"' {
			break
		}
		if c == 0 {
			tok.typ, tok.err, tok.index = tError, "unexpected end of string", d.pos
			return
		}
		if c == '\\' {
			var e byte
			if d.pos+1 < len(d.data) {
				e = d.data[d.pos+1]
			}
			switch e {
			case '"', '\\', '/':
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'u':
				r, n, ok := d.unicodeEscape()
				if !ok {
					tok.typ, tok.err, tok.index = tError, "invalid unicode escape code", d.pos
					return
				}
				b = utf8.AppendRune(b, r)
				d.pos += n
				continue
			default:
				tok.typ, tok.err, tok.index = tError, "invalid escape code", d.pos
				return
			}
			b = append(b, e)
			d.pos += 2
			continue
		}
		b = append(b, c)
		d.pos++
	}
	d.pos++
	tok.typ, tok.str = tString, string(b)
}

// unicodeEscape decodes \uXXXX at pos, with a following low surrogate
// when the first is a high one; n is the bytes consumed.
func (d *jsonDecoder) unicodeEscape() (r rune, n int, ok bool) {
	hex4 := func(at int) (rune, bool) {
		if at+6 > len(d.data) || d.data[at] != '\\' || d.data[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(d.data[at+2:at+6], 16, 32)
		return rune(v), err == nil
	}
	r, ok = hex4(d.pos)
	if !ok {
		return 0, 0, false
	}
	if r >= 0xDC00 && r <= 0xDFFF {
		return 0, 0, false
	}
	if r >= 0xD800 && r <= 0xDBFF {
		lo, ok := hex4(d.pos + 6)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0, false
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, true
	}
	return r, 6, true
}

func (d *jsonDecoder) value(tok jsonToken) lua.LValue {
	L := d.L
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.st.null
	case tObjBegin:
		d.descend()
		t := L.CreateTable(0, 4)
		tok = d.next()
		if tok.typ == tObjEnd {
			d.depth--
			return t
		}
		for {
			if tok.typ != tString {
				d.fail("object key string", tok)
			}
			key := tok.str
			if tok = d.next(); tok.typ != tColon {
				d.fail("colon", tok)
			}
			t.RawSetString(key, d.value(d.next()))
			tok = d.next()
			if tok.typ == tObjEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or object end", tok)
			}
			tok = d.next()
		}
	case tArrBegin:
		d.descend()
		t := L.CreateTable(4, 0)
		tok = d.next()
		if tok.typ == tArrEnd {
			d.depth--
			return t
		}
		for i := 1; ; i++ {
			t.RawSetInt(i, d.value(tok))
			tok = d.next()
			if tok.typ == tArrEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or array end", tok)
			}
			tok = d.next()
		}
	}
	d.fail("value", tok)
	return lua.LNil
}

func (d *jsonDecoder) descend() {
	d.depth++
	if d.depth > cjsonMaxDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}
