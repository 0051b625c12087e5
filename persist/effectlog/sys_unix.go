//go:build unix

package effectlog

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// writeZeros writes zeros over [off, off+n) of f.
func writeZeros(f *os.File, off, n int64) error {
	zeros := make([]byte, 64<<10)
	for n > 0 {
		w := int64(len(zeros))
		if n < w {
			w = n
		}
		if _, err := f.WriteAt(zeros[:w], off); err != nil {
			return err
		}
		off += w
		n -= w
	}
	return nil
}

// lockDir takes an exclusive advisory lock on dir/LOCK, so that two
// processes never append to the same mapped files. The kernel drops it when
// the process dies, however it dies.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("effectlog: %s is in use by another log: %w", dir, err)
	}
	return f, nil
}
