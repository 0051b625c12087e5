package effectlog

import "github.com/cellserver/cellserver/internal/prefetch"

// Append's copy writes into cache lines of the mapping that no core has
// touched since the kernel zeroed the page, so each store must first fetch
// its line from memory; the atomic operations that end Append then wait
// for those stores, under the lock, which made the wait most of Append's
// time. Append therefore prefetches the lines the next records will take,
// prefetchAhead bytes past its own: by the time a record is copied there,
// its lines are in the cache. A prefetch is a hint: it neither faults nor
// waits, and the locked instructions do not wait for it.

// prefetchAhead is how far past the append position lines are prefetched:
// a few records ahead, enough to cover a memory access at the rate
// records arrive.
const prefetchAhead = 512

// prefetchFrom prefetches the lines of data[from+prefetchAhead :
// to+prefetchAhead] that are inside data: those the window ahead of the
// position gained when the position moved from from to to.
func prefetchFrom(data []byte, from, to int) {
	end := min(to+prefetchAhead, len(data))
	for a := (from + prefetchAhead) &^ (cacheLine - 1); a < end; a += cacheLine {
		prefetch.Line(&data[a])
	}
}

const cacheLine = 64
