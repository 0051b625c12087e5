package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// The compact encodings Redis stores as one string: ziplist, listpack,
// intset and zipmap. Each decoder checks its header against the blob's
// length and every entry against the end, so a corrupt blob is an error,
// never an out-of-range read. Integer entries come back as decimal text;
// string entries are sub-slices of the blob (the blob is ours).

var errTruncatedBlob = errors.New("entry runs past the end of its blob")

// ints collects integer entries' text, each a capped slice, in *text: a
// reader's arena while it borrows, else a buffer of their own. size is the
// blob's length: room for twice it (an integer entry takes at least half
// the bytes of its text with its length) is made once, at the first
// entry, so the text is not grown entry by entry.
type ints struct {
	text  *[]byte
	size  int
	sized bool
}

// newInts collects into *text, or with text nil into a buffer of its own.
func newInts(text *[]byte, size int) ints {
	if text == nil {
		text = new([]byte)
	}
	return ints{text: text, size: size}
}

func (a *ints) add(v int64) []byte {
	if !a.sized {
		*a.text = slices.Grow(*a.text, 2*a.size+20)
		a.sized = true
	}
	start := len(*a.text)
	b := strconv.AppendInt(*a.text, v, 10)
	*a.text = b
	return b[start:len(b):len(b)]
}

// ziplistEntries appends a ziplist's entries to out, the text of its
// integers to *text (newInts).
//
//	zlbytes u32 | zltail u32 | zllen u16 | entries | 0xff
//	entry: prevlen (1 byte, or 0xfe + u32) | encoding | data
func ziplistEntries(b []byte, out [][]byte, text *[]byte) ([][]byte, error) {
	if len(b) < 11 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xff {
		return nil, errors.New("bad ziplist header")
	}
	want := int(binary.LittleEndian.Uint16(b[8:]))
	nums := newInts(text, len(b))
	n := 0
	p := 10
	for b[p] != 0xff {
		if b[p] == 0xfe {
			p += 5
		} else {
			p++
		}
		if p >= len(b)-1 {
			return nil, errTruncatedBlob
		}
		e := b[p]
		var slen, hdr int
		var num int64
		isNum := true
		switch {
		case e>>6 == 0:
			slen, hdr, isNum = int(e&0x3f), 1, false
		case e>>6 == 1:
			if p+2 > len(b) {
				return nil, errTruncatedBlob
			}
			slen, hdr, isNum = int(e&0x3f)<<8|int(b[p+1]), 2, false
		case e>>6 == 2:
			if p+5 > len(b) {
				return nil, errTruncatedBlob
			}
			slen, hdr, isNum = int(binary.BigEndian.Uint32(b[p+1:])), 5, false
		case e == 0xc0, e == 0xd0, e == 0xe0, e == 0xf0, e == 0xfe:
			size := ziplistIntSize(e)
			if p+1+size > len(b) {
				return nil, errTruncatedBlob
			}
			num = leInt(b[p+1 : p+1+size])
			hdr = 1 + size
		case e >= 0xf1 && e <= 0xfd:
			num, hdr = int64(e&0x0f)-1, 1
		default:
			return nil, fmt.Errorf("bad ziplist entry encoding %#x", e)
		}
		if isNum {
			out = append(out, nums.add(num))
			p += hdr
		} else {
			if slen < 0 || p+hdr+slen > len(b)-1 {
				return nil, errTruncatedBlob
			}
			out = append(out, b[p+hdr:p+hdr+slen:p+hdr+slen])
			p += hdr + slen
		}
		if p > len(b)-1 {
			return nil, errTruncatedBlob
		}
		n++
	}
	if p != len(b)-1 {
		return nil, errors.New("ziplist end marker before its end")
	}
	if want != 0xffff && want != n {
		return nil, errors.New("ziplist count does not match its entries")
	}
	return out, nil
}

// ziplistIntSize is the data size of a ziplist integer encoding.
func ziplistIntSize(e byte) int {
	switch e {
	case 0xc0:
		return 2
	case 0xd0:
		return 4
	case 0xe0:
		return 8
	case 0xf0:
		return 3
	}
	return 1
}

// leInt reads a little-endian signed integer of 1 to 8 bytes.
func leInt(p []byte) int64 {
	var u uint64
	for i := len(p) - 1; i >= 0; i-- {
		u = u<<8 | uint64(p[i])
	}
	shift := 64 - 8*uint(len(p))
	return int64(u<<shift) >> shift
}

// listpackEntries appends a listpack's entries to out, the text of its
// integers to *text (newInts).
//
//	total u32 | count u16 | entries | 0xff
//	entry: encoding+data | backlen (1-5 bytes, the entry's length)
func listpackEntries(b []byte, out [][]byte, text *[]byte) ([][]byte, error) {
	want, err := listpackHeader(b)
	if err != nil {
		return nil, err
	}
	nums := newInts(text, len(b))
	n := 0
	for p := 6; p < len(b)-1; n++ {
		str, num, isNum, next, err := listpackEntry(b, p)
		if err != nil {
			return nil, err
		}
		if isNum {
			str = nums.add(num)
		}
		out = append(out, str)
		p = next
	}
	if want != 0xffff && want != n {
		return nil, errors.New("listpack count does not match its entries")
	}
	return out, nil
}

// listpackHeader checks a listpack's header and end marker, and returns
// the entry count it states (0xffff: too many to state).
func listpackHeader(b []byte) (int, error) {
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xff {
		return 0, errors.New("bad listpack header")
	}
	return int(binary.LittleEndian.Uint16(b[4:])), nil
}

