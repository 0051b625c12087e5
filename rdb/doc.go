// Package rdb reads and writes Redis's data formats: RDB files as
// redis-server 7.0 writes them (version 10), every older encoding 7.0 still
// loads, and DUMP payloads (one value in RDB encoding with a version and
// checksum trailer). It imports nothing of cellserver and knows nothing of
// its keyspace: values come and go as Value, a plain description by type.
//
// Reading streams: Reader.Next returns one Record at a time (a key with its
// database, value and expiry, or an AUX field, a RESIZEDB hint, a function
// library, a module's AUX data), so a file of any size is never held whole.
// Every encoding of rdbLoadObject is decoded: strings raw, int-encoded and
// LZF-compressed; lists as quicklists of listpacks (with plain nodes),
// quicklists of ziplists, ziplists and plain lists; hashes as listpacks,
// ziplists, zipmaps and tables; sorted sets as listpacks, ziplists and
// skiplists with binary or text scores; sets as intsets, listpacks and
// tables. Streams are read past, not decoded, so a caller that cannot hold
// them can skip them and say so. Module values (RDB_TYPE_MODULE_2) are read
// and written as their type's name and version and the items the module
// saved (module.go), so a caller can hold a type of its own as a module
// value and skip other modules'.
//
// Bad input is an *Error naming the offset, never a panic: every length is
// checked against the bytes left (when the input's size is known) before
// anything is allocated for it, and read in pieces otherwise, so a forged
// length costs no more memory than the bytes actually present. The file's
// CRC-64 trailer is verified at the end marker.
//
// Writing picks the simplest encoding 7.0 loads (see writer.go). LZF and
// the CRC-64 (Jones, as Redis's crc64.c) are implemented here.
//
// The tests use a real redis-server 7.0 as the oracle both ways: it writes
// files and DUMPs that Reader must decode to what was stored, and loads
// Writer's files and EncodeDump's payloads.
package rdb
