package effectlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by calls on a closed Log.
var ErrClosed = errors.New("effectlog: closed")

// ErrTooLarge is returned by Append for a payload whose frame length does
// not fit in 32 bits.
var ErrTooLarge = errors.New("effectlog: record too large")

// Options of Open.
type Options struct {
	Logger      *slog.Logger // nil: slog.Default()
	SegmentSize int64        // bytes per segment file; 0: 64 << 20
	// Fault, if set, is called before each segment creation ("create")
	// and each fsync round ("sync"); an error it returns is that
	// operation's. Tests make the disk fail with it.
	Fault func(op string) error
	// From is the log position the caller will replay from (the
	// snapshot's): a log whose oldest segment starts after it lacks
	// records (damage), and a new log, or one whose end is before it,
	// appends from it.
	From uint64
	// SkipDamaged opens a log damaged in the middle (see Open) by skipping
	// the damaged bytes instead of refusing with a *DamageError.
	SkipDamaged bool
}

// defaultSegmentSize is SegmentSize's default.
const defaultSegmentSize = 64 << 20

// Log is an append-only log of records in segment files in one directory.
// Positions (LSN) are byte offsets in the logical log: they start at 0 for a
// new log and only grow; a record's LSN range is [start, end).
type Log struct {
	dir     string
	logger  *slog.Logger
	segSize int64
	lock    *os.File
	faultFn func(op string) error

	// The append lock and what Append reads and writes under it, in one
	// cache line of their own (appendState).
	*appendState
	prep    *prepared
	retired []*segment // former current segments not yet synced and unmapped, oldest first
	segs    []*segment // every segment file of the log, oldest first; the last is cur

	// mapMu is held for reading while a prefault runs in a mapping, and for
	// writing while one is unmapped.
	mapMu sync.RWMutex

	synced   atomic.Uint64 // every record ending at or before it is durable
	isClosed atomic.Bool

	// syncMu is held by whoever fsyncs, unmaps or trims (a Sync round,
	// Trim, DropBefore, Close). Lock order: syncMu, then mu.
	syncMu sync.Mutex

	// Sync's group commit: waitMu guards the fields below it; roundDone
	// (on waitMu) is broadcast when a round ends.
	waitMu      sync.Mutex
	roundDone   sync.Cond
	syncing     bool   // a caller is running a round
	rounds      uint64 // rounds ended
	roundTarget uint64 // what the last round was to make durable
	roundErr    error  // and how it ended

	// What Open found, for Replay: the segments, and the damaged
	// stretches of their record areas that Replay skips.
	openSegs []segment
	openSkip [][]span
	openEnd  uint64
	damage   []Damage
	dmgFrame []damagedFrame // for EachDamaged

	errMu     sync.Mutex
	createErr error  // the last failed segment creation, until one succeeds
	createAt  uint64 // the attempt createErr is the outcome of (noteCreate)
	syncErr   error  // the last failed fsync, until a Sync succeeds

	createTry atomic.Uint64 // attempts to create a segment or reserve blocks, for beginCreate

	syncRounds atomic.Int64 // Sync rounds that fsynced, for tests of group commit
}

// appendState is the append lock and the fields Append uses under it.
// Appends come from every core in turn, and each one takes the cache
// lines it touches from the core of the one before; keeping all of them
// in one line, which nothing else writes, makes that one transfer. It is
// a separate 64-byte object because the allocator aligns those to 64
// bytes (TestAppendStateLine).
type appendState struct {
	// mu is the append lock. It guards the fields below it and the
	// others of Log that say so; Append holds it for reserve + memcpy +
	// publish only.
	mu         sync.Mutex
	cur        *segment
	pos        int // file offset of the next record in cur
	limit      int // a frame that would pass limit moves to a new segment
	half       int // past it, the next segment is prepared in the background
	populateAt int // Append starts populateAhead when pos passes it
	closed     bool
	populating bool     // populateAhead runs
	_          [14]byte // to 64 bytes
}

