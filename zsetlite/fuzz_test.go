package zsetlite

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// byteSource turns fuzz input into the random choices of runOps, so the
// input is the operation sequence: which operation, member, score, range
// and flags. Past the end of the input it goes on with a PCG seeded by the
// input's length, since math/rand's rejection loops never end on zeros.
type byteSource struct {
	data []byte
	rest *rand.PCG
}

func (b *byteSource) Uint64() uint64 {
	if len(b.data) == 0 {
		return b.rest.Uint64()
	}
	var buf [8]byte
	n := copy(buf[:], b.data)
	b.data = b.data[n:]
	return binary.LittleEndian.Uint64(buf[:])
}

func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("\x01ZADD window 1700000000000 1700000000000 ZREMRANGEBYSCORE -inf"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cfg := testConfigs[int(data[0])%len(testConfigs)]
		src := &byteSource{data: data[1:], rest: rand.NewPCG(uint64(len(data)), 1)}
		runOps(t, rand.New(src), cfg, len(data)/2+1, 50)
	})
}
