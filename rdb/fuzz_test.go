package rdb

import (
	"encoding/binary"
	"testing"
)

// FuzzReader: any input is read to an error or a clean end, with and
// without its size known, borrowing or not; never a panic.
func FuzzReader(f *testing.F) {
	f.Add(oldEncodingsFile())
	f.Add(writerFile(f))
	f.Add([]byte("REDIS0010\xff"))
	f.Add(moduleFile(f))
	f.Fuzz(func(t *testing.T, p []byte) {
		readAll(p, int64(len(p)))
		readAll(p, -1)
		readAllBorrow(p, -1, true)
	})
}

// FuzzDecodeDump: any value body, given a valid trailer (else the
// checksum refuses nearly every input), decodes or fails; a decoded value
// encodes to a payload that decodes to the same value.
func FuzzDecodeDump(f *testing.F) {
	for _, k := range testKeyspace() {
		p, _ := EncodeDump(&k.v)
		if len(p) < 2000 {
			f.Add(p[:len(p)-10])
		}
	}
	f.Add(ziplist("a", int64(-70000), "b", int64(7)))
	for _, c := range moduleCases {
		p, _ := EncodeDump(&c.v)
		f.Add(p[:len(p)-10])
	}
	f.Add([]byte{typeModule2, 0, 0})                            // id 0
	f.Add([]byte{typeModule2, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 9}) // unknown opcode
	f.Add([]byte{typeModule2, 0x81, 1, 2, 3, 4, 5, 6, 7, 8, 5, 0x40, 50, 'x'})
	f.Fuzz(func(t *testing.T, body []byte) {
		p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), Version)
		p = binary.LittleEndian.AppendUint64(p, CRC64(0, p))
		v, err := DecodeDump(p)
		if err != nil || v.Type == TypeStream {
			return
		}
		q, err := EncodeDump(&v)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := DecodeDump(q)
		if err != nil || canonical(v2) != canonical(v) {
			t.Fatalf("re-encoded payload: %v, %s != %s", err, canonical(v2), canonical(v))
		}
	})
}
