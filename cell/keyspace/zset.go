package keyspace

import (
	"github.com/cellserver/cellserver/zsetlite"
)

// ZSet is the value of a sorted-set key: a zsetlite.Set, which does the
// work, plus the two methods the keyspace asks every value for (TYPE and
// OBJECT ENCODING; Encoding comes from zsetlite, which already answers as
// Redis 7.0 would). Embedding by value keeps one allocation per key.
//
// Invariant: a ZSet stored in the keyspace is never empty; the command that
// removes its last member removes the key.
type ZSet struct {
	zsetlite.Set
	// disk is set while the set is stored member by member
	// (zset_persist.go); nil without persistence.
	disk *zsetDisk
	// rec is the running execution's record of changed members, while a
	// writer holds the set (lookupZSetW); it does not grow the struct
	// past its 64-byte size class.
	rec *zsetRec
}

// newZSet returns an empty set with the thresholds in force.
func newZSet(cfg zsetlite.Config) *ZSet {
	return &ZSet{Set: *zsetlite.New(cfg)}
}

// TypeName is the TYPE of a sorted-set key.
func (z *ZSet) TypeName() string { return "zset" }
