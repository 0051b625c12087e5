package cell

import (
	"strconv"
	"unsafe"
)

// The string value of an Entry: bytes, or an int64 when the bytes are its
// canonical decimal form (Redis's "int" encoding). A CL.THROTTLE TAT is 19
// digits as text and 8 bytes as a number, which keeps the throttle key's
// entry in a 64-byte object (entry_alloc.go). Reading gives back exactly
// the bytes that were written: only strings that strconv.FormatInt would
// produce are stored as numbers, which is what resp.ParseInt (Redis's
// string2ll) accepts.

// str returns the string value's bytes; for an int it formats them into a
// new slice, so hot readers use strTo or intVal instead.
func (e *Entry) str() []byte {
	if e.isInt {
		return strconv.AppendInt(nil, e.intBits(), 10)
	}
	return unsafe.Slice(e.sptr, e.scap)[:e.slen]
}

// strTo returns the string value's bytes, formatting an int into buf.
func (e *Entry) strTo(buf *[20]byte) []byte {
	if e.isInt {
		return strconv.AppendInt(buf[:0], e.intBits(), 10)
	}
	return unsafe.Slice(e.sptr, e.scap)[:e.slen]
}

// strLen is the length of the string value.
func (e *Entry) strLen() int {
	if e.isInt {
		var buf [20]byte
		return len(strconv.AppendInt(buf[:0], e.intBits(), 10))
	}
	return int(e.slen)
}

// strCap is the capacity of the string value's buffer (0 for an int).
func (e *Entry) strCap() int {
	if e.isInt {
		return 0
	}
	return int(e.scap)
}

// intVal returns the value as an int64 when it is stored as one.
func (e *Entry) intVal() (int64, bool) { return e.intBits(), e.isInt }

func (e *Entry) intBits() int64 { return int64(uint64(e.slen) | uint64(e.scap)<<32) }

// setStr makes b the string value (b is kept, not copied).
func (e *Entry) setStr(b []byte) {
	e.sptr, e.slen, e.scap, e.isInt = unsafe.SliceData(b), uint32(len(b)), uint32(cap(b)), false
}

// setInt makes v the string value, as the bytes of its decimal form.
func (e *Entry) setInt(v int64) {
	e.sptr, e.slen, e.scap, e.isInt = nil, uint32(uint64(v)), uint32(uint64(v)>>32), true
}

// clearStr drops the string value (for an aggregate).
func (e *Entry) clearStr() { e.sptr, e.slen, e.scap, e.isInt = nil, 0, 0, false }

// mutableStr returns the string value as bytes the caller may append to
// or change in place, turning an int into its bytes first.
func (e *Entry) mutableStr() []byte {
	if e.isInt {
		e.setStr(e.str())
	}
	return e.str()
}
