// Package hashslot is Redis Cluster's key-to-slot mapping, pure and
// dependency-free so that the server (cell) and the load generator (bench)
// place keys with the very same code.
package hashslot

import "bytes"

// Hash slots of Redis Cluster: a key belongs to slot CRC16(key) mod 16384,
// where CRC16 is the XMODEM variant (polynomial 0x1021, initial value 0, no
// reflection) that Redis's crc16.c implements, so a client computes the same
// slot for a key whether it talks to Redis or to us.
//
// A key holding a hash tag hashes only the tag: the bytes between its first
// '{' and the first '}' after it, when there is at least one byte between
// them. "{user1000}.following" and "{user1000}.followers" share a slot; "{}a"
// and "a{" hash whole.

// Count is the number of hash slots.
const Count = 16384

// crc16Tables are the XMODEM tables, computed once from the polynomial,
// for slicing by 4: crc16Tables[k][v] is the register after byte v is fed
// into a zero register and followed by k zero bytes. The CRC is linear, so
// four bytes combine with one lookup each instead of four dependent steps
// (the command path computes a slot per key several times in cluster mode).
var crc16Tables = func() (t [4][256]uint16) {
	for i := range t[0] {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < 4; k++ {
		for i := range t[k] {
			p := t[k-1][i]
			t[k][i] = p<<8 ^ t[0][p>>8]
		}
	}
	return t
}()

// crc16 is CRC-16/XMODEM of b.
func crc16(b []byte) uint16 {
	t := &crc16Tables
	var c uint16
	for len(b) >= 4 {
		c = t[3][byte(c>>8)^b[0]] ^ t[2][byte(c)^b[1]] ^ t[1][b[2]] ^ t[0][b[3]]
		b = b[4:]
	}
	for _, x := range b {
		c = c<<8 ^ t[0][byte(c>>8)^x]
	}
	return c
}

// Of is the hash slot of key, hash tags included.
func Of(key []byte) int {
	return int(crc16(hashTag(key)) & (Count - 1))
}

// hashTag returns the part of key that is hashed: the tag if there is a
// non-empty one, else the whole key.
func hashTag(key []byte) []byte {
	s := bytes.IndexByte(key, '{')
	if s < 0 {
		return key
	}
	e := bytes.IndexByte(key[s+1:], '}')
	if e <= 0 { // none, or an empty tag
		return key
	}
	return key[s+1 : s+1+e]
}
