package effectlog

import (
	"fmt"
	"log/slog"
	"os"
	"syscall"
)

// Open opens or creates the log in dir. It scans the existing segments
// and tells a torn tail from damage in the middle of the log:
//
//   - A torn tail is what follows the last valid record (or segment
//     header) of the whole log: a record a crash cut short, garbage, a
//     header-only segment that lost its header. Open cuts it (the rest of
//     that segment is zeroed, later segment files deleted) with one log
//     line (Warn) saying where and how many bytes, and opens.
//   - Damage in the middle is anything that does not read back whole and
//     that a valid record follows: a bad checksum, a length no frame can
//     have, a run of zeros, a damaged segment header, records missing
//     between segments or before Options.From. Unless Options.SkipDamaged
//     is set, Open changes nothing and returns a *DamageError naming the
//     files and offsets. With it, Replay skips exactly the damaged bytes
//     (the walk resynchronises on the next valid frame), a damaged header
//     is rebuilt from its neighbours, each stretch is logged, and Damaged
//     lists them.
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
	if err := l.recover(o.From, o.SkipDamaged); err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
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
