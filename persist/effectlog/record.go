package effectlog

import (
	"encoding/binary"
	"hash/crc32"
	"math"
)

// frameHeader is the bytes before a record's payload: its frame length and
// its checksum.
const frameHeader = 8

// maxPayload keeps a frame's length within its uint32 field.
const maxPayload = math.MaxUint32 - frameHeader

// castagnoli is CRC-32C; hash/crc32 uses the CPU's CRC instruction for it.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC is the checksum stored in a frame: CRC-32C over the four length
// bytes, then the payload. The length bytes are folded in by hand so that
// no slice of a local array reaches crc32.Update (which would make it
// escape and cost Append an allocation).
func frameCRC(frameLen uint32, payload []byte) uint32 {
	crc := ^uint32(0)
	for i := 0; i < 4; i++ {
		crc = castagnoli[byte(crc)^byte(frameLen>>(8*i))] ^ (crc >> 8)
	}
	return crc32.Update(^crc, castagnoli, payload)
}

// scanRecords walks the frames of area, a segment's bytes after its header,
// calling fn (if not nil) with each whole record's offset in area and its
// payload. It returns the offset after the last whole record, and whether
// the walk stopped at damage (a length no frame can have, or a checksum
// that does not match) rather than at a zero length or the end of area.
// fn's error stops the walk and is returned.
func scanRecords(area []byte, fn func(off int, payload []byte) error) (end int, damaged bool, err error) {
	off := 0
	for len(area)-off >= frameHeader {
		n := binary.LittleEndian.Uint32(area[off:])
		if n == 0 {
			return off, false, nil
		}
		if n < frameHeader || uint64(n) > uint64(len(area)-off) {
			return off, true, nil
		}
		payload := area[off+frameHeader : off+int(n)]
		if binary.LittleEndian.Uint32(area[off+4:]) != frameCRC(n, payload) {
			return off, true, nil
		}
		if fn != nil {
			if err := fn(off, payload); err != nil {
				return off, false, err
			}
		}
		off += int(n)
	}
	return off, false, nil
}

// nonzeroEnd is the index after the last nonzero byte of b, 0 if b is all
// zeros: the extent of what a cut removes.
func nonzeroEnd(b []byte) int {
	i := len(b)
	for i >= 8 && binary.LittleEndian.Uint64(b[i-8:]) == 0 {
		i -= 8
	}
	for i > 0 && b[i-1] == 0 {
		i--
	}
	return i
}
