package keyspace

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// The value of an Entry. A string is bytes, or an int64 when the bytes are
// its canonical decimal form (Redis's "int" encoding): a CL.THROTTLE TAT is
// 19 digits as text and 8 bytes as a number, which keeps the throttle
// key's entry in a 48-byte object (entry_alloc.go). Reading gives back
// exactly the bytes that were written: only strings that resp.ParseInt
// (Redis's string2ll) accepts, which are those strconv.FormatInt
// produces, are stored as numbers.

// valueKind is what an Entry holds.
type valueKind uint8

const (
	valStr valueKind = iota // bytes at ptr, len and cap in n
	valBig                  // bytes of 4 GB or more: ptr is a *[]byte
	valInt                  // the int64 in n
	valZSet
	valHash
	valList
	valSet
	valWindow
)

// isString reports whether the value is a string (bytes or int).
func (e *Entry) IsString() bool { return e.kind <= valInt }

// hasBytes reports whether the value is a string kept as bytes.
func (e *Entry) HasBytes() bool { return e.kind <= valBig }

// str returns the string value's bytes; for an int it formats them into a
// new slice, so hot readers use strTo or intVal instead.
func (e *Entry) Str() []byte {
	if e.kind == valInt {
		return strconv.AppendInt(nil, int64(e.n), 10)
	}
	return e.StrBytes()
}

// strBytes is the byte form's slice (hasBytes only).
func (e *Entry) StrBytes() []byte {
	if e.kind == valBig {
		return *(*[]byte)(e.ptr)
	}
	return unsafe.Slice((*byte)(e.ptr), e.n>>32)[:uint32(e.n)]
}

// strTo returns the string value's bytes, formatting an int into buf.
func (e *Entry) StrTo(buf *[20]byte) []byte {
	if e.kind == valInt {
		return strconv.AppendInt(buf[:0], int64(e.n), 10)
	}
	return e.StrBytes()
}

// strLen is the length of the string value.
func (e *Entry) StrLen() int {
	if e.kind == valInt {
		var buf [20]byte
		return len(strconv.AppendInt(buf[:0], int64(e.n), 10))
	}
	return len(e.StrBytes())
}

// strCap is the capacity of the string value's buffer (0 for an int).
func (e *Entry) StrCap() int {
	if e.HasBytes() {
		return cap(e.StrBytes())
	}
	return 0
}

// intVal returns the value as an int64 when it is stored as one.
func (e *Entry) IntVal() (int64, bool) { return int64(e.n), e.kind == valInt }

// setStr makes b the string value (b is kept, not copied). A string too
// long for 32-bit length and capacity (proto-max-bulk-len may be raised
// past 4 GB) keeps its slice header in an allocation of its own.
func (e *Entry) SetStr(b []byte) {
	if uint64(cap(b)) > math.MaxUint32 {
		h := new([]byte) // not &b: that would move every b to the heap
		*h = b
		e.ptr, e.n, e.kind = unsafe.Pointer(h), 0, valBig
		return
	}
	e.ptr, e.n, e.kind = unsafe.Pointer(unsafe.SliceData(b)), uint64(len(b))|uint64(cap(b))<<32, valStr
}

// setInt makes v the string value, as the bytes of its decimal form.
func (e *Entry) SetInt(v int64) { e.ptr, e.n, e.kind = nil, uint64(v), valInt }

// mutableStr returns the string value as bytes the caller may append to
// or change in place, turning an int into its bytes first.
func (e *Entry) MutableStr() []byte {
	if e.kind == valInt {
		e.SetStr(e.Str())
	}
	return e.StrBytes()
}

// obj returns the aggregate value, or nil for a string.
func (e *Entry) Obj() any {
	switch e.kind {
	case valZSet:
		return (*ZSet)(e.ptr)
	case valHash:
		return (*Hash)(e.ptr)
	case valList:
		return (*List)(e.ptr)
	case valSet:
		return (*Set)(e.ptr)
	case valWindow:
		return (*Window)(e.ptr)
	}
	return nil
}

// setObj makes o, a *ZSet, *Hash, *List, *Set or *Window, the value.
func (e *Entry) SetObj(o any) {
	switch v := o.(type) {
	case *ZSet:
		e.ptr, e.kind = unsafe.Pointer(v), valZSet
	case *Hash:
		e.ptr, e.kind = unsafe.Pointer(v), valHash
	case *List:
		e.ptr, e.kind = unsafe.Pointer(v), valList
	case *Set:
		e.ptr, e.kind = unsafe.Pointer(v), valSet
	case *Window:
		e.ptr, e.kind = unsafe.Pointer(v), valWindow
	default:
		panic(fmt.Sprintf("cell: %T stored as a value", o)) // a bug in this package
	}
	e.n = 0
}
