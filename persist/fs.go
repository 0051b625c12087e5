package persist

import (
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble treats a failed WAL write or sync as fatal: its commit pipeline
// cannot continue, so it exits the process. Redis instead keeps serving
// reads, refuses writes with MISCONF and retries the disk until it works
// again. stallFS gives Pebble Redis's behaviour: it sits between Pebble and
// the real file system, and when a write-side operation fails (a full disk,
// an I/O error, a read-only remount) it publishes the error, then retries
// the operation with backoff instead of returning the error. Pebble just
// sees a slow disk. The server refuses new writes while an error is
// published (Store.Err), and the commands already past that check wait in
// their commit, unacknowledged, until the disk recovers: nothing that was
// acknowledged is lost, and nothing is acknowledged that is not written.
//
// Retrying fsync after an error is what Redis does under everysec; on
// Linux a failed fsync may have dropped the dirty pages it was writing, so
// after an fsync error the log can have lost writes no retry will bring
// back. The server logs the error loudly; an operator who sees it should
// restart from the data on disk.
type stallFS struct {
	vfs.FS
	st *Store
}

// stallFile is a file of stallFS.
type stallFile struct {
	vfs.File
	st *Store
}

// retry runs op until it succeeds or the store closes, publishing the first
// error and clearing it once op succeeds.
func (s *Store) retry(what string, op func() error) error {
	err := op()
	if err == nil {
		return nil
	}
	s.fail(what, err)
	wait := 10 * time.Millisecond
	for {
		if s.closing.Load() {
			return err
		}
		time.Sleep(wait)
		if wait < time.Second {
			wait *= 2
		}
		if err = op(); err == nil {
			s.recovered(what)
			return nil
		}
	}
}

func (fs stallFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	var f vfs.File
	err := fs.st.retry("create "+name, func() (err error) {
		f, err = fs.FS.Create(name, cat)
		return err
	})
	if err != nil {
		return nil, err
	}
	return stallFile{f, fs.st}, nil
}

func (fs stallFS) ReuseForWrite(oldname, newname string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, cat)
	if err != nil {
		// Pebble falls back to Create when a log cannot be recycled.
		return nil, err
	}
	return stallFile{f, fs.st}, nil
}

func (fs stallFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, cat, opts...)
	if err != nil {
		return nil, err
	}
	return stallFile{f, fs.st}, nil
}

func (fs stallFS) Rename(oldname, newname string) error {
	return fs.st.retry("rename "+newname, func() error { return fs.FS.Rename(oldname, newname) })
}

func (fs stallFS) Unwrap() vfs.FS { return fs.FS }

func (f stallFile) Write(p []byte) (int, error) {
	total := 0
	err := f.st.retry("write", func() error {
		n, err := f.File.Write(p)
		total += n
		p = p[n:]
		return err
	})
	return total, err
}

func (f stallFile) WriteAt(p []byte, off int64) (int, error) {
	total := 0
	err := f.st.retry("write", func() error {
		n, err := f.File.WriteAt(p, off)
		total += n
		p, off = p[n:], off+int64(n)
		return err
	})
	return total, err
}

func (f stallFile) Sync() error { return f.st.retry("fsync", f.File.Sync) }

func (f stallFile) SyncData() error { return f.st.retry("fsync", f.File.SyncData) }

func (f stallFile) SyncTo(length int64) (full bool, err error) {
	err = f.st.retry("fsync", func() (err error) {
		full, err = f.File.SyncTo(length)
		return err
	})
	return full, err
}

// Preallocate is only a hint to the file system: failing it is harmless,
// and a full disk shows up on the writes that follow.
func (f stallFile) Preallocate(off, length int64) error {
	f.File.Preallocate(off, length)
	return nil
}
