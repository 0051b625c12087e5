package persist

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// A base written as sstables: the load of a Redis RDB file (cell's
// rdb_load.go) writes every key into a new base as it goes, in chunks
// whose Pebble keys ascend (baseKey), so it can write them straight into
// tables and ingest those, rather than through WriteSnapshot: a chunk
// there is copied into a batch, then into Pebble's batch, then into a
// memtable, which a flush writes out again, compressed. Measured on a
// load of 1.1M keys (bench -rdb): that path was about 7% of the load's
// CPU, plus the page faults of each new memtable.
//
// The tables are written uncompressed: snappy over the chunks was more
// than half of what the flush cost, and the base is read once per start;
// the first rewrite after the load compresses it again.
//
// Ingested chunks are in Pebble but not in force: their generation goes
// in force only with the checkpoint that ends the rewrite
// (EndCheckpoint). A crash before leaves them under a generation no start
// reads, and the next rewrite excises them (BeginRewrite), as chunks
// written through WriteSnapshot. The files being written live in
// ingestDirName until Pebble links them in; a crash leaves them there,
// and Open deletes them.

// ingestDirName is the directory, in the store's, of tables being written.
const ingestDirName = "ingest"

// BaseTables writes a rewrite's chunks into sstables and ingests them.
// Not safe for concurrent use.
type BaseTables struct {
	s     *Store
	w     *BaseWriter
	opts  sstable.WriterOptions
	tw    *sstable.Writer
	path  string // tw's file
	n     int    // tables made, for their names
	bytes int64  // bytes of chunks in tw
}

// BeginBaseTables starts a rewrite (BeginRewrite) whose chunks go into
// tables: seal the writer's chunks with Seal, and Ingest them.
func (s *Store) BeginBaseTables() (*BaseTables, error) {
	w, err := s.BeginRewrite()
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	if err := s.pebbleFS().MkdirAll(s.fs.PathJoin(s.path, ingestDirName), 0o755); err != nil {
		return nil, err
	}
	opts := s.popts.MakeWriterOptions(len(s.popts.Levels)-1, s.db.TableFormat())
	opts.Compression = sstable.NoCompression
	return &BaseTables{s: s, w: w, opts: opts}, nil
}

// Writer is the BaseWriter whose chunks the tables take.
func (t *BaseTables) Writer() *BaseWriter { return t.w }

// Pending is the bytes of chunks sealed since the last Ingest.
func (t *BaseTables) Pending() int64 { return t.bytes }

// Seal adds the writer's chunk, if it holds anything, to the table being
// written.
func (t *BaseTables) Seal() error {
	return t.w.seal(func(k, chunk []byte) error {
		if t.tw == nil {
			if err := t.create(); err != nil {
				return err
			}
		}
		t.bytes += int64(len(chunk))
		return t.tw.Set(k, chunk)
	})
}

// create opens the next table's file.
func (t *BaseTables) create() error {
	fs := t.s.pebbleFS()
	t.path = fs.PathJoin(t.s.path, ingestDirName, fmt.Sprintf("base-%d-%d.sst", t.w.gen, t.n))
	f, err := fs.Create(t.path, "cellserver-base")
	if err != nil {
		return err
	}
	t.n++
	t.tw = sstable.NewWriter(objstorageprovider.NewFileWritable(f), t.opts)
	return nil
}

// Ingest seals the writer's chunk, finishes the table (written and
// synced) and adds it to the snapshot. The keys it holds are the
// generation's next ones, so Pebble puts it under every other table
// without rewriting any.
func (t *BaseTables) Ingest() error {
	if err := t.Seal(); err != nil {
		return err
	}
	if t.tw == nil {
		return nil
	}
	tw, path := t.tw, t.path
	t.tw, t.bytes = nil, 0
	fs := t.s.pebbleFS()
	defer fs.Remove(path) // Pebble has its own link
	if err := tw.Close(); err != nil {
		return err
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	if t.s.closed {
		return ErrClosed
	}
	return t.s.db.Ingest(context.Background(), []string{path})
}

// Abort drops the table being written; what was ingested stays, out of
// force, until the next rewrite excises it.
func (t *BaseTables) Abort() {
	if t.tw == nil {
		return
	}
	t.tw.Close()
	t.s.pebbleFS().Remove(t.path)
	t.tw = nil
}

// pebbleFS is the file system Pebble writes through (stallFS): Ingest
// links a table in only from the file system Pebble uses.
func (s *Store) pebbleFS() stallFS { return stallFS{s.fs, s} }

// removeIngestDir deletes the tables a crash left being written.
func (s *Store) removeIngestDir() error {
	return s.fs.RemoveAll(s.fs.PathJoin(s.path, ingestDirName))
}
