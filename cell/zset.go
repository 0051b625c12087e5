package cell

import (
	"math/rand/v2"

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

// zsetConfig is zset-max-listpack-entries and -value as CONFIG holds them
// now. Redis reads the two globals at every insert, so a CONFIG SET changes
// where existing sets convert too; handlers pass this to SetConfig before
// inserting for the same effect.
func (x *Ctx) zsetConfig() zsetlite.Config { return x.srv.zsetConfig() }

// zsetConfig is the sorted-set thresholds in force.
func (s *Server) zsetConfig() zsetlite.Config {
	return zsetlite.Config{
		MaxListpackEntries: int(s.live.zsetMaxListpackEntries.Load()),
		MaxListpackValue:   int(s.live.zsetMaxListpackValue.Load()),
	}
}

// globalRand is math/rand/v2's shared source as a zsetlite.Rand: safe for
// concurrent use and, being empty, free to pass as an interface.
type globalRand struct{}

func (globalRand) IntN(n int) int { return rand.IntN(n) }
