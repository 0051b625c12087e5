package effectlog

import (
	"fmt"
	"syscall"
)

// Replay calls fn with each record whose start LSN is >= from, in log
// order, up to the end found by Open. payload aliases mapped memory and is
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
		if err := replaySegment(s, from, fn); err != nil {
			return err
		}
	}
	return nil
}

func replaySegment(s *segment, from uint64, fn func(start uint64, payload []byte) error) error {
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
	end, _, err := scanRecords(data[headerSize:n], func(off int, payload []byte) error {
		if start := s.base + uint64(off); start >= from {
			return fn(start, payload)
		}
		return nil
	})
	if err == nil && end != n-headerSize {
		err = fmt.Errorf("effectlog: replay: %s changed since Open", s.path)
	}
	return err
}
