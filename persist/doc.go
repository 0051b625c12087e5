// Package persist keeps cellserver's keyspace durable in Pebble.
//
// # Design
//
// Pebble holds a mirror of the keyspace: one record per Redis key (its
// type, absolute expiry and value), except large sorted sets, stored as a
// head record plus one record per member (KindZSetWide) so that a write to
// a big sliding window costs the members it changed. Nothing else is
// stored: no command log, no separate snapshot file. Pebble's own write-ahead log is therefore the
// effect log, and its memtable flushes and compactions are the snapshots:
// a restart replays at most the log since the last flush (bounded by the
// memtable size), and the disk holds about one copy of the live data
// (compaction drops overwritten and deleted records). SAVE and BGSAVE
// force a flush; Pebble also flushes by itself whenever the memtable fills.
//
// The server commits one Batch per command, EXEC or expiry pass, holding
// the final state of every key the execution changed, while the shards of
// those keys are still locked. Commit merges the batch into a pending
// group in call order, so the order of effects on one key on disk is the
// order of its lock holders in memory, and replay needs no command
// semantics at all: a batch is a set of final values. The group keeps one
// record per key and reaches Pebble as one batch (group.go). Expiries are
// absolute Unix milliseconds, so a record means the same thing whenever it
// is read; Load hands expired records to the caller, which drops them.
//
// # Durability
//
// Commit never waits for the disk. Sync(n) returns once batch n is durable:
// it commits the pending group if batch n is still in it, then writes an
// empty log record with Pebble's Sync option, and since the log is
// sequential that syncs every earlier batch too. Pebble's log writer
// serves all sync requests queued during one fsync with the next fsync, so
// concurrent Syncs from many connections share fsyncs: the group commit
// that appendfsync always needs, without a goroutine of our own. A group
// nobody syncs is committed within a second (group.go).
//
// # Recovery
//
// Open locks the directory (a second server on it is refused), then reads
// the newest log file and truncates it at the first record that does not
// read back whole, logging the cut (wal.go): after a crash the tail may be
// torn, and the records past the damage were never acknowledged as
// durable. Pebble then opens cleanly. Records that fail to decode are
// skipped and logged by Load, never fatal.
//
// # Disk errors
//
// Pebble treats a failed log write or sync as fatal. The store wraps the
// file system (fs.go) so that such an error is published (Err) and the
// operation retried until the disk works again: the server refuses writes
// with Redis's MISCONF error meanwhile, reads go on, and writes already in
// flight wait unacknowledged rather than being lost.
//
// # Record layout
//
// See record.go. Keys are length-prefixed so that every record of one Redis
// key, and every key of one database, is one contiguous range: deleting a
// sorted set or flushing a database is one range tombstone.
package persist