// endLocked is the LSN after the last appended record (End).
func (l *Log) endLocked() uint64 { return l.cur.base + uint64(l.pos-headerSize) }

// prepared is a segment being created in the background.
type prepared struct {
	done chan struct{} // closed when seg or err is set
	seg  *segment
	err  error
}

// Append copies payload into the log as one record and returns the LSN of
// the record's end. Safe for concurrent use: the order of Append calls is
// the order in the log. It does not wait for the disk; the bytes are in the
// page cache when it returns, so a crash of the process alone does not lose
// them. A payload larger than SegmentSize gets a segment of its own size.
// Errors only when no segment can be created (disk full, I/O error): then
// the record is NOT in the log, and Err reports the error; Append keeps
// working again once a segment can be created.
func (l *Log) Append(payload []byte) (end uint64, err error) {
	if uint64(len(payload)) > maxPayload {
		return 0, ErrTooLarge
	}
	n := frameHeader + len(payload)
	crc := frameCRC(uint32(n), payload)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	if l.pos+n > l.limit {
		if err := l.makeRoomLocked(n); err != nil {
			l.mu.Unlock()
			return 0, err
		}
	}
	b := l.cur.data[l.pos : l.pos+n : l.pos+n]
	binary.LittleEndian.PutUint32(b, uint32(n))
	binary.LittleEndian.PutUint32(b[4:], crc)
	copy(b[frameHeader:], payload)
	prefetchFrom(l.cur.data, l.pos, l.pos+n)
	l.pos += n
	end = l.endLocked()
	if l.pos > l.half && l.prep == nil {
		l.startPrepareLocked()
	}
	if l.pos >= l.populateAt && !l.populating {
		l.startPopulateLocked()
	}
	l.mu.Unlock()
	return end, nil
}

// makeRoomLocked makes room for a frame of n bytes: in the current
// segment when it has the room but not yet the blocks (the background
// allocation fell behind), else in a new segment.
func (l *Log) makeRoomLocked(n int) error {
	if l.pos+n > len(l.cur.data) {
		return l.switchLocked(n)
	}
	try := l.beginCreate()
	err := l.fault("create")
	if err == nil {
		err = l.allocateLocked(l.cur, l.pos+n)
	}
	l.noteCreate(try, err)
	return err
}

// beginCreate numbers an attempt to create a segment or reserve blocks.
func (l *Log) beginCreate() uint64 { return l.createTry.Add(1) }

// noteCreate records the outcome of attempt try for Err, unless that of a
// later attempt is recorded already: a background reservation that failed
// while the disk was full, and finished late, must not report the disk
// full after an attempt begun since has found room.
func (l *Log) noteCreate(try uint64, err error) {
	l.errMu.Lock()
	if try > l.createAt {
		l.createErr, l.createAt = err, try
	}
	l.errMu.Unlock()
}

// allocateLocked reserves the blocks of seg up to offset to, rounded up
// to allocChunk; l.mu is held (the rare path: the populate goroutine
// allocates ahead without it, allocateAhead).
func (l *Log) allocateLocked(seg *segment, to int) error {
	to = min(roundUp(to, allocChunk), len(seg.data))
	if to <= seg.allocated {
		return nil
	}
	if err := preallocate(seg.f, int64(seg.allocated), int64(to-seg.allocated)); err != nil {
		return fmt.Errorf("effectlog: preallocating %s: %w", seg.path, err)
	}
	l.setAllocatedLocked(seg, to)
	return nil
}

// setAllocatedLocked records that seg's blocks are reserved up to to.
func (l *Log) setAllocatedLocked(seg *segment, to int) {
	if to > seg.allocated {
		seg.allocated = to
		if seg == l.cur {
			l.limit = min(len(seg.data), to)
		}
	}
}

