package cell

// Hash slots of Redis Cluster: a key belongs to slot CRC16(key) mod 16384,
// where CRC16 is the XMODEM variant (polynomial 0x1021, initial value 0, no
// reflection) that Redis's crc16.c implements, so a client computes the same
// slot for a key whether it talks to Redis or to us.
//
// A key holding a hash tag hashes only the tag: the bytes between its first
// '{' and the first '}' after it, when there is at least one byte between
// them. "{user1000}.following" and "{user1000}.followers" share a slot; "{}a"
// and "a{" hash whole.

// ClusterSlots is the number of hash slots.
const ClusterSlots = 16384

// crc16Table is the XMODEM table, computed once from the polynomial.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16 is CRC-16/XMODEM of b.
func crc16(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ crc16Table[byte(c>>8)^x]
	}
	return c
}

// KeySlot is the hash slot of key, hash tags included.
func KeySlot(key []byte) int {
	return int(crc16(hashTag(key)) & (ClusterSlots - 1))
}

// hashTag returns the part of key that is hashed: the tag if there is a
// non-empty one, else the whole key.
func hashTag(key []byte) []byte {
	for s, c := range key {
		if c != '{' {
			continue
		}
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e == s+1 {
					return key
				}
				return key[s+1 : e]
			}
		}
		return key
	}
	return key
}
