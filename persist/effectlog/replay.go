package effectlog

import (
	"fmt"
	"syscall"
)

// Replay calls fn with each record whose start LSN is >= from, in log
// order, up to the end found by Open, skipping the damaged stretches
// Open accepted under SkipDamaged. payload aliases mapped memory and is
// valid only during the call. Called before the first Append (the server
// replays at start). fn's error stops it.
//
// Each segment is mapped read-only for the walk and unmapped after it, so
// replaying a long log does not keep it resident.
func (l *Log) Replay(from uint64, fn func(start uint64, payload []byte) error) error {
	if l.isClosed.Load() {
		return ErrClosed
	}
	for i := range l.openSegs {
		s := &l.openSegs[i]
		if s.end <= from || s.end == s.base {
			continue
		}
		if err := replaySegment(s, l.openSkip[i], from, fn); err != nil {
			return err
		}
	}
	return nil
}

func replaySegment(s *segment, skip []span, from uint64, fn func(start uint64, payload []byte) error) error {
	data, err := mapReadOnly(s.path)
	if err != nil {
		return fmt.Errorf("effectlog: replay: %w", err)
	}
	n := headerSize + int(s.end-s.base)
	if len(data) < n {
		if data != nil {
			syscall.Munmap(data)
		}
		return fmt.Errorf("effectlog: replay: %s changed since Open", s.path)
	}
	defer syscall.Munmap(data)
	area := data[headerSize:n]
	// The runs of whole records between the damaged stretches.
	at := 0
	for i := 0; i <= len(skip); i++ {
		stop := len(area)
		if i < len(skip) {
			stop = min(skip[i].off, len(area))
		}
		if at < stop {
			end, _, err := scanRecords(area[at:stop], func(off int, payload []byte) error {
				if start := s.base + uint64(at+off); start >= from {
					return fn(start, payload)
				}
				return nil
			})
			if err != nil {
				return err
			}
			if end != stop-at {
				return fmt.Errorf("effectlog: replay: %s changed since Open", s.path)
			}
		}
		if i < len(skip) {
			at = skip[i].off + skip[i].n
		}
	}
	return nil
}

// Damaged lists the damaged stretches Open skipped under SkipDamaged, in
// log order; nil when the log was whole (a cut torn tail is not listed).
func (l *Log) Damaged() []Damage { return l.damage }

// EachDamaged calls fn with each damaged record whose length held (its
// Damage has Records 1) and its payload as the file holds it now, damage
// and all: the caller may read what the record was about (which keys),
// knowing that any byte of it may be wrong. payload is valid only during
// the call.
func (l *Log) EachDamaged(fn func(d Damage, payload []byte)) error {
	for _, f := range l.dmgFrame {
		data, err := mapReadOnly(f.path)
		if err != nil {
			return fmt.Errorf("effectlog: %w", err)
		}
		if end := f.off + int64(f.n); end <= int64(len(data)) {
			fn(l.damage[f.damage], data[f.off+frameHeader:end])
		}
		if data != nil {
			syscall.Munmap(data)
		}
	}
	return nil
}
