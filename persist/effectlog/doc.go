// Package effectlog is cellserver's append-only log of effects: every
// command, EXEC or script that changes the keyspace appends one record,
// and the server replays the records after its last checkpoint at start.
//
// # Why a memory-mapped log
//
// An append is a memcpy into a shared file mapping under one short mutex:
// no syscall per record, no buffer to flush, no allocation. Once Append
// returns, the bytes are in the kernel's page cache, so a crash of the
// process alone (kill -9, a panic) loses nothing appended: the kernel
// writes the pages back whatever becomes of the process. That is the
// guarantee Redis gives by write(2)-ing its AOF before replying, at a
// fraction of the cost. Durability against a machine crash is Sync's job:
// fdatasync of the segments that hold unsynced records, shared by every
// caller waiting at the time (group commit), once a second under
// appendfsync everysec or before the replies under always.
//
// # Format
//
// The log is a sequence of segment files in one directory, named
// %016x.log after a sequence number, so that they sort in log order. Each
// is preallocated to its full size (fallocate), then mapped; preallocation
// turns a full disk into an error when a segment is created instead of a
// SIGBUS on a store into the mapping. The next segment is created in the
// background when the current one is half full.
//
// A segment starts with a 32-byte header:
//
//	magic "CELLELOG" | seq uint64 | base LSN uint64 | version uint32 | CRC-32C of the 28 bytes before
//
// then records, each a frame:
//
//	length uint32 | CRC-32C uint32 | payload
//
// little endian, where length is the whole frame's (8 + payload bytes, so
// an empty payload is a valid record) and the CRC (Castagnoli) covers the
// length bytes and the payload. A zero length ends the records of a
// segment: what follows is the preallocated zeros. Records never span
// segments; one that does not fit moves to the next segment, which gets a
// size of its own if the record is larger than SegmentSize.
//
// LSNs are byte offsets in the logical log, contiguous over records: a
// record spans [start, start+length), and a segment's base is the end of
// the last record of the segment before it. The record at LSN x lives in
// the segment with the greatest base <= x, at file offset 32 + x - base.
// The bytes a segment switch leaves unused have no LSN. Since the base is
// known only when a segment becomes current, its header is written then
// (through the mapping); a file whose header is still zeros is a prepared
// segment never used.
//
// # Recovery
//
// Open walks every segment, resynchronising after each stretch that does
// not read back whole (a bad header, a length no frame can have, a CRC
// mismatch, zeros where valid frames follow) on the next valid frame
// (damage.go, recover.go). What lies after the log's last valid record
// is a torn tail: Open zeros it and deletes the segments after it,
// logging where and how many bytes it cut, and opens. The cut is right
// because Sync makes segments durable oldest first: every record a Sync
// acknowledged lies before any damage a machine crash can leave. After a
// process crash nothing is damaged (the page cache holds every completed
// append) except a record whose memcpy the crash interrupted, which had
// not been acknowledged either. Damage with valid records after it is not
// a crash's doing (or not only): Open refuses it with a *DamageError,
// changing nothing, unless Options.SkipDamaged, which skips exactly the
// damaged bytes and lists them (Damaged).
//
// # Memory
//
// The mapping would make the log count in the process's RSS as it is
// written; Sync and Trim give the written pages back (MADV_DONTNEED) once
// Append is past them, and retired segments are unmapped once synced, so
// the log costs little RSS beyond the page cache the kernel manages on its
// own. A background goroutine maps the pages a little ahead of the append
// position (populate.go), so the page faults of a fresh mapping are taken
// outside the append lock; that window (2 MiB, and as much at the start of
// the prepared next segment) is what stays resident.
//
// # Checkpoints
//
// Pebble holds snapshots of the keyspace. A checkpoint calls Rotate, folds
// the state into Pebble, and then DropBefore(the LSN Rotate returned)
// deletes the segments the snapshot made redundant. Size tells when the
// log has grown enough to make a checkpoint worth it.
package effectlog
