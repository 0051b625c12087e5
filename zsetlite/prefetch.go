package zsetlite

import "unsafe"

// PackedEnds returns the addresses of the first and the last byte of the
// packed encoding of the Set at p, for a prefetch ahead of a command
// that will read them (ZADD appends after the last entry,
// ZREMRANGEBYSCORE walks from the first). It reads p's first two words
// without synchronisation, as integers: p may be changing, or, read
// through an entry another goroutine is changing, not be a Set at all,
// so the results are only hints. It reads nothing past the page p is
// on, which is mapped since p points into a live object; a p too near
// the page's end gives 0, 0.
//
//go:norace
func PackedEnds(p unsafe.Pointer) (first, last uintptr) {
	const page = 4096
	if p == nil || uintptr(p)%page > page-2*unsafe.Sizeof(uintptr(0)) {
		return 0, 0
	}
	w := (*[2]uintptr)(p) // packed's data pointer and length (packedHeader)
	data, n := w[0], w[1]
	if data == 0 || n == 0 {
		return 0, 0
	}
	return data, data + n - 1
}

// packedHeader is the layout PackedEnds reads: a Set starts with its
// packed slice, whose header starts with the data pointer and the length.
const packedHeader = unsafe.Offsetof(Set{}.packed)
