//go:build linux

package effectlog

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
)

// fdatasync writes the file's dirty pages, including those stored through
// a MAP_SHARED mapping (the kernel collects their dirty bits), and the
// metadata needed to read them back.
func fdatasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// preallocate reserves blocks for [off, off+n) and extends the file to
// cover it. fallocate never changes bytes already written; on file systems
// without it the range is written with zeros instead, so callers pass only
// ranges that must read as zeros.
func preallocate(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	for {
		err := syscall.Fallocate(int(f.Fd()), 0, off, n)
		switch {
		case err == syscall.EINTR:
			continue
		case errors.Is(err, syscall.EOPNOTSUPP):
			return writeZeros(f, off, n)
		}
		return err
	}
}

// dontNeed drops b's pages from the process's mapping; see Log.Trim.
func dontNeed(b []byte) {
	if len(b) > 0 {
		syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
}

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 0x17

// populateUnsupported is set once the kernel refused madvPopulateWrite.
var populateUnsupported atomic.Bool

// prefault maps b's pages writable without changing them; see populate.go.
func prefault(b []byte) {
	if len(b) == 0 || populateUnsupported.Load() {
		return
	}
	if err := syscall.Madvise(b, madvPopulateWrite); err == syscall.EINVAL {
		populateUnsupported.Store(true)
	}
}

// lseek's whence values for a file's data and holes (Linux 3.1; package
// syscall does not name them).
const (
	seekData = 3
	seekHole = 4
)

// dataEnd is where the file's data ends at or after from: every byte of
// [dataEnd, size) lies in a hole or in blocks reserved but never written,
// and so reads as zero. Scanning a segment's tail for nonzero bytes stops
// there instead of reading the holes, which would fill the page cache with
// zeroed pages (a 64 MB segment mostly empty costs tens of milliseconds of
// every start). Where the file system cannot tell, it is size.
func dataEnd(f *os.File, from, size int64) int64 {
	fd := int(f.Fd())
	end := from
	for off := from; off < size; {
		d, err := syscall.Seek(fd, off, seekData)
		if err == syscall.ENXIO { // no data at or after off
			break
		}
		if err != nil {
			return size
		}
		h, err := syscall.Seek(fd, d, seekHole)
		if err != nil || h <= d {
			return size
		}
		end, off = h, h
	}
	return min(end, size)
}
