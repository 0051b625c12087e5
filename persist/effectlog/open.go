package effectlog

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// Open opens or creates the log in dir. It scans the existing segments,
// finds the end of the valid records, and cuts what follows the first
// record that does not read back whole (torn by a crash, or corrupt): the
// rest of that segment is zeroed and every later segment is deleted, with
// one log line (Warn) saying where and how many bytes were cut. It never
// refuses to start for damage in the log itself (only for I/O errors).
//
// A segment file that is all zeros (prepared for the next switch but never
// used) is deleted without a warning: nothing is cut. Open fdatasyncs the
// segments it keeps, so what it found counts as synced: after a process
// crash their pages may still have been dirty in the page cache.
func Open(dir string, o Options) (*Log, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	segSize := o.SegmentSize
	if segSize <= 0 {
		segSize = defaultSegmentSize
	}
	segSize = roundUpPage(segSize)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("effectlog: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, logger: logger, segSize: segSize, lock: lock, faultFn: o.Fault, appendState: &appendState{}}
	l.roundDone.L = &l.waitMu
	if err := l.recover(); err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
}

// recover finds the valid prefix of the log, cuts the rest and maps the
// last kept segment (or a new one) for appending.
func (l *Log) recover() error {
	seqs, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	var (
		kept      []*segment
		garbage   int // nonzero bytes after the last kept segment's records
		rest      []uint64
		cutFile   string
		cutOffset int64
		cutBytes  int64
	)
	for i, seq := range seqs {
		var prevEnd uint64
		if len(kept) > 0 {
			prevEnd = kept[len(kept)-1].end
		}
		s, g, damaged, err := scanSegment(filepath.Join(l.dir, segmentName(seq)), seq, prevEnd, len(kept) > 0)
		if err != nil {
			return err
		}
		if s == nil { // bad header, or not where the previous segment ended
			rest = seqs[i:]
			break
		}
		kept = append(kept, s)
		garbage = g
		if damaged {
			rest = seqs[i+1:]
			break
		}
	}

	if len(kept) > 0 && garbage > 0 {
		last := kept[len(kept)-1]
		cutFile, cutOffset = last.path, headerSize+int64(last.end-last.base)
		cutBytes += int64(garbage)
		if err := zeroFrom(last.path, cutOffset, last.size); err != nil {
			return err
		}
	}
	for _, seq := range rest {
		path := filepath.Join(l.dir, segmentName(seq))
		n, err := fileNonzeroEnd(path)
		if err != nil {
			return err
		}
		if n > 0 && cutFile == "" {
			cutFile = path
		}
		cutBytes += n
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("effectlog: %w", err)
		}
	}
	if cutBytes > 0 {
		l.logger.Warn("effectlog: cut damaged log tail", "file", cutFile, "offset", cutOffset,
			"bytes", cutBytes, "deleted_segments", len(rest))
	}

	var cur *segment
	if len(kept) == 0 {
		// A new log, or one whose every segment was damaged from its header
		// on: LSNs start at 0 (DropBefore keeps the oldest header durable, so
		// the latter takes damage the disk itself did).
		var seq uint64
		if len(seqs) > 0 {
			seq = seqs[0]
		}
		cur, err = createSegment(l.dir, seq, l.segSize, 0)
		if err != nil {
			return err
		}
		cur.activate(0)
		if err := fdatasync(cur.f); err != nil {
			cur.discard()
			return fmt.Errorf("effectlog: syncing %s: %w", cur.path, err)
		}
		cur.headerSynced = true
		kept = []*segment{cur}
	} else {
		cur = kept[len(kept)-1]
		f, err := os.OpenFile(cur.path, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("effectlog: %w", err)
		}
		data, err := mapFile(f, cur.size, true)
		if err != nil {
			f.Close()
			return fmt.Errorf("effectlog: mapping %s: %w", cur.path, err)
		}
		cur.f, cur.data = f, data
		// Reserve the blocks of what is written and of a chunk after it
		// (fallocate leaves the written bytes as they are). On a full
		// disk only what is written has blocks: the log opens all the
		// same, for the server to serve reads, and Append reserves the
		// rest once there is room (makeRoomLocked).
		pos := headerSize + int(cur.end-cur.base)
		cur.allocated = min(roundUp(pos, allocChunk)+allocChunk, len(data))
		err = l.fault("create")
		if err == nil {
			err = preallocate(f, 0, int64(cur.allocated))
		}
		if err != nil {
			l.logger.Warn("effectlog: no room to reserve blocks ahead; appends wait for it", "file", cur.path, "err", err)
			cur.allocated = pos
		}
	}
	if len(rest) > 0 {
		if err := syncDir(l.dir); err != nil {
			cur.release()
			return err
		}
	}

	l.segs = kept
	l.setCurrentLocked(cur, headerSize+int(cur.end-cur.base))
	l.synced.Store(cur.end)
	l.openEnd = cur.end
	l.openSegs = make([]segment, len(kept))
	for i, s := range kept {
		l.openSegs[i] = segment{seq: s.seq, base: s.base, end: s.end, path: s.path, size: s.size}
	}
	return nil
}

