//go:build unix && !linux

package effectlog

import "os"

// fdatasync: only Linux has a cheaper call than fsync in package syscall.
func fdatasync(f *os.File) error { return f.Sync() }

// preallocate extends the file with Truncate: no portable way to reserve
// blocks, so a full disk may show up later than on Linux.
func preallocate(f *os.File, off, n int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() >= off+n {
		return writeZeros(f, off, n)
	}
	return f.Truncate(off + n)
}

// dontNeed does nothing where MADV_DONTNEED's semantics are not Linux's.
func dontNeed([]byte) {}

// prefault does nothing: MADV_POPULATE_WRITE is Linux only.
func prefault([]byte) {}

// dataEnd is size: the whole file may hold data (SEEK_DATA is not
// portable).
func dataEnd(_ *os.File, _, size int64) int64 { return size }
