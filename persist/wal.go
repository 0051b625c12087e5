package persist

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// cutTornTail reads the newest log file before Pebble opens the store and
// truncates it at the start of the first record that does not read back
// whole.
//
// A crash leaves the tail of the log half written; Pebble tolerates that
// silently when the bytes simply stop, but refuses to open when the tail
// is garbage followed by something that looks like a valid chunk
// (corruption in its eyes). Either way the records after the damage were
// never acknowledged under appendfsync always (their fsync had not
// returned), so cutting them is the right recovery, and the server says
// so in its log instead of refusing to start. Older log files were closed
// cleanly before the newest was started, so only the newest can be torn.
func cutTornTail(fs vfs.FS, dir string, log *slog.Logger) error {
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return fmt.Errorf("listing the log files of %s: %w", dir, err)
	}
	if len(logs) == 0 {
		return nil
	}
	newest := logs[len(logs)-1]
	if newest.NumSegments() != 1 {
		return nil // WAL failover is not configured; nothing of ours
	}
	_, path := newest.SegmentLocation(0)
	r := newest.OpenForRead()
	var (
		off     wal.Offset
		readErr error
	)
	for {
		var rec io.Reader
		rec, off, readErr = r.NextRecord()
		if readErr != nil {
			break
		}
		if _, readErr = io.Copy(io.Discard, rec); readErr != nil {
			break
		}
	}
	r.Close()
	if errors.Is(readErr, io.EOF) {
		return nil
	}
	st, err := fs.Stat(path)
	if err != nil {
		return err
	}
	cut := off.Physical
	if cut >= st.Size() {
		return nil
	}
	f, err := fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("opening %s to cut its torn tail: %w", path, err)
	}
	defer f.Close()
	if err := truncate(f, cut); err != nil {
		return fmt.Errorf("cutting the torn tail of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	log.Warn("persistence: cut the torn tail of the log", "file", path, "offset", cut,
		"bytes_dropped", st.Size()-cut, "reason", readErr.Error())
	return nil
}

// truncate shortens f to size. vfs.File has no Truncate; the OS file
// under it does.
func truncate(f vfs.File, size int64) error {
	t, ok := f.(interface{ Truncate(int64) error })
	if !ok {
		return errors.New("file system cannot truncate files")
	}
	return t.Truncate(size)
}