// listSegments returns the sequence numbers of dir's segment files in
// order; other files are ignored.
func listSegments(dir string) ([]uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("effectlog: %w", err)
	}
	var seqs []uint64
	for _, e := range ents { // ReadDir sorts by name, and names are fixed-width hex
		if seq, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			seqs = append(seqs, seq)
		}
	}
	return seqs, nil
}

// scanSegment reads one segment file. It returns nil when the header is
// bad, names another segment, or (if checkBase) does not start at wantBase,
// where the previous segment's records ended: a segment after a gap is not
// part of the log. Otherwise it returns the segment (closed, its end found)
// after fdatasync'ing it, the nonzero bytes after its last whole record,
// and whether the records stopped at damage.
func scanSegment(path string, seq, wantBase uint64, checkBase bool) (s *segment, garbage int, damaged bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("effectlog: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, false, fmt.Errorf("effectlog: %w", err)
	}
	if st.Size() < headerSize {
		return nil, 0, false, nil
	}
	data, err := mapFile(f, st.Size(), false)
	if err != nil {
		return nil, 0, false, fmt.Errorf("effectlog: mapping %s: %w", path, err)
	}
	defer syscall.Munmap(data)
	hseq, base, ok := readHeader(data)
	if !ok || hseq != seq || (checkBase && base != wantBase) {
		return nil, 0, false, nil
	}
	end, damaged, _ := scanRecords(data[headerSize:], nil)
	tail := int64(headerSize + end)
	garbage = nonzeroEnd(data[tail:dataEnd(f, tail, st.Size())])
	if err := fdatasync(f); err != nil {
		return nil, 0, false, fmt.Errorf("effectlog: syncing %s: %w", path, err)
	}
	return &segment{seq: seq, base: base, end: base + uint64(end), path: path, size: st.Size(), headerSynced: true}, garbage, damaged, nil
}

// fileNonzeroEnd is the offset after the last nonzero byte of the file.
func fileNonzeroEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("effectlog: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("effectlog: %w", err)
	}
	end := dataEnd(f, 0, st.Size())
	if end == 0 {
		return 0, nil
	}
	data, err := mapFile(f, end, false)
	if err != nil {
		return 0, fmt.Errorf("effectlog: mapping %s: %w", path, err)
	}
	defer syscall.Munmap(data)
	return int64(nonzeroEnd(data)), nil
}

// zeroFrom makes [off, size) of the file zeros: truncating and extending
// again is cheaper than writing them.
func zeroFrom(path string, off, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("effectlog: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("effectlog: cutting %s: %w", path, err)
	}
	// Zeros without blocks: the log reserves them ahead of its writes.
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("effectlog: cutting %s: %w", path, err)
	}
	if err := fdatasync(f); err != nil {
		return fmt.Errorf("effectlog: cutting %s: %w", path, err)
	}
	return nil
}