// listpackEntry reads the entry of listpack b at p: a string (a capped
// sub-slice of b) or an integer (isNum), and where the next entry starts.
func listpackEntry(b []byte, p int) (str []byte, num int64, isNum bool, next int, err error) {
	end := len(b) - 1
	e := b[p]
	var slen, hdr int
	switch {
	case e&0x80 == 0:
		num, hdr, isNum = int64(e), 1, true
	case e&0xc0 == 0x80:
		slen, hdr = int(e&0x3f), 1
	case e&0xe0 == 0xc0:
		if p+2 > end {
			return nil, 0, false, 0, errTruncatedBlob
		}
		num = int64(e&0x1f)<<8 | int64(b[p+1])
		if num >= 1<<12 {
			num -= 1 << 13
		}
		hdr, isNum = 2, true
	case e&0xf0 == 0xe0:
		if p+2 > end {
			return nil, 0, false, 0, errTruncatedBlob
		}
		slen, hdr = int(e&0x0f)<<8|int(b[p+1]), 2
	case e == 0xf0:
		if p+5 > end {
			return nil, 0, false, 0, errTruncatedBlob
		}
		slen, hdr = int(binary.LittleEndian.Uint32(b[p+1:])), 5
	case e >= 0xf1 && e <= 0xf4:
		size := [...]int{2, 3, 4, 8}[e-0xf1]
		if p+1+size > end {
			return nil, 0, false, 0, errTruncatedBlob
		}
		num, hdr, isNum = leInt(b[p+1:p+1+size]), 1+size, true
	default:
		return nil, 0, false, 0, fmt.Errorf("bad listpack entry encoding %#x", e)
	}
	l := hdr
	if !isNum {
		if slen < 0 || p+hdr+slen > end {
			return nil, 0, false, 0, errTruncatedBlob
		}
		str = b[p+hdr : p+hdr+slen : p+hdr+slen]
		l += slen
	}
	next = p + l + backlenSize(l)
	if next > end {
		return nil, 0, false, 0, errTruncatedBlob
	}
	return str, num, isNum, next, nil
}

// maxExactInt bounds the integers a float64 holds exactly.
const maxExactInt = 1 << 53

// listpackSelfKeyed appends to out the members of a sorted set's listpack
// b when each is an integer that is also its score (a rate limiter's
// window of timestamps), below 2^53 in magnitude and in strictly rising
// order; false, with out's contents undefined, for any other listpack,
// damaged ones included (listpackEntries then reads it, or says what is
// wrong).
func listpackSelfKeyed(b []byte, out []int64) ([]int64, bool) {
	want, err := listpackHeader(b)
	if err != nil {
		return out, false
	}
	n := 0
	for p := 6; p < len(b)-1; n += 2 {
		_, m, isNum, next, err := listpackEntry(b, p)
		if err != nil || !isNum || m >= maxExactInt || m <= -maxExactInt || next >= len(b)-1 {
			return out, false
		}
		_, score, isNum, next, err := listpackEntry(b, next)
		if err != nil || !isNum || score != m || len(out) > 0 && m <= out[len(out)-1] {
			return out, false
		}
		out = append(out, m)
		p = next
	}
	return out, want == 0xffff || want == n
}

// backlenSize is how many bytes a listpack entry of length l uses to
// store l at its end (lpEncodeBacklen's cut points).
func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// intsetEntries appends an intset's members to out, their text to *text
// (newInts).
//
//	encoding u32 (2, 4 or 8) | length u32 | length little-endian integers
func intsetEntries(b []byte, out [][]byte, text *[]byte) ([][]byte, error) {
	if len(b) < 8 {
		return nil, errors.New("bad intset header")
	}
	size := int(binary.LittleEndian.Uint32(b))
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if size != 2 && size != 4 && size != 8 || uint64(len(b)-8) != n*uint64(size) {
		return nil, errors.New("bad intset header")
	}
	nums := newInts(text, len(b))
	out = slices.Grow(out, int(n))
	for p := 8; p < len(b); p += size {
		out = append(out, nums.add(leInt(b[p:p+size])))
	}
	return out, nil
}

// zipmapEntries appends a zipmap's fields and values, alternating, to out.
//
//	count u8 | (len key len free value free-bytes)* | 0xff
//	len: one byte below 254, or 254 and a u32
func zipmapEntries(b []byte, out [][]byte) ([][]byte, error) {
	if len(b) < 2 || b[len(b)-1] != 0xff {
		return nil, errors.New("bad zipmap")
	}
	p := 1
	end := len(b) - 1
	field := func(free bool) ([]byte, error) {
		if p >= end {
			return nil, errTruncatedBlob
		}
		l := int(b[p])
		switch {
		case l == 254:
			if p+5 > end {
				return nil, errTruncatedBlob
			}
			l = int(binary.LittleEndian.Uint32(b[p+1:]))
			p += 5
		case l == 255:
			return nil, errTruncatedBlob
		default:
			p++
		}
		f := 0
		if free {
			if p >= end {
				return nil, errTruncatedBlob
			}
			f = int(b[p])
			p++
		}
		if l < 0 || p+l+f > end {
			return nil, errTruncatedBlob
		}
		v := b[p : p+l : p+l]
		p += l + f
		return v, nil
	}
	for p < end {
		k, err := field(false)
		if err != nil {
			return nil, err
		}
		v, err := field(true)
		if err != nil {
			return nil, err
		}
		out = append(out, k, v)
	}
	return out, nil
}
