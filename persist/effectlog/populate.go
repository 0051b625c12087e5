package effectlog

import (
	"fmt"
	"math"
)

// Prefaulting: the first store into each page of a fresh mapping faults
// (the kernel allocates the page-cache page, zeroes it and maps it
// writable), which made those stores most of Append's cost. A background
// goroutine therefore maps the pages ahead of the append position
// (MADV_POPULATE_WRITE, which changes no byte), so that Append's memcpy
// finds them mapped. The window ahead is small, and Trim gives back what
// is behind, so the log's resident pages stay bounded.

// populateChunk is how far ahead of the append position pages are mapped,
// twice over: populating starts when the position comes within one chunk
// of the populated end and goes two chunks past the position.
const populateChunk = 1 << 20

// startPopulateLocked starts populateAhead unless it runs already.
func (l *Log) startPopulateLocked() {
	l.populating = true
	go l.populateAhead()
}

// populateAhead maps the pages of the current segment up to two chunks
// past the append position, then sets when Append should call it again.
func (l *Log) populateAhead() {
	for {
		l.mu.Lock()
		if l.closed { // Close may be unmapping cur: do not look at it
			l.populating = false
			l.mu.Unlock()
			return
		}
		cur, pos := l.cur, l.pos
		// madvise wants a page-aligned start.
		from := max(cur.populated, pos) &^ (pageSize - 1)
		to := min(pos+2*populateChunk, len(cur.data))
		// Whole chunks only (or the segment's end): chasing the append
		// position a few bytes at a time would keep this goroutine
		// spinning in madvise for as long as clients write.
		if from >= to || to-from < populateChunk && to < len(cur.data) {
			l.populating = false
			l.populateAt = cur.populated - populateChunk
			if cur.populated >= len(cur.data) {
				l.populateAt = math.MaxInt // until the next segment
			}
			l.mu.Unlock()
			return
		}
		allocated := cur.allocated
		l.mu.Unlock()

		l.mapMu.RLock()
		if cur.data != nil && to > allocated {
			l.allocateAhead(cur, allocated, to)
		}
		// The position may have moved since, and Trim may have given
		// back the pages behind it: start from it.
		l.mu.Lock()
		if l.cur == cur {
			from = max(from, l.pos&^(pageSize-1))
		}
		l.mu.Unlock()
		if cur.data != nil && from < to {
			prefault(cur.data[from:to])
		}
		l.mapMu.RUnlock()

		l.mu.Lock()
		cur.populated = to
		l.mu.Unlock()
	}
}

// allocChunk is the granularity of a segment's block reservation.
const allocChunk = 4 << 20

// allocateAhead reserves the blocks of cur from allocated up to to (rounded
// up to allocChunk) without holding the append lock; Append only writes
// below what is reserved (Log.limit). A failure (a full disk) is reported
// through Err at once, while Append still has room; Append itself retries
// when it reaches the limit (makeRoomLocked). mapMu must be held shared.
func (l *Log) allocateAhead(cur *segment, allocated, to int) {
	to = min(roundUp(to, allocChunk), len(cur.data))
	try := l.beginCreate()
	err := l.fault("create")
	if err == nil {
		err = preallocate(cur.f, int64(allocated), int64(to-allocated))
	}
	l.mu.Lock()
	if err == nil {
		l.setAllocatedLocked(cur, to)
	}
	l.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("effectlog: preallocating %s: %w", cur.path, err)
	}
	l.noteCreate(try, err) // nil again once the disk gives blocks
}

// release unmaps and closes s once no prefault is running in its mapping.
func (l *Log) release(s *segment) error {
	l.mapMu.Lock()
	defer l.mapMu.Unlock()
	return s.release()
}
