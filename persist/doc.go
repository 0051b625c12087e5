// Package persist keeps cellserver's keyspace durable: an effect log
// every execution appends to, and a snapshot in Pebble that checkpoints
// fold the log into.
//
// # Design
//
// The effect log (package effectlog, in LogDirName) is a memory-mapped
// append-only file: Commit copies one execution's effects into the
// kernel's page cache before any reply leaves, with no system call, so a
// crash of the process loses nothing acknowledged under any fsync policy,
// and the cost of persistence on the write path is an encoding and a
// copy. A record holds the new state of each key the execution changed:
// its whole value, a delete, a flushed database, or, for a sorted set
// changed in place, its expiry and its changed members, named after the
// set's head without repeating its key, a window's timestamps as varints
// (effect.go): a sliding-window update is about 45 bytes. Times are
// absolute, so replay runs no command and reads no clock.
//
// The snapshot in Pebble is a base (base.go): every key, packed into
// chunks of a few hundred kilobytes, as the last rewrite found it; and
// over it key records, one per Redis key changed since (its type,
// absolute expiry and value, or KindGone for a key deleted), except large
// sorted sets, stored as a head record plus one record per member
// (KindZSetWide) so that a checkpoint writes only the members that
// changed. The server writes it only at checkpoints (BeginCheckpoint,
// WriteSnapshot, EndCheckpoint): each key changed since the previous one,
// once, however often it changed, which is what an earlier design that
// sent every change through Pebble could not afford for hot keys (its
// memtable, flushes and compactions cost up to half of the throughput of
// a sliding-window workload). A checkpoint that finds a large share of
// the keys changed rewrites the base instead (BeginRewrite, EndCheckpoint):
// a record per key costs far more in Pebble than its bytes in a chunk. After a
// checkpoint the log before it is deleted, so the disk holds about one
// copy of the data plus the log since the last checkpoint, and a restart
// loads the snapshot and replays that much log.
//
// Replaying a record over a snapshot taken after the record's position
// gives the same state as over one taken before it (every effect sets a
// state rather than changing one), so a checkpoint may capture each key
// at any moment after it began, while clients go on writing.
//
// # Durability
//
// Sync(n) returns once the log is durable up to position n; concurrent
// calls share fsyncs (effectlog's group commit), which is what
// appendfsync always needs. Under everysec the server syncs once a second,
// under no the kernel writes the pages back when it decides. A checkpoint
// is durable (Pebble's memtables flushed to sstables; Pebble's own log is
// off, the effect log stands in for it) before it is recorded as the
// replay's start and the log before it is deleted.
//
// # Recovery
//
// Open locks the directory (a second server on it is refused), cuts the
// torn tail of Pebble's newest log file if a crash during a checkpoint
// left one (wal.go), checks that Pebble holds every checkpoint it made
// durable (ckpt_mark.go: a damaged MANIFEST would hide the later ones),
// and opens the effect log, which cuts a torn tail and refuses damage in
// the middle of the log unless Options.SkipDamagedLog (effectlog.Open;
// LogDamage reports what was skipped). Load then reads the snapshot and
// Replay the log from the last checkpoint's position. A table Pebble
// finds damaged fails the load. Records that pass their checksums but
// fail to decode are skipped and logged.
//
// # Disk errors
//
// A failed fsync, a log file that cannot be created (a full disk) or a
// failed Pebble write is published (Err) and retried until the disk works
// again (fs.go): the server refuses writes with Redis's MISCONF error
// meanwhile, reads go on, and writes already in flight wait
// unacknowledged rather than being lost. A start on a full disk opens the
// snapshot read-only and serves reads the same way (full_disk.go).
//
// # Record layout
//
// See record.go, and library.go for the function libraries (FUNCTION
// LOAD), which the log and the snapshot hold beside the keys. Keys are length-prefixed so that every record of one Redis
// key, and every key of one database, is one contiguous range: deleting a
// sorted set or flushing a database is one range tombstone.
package persist
