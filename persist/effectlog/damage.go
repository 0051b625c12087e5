package effectlog

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Damage is a stretch of the log that does not read back whole and that
// valid records follow: not a torn tail (which Open cuts), but bytes in
// the middle of the log, which a start must not mistake for its end.
type Damage struct {
	File   string // the segment file
	Offset int64  // file offset where the damaged bytes start
	Bytes  int64  // how many bytes are dropped
	// Records is how many records are known to be dropped: 1 for a frame
	// whose length held but whose checksum failed; 0 when it cannot be
	// known (the length itself was damaged, a run of zeros where records
	// were, or records missing between two segments): at least one.
	Records int
	// Header: the segment's header was damaged; with SkipDamaged its
	// position in the log is rebuilt from its neighbours and rewritten.
	Header bool
	// Gap: records between two segments, or between the snapshot's
	// position (Options.From) and the oldest segment, are missing.
	Gap bool
	// LSN is the log position the damaged bytes start at.
	LSN uint64
}

func (d Damage) String() string {
	what := "damaged records"
	switch {
	case d.Header:
		what = "damaged segment header"
	case d.Gap:
		what = "missing records"
	}
	return fmt.Sprintf("%s in %s at offset %d (%d bytes)", what, d.File, d.Offset, d.Bytes)
}

// DamageError is Open's error for damage in the middle of the log when
// Options.SkipDamaged is not set: Open then changes nothing on disk.
type DamageError struct {
	Damage []Damage
}

func (e *DamageError) Error() string {
	var b strings.Builder
	b.WriteString("effectlog: the log is damaged before its last valid record: ")
	for i, d := range e.Damage {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Damage)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// span is a stretch of a segment's record area: [off, off+n).
type span struct {
	off, n  int
	records int // as Damage.Records
}

// areaScan is what walkArea found in a segment's record area.
type areaScan struct {
	frames  int    // valid records
	end     int    // offset after the last valid record
	damaged []span // damaged stretches that valid records follow
	tail    span   // nonzero bytes after the last valid record (n 0: none)
}

// extent is the offset after the last byte of the area that holds
// anything: the records, then a damaged tail.
func (a *areaScan) extent() int {
	if a.tail.n > 0 {
		return a.tail.off + a.tail.n
	}
	return a.end
}

// resyncBudget bounds the bytes walkArea checksums while it looks for a
// record after damage whose length was lost; past it, the rest of the
// segment counts as damaged (it is not taken for a torn tail).
const resyncBudget = 1 << 32

// walkArea walks the frames of a segment's record area, and past each
// stretch that does not read back whole (a bad checksum, a length no
// frame can have, zeros where nonzero bytes follow), finds the next valid
// frame: at the end of the damaged frame when its length held, else by
// looking for a valid frame at each later byte. limit is the offset after
// the area's last nonzero byte.
func walkArea(area []byte, limit int) areaScan {
	var a areaScan
	budget := int64(resyncBudget)
	off := 0
	for off < limit {
		if n, ok := frameAt(area, off); ok {
			a.frames++
			off += n
			continue
		}
		next, recs := resync(area, off, limit, &budget)
		if next < 0 {
			a.tail = span{off, limit - off, recs}
			break
		}
		a.damaged = append(a.damaged, span{off, next - off, recs})
		off = next
	}
	a.end = off
	if a.tail.n > 0 {
		a.end = a.tail.off
	}
	return a
}

// frameAt reports whether a valid frame starts at off, and its length.
func frameAt(area []byte, off int) (int, bool) {
	if len(area)-off < frameHeader {
		return 0, false
	}
	n := binary.LittleEndian.Uint32(area[off:])
	if n < frameHeader || uint64(n) > uint64(len(area)-off) {
		return 0, false
	}
	if binary.LittleEndian.Uint32(area[off+4:]) != frameCRC(n, area[off+frameHeader:off+int(n)]) {
		return 0, false
	}
	return int(n), true
}

// resync finds the first valid frame after the damage at off, or -1 when
// none starts before limit; recs is how many records the damage is known
// to hold (Damage.Records): 1 when the next frame (or the end of the
// records) is where the damaged frame's length says it ends. Every byte
// after off is tried, not only where that length points: a damaged length
// may point past whole records, which must not be dropped with it. When
// the search has checksummed resyncBudget bytes in vain it gives up and
// returns limit: the rest of the area counts as damaged (never as a torn
// tail, since it was not shown to hold nothing valid).
func resync(area []byte, off, limit int, budget *int64) (next, recs int) {
	held := -1
	if len(area)-off >= frameHeader {
		if n := int(binary.LittleEndian.Uint32(area[off:])); n >= frameHeader && n <= len(area)-off {
			held = off + n
		}
	}
	for p := off + 1; p+frameHeader <= limit; p++ {
		n := binary.LittleEndian.Uint32(area[p:])
		if n < frameHeader || uint64(n) > uint64(len(area)-p) || !plausibleChain(area, p, limit) {
			continue
		}
		if *budget -= int64(n); *budget < 0 {
			return limit, 0
		}
		if _, ok := frameAt(area, p); ok {
			if p == held {
				return p, 1
			}
			return p, 0
		}
	}
	if held >= limit {
		return -1, 1
	}
	return -1, 0
}

// plausibleChain is a cheap test before a checksum: hopping from p by the
// frame lengths found there, the next three hops either land on lengths a
// frame can have or reach the end of the records. Random bytes seldom
// pass, so few of the positions a search tries cost a checksum.
func plausibleChain(area []byte, p, limit int) bool {
	for hop := 0; hop < 3; hop++ {
		if p >= limit || len(area)-p < frameHeader {
			return true
		}
		n := binary.LittleEndian.Uint32(area[p:])
		if n == 0 && hop > 0 {
			return true
		}
		if n < frameHeader || uint64(n) > uint64(len(area)-p) {
			return false
		}
		p += int(n)
	}
	return true
}
