package rdb

import (
	"errors"
	"slices"
)

// LZF, the compression of Redis's RDB strings (a string is stored
// compressed when that saves at least 4 bytes). The format: a control byte
// c; c < 32 starts a literal run of c+1 bytes; otherwise c>>5 (7 meaning
// "7 plus the next byte") is a back reference's length minus 2, and the
// low 5 bits of c with the following byte are its distance minus 1 (at most
// 8191). Both directions are written here from that description.

var errLZF = errors.New("corrupt LZF data")

// lzfMaxRatio bounds how much a compressed byte can expand: the longest
// back reference (3 bytes) makes 264. A stored uncompressed length above
// this multiple of the compressed one is corrupt, so decompression never
// allocates for a forged length.
const lzfMaxRatio = 88

// lzfDecompress appends to dst what in expands to, which must be exactly
// n bytes.
func lzfDecompress(dst, in []byte, n int) ([]byte, error) {
	if n < 0 || n > len(in)*lzfMaxRatio {
		return nil, errLZF
	}
	base := len(dst)
	out := slices.Grow(dst, n)
	end := base + n
	for i := 0; i < len(in); {
		c := int(in[i])
		i++
		if c < 32 {
			l := c + 1
			if i+l > len(in) || len(out)+l > end {
				return nil, errLZF
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := c >> 5
		if l == 7 {
			if i >= len(in) {
				return nil, errLZF
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errLZF
		}
		ref := len(out) - (c&0x1f)<<8 - int(in[i]) - 1
		i++
		l += 2
		if ref < base || len(out)+l > end {
			return nil, errLZF
		}
		for k := 0; k < l; k++ { // byte by byte: a reference may overlap its output
			out = append(out, out[ref+k])
		}
	}
	if len(out) != end {
		return nil, errLZF
	}
	return out, nil
}

const (
	lzfHashLog = 14
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 264
	lzfMaxLit  = 32
)

// lzfCompress compresses in greedily (a hash of each 3-byte sequence points
// at its last position). It returns nil when the result would be longer than
// max bytes, as Redis's lzf_compress returns 0.
func lzfCompress(in []byte, max int) []byte {
	if len(in) < 4 || max <= 0 {
		return nil
	}
	var htab [1 << lzfHashLog]int32
	out := make([]byte, 0, max)
	lit := 0 // literals pending, ending at ip
	flush := func(ip int) {
		for lit > 0 {
			l := min(lit, lzfMaxLit)
			start := ip - lit
			out = append(out, byte(l-1))
			out = append(out, in[start:start+l]...)
			lit -= l
		}
	}
	hash := func(p int) uint32 {
		v := uint32(in[p])<<16 | uint32(in[p+1])<<8 | uint32(in[p+2])
		return v * 2654435761 >> (32 - lzfHashLog)
	}
	ip := 0
	for ip+2 < len(in) {
		if len(out) > max {
			return nil
		}
		h := hash(ip)
		ref := int(htab[h]) - 1
		htab[h] = int32(ip + 1)
		off := ip - ref - 1
		if ref < 0 || off >= lzfMaxOff || in[ref] != in[ip] || in[ref+1] != in[ip+1] || in[ref+2] != in[ip+2] {
			lit++
			ip++
			if lit == lzfMaxLit {
				flush(ip)
			}
			continue
		}
		maxl := min(len(in)-ip, lzfMaxRef)
		l := 3
		for l < maxl && in[ref+l] == in[ip+l] {
			l++
		}
		flush(ip)
		if n := l - 2; n < 7 {
			out = append(out, byte(n<<5|off>>8), byte(off))
		} else {
			out = append(out, byte(7<<5|off>>8), byte(n-7), byte(off))
		}
		// Index the positions inside the match, so later text can refer to it.
		for p := ip + 1; p < ip+l && p+2 < len(in); p++ {
			htab[hash(p)] = int32(p + 1)
		}
		ip += l
	}
	lit += len(in) - ip
	flush(len(in))
	if len(out) > max {
		return nil
	}
	return out
}
