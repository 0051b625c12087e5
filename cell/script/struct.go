package script

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The struct library (Roberto Ierusalimschy's struct.c, as Redis bundles
// it): pack, unpack and size over a format string. Sizes are those of
// x86-64: short 2, int 4, long and size_t 8; the native byte order is
// little-endian and the default alignment 1.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structHeader struct {
	big   bool
	align int
}

// structFormat walks a format string, keeping the position for errors.
type structFormat struct {
	L   *lua.LState
	fn  string // "pack", "unpack", "size": for argument errors
	fmt string
	i   int
}

func argError(L *lua.LState, n int, fn, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, fn, msg)
}

// num reads an optional decimal number after an option, df if none.
func (f *structFormat) num(df int) int {
	if f.i >= len(f.fmt) || !isDigit(f.fmt[f.i]) {
		return df
	}
	a := 0
	for f.i < len(f.fmt) && isDigit(f.fmt[f.i]) {
		d := int(f.fmt[f.i] - '0')
		if a > (math.MaxInt32/10) || a*10 > math.MaxInt32-d {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// size is optsize: the size of an option, reading its count.
func (f *structFormat) size(opt byte) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.num(1)
	case 'i', 'I':
		sz := f.num(4)
		if sz > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func toAlign(pos int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

// control handles the options that are not data: byte order, alignment,
// spaces; anything else is an invalid option.
func (f *structFormat) control(opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.big = true
	case '<':
		h.big = false
	case '!':
		a := f.num(structMaxAlign)
		if a&(a-1) != 0 || a == 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(f.L, 1, f.fn, "invalid format option '"+string(opt)+"'")
	}
}

func (st *state) structLib() *lua.LTable {
	L := st.L
	t := L.CreateTable(0, 16)
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

func structPack(L *lua.LState) int {
	f := &structFormat{L: L, fn: "pack", fmt: L.CheckString(1)}
	h := structHeader{align: 1}
	arg := 2
	var out []byte
	total := 0
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		pad := toAlign(total, &h, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			out = append(out, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := float64(L.CheckNumber(arg))
			arg++
			var v uint64
			if n < 0 {
				v = uint64(int64(n))
			} else {
				v = uint64(n)
			}
			buf := make([]byte, size)
			if h.big {
				for i := size - 1; i >= 0; i-- {
					buf[i] = byte(v)
					v >>= 8
				}
			} else {
				for i := 0; i < size; i++ {
					buf[i] = byte(v)
					v >>= 8
				}
			}
			out = append(out, buf...)
		case 'x':
			out = append(out, 0)
		case 'f':
			bits := math.Float32bits(float32(L.CheckNumber(arg)))
			arg++
			out = appendUint(out, uint64(bits), 4, h.big)
		case 'd':
			bits := math.Float64bits(float64(L.CheckNumber(arg)))
			arg++
			out = appendUint(out, bits, 8, h.big)
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "pack", "string too short")
			}
			out = append(out, s[:size]...)
			if opt == 's' {
				out = append(out, 0)
				size++
			}
		default:
			f.control(opt, &h)
		}
		total += size
		if len(out) > maxStringLen {
			L.RaiseError("resulting string too large")
		}
	}
	L.Push(lua.LString(out))
	return 1
}

func appendUint(out []byte, v uint64, size int, big bool) []byte {
	var b [8]byte
	if big {
		binary.BigEndian.PutUint64(b[:], v)
		return append(out, b[8-size:]...)
	}
	binary.LittleEndian.PutUint64(b[:], v)
	return append(out, b[:size]...)
}

func structUnpack(L *lua.LState) int {
	f := &structFormat{L: L, fn: "unpack", fmt: L.CheckString(1)}
	data := L.CheckString(2)
	ld := len(data)
	start := L.OptInt(3, 1)
	if start < 1 || start-1 > ld {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos := start - 1
	h := structHeader{align: 1}
	var res []lua.LValue
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		pos += toAlign(pos, &h, opt, size)
		if size > ld || pos > ld-size {
			argError(L, 2, "unpack", "data string too short")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			var l uint64
			if h.big {
				for i := 0; i < size; i++ {
					l = l<<8 | uint64(data[pos+i])
				}
			} else {
				for i := size - 1; i >= 0; i-- {
					l = l<<8 | uint64(data[pos+i])
				}
			}
			if opt >= 'a' && opt <= 'z' && size*8-1 < 64 {
				mask := ^uint64(0) << (size*8 - 1)
				if l&mask != 0 {
					l |= mask
				}
				res = append(res, lua.LNumber(float64(int64(l))))
			} else {
				res = append(res, lua.LNumber(float64(l)))
			}
		case 'x':
		case 'f':
			var v uint32
			if h.big {
				v = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			} else {
				v = binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			}
			res = append(res, lua.LNumber(math.Float32frombits(v)))
		case 'd':
			var v uint64
			if h.big {
				v = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			} else {
				v = binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			}
			res = append(res, lua.LNumber(math.Float64frombits(v)))
		case 'c':
			if size == 0 {
				var prev lua.LNumber
				ok := false
				if len(res) > 0 {
					prev, ok = res[len(res)-1].(lua.LNumber)
				}
				if !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				res = res[:len(res)-1]
				if prev < 0 || float64(prev) > float64(ld) {
					argError(L, 2, "unpack", "data string too short")
				}
				size = int(prev)
				if pos > ld-size {
					argError(L, 2, "unpack", "data string too short")
				}
			}
			res = append(res, lua.LString(data[pos:pos+size]))
		case 's':
			end := -1
			for i := pos; i < ld; i++ {
				if data[i] == 0 {
					end = i
					break
				}
			}
			if end < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = end - pos + 1
			res = append(res, lua.LString(data[pos:end]))
		default:
			f.control(opt, &h)
		}
		pos += size
	}
	for _, v := range res {
		L.Push(v)
	}
	L.Push(lua.LNumber(pos + 1))
	return len(res) + 1
}

func structSize(L *lua.LState) int {
	f := &structFormat{L: L, fn: "size", fmt: L.CheckString(1)}
	h := structHeader{align: 1}
	pos := 0
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		pos += toAlign(pos, &h, opt, size)
		if opt == 's' {
			argError(L, 1, "size", "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.control(opt, &h)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}

func isAlnum(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
