package rdb

import "encoding/binary"

// CRC-64 as Redis computes it (crc64.c, "Jones"): the reflected polynomial
// 0xad93d23594c935a9, initial value 0, no final xor. Go's hash/crc64 always
// inverts before and after, so it is not this CRC without tricks; this is a
// plain slicing-by-8 table implementation of our own.

// jonesPoly is 0xad93d23594c935a9 bit-reversed, for the LSB-first loop.
const jonesPoly = 0x95ac9329ac4bc9b5

var crcTables = makeCRCTables()

func makeCRCTables() *[8][256]uint64 {
	t := new([8][256]uint64)
	for i := 0; i < 256; i++ {
		c := uint64(i)
		for k := 0; k < 8; k++ {
			if c&1 == 1 {
				c = c>>1 ^ jonesPoly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := 0; i < 256; i++ {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// CRC64 extends crc (0 to start) over p, as Redis's crc64(crc, p, len).
func CRC64(crc uint64, p []byte) uint64 {
	t := crcTables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
