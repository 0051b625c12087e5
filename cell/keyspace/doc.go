// Package keyspace is the storage engine: the databases and their shards
// (keyspace.go), the key index (keyindex.go), entries and their values
// (entry_*.go, hash.go, list.go, zset.go), expiry (tx.go lazily,
// expire.go actively, evict.go under maxmemory), what a checkpoint must
// write and its visit of the shards (checkpoint.go), loading (load.go),
// and the whole-database reads (iter.go, scan.go).
//
// Everything an execution does to keys goes through a Tx (tx.go), with
// the shards it touches locked by its caller through a LockSet; its
// changes are collected in Effects (effects.go), which the server commits
// to the effect log. Watchers and running scripts are marked with an
// *atomic.Bool and a Busy (busy.go), so the package depends on nothing of
// the server: only on persist (the stored forms), zsetlite, resp and
// cell/hashslot.
package keyspace
