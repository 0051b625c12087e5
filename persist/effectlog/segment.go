package effectlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// headerSize is the bytes at the start of every segment file before its
// first record: magic, sequence number, base LSN, format version, CRC.
const headerSize = 32

const formatVersion = 1

var magic = [8]byte{'C', 'E', 'L', 'L', 'E', 'L', 'O', 'G'}

// pageSize is the unit of mappings and of Trim.
var pageSize = os.Getpagesize()

// segment is one segment file. Its records occupy file offsets
// [headerSize, headerSize+end-base): the record starting at LSN x is at
// file offset headerSize + x - base.
type segment struct {
	seq  uint64 // the file's name: segments sort by seq as by base
	base uint64 // LSN of the first record
	end  uint64 // LSN after the last record; kept current once retired
	path string
	size int64

	// While the segment is current or retired but not yet synced, f is
	// open and data is its read-write mapping; otherwise both are nil.
	f    *os.File
	data []byte

	// populated is the prefix of data prefaulted, allocated the prefix
	// whose blocks are reserved (both under Log.mu).
	populated int
	allocated int
	// trimmed is the prefix of data already given back with MADV_DONTNEED
	// (owned by whoever holds Log.syncMu).
	trimmed int
	// headerSynced: the header is on disk (Open relies on the oldest segment's).
	headerSynced bool
}

func segmentName(seq uint64) string { return fmt.Sprintf("%016x.log", seq) }

func parseSegmentName(name string) (uint64, bool) {
	if len(name) != 20 || !strings.HasSuffix(name, ".log") {
		return 0, false
	}
	seq, err := strconv.ParseUint(name[:16], 16, 64)
	return seq, err == nil
}

func putHeader(b []byte, seq, base uint64) {
	copy(b[0:8], magic[:])
	binary.LittleEndian.PutUint64(b[8:], seq)
	binary.LittleEndian.PutUint64(b[16:], base)
	binary.LittleEndian.PutUint32(b[24:], formatVersion)
	binary.LittleEndian.PutUint32(b[28:], crc32.Checksum(b[:28], castagnoli))
}

func readHeader(b []byte) (seq, base uint64, ok bool) {
	if len(b) < headerSize || !bytes.Equal(b[:8], magic[:]) ||
		binary.LittleEndian.Uint32(b[24:]) != formatVersion ||
		binary.LittleEndian.Uint32(b[28:]) != crc32.Checksum(b[:28], castagnoli) {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[16:]), true
}

// createSegment creates the file of segment seq, preallocates size bytes
// and maps it read-write. Its header is written when it becomes current
// (activate), since only then is its base LSN known; until then it is all
// zeros, which Open treats as an unused file.
//
// Preallocation (of the first chunk here, of the rest ahead of the writes)
// is what makes a full disk an error here, where Append can
// report it, rather than a SIGBUS when a store into the mapping needs a
// block the file system cannot provide. The directory is synced so that the
// file's name survives a machine crash along with its data.
func createSegment(dir string, seq uint64, size, minAlloc int64) (*segment, error) {
	path := filepath.Join(dir, segmentName(seq))
	// O_TRUNC: a file left under this name (a prepared segment whose removal
	// failed) lies past the log's end and holds nothing of it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("effectlog: creating a segment: %w", err)
	}
	fail := func(err error) (*segment, error) {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	// The file has its full size at once (the mapping must not pass its
	// end), but blocks only for its first allocChunk: the rest is
	// allocated ahead of the writes (Log.allocate), so a log holding a few
	// records does not take a whole segment's disk.
	if err := f.Truncate(size); err != nil {
		return fail(fmt.Errorf("effectlog: sizing %s: %w", path, err))
	}
	alloc := min(size, max(allocChunk, roundUpPage(minAlloc)))
	if err := preallocate(f, 0, alloc); err != nil {
		return fail(fmt.Errorf("effectlog: preallocating %s: %w", path, err))
	}
	data, err := mapFile(f, size, true)
	if err != nil {
		return fail(fmt.Errorf("effectlog: mapping %s: %w", path, err))
	}
	if err := syncDir(dir); err != nil {
		syscall.Munmap(data)
		return fail(err)
	}
	return &segment{seq: seq, path: path, size: size, f: f, data: data, allocated: int(alloc)}, nil
}

// activate makes s the segment whose records start at base.
func (s *segment) activate(base uint64) {
	s.base, s.end = base, base
	putHeader(s.data, s.seq, base)
}

// release unmaps and closes the segment; its file stays.
func (s *segment) release() error {
	var err error
	if s.data != nil {
		err = syscall.Munmap(s.data)
		s.data = nil
	}
	if s.f != nil {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		s.f = nil
	}
	return err
}

// discard releases the segment and deletes its file: a prepared segment
// that is not used.
func (s *segment) discard() {
	s.release()
	os.Remove(s.path)
}

// trim gives back to the kernel the pages of the mapping wholly before
// offset upTo. See Log.Trim for why that is safe.
func (s *segment) trim(upTo int) {
	upTo &^= pageSize - 1
	if s.data == nil || upTo <= s.trimmed {
		return
	}
	dontNeed(s.data[s.trimmed:upTo])
	s.trimmed = upTo
}

func mapFile(f *os.File, size int64, writable bool) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("effectlog: cannot map %d bytes", size)
	}
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), prot, syscall.MAP_SHARED)
}

// mapReadOnly maps the whole file at path for reading; data is nil for an
// empty file.
func mapReadOnly(path string) (data []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil, err
	}
	return mapFile(f, st.Size(), false)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("effectlog: syncing directory %s: %w", dir, err)
	}
	return nil
}