// switchLocked retires the current segment and makes current one with room
// for a frame of n bytes: the prepared one when it is ready and big enough,
// else one created now (the rare path that does I/O under the lock).
func (l *Log) switchLocked(n int) error {
	need := int64(headerSize + n)
	var seg *segment
	if p := l.prep; p != nil {
		<-p.done
		l.prep = nil
		switch {
		case p.err != nil:
		case int64(len(p.seg.data)) >= need:
			seg = p.seg
		default:
			p.seg.discard() // too small for this record; its name is reused below
		}
	}
	if seg == nil {
		size := l.segSize
		if need > size {
			size = roundUpPage(need)
		}
		try := l.beginCreate()
		var err error
		if err = l.fault("create"); err == nil {
			seg, err = createSegment(l.dir, l.cur.seq+1, size, need)
		}
		l.noteCreate(try, err)
		if err != nil {
			return err
		}
	} else {
		l.noteCreate(l.beginCreate(), nil) // the prepared segment was created
	}
	end := l.endLocked()
	seg.activate(end)
	old := l.cur
	old.end = end
	l.retired = append(l.retired, old)
	l.segs = append(l.segs, seg)
	l.setCurrentLocked(seg, headerSize)
	return nil
}

// setCurrentLocked makes seg the segment Append writes into, at offset pos.
func (l *Log) setCurrentLocked(seg *segment, pos int) {
	l.cur = seg
	l.pos = pos
	l.limit = min(len(seg.data), seg.allocated)
	l.half = headerSize + (len(seg.data)-headerSize)/2
	l.populateAt = seg.populated - populateChunk
}

// startPrepareLocked starts creating the segment after the current one.
func (l *Log) startPrepareLocked() {
	p := &prepared{done: make(chan struct{})}
	l.prep = p
	dir, seq, size := l.dir, l.cur.seq+1, l.segSize
	go func() {
		if p.err = l.fault("create"); p.err == nil {
			p.seg, p.err = createSegment(dir, seq, size, 0)
		}
		if p.err == nil {
			// Not shared until done is closed: no lock needed.
			p.seg.populated = min(headerSize+2*populateChunk, len(p.seg.data))
			prefault(p.seg.data[:p.seg.populated])
		}
		close(p.done)
	}()
}

func roundUpPage(n int64) int64 {
	p := int64(pageSize)
	return (n + p - 1) / p * p
}

// End is the LSN after the last appended record.
func (l *Log) End() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endLocked()
}

// Size is the bytes of log on disk since lsn: the records from lsn to End
// (the space a segment switch leaves unused is not counted).
func (l *Log) Size(since uint64) int64 {
	end := l.End()
	if since >= end {
		return 0
	}
	return int64(end - since)
}

// Rotate ends the current segment (the next Append starts a new segment
// file) and returns the LSN where the new segment starts. Every record
// before it is in older segments, so DropBefore(that LSN) can later delete
// them whole. The new segment is prepared before the append lock is taken,
// so appenders wait only for the switch itself.
func (l *Log) Rotate() (uint64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	if l.pos == headerSize {
		end := l.endLocked() // the current segment holds no record yet
		l.mu.Unlock()
		return end, nil
	}
	if l.prep == nil {
		l.startPrepareLocked()
	}
	p := l.prep
	l.mu.Unlock()
	<-p.done

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	if l.pos != headerSize {
		if err := l.switchLocked(0); err != nil {
			return 0, err
		}
	}
	return l.endLocked(), nil
}

// Err is the last disk error of Append/Sync/segment creation still
// unresolved, or nil.
func (l *Log) Err() error {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	if l.createErr != nil {
		return l.createErr
	}
	return l.syncErr
}

// Close syncs, unmaps and closes. Further calls return ErrClosed.
func (l *Log) Close() error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.isClosed.Store(true)
	p := l.prep
	l.prep = nil
	l.mu.Unlock()

	if p != nil {
		<-p.done
		if p.seg != nil {
			p.seg.discard()
		}
	}
	_, err := l.syncLocked()
	for _, s := range l.retired {
		l.release(s)
	}
	l.retired = nil
	if rerr := l.release(l.cur); err == nil {
		err = rerr
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// fault runs the Fault hook of the log's Options.
func (l *Log) fault(op string) error {
	if l.faultFn != nil {
		return l.faultFn(op)
	}
	return nil
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }
