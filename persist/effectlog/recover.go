package effectlog

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// segFile is one segment file as recover found it.
type segFile struct {
	seq     uint64
	path    string
	size    int64
	nonzero int64 // offset after the file's last nonzero byte; 0: a blank file
	hdrOK   bool  // the header reads back and names this file
	rebuilt bool  // the header was damaged and base is rebuilt
	drop    bool  // a damaged file with no record in it, deleted under SkipDamaged
	base    uint64
	area    areaScan
}

// trueEnd is the LSN after everything the file holds, damaged or not.
func (f *segFile) trueEnd() uint64 { return f.base + uint64(f.area.extent()) }

// damagedFrame locates the payload of a damaged frame whose length held,
// for EachDamaged.
type damagedFrame struct {
	path   string
	off    int64 // file offset of the frame
	n      int   // frame length
	damage int   // index in Log.damage
}

// recover reads every segment, tells the torn tail from damage in the
// middle of the log (Open), refuses the latter unless skip, cuts the
// former, and maps the last kept segment (or a new one) for appending.
// from is Options.From.
func (l *Log) recover(from uint64, skip bool) error {
	seqs, err := listSegments(l.dir)
	if err != nil {
		return err
	}
	files := make([]*segFile, 0, len(seqs))
	for _, seq := range seqs {
		f, err := scanFile(filepath.Join(l.dir, segmentName(seq)), seq)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	// last holds the log's last valid record or header: what comes after
	// it is the torn tail, any damage before it is in the middle.
	last := -1
	for i, f := range files {
		if f.nonzero > 0 && (f.hdrOK || f.area.frames > 0) {
			last = i
		}
	}
	damage, frames := settle(files[:last+1], from)
	if len(damage) > 0 && !skip {
		return &DamageError{Damage: damage}
	}

	// The torn tail: after the last valid record of the last file that has
	// one, and every file after it.
	var (
		cutFile   string
		cutOffset int64
		cutBytes  int64
		deleted   int
	)
	if last >= 0 {
		if f := files[last]; f.area.tail.n > 0 {
			cutFile, cutOffset = f.path, headerSize+int64(f.area.end)
			cutBytes = int64(f.area.tail.n)
			if err := zeroFrom(f.path, cutOffset, f.size); err != nil {
				return err
			}
		}
	}
	for i, f := range files {
		if i <= last && !f.drop && f.nonzero > 0 {
			continue
		}
		if i > last {
			deleted++
			if f.nonzero > 0 && cutFile == "" {
				cutFile = f.path
			}
			cutBytes += f.nonzero
		}
		if err := os.Remove(f.path); err != nil {
			return fmt.Errorf("effectlog: %w", err)
		}
	}
	if cutBytes > 0 {
		l.logger.Warn("effectlog: cut damaged log tail", "file", cutFile, "offset", cutOffset,
			"bytes", cutBytes, "deleted_segments", deleted)
	}
	for _, d := range damage {
		l.logger.Warn("effectlog: skipping damaged bytes in the middle of the log", "file", d.File,
			"offset", d.Offset, "bytes", d.Bytes, "records", d.Records, "header", d.Header, "gap", d.Gap)
	}

	var kept []*segment
	var skips [][]span
	for i := 0; i <= last; i++ {
		f := files[i]
		if f.drop || f.nonzero == 0 {
			continue
		}
		if f.rebuilt {
			if err := rewriteHeader(f); err != nil {
				return err
			}
		}
		kept = append(kept, &segment{seq: f.seq, base: f.base, end: f.base + uint64(f.area.end),
			path: f.path, size: f.size, headerSynced: true})
		sk := f.area.damaged
		if i < last && f.area.tail.n > 0 {
			sk = append(sk[:len(sk):len(sk)], f.area.tail)
		}
		skips = append(skips, sk)
	}
	if err := l.openForAppend(kept, seqs, from); err != nil {
		return err
	}
	if len(files) > len(kept) {
		if err := syncDir(l.dir); err != nil {
			l.cur.release()
			return err
		}
	}
	l.openSegs = make([]segment, len(kept))
	for i, s := range kept {
		l.openSegs[i] = segment{seq: s.seq, base: s.base, end: s.end, path: s.path, size: s.size}
	}
	l.openSkip = skips
	l.damage, l.dmgFrame = damage, frames
	return nil
}

// settle finds the damage in the middle of the log (files, up to the one
// holding its last valid record) and gives each file its base: the
// header's, or, when the header is damaged (or contradicts the file
// before it), one rebuilt from its neighbours. Damage wholly before from
// is not counted: the snapshot holds what was there, and replay never
// reads it (a machine crash may bring back a segment a checkpoint had
// deleted, leaving a gap before from).
func settle(files []*segFile, from uint64) ([]Damage, []damagedFrame) {
	var (
		damage []Damage
		frames []damagedFrame
		prev   *segFile
	)
	note := func(d Damage, end uint64, frameLen int) {
		if end <= from {
			return
		}
		if frameLen > 0 {
			frames = append(frames, damagedFrame{d.File, d.Offset, frameLen, len(damage)})
		}
		damage = append(damage, d)
	}
	span := func(f *segFile, sp span) {
		d := Damage{File: f.path, Offset: headerSize + int64(sp.off), Bytes: int64(sp.n),
			Records: sp.records, LSN: f.base + uint64(sp.off)}
		frameLen := 0
		if sp.records == 1 {
			frameLen = sp.n
		}
		note(d, d.LSN+uint64(sp.n), frameLen)
	}
	for i, f := range files {
		if f.nonzero == 0 {
			continue // prepared, never used
		}
		if !f.hdrOK || prev != nil && f.base < prev.base+uint64(prev.area.end) {
			f.rebuilt = true
			f.base = rebuildBase(files, i, prev, from)
			note(Damage{File: f.path, Bytes: headerSize, Header: true, LSN: f.base}, f.trueEnd(), 0)
			if f.area.frames == 0 {
				f.drop = true
			}
		}
		switch {
		case prev != nil && f.base > prev.trueEnd():
			pe := prev.trueEnd()
			note(Damage{File: prev.path, Offset: headerSize + int64(prev.area.extent()),
				Bytes: int64(f.base - pe), Gap: true, LSN: pe}, f.base, 0)
		case prev == nil && f.base > from:
			note(Damage{File: f.path, Offset: headerSize, Bytes: int64(f.base - from), Gap: true, LSN: from}, f.base, 0)
		}
		for _, sp := range f.area.damaged {
			span(f, sp)
		}
		if i < len(files)-1 && f.area.tail.n > 0 && !unusedTail(files, i) {
			span(f, f.area.tail)
		}
		prev = f
	}
	return damage, frames
}

// unusedTail reports whether the nonzero bytes after the last record of
// files[i] lie in the space a segment switch left unused: the next file
// with a sound header starts where files[i]'s records end, so no record
// of the log was there.
func unusedTail(files []*segFile, i int) bool {
	f := files[i]
	for _, next := range files[i+1:] {
		if next.nonzero == 0 {
			continue
		}
		return next.hdrOK && next.base == f.base+uint64(f.area.end)
	}
	return false
}

// rebuildBase is the base of files[i], whose header is damaged: where the
// file before it ends, else where the next file with a sound header
// starts less what lies between, else from.
func rebuildBase(files []*segFile, i int, prev *segFile, from uint64) uint64 {
	if prev != nil {
		return prev.trueEnd()
	}
	var between uint64
	for j := i; j < len(files); j++ {
		f := files[j]
		if j > i && f.hdrOK && f.nonzero > 0 {
			if f.base >= between {
				return f.base - between
			}
			break
		}
		between += uint64(f.area.extent())
	}
	return from
}

// scanFile reads one segment file: whether it holds anything, its header,
// and its records (walkArea). It fdatasyncs the file: after a process
// crash its pages may still be dirty in the page cache.
func scanFile(path string, seq uint64) (*segFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("effectlog: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("effectlog: %w", err)
	}
	f := &segFile{seq: seq, path: path, size: st.Size()}
	dEnd := dataEnd(fh, 0, st.Size())
	if dEnd == 0 {
		return f, nil
	}
	data, err := mapFile(fh, st.Size(), false)
	if err != nil {
		return nil, fmt.Errorf("effectlog: mapping %s: %w", path, err)
	}
	defer syscall.Munmap(data)
	f.nonzero = int64(nonzeroEnd(data[:dEnd]))
	if f.nonzero == 0 {
		return f, nil
	}
	if hseq, base, ok := readHeader(data); ok && hseq == seq {
		f.hdrOK, f.base = true, base
	}
	if len(data) > headerSize {
		limit := max(int(f.nonzero)-headerSize, 0)
		f.area = walkArea(data[headerSize:], limit)
	}
	if err := fdatasync(fh); err != nil {
		return nil, fmt.Errorf("effectlog: syncing %s: %w", path, err)
	}
	return f, nil
}

// rewriteHeader writes the header of f, whose own was damaged, with its
// rebuilt base, so that the next Open finds the log whole.
func rewriteHeader(f *segFile) error {
	var h [headerSize]byte
	putHeader(h[:], f.seq, f.base)
	fh, err := os.OpenFile(f.path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("effectlog: %w", err)
	}
	defer fh.Close()
	if _, err := fh.WriteAt(h[:], 0); err != nil {
		return fmt.Errorf("effectlog: rewriting the header of %s: %w", f.path, err)
	}
	if err := fdatasync(fh); err != nil {
		return fmt.Errorf("effectlog: syncing %s: %w", f.path, err)
	}
	return nil
}

// openForAppend makes the last kept segment current, mapped for appends
// after its last record, or a new segment when none is kept or the log
// ends before from (the snapshot holds what the log lost past its end:
// new records must come after from, or Replay would skip them).
func (l *Log) openForAppend(kept []*segment, seqs []uint64, from uint64) error {
	if len(kept) == 0 || kept[len(kept)-1].end < from {
		var seq uint64
		switch {
		case len(kept) > 0:
			seq = kept[len(kept)-1].seq + 1
		case len(seqs) > 0:
			seq = seqs[0]
		}
		cur, err := createSegment(l.dir, seq, l.segSize, 0)
		if err != nil {
			return err
		}
		cur.activate(from)
		if err := fdatasync(cur.f); err != nil {
			cur.discard()
			return fmt.Errorf("effectlog: syncing %s: %w", cur.path, err)
		}
		cur.headerSynced = true
		l.segs = append(kept, cur)
		l.setCurrentLocked(cur, headerSize)
		l.synced.Store(cur.end)
		l.openEnd = cur.end
		return nil
	}
	cur := kept[len(kept)-1]
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
	// (fallocate leaves the written bytes as they are). On a full disk
	// only what is written has blocks: the log opens all the same, for
	// the server to serve reads, and Append reserves the rest once there
	// is room (makeRoomLocked).
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
	l.segs = kept
	l.setCurrentLocked(cur, pos)
	l.synced.Store(cur.end)
	l.openEnd = cur.end
	return nil
}
