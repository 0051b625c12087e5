package persist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Damage to the snapshot (Pebble's files) must stop a start, never give
// a partial keyspace. Tables carry checksums: a damaged block fails the
// read that finds it (Load), and a background task that finds one is
// noted (noteCorruption) rather than Pebble's exit. The OPTIONS file is
// named when Pebble cannot read it (checkOptionsFile). And the MANIFEST
// is checked with the checkpoint mark.
//
// The checkpoint mark: a check that Pebble kept every checkpoint it made
// durable.
//
// Pebble reads its MANIFEST (the list of its files) up to the first
// record that does not read back whole and takes the rest for a torn
// tail, silently: one damaged byte there gives a snapshot without the
// checkpoints after it, and since the log before each checkpoint is
// deleted, a partial keyspace that looks whole. So each checkpoint
// numbers itself in Pebble (ckptCountKey, in the batch that records its
// position) and, once Pebble has made it durable, in a small file beside
// Pebble's (markName). Open refuses a snapshot whose number is below the
// mark's. The mark is written after the flush, so a crash between the
// two leaves it behind Pebble, never ahead. A damaged mark (its checksum
// fails) is ignored with a warning: it guards the data, it holds none.

// ckptCountKey holds how many checkpoints the snapshot holds.
var ckptCountKey = []byte{nsMeta, 'c', 'n', 't'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// markName is the mark's file in the store's directory.
const markName = "CHECKPOINT-MARK"

// writeMark records that n checkpoints are durable: a new file, synced,
// renamed over the old one, and the directory synced.
func writeMark(fs vfs.FS, dir string, n uint64) error {
	b := binary.AppendUvarint(nil, n)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	tmp := fs.PathJoin(dir, markName+".tmp")
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, fs.PathJoin(dir, markName))
	}
	if err != nil {
		return err
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readMark reads the mark: ok false when there is none (a store older
// than the mark, or none written yet), or when it is damaged (err says
// how).
func readMark(fs vfs.FS, dir string) (n uint64, ok bool, err error) {
	f, err := fs.Open(fs.PathJoin(dir, markName))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, false, err
	}
	n, w := binary.Uvarint(b)
	if w <= 0 || len(b) != w+4 || binary.LittleEndian.Uint32(b[w:]) != crc32.Checksum(b[:w], castagnoli) {
		return 0, false, fmt.Errorf("%s is damaged", fs.PathJoin(dir, markName))
	}
	return n, true, nil
}

// checkMark refuses a snapshot that has lost checkpoints the mark says
// were durable. manifest is the MANIFEST Pebble read (currentManifest
// before it opened: opening writes a new one, keeping the one before).
func (s *Store) checkMark(manifest string) error {
	mark, ok, err := readMark(s.fs, s.path)
	if err != nil {
		s.log.Warn("persistence: cannot check that the snapshot is whole", "err", err)
		return nil
	}
	if ok && mark > s.ckptN.Load() {
		return fmt.Errorf("%s: the snapshot has lost checkpoints it had made durable (it holds %d of %d): "+
			"its MANIFEST (%s) or tables are damaged; restore the directory from a backup",
			s.path, s.ckptN.Load(), mark, manifest)
	}
	return nil
}

// currentManifest names the MANIFEST file Pebble reads, as its marker
// file names it ("marker.manifest.000003.MANIFEST-000001").
func currentManifest(fs vfs.FS, dir string) string {
	names, _ := fs.List(dir)
	best, seq := "MANIFEST", ""
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, "marker.manifest.")
		if !ok {
			continue
		}
		num, target, ok := strings.Cut(rest, ".")
		if ok && num > seq {
			best, seq = fs.PathJoin(dir, target), num
		}
	}
	return best
}

// noteCorruption is Pebble's report of a damaged file: logged, and kept
// for damaged.
func (s *Store) noteCorruption(info pebble.DataCorruptionInfo) {
	path := info.Path
	if s.corrupt.CompareAndSwap(nil, &path) {
		msg, _, _ := strings.Cut(fmt.Sprint(info.Details), "\n") // the rest is a stack trace
		s.log.Error("persistence: a file of the snapshot is damaged", "file", path, "err", msg)
	}
}

// damaged is the error of a start on a snapshot Pebble found damaged,
// nil if it found nothing (yet).
func (s *Store) damaged() error {
	if p := s.corrupt.Load(); p != nil {
		return fmt.Errorf("%s is damaged (Pebble found on-disk corruption there); restore %s from a backup", *p, s.path)
	}
	return nil
}

// checkOptionsFile names the newest OPTIONS file of dir when Pebble
// cannot read it back (Open's error then names no file): it holds only
// Pebble's settings, which cellserver sets in code and Pebble writes
// again at each start, so removing it is a safe repair. opts are the
// options Pebble was opened with.
func checkOptionsFile(fs vfs.FS, dir string, opts *pebble.Options) error {
	names, err := fs.List(dir)
	if err != nil {
		return nil
	}
	newest := ""
	for _, n := range names {
		if strings.HasPrefix(n, "OPTIONS-") && n > newest {
			newest = n
		}
	}
	if newest == "" {
		return nil
	}
	path := fs.PathJoin(dir, newest)
	f, err := fs.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	opts.EnsureDefaults()
	if err := opts.CheckCompatibility(dir, string(b)); err != nil {
		return fmt.Errorf("%s is damaged (%v); it holds only Pebble's settings, which cellserver writes again at each start: remove the file to start", path, err)
	}
	return nil
}

// explainCorrupt adds to an error of Pebble's that reports damage what
// to do about it.
func (s *Store) explainCorrupt(err error) error {
	if err != nil && pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w; the snapshot in %s is damaged: restore the directory from a backup", err, s.path)
	}
	return err
}
